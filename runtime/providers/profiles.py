"""OpenAI-compatible endpoint profiles: each endpoint's quirks, as data.

The Chat Completions dialect (:mod:`.chat`) reads a :class:`Profile` and
applies every quirk it lists; adding an endpoint means adding an entry here,
not code. Each quirk has a test in ``tests/agent/test_agent_profiles.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["PROFILES", "Profile", "get_profile"]

ALL_TOOL_CHOICES = frozenset({"auto", "none", "required", "named"})


@dataclass(frozen=True)
class Profile:
    """What one OpenAI-compatible endpoint accepts.

    Attributes:
        name: the ``provider=`` name.
        base_url: default endpoint (``None``: the SDK's default / env vars).
        api_key_env: environment variable holding the key.
        supports_strict: whether ``function.strict`` is accepted at all.
        strict_base_url_marker: when set, strict is only sent if the base URL
            contains this text (DeepSeek: only its ``/beta`` endpoint).
        tool_choices: the ``tool_choice`` kinds accepted ("auto", "none",
            "required", "named"); an unsupported one degrades to "auto", and a
            final turn that cannot say "none" is sent without tools.
        supports_parallel_switch: whether ``parallel_tool_calls`` may be sent.
        tool_name_pattern: a name rule stricter than ours; names that break it
            are sent with ``tool_name_prefix`` and mapped back on return.
        temperature_open_interval: ``(low, high)`` the temperature must lie
            strictly inside; values outside are clamped just inside.
        inline_schema_defs: inline ``$defs`` / ``$ref`` in parameter schemas.
        reasoning_field: an assistant field carrying the model's reasoning.
        reasoning_on_tool_turns_only: keep ``reasoning_field`` in history only
            on assistant messages that made tool calls (dropped elsewhere).
        drop_assistant_fields: response-only fields never sent back.
        drop_assistant_fields_if_null: response-only fields dropped when null.
        max_tokens_field: the body field carrying the output cap.
    """

    name: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    supports_strict: bool = True
    strict_base_url_marker: str | None = None
    tool_choices: frozenset[str] = ALL_TOOL_CHOICES
    supports_parallel_switch: bool = True
    tool_name_pattern: str | None = None
    tool_name_prefix: str = "t_"
    temperature_open_interval: tuple[float, float] | None = None
    inline_schema_defs: bool = False
    reasoning_field: str | None = None
    reasoning_on_tool_turns_only: bool = False
    drop_assistant_fields: frozenset[str] = frozenset({"annotations"})
    drop_assistant_fields_if_null: frozenset[str] = field(
        default_factory=lambda: frozenset({"refusal", "audio", "function_call"})
    )
    max_tokens_field: str = "max_tokens"

    def strict_allowed(self, base_url: str | None) -> bool:
        """Whether strict mode may be sent to ``base_url``."""
        if not self.supports_strict:
            return False
        if self.strict_base_url_marker is None:
            return True
        return self.strict_base_url_marker in (base_url or "")

    def wire_name(self, name: str) -> str:
        """The tool name as sent to this endpoint."""
        if self.tool_name_pattern is None or re.fullmatch(self.tool_name_pattern, name):
            return name
        return self.tool_name_prefix + name

    def clamp_temperature(self, value: float | None) -> float | None:
        """``value`` moved strictly inside the profile's open interval, if it has one."""
        if value is None or self.temperature_open_interval is None:
            return value
        low, high = self.temperature_open_interval
        margin = (high - low) / 100
        return min(max(value, low + margin), high - margin)


PROFILES: dict[str, Profile] = {
    "openai": Profile(
        name="openai",
        max_tokens_field="max_completion_tokens",
    ),
    "openai-compatible": Profile(name="openai-compatible"),
    "deepseek": Profile(
        name="deepseek",
        base_url="https://api.deepseek.com",
        api_key_env="DEEPSEEK_API_KEY",
        strict_base_url_marker="/beta",
        reasoning_field="reasoning_content",
        reasoning_on_tool_turns_only=True,
    ),
    "kimi": Profile(
        name="kimi",
        base_url="https://api.moonshot.ai/v1",
        api_key_env="MOONSHOT_API_KEY",
        tool_choices=frozenset({"auto", "none", "named"}),
        tool_name_pattern=r"[a-zA-Z_][a-zA-Z0-9\-_]{0,127}",
        reasoning_field="reasoning_content",
    ),
    "glm": Profile(
        name="glm",
        base_url="https://open.bigmodel.cn/api/paas/v4",
        api_key_env="ZHIPUAI_API_KEY",
        tool_choices=frozenset({"auto"}),
        temperature_open_interval=(0.0, 1.0),
        reasoning_field="reasoning_content",
    ),
    "gemini-openai": Profile(
        name="gemini-openai",
        base_url="https://generativelanguage.googleapis.com/v1beta/openai/",
        api_key_env="GEMINI_API_KEY",
        supports_strict=False,
        supports_parallel_switch=False,
        inline_schema_defs=True,
    ),
    "qwen": Profile(
        name="qwen",
        base_url="https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
        api_key_env="DASHSCOPE_API_KEY",
        inline_schema_defs=True,
        reasoning_field="reasoning_content",
    ),
}


def get_profile(name: str) -> Profile:
    """The profile called ``name``; raises ``KeyError`` listing the known ones."""
    try:
        return PROFILES[name]
    except KeyError:
        raise KeyError(f"unknown profile {name!r}; known: {', '.join(sorted(PROFILES))}") from None
