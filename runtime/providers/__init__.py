"""Provider dialects: thin adapters between the agent loop and the model SDKs.

``make_provider(name, ...)`` returns a :class:`Provider` for one of
:data:`PROVIDER_NAMES`: ``"openai"`` (Chat Completions), ``"openai-responses"``,
``"anthropic"`` (Messages), ``"gemini"`` (the Gemini API's ``generateContent``),
and the OpenAI-compatible profiles in :mod:`.profiles` (``"deepseek"``,
``"gemini-openai"``, ``"kimi"``, ``"glm"``, ``"qwen"``, ``"openai-compatible"``).
Any other model plugs in as a :class:`Provider` subclass (one method,
:meth:`Provider.complete`); :mod:`toolscript.runtime.agent.testing` has scripted
ones for tests.
"""

from __future__ import annotations

from typing import Any

from toolscript.errors import ConfigurationError

from .anthropic import AnthropicProvider
from .base import (
    Message,
    ModelTurn,
    Provider,
    Request,
    SDKProvider,
    ToolCall,
    ToolChoice,
    ToolOutcome,
    ToolSpec,
    Usage,
    assistant_message,
)
from .chat import ChatCompletionsProvider
from .clients import anthropic_client, gemini_client, openai_client
from .errors import (
    ModelAuthError,
    ModelEndpointError,
    ModelRequestError,
    ModelResponseError,
    ModelUnavailableError,
)
from .gemini import GeminiProvider
from .profiles import PROFILES, Profile, get_profile
from .responses import ResponsesProvider
from .retry import RetryPolicy

__all__ = [
    "PROFILES",
    "PROVIDER_NAMES",
    "AnthropicProvider",
    "ChatCompletionsProvider",
    "GeminiProvider",
    "Message",
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
    "SDKProvider",
    "ToolCall",
    "ToolChoice",
    "ToolOutcome",
    "ToolSpec",
    "Usage",
    "assistant_message",
    "make_provider",
    "split_model",
]

PROVIDER_NAMES: tuple[str, ...] = ("openai", "openai-responses", "anthropic", "gemini", *sorted(
    name for name in PROFILES if name != "openai"
))


def split_model(spec: str) -> tuple[str | None, str]:
    """``"anthropic:claude-sonnet-4-5"`` -> ``("anthropic", "claude-sonnet-4-5")``;
    a name without a known provider prefix -> ``(None, spec)`` (model names may
    contain colons themselves, e.g. ``"qwen3:8b"``)."""
    prefix, sep, rest = spec.partition(":")
    if sep and prefix in PROVIDER_NAMES and rest:
        return prefix, rest
    return None, spec


def make_provider(
    name: str,
    *,
    client: Any = None,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout_s: float | None = None,
    retry: RetryPolicy | None = None,
    prompt_cache: bool = True,
    async_client: Any = None,
) -> Provider:
    """Build the provider ``name`` around ``client`` or a client made from the environment.

    A given ``openai``/``anthropic`` client is copied with ``max_retries=0`` (and
    ``timeout_s`` if set): retries are done by :mod:`.retry`, once, for every SDK
    alike. ``async_client`` serves async runs (default: made from the sync
    client's settings when first needed; Gemini uses ``client.aio``).

    Raises:
        ConfigurationError: unknown provider, SDK not installed, or no API key.
    """
    if name not in PROVIDER_NAMES:
        raise ConfigurationError(
            f"unknown provider {name!r}; choose one of {', '.join(PROVIDER_NAMES)}"
        )
    if name == "anthropic":
        sdk_client = anthropic_client(client, base_url, api_key, timeout_s)
        return AnthropicProvider(sdk_client, retry=retry, prompt_cache=prompt_cache,
                                 async_client=async_client)
    if name == "gemini":
        return GeminiProvider(gemini_client(client, base_url, api_key), retry=retry,
                              timeout_s=timeout_s)
    profile = get_profile("openai" if name == "openai-responses" else name)
    sdk_client = openai_client(client, profile, base_url, api_key, timeout_s)
    if name == "openai-responses":
        return ResponsesProvider(sdk_client, retry=retry, async_client=async_client)
    return ChatCompletionsProvider(
        sdk_client, profile=profile, retry=retry, base_url=str(sdk_client.base_url),
        async_client=async_client,
    )
