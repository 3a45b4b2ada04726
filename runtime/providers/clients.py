"""SDK clients for the built-in dialects: made from settings, or copied from a given one.

Every client is made (or copied) with the SDK's own retries off: retries are
done by :mod:`.retry`, once, for every SDK alike. An async client, needed by
``run_async`` and ``stream_async``, is made from the sync client's settings
on first use unless one is passed (``async_client=``).
"""

from __future__ import annotations

import os
from typing import Any

from toolscript.errors import ConfigurationError

from .profiles import Profile

__all__ = [
    "anthropic_async_client",
    "anthropic_client",
    "gemini_client",
    "openai_async_client",
    "openai_client",
]

#: Where the Gemini API key is looked for, in order (the SDK's own variables).
GEMINI_KEY_ENV = ("GEMINI_API_KEY", "GOOGLE_API_KEY")


def _options(timeout_s: float | None) -> dict[str, Any]:
    options: dict[str, Any] = {"max_retries": 0}
    if timeout_s is not None:
        options["timeout"] = timeout_s
    return options


def _missing_sdk(provider: str, extra: str) -> ConfigurationError:
    return ConfigurationError(
        f"provider {provider!r} needs its SDK: pip install 'toolscript[{extra}]'"
    )


def openai_client(
    client: Any, profile: Profile, base_url: str | None, api_key: str | None,
    timeout_s: float | None,
) -> Any:
    """An ``openai.OpenAI`` for ``profile`` (``client`` copied when given)."""
    if client is not None:
        return client.with_options(**_options(timeout_s))
    try:
        import openai
    except ImportError as exc:
        raise _missing_sdk(profile.name, "openai") from exc
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


def openai_async_client(client: Any) -> Any:
    """An ``openai.AsyncOpenAI`` with the settings of the sync ``client``."""
    import openai

    return openai.AsyncOpenAI(
        api_key=client.api_key,
        organization=client.organization,
        project=client.project,
        base_url=client.base_url,
        timeout=client.timeout,
        max_retries=0,
        default_headers=_custom_headers(client),
    )


def anthropic_client(
    client: Any, base_url: str | None, api_key: str | None, timeout_s: float | None
) -> Any:
    """An ``anthropic.Anthropic`` (``client`` copied when given)."""
    if client is not None:
        return client.with_options(**_options(timeout_s))
    try:
        import anthropic
    except ImportError as exc:
        raise _missing_sdk("anthropic", "anthropic") from exc
    key = api_key or os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        raise ConfigurationError(
            "provider 'anthropic' needs an API key: pass api_key= or set ANTHROPIC_API_KEY"
        )
    return anthropic.Anthropic(api_key=key, base_url=base_url, **_options(timeout_s))


def anthropic_async_client(client: Any) -> Any:
    """An ``anthropic.AsyncAnthropic`` with the settings of the sync ``client``."""
    import anthropic

    return anthropic.AsyncAnthropic(
        api_key=client.api_key,
        auth_token=client.auth_token,
        base_url=client.base_url,
        timeout=client.timeout,
        max_retries=0,
        default_headers=_custom_headers(client),
    )


def _custom_headers(client: Any) -> dict[str, str] | None:
    headers = getattr(client, "_custom_headers", None)
    return dict(headers) if headers else None


def gemini_client(client: Any, base_url: str | None, api_key: str | None) -> Any:
    """A ``google.genai.Client`` for the Gemini API (``client`` used as given: its
    retries are off unless its ``http_options`` ask for them)."""
    if client is not None:
        return client
    try:
        from google import genai
        from google.genai import types
    except ImportError as exc:
        raise _missing_sdk("gemini", "gemini") from exc
    key = api_key or next((os.environ[v] for v in GEMINI_KEY_ENV if os.environ.get(v)), None)
    if not key:
        raise ConfigurationError(
            "provider 'gemini' needs an API key: pass api_key= or set GEMINI_API_KEY"
        )
    options = types.HttpOptions(base_url=base_url) if base_url else None
    return genai.Client(api_key=key, http_options=options)
