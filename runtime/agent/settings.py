"""An agent's settings as data: how to reach the model, how to sample it, how far a run goes.

Grouped as pydantic-ai groups them: :class:`ModelSettings` is a ``TypedDict``
of per-request model knobs (pydantic-ai's ``ModelSettings``; every key
optional, the defaults are the endpoint's or listed per key),
:class:`AgentLimits` a frozen dataclass of the caps of one run (pydantic-ai's
``UsageLimits``), and :class:`Endpoint` a frozen dataclass of where and with what
credentials the model is reached (what pydantic-ai's providers take). ``Agent``
keeps flat only what nearly every call names: the model, the tools or runtime,
the runtime options, the system text, the output type and the mode.

Each group is checked once, where it is built (:class:`AgentLimits`,
:class:`Endpoint`) or where the agent takes it (:func:`check_model_settings`);
a bad value raises :class:`~toolscript.errors.ConfigurationError` naming the
group and the field.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from typing import Any, TypedDict

from toolscript.errors import ConfigurationError

from ..providers.base import ToolChoice, normalize_tool_choice
from ..providers.retry import RetryPolicy

__all__ = ["AgentLimits", "Endpoint", "ModelSettings", "check_model_settings"]


class ModelSettings(TypedDict, total=False):
    """Per-request settings of the model calls (every key optional).

    ``Agent(..., model_settings={"temperature": 0.2, "max_tokens": 800})``.
    """

    temperature: float | None
    """Sampling temperature (default ``None``: the endpoint's)."""
    max_tokens: int | None
    """Output cap per turn (default ``None``: the endpoint's; Anthropic: 4096)."""
    timeout_s: float | None
    """Per-request timeout of the SDK client (default ``None``: the SDK's)."""
    retry: RetryPolicy | None
    """Retry policy for 5xx, 429 and timeouts (default ``None``: ``RetryPolicy()``)."""
    tool_choice: ToolChoice
    """``"auto"`` (default), ``"none"``, ``"required"`` or ``{"name": TOOL}``."""
    parallel_tool_calls: bool | None
    """Allow several tool calls per turn (default ``None``: the endpoint's)."""
    strict: bool
    """Strict-mode schemas where the dialect or profile supports them (default False)."""
    extra_body: dict[str, Any]
    """Extra top-level request fields, sent verbatim (default none)."""
    prompt_cache: bool
    """Anthropic: mark the tool definitions as a cache breakpoint (default True)."""


MODEL_SETTINGS_DEFAULTS: ModelSettings = {
    "temperature": None,
    "max_tokens": None,
    "timeout_s": None,
    "retry": None,
    "tool_choice": "auto",
    "parallel_tool_calls": None,
    "strict": False,
    "extra_body": {},
    "prompt_cache": True,
}
"""The value of each :class:`ModelSettings` key that is not given."""

_NUMBER = (int, float)
_KINDS: dict[str, tuple[type, ...]] = {
    "temperature": _NUMBER,
    "max_tokens": (int,),
    "timeout_s": _NUMBER,
    "retry": (RetryPolicy,),
    "tool_choice": (str, dict),
    "parallel_tool_calls": (bool,),
    "strict": (bool,),
    "extra_body": (dict,),
    "prompt_cache": (bool,),
}
_NULLABLE = frozenset({"temperature", "max_tokens", "timeout_s", "retry", "parallel_tool_calls"})


def check_model_settings(settings: ModelSettings | None) -> ModelSettings:
    """``settings`` completed with the defaults, after checking every key and value.

    Raises:
        ConfigurationError: an unknown key, a value of the wrong type, a
            non-positive ``max_tokens`` or ``timeout_s``, or a malformed
            ``tool_choice``; the message names the key.
    """
    given: dict[str, Any] = dict(settings or {})
    unknown = sorted(set(given) - set(_KINDS))
    if unknown:
        raise ConfigurationError(
            f"ModelSettings has no key {unknown[0]!r}; its keys: {', '.join(_KINDS)}"
        )
    for key, value in given.items():
        if value is None and key in _NULLABLE:
            continue
        kinds = _KINDS[key]
        wrong_bool = isinstance(value, bool) and bool not in kinds
        if wrong_bool or not isinstance(value, kinds):
            names = " or ".join(kind.__name__ for kind in kinds)
            raise ConfigurationError(
                f"ModelSettings[{key!r}] must be {names}, not {type(value).__name__}"
            )
        if key in ("max_tokens", "timeout_s") and isinstance(value, int | float) and value <= 0:
            raise ConfigurationError(f"ModelSettings[{key!r}] must be positive, not {value}")
    try:
        normalize_tool_choice(given.get("tool_choice", "auto"))
    except ValueError as exc:
        raise ConfigurationError(f"ModelSettings['tool_choice']: {exc}") from None
    return typing.cast(ModelSettings, {**MODEL_SETTINGS_DEFAULTS, **given})


def _check_count(group: str, name: str, value: object, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigurationError(f"{group}.{name} must be an int, not {type(value).__name__}")
    count: int = value
    if count < 1:
        raise ConfigurationError(f"{group}.{name} must be at least 1, not {value}")


@dataclass(frozen=True)
class AgentLimits:
    """How far one run of the agent goes (pydantic-ai's ``UsageLimits``).

    ``Agent(..., limits=AgentLimits(max_turns=5))``. The runtime's own caps
    (calls, time, memory of a script) are :class:`~toolscript.Limits`, given
    with ``runtime_options={"limits": ...}``.

    Raises:
        ConfigurationError: a field is not a positive int (the message names it).
    """

    max_turns: int = 20
    """The most model requests per run; the last one is the forced answer."""
    token_budget: int | None = None
    """Input+output tokens after which the next turn is the forced answer (None: no cap)."""
    max_result_chars: int = 20_000
    """Cap of what a script returns to the model."""
    max_tool_result_chars: int = 100_000
    """Cap of what a direct (classic) tool call returns to the model."""

    def __post_init__(self) -> None:
        _check_count("AgentLimits", "max_turns", self.max_turns)
        _check_count("AgentLimits", "token_budget", self.token_budget, optional=True)
        _check_count("AgentLimits", "max_result_chars", self.max_result_chars)
        _check_count("AgentLimits", "max_tool_result_chars", self.max_tool_result_chars)


@dataclass(frozen=True)
class Endpoint:
    """Where the model is reached and with what (what pydantic-ai's providers take).

    ``Agent("openai:gpt-4.1", endpoint=Endpoint(base_url=..., api_key=...))``;
    by default the SDK's own URL and the usual environment variables are used.
    Ignored when ``provider`` is a ready :class:`~toolscript.runtime.providers.Provider`.

    Raises:
        ConfigurationError: ``base_url`` or ``api_key`` is not a string.
    """

    base_url: str | None = None
    """The endpoint's URL (default: the SDK's, or the OpenAI-compatible profile's)."""
    api_key: str | None = field(default=None, repr=False)
    """The API key (default: the provider's usual environment variable)."""
    client: Any = field(default=None, repr=False)
    """A ready ``openai.OpenAI`` / ``anthropic.Anthropic`` / ``google.genai.Client``;
    its own retries are switched off (the agent retries, see ``ModelSettings.retry``)."""
    async_client: Any = field(default=None, repr=False)
    """The async client for async runs (default: made from ``client``'s settings)."""

    def __post_init__(self) -> None:
        for name in ("base_url", "api_key"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise ConfigurationError(
                    f"Endpoint.{name} must be a string, not {type(value).__name__}"
                )
