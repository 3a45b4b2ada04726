"""Provider dialects: thin adapters between the agent loop and the model SDKs.

``make_provider(name, ...)`` returns a :class:`Provider` for one of
:data:`PROVIDER_NAMES`: ``"openai"`` (Chat Completions), ``"openai-responses"``,
``"anthropic"`` (Messages), and the OpenAI-compatible profiles in
:mod:`.profiles` (``"deepseek"``, ``"kimi"``, ``"glm"``, ``"qwen"``,
``"openai-compatible"``).
"""

from __future__ import annotations

import os
from typing import Any

from toolscript.errors import ConfigurationError

from .anthropic import AnthropicProvider
from .base import (
    ModelTurn,
    Provider,
    Request,
    ToolCall,
    ToolChoice,
    ToolOutcome,
    ToolSpec,
    Usage,
)
from .chat import ChatCompletionsProvider
from .errors import (
    ModelAuthError,
    ModelEndpointError,
    ModelRequestError,
    ModelResponseError,
    ModelUnavailableError,
)
from .profiles import PROFILES, Profile, get_profile
from .responses import ResponsesProvider
from .retry import RetryPolicy

__all__ = [
    "PROFILES",
    "PROVIDER_NAMES",
    "AnthropicProvider",
    "ChatCompletionsProvider",
    "ModelAuthError",
    "ModelEndpointError",
    "ModelRequestError",
    "ModelResponseError",
    "ModelTurn",
    "ModelUnavailableError",
    "Profile",
    "Provider",
    "Request",
    "ResponsesProvider",
    "RetryPolicy",
    "ToolCall",
    "ToolChoice",
    "ToolOutcome",
    "ToolSpec",
    "Usage",
    "make_provider",
]

PROVIDER_NAMES: tuple[str, ...] = ("openai", "openai-responses", "anthropic", *sorted(
    name for name in PROFILES if name != "openai"
))


def make_provider(
    name: str,
    *,
    client: Any = None,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout_s: float | None = None,
    retry: RetryPolicy | None = None,
    prompt_cache: bool = True,
) -> Provider:
    """Build the provider ``name`` around ``client`` or a client made from the environment.

    A given client is copied with ``max_retries=0`` (and ``timeout_s`` if set):
    retries are done by :mod:`.retry`, once, for every SDK alike.

    Raises:
        ConfigurationError: unknown provider, SDK not installed, or no API key.
    """
    if name not in PROVIDER_NAMES:
        raise ConfigurationError(
            f"unknown provider {name!r}; choose one of {', '.join(PROVIDER_NAMES)}"
        )
    if name == "anthropic":
        sdk_client = _anthropic_client(client, base_url, api_key, timeout_s)
        return AnthropicProvider(sdk_client, retry=retry, prompt_cache=prompt_cache)
    profile = get_profile("openai" if name == "openai-responses" else name)
    sdk_client = _openai_client(client, profile, base_url, api_key, timeout_s)
    if name == "openai-responses":
        return ResponsesProvider(sdk_client, retry=retry)
    return ChatCompletionsProvider(
        sdk_client, profile=profile, retry=retry, base_url=str(sdk_client.base_url)
    )


def _options(timeout_s: float | None) -> dict[str, Any]:
    options: dict[str, Any] = {"max_retries": 0}
    if timeout_s is not None:
        options["timeout"] = timeout_s
    return options


def _openai_client(
    client: Any, profile: Profile, base_url: str | None, api_key: str | None,
    timeout_s: float | None,
) -> Any:
    if client is not None:
        return client.with_options(**_options(timeout_s))
    try:
        import openai
    except ImportError as exc:
        raise ConfigurationError(
            "provider needs the openai SDK: pip install 'toolscript[openai]'"
        ) from exc
    key = api_key or os.environ.get(profile.api_key_env)
    if not key:
        raise ConfigurationError(
            f"provider {profile.name!r} needs an API key: pass api_key= or set "
            f"{profile.api_key_env}"
        )
    url = base_url or (os.environ.get("OPENAI_BASE_URL") if profile.base_url is None else None)
    url = url or profile.base_url
    if profile.name == "openai-compatible" and not url:
        raise ConfigurationError("provider 'openai-compatible' needs base_url=")
    return openai.OpenAI(api_key=key, base_url=url, **_options(timeout_s))


def _anthropic_client(
    client: Any, base_url: str | None, api_key: str | None, timeout_s: float | None
) -> Any:
    if client is not None:
        return client.with_options(**_options(timeout_s))
    try:
        import anthropic
    except ImportError as exc:
        raise ConfigurationError(
            "provider 'anthropic' needs the anthropic SDK: pip install 'toolscript[anthropic]'"
        ) from exc
    key = api_key or os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        raise ConfigurationError(
            "provider 'anthropic' needs an API key: pass api_key= or set ANTHROPIC_API_KEY"
        )
    return anthropic.Anthropic(api_key=key, base_url=base_url, **_options(timeout_s))
