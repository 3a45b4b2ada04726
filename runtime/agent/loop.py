"""The agent loop: request, execute, return results, continue — until an answer.

Each turn sends the conversation and the offered functions; the model's calls
run through :class:`~.executor.TurnExecutor`; the replies go back in the
dialect's shape. When the turn cap or the token budget is reached, the replies
of the last turn carry a request to answer, and one final turn is sent with
``tool_choice="none"`` (or without tools where the endpoint cannot say
"none"), so a run ends with an answer instead of an exception.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from toolscript.errors import ConfigurationError

from .. import prompts
from ..providers import PROVIDER_NAMES, Provider, Request, RetryPolicy, Usage, make_provider
from ..providers.base import ToolChoice, normalize_tool_choice
from .executor import Step, TurnExecutor
from .offer import MODES, Offer, build_offer
from .protocols import RuntimeLike, SessionLike, ToolCallRecordLike
from .result import AgentResult, StopReason

__all__ = ["Agent"]

log = logging.getLogger("toolscript.agent")


class Agent:
    """A model driving a toolscript runtime, in programmatic, classic or mixed mode.

    Args:
        runtime: the :class:`~toolscript.Runtime` whose tools and sandbox are used.
        provider: the dialect: ``"openai"`` (Chat Completions), ``"openai-responses"``,
            ``"anthropic"``, or an OpenAI-compatible profile (``"deepseek"``,
            ``"kimi"``, ``"glm"``, ``"qwen"``, ``"openai-compatible"``).
        model: the model name.
        client: a ready ``openai.OpenAI`` / ``anthropic.Anthropic``; by default one is
            built from ``base_url`` / ``api_key`` or the usual environment variables.
            Its own retries are switched off; this agent retries (see ``retry``).
        mode: ``"programmatic"`` (one ``run_script`` tool), ``"classic"`` (each tool
            a function) or ``"mixed"`` (both).
        max_turns: the most model requests per run; the last is the forced answer.
        token_budget: input+output tokens after which the next turn is the forced answer.
        tool_choice: ``"auto"``, ``"none"``, ``"required"`` or ``{"name": TOOL}``.
        parallel_tool_calls: allow several calls per turn (``None``: endpoint default).
        strict: strict-mode schemas where the dialect/profile supports them.
        system: extra system text (programmatic modes add their own guidance after it).
        temperature: sampling temperature (``None``: endpoint default).
        max_tokens: output cap per turn (Anthropic default: 4096).
        max_result_chars: cap of what a script returns to the model.
        max_tool_result_chars: cap of what a direct tool call returns to the model.
        timeout_s: per-request timeout of the SDK client.
        retry: endpoint retry policy (5xx/429/timeouts).
        extra_body: extra top-level request fields, sent verbatim.
        prompt_cache: Anthropic: mark the tool definitions as a cache breakpoint.
    """

    def __init__(
        self,
        runtime: RuntimeLike,
        provider: str = "openai",
        model: str | None = None,
        *,
        client: Any = None,
        mode: str = "programmatic",
        max_turns: int = 20,
        token_budget: int | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        tool_choice: ToolChoice = "auto",
        parallel_tool_calls: bool | None = None,
        strict: bool = False,
        system: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        max_result_chars: int = 20_000,
        max_tool_result_chars: int = 100_000,
        timeout_s: float | None = None,
        retry: RetryPolicy | None = None,
        extra_body: dict[str, Any] | None = None,
        prompt_cache: bool = True,
    ) -> None:
        if not model:
            raise ConfigurationError("Agent needs model=, the model name to request")
        if mode not in MODES:
            raise ConfigurationError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        if provider not in PROVIDER_NAMES:
            raise ConfigurationError(
                f"unknown provider {provider!r}; choose one of {', '.join(PROVIDER_NAMES)}"
            )
        if max_turns < 1:
            raise ConfigurationError(f"max_turns must be at least 1, not {max_turns}")
        if token_budget is not None and token_budget < 1:
            raise ConfigurationError(f"token_budget must be positive, not {token_budget}")
        try:
            normalize_tool_choice(tool_choice)
        except ValueError as exc:
            raise ConfigurationError(str(exc)) from None
        self.runtime = runtime
        self.mode = mode
        self.model = model
        self.max_turns = max_turns
        self.token_budget = token_budget
        self.strict = strict
        self.max_result_chars = max_result_chars
        self.max_tool_result_chars = max_tool_result_chars
        self.provider: Provider = make_provider(
            provider,
            client=client,
            base_url=base_url,
            api_key=api_key,
            timeout_s=timeout_s,
            retry=retry,
            prompt_cache=prompt_cache,
        )
        self.offer: Offer = build_offer(
            runtime.registry,
            mode,
            max_result_chars=max_result_chars,
            modules=_runtime_modules(runtime),
        )
        self._check_tool_choice(tool_choice)
        self.request = Request(
            model=model,
            system=_system_text(system, self.offer.run_script),
            tools=self.offer.specs,
            tool_choice=tool_choice,
            parallel_tool_calls=parallel_tool_calls,
            strict=strict,
            temperature=temperature,
            max_tokens=max_tokens,
            extra_body=dict(extra_body or {}),
        )

    def _check_tool_choice(self, tool_choice: ToolChoice) -> None:
        kind, name = normalize_tool_choice(tool_choice)
        offered = [spec.name for spec in self.offer.specs]
        if kind == "named" and name not in offered:
            raise ConfigurationError(
                f"tool_choice names {name!r}, which is not offered in {self.mode} mode; "
                f"offered: {', '.join(offered) or '(none)'}"
            )

    def run(self, prompt: str, *, session: SessionLike | None = None) -> AgentResult:
        """Run the loop on ``prompt`` until the model answers or a cap forces an answer.

        Scripts of one run share a session (variables persist across turns).
        Pass ``session`` to reuse one across runs; by default a fresh session is
        opened and closed.

        Raises:
            ModelEndpointError: the model endpoint failed (after retries for
                transient failures; at once for 400/401/403).
            ToolscriptError: from the session, e.g. an approval hook that stops
                the run or an unavailable backend.
        """
        if session is not None:
            return self._run(prompt, session)
        with self.runtime.session() as fresh:
            return self._run(prompt, fresh)

    def _run(self, prompt: str, session: SessionLike) -> AgentResult:
        provider = self.provider
        executor = TurnExecutor(
            session,
            self.offer,
            max_script_chars=self.max_result_chars,
            max_tool_chars=self.max_tool_result_chars,
            strict=self.strict,
        )
        messages: list[dict[str, Any]] = provider.user_message(prompt)
        usage = Usage()
        steps: list[Step] = []
        records: list[ToolCallRecordLike] = []
        forced: StopReason | None = "max_turns" if self.max_turns == 1 else None
        turn_no = 0
        while True:
            turn_no += 1
            request = self.request
            if forced is not None:
                request = replace(request, tool_choice="none")
            turn = provider.complete(messages, request)
            usage.add(turn.usage)
            messages.extend(turn.history)
            if forced is not None or not turn.tool_calls:
                if forced is not None and turn.tool_calls:
                    log.warning("the final turn still asked for tools; they were not run")
                return AgentResult(
                    answer=turn.text,
                    turns=turn_no,
                    usage=usage,
                    messages=messages,
                    tool_calls=records,
                    steps=steps,
                    stopped_by=forced or "answer",
                )
            turn_steps = executor.execute(turn.tool_calls)
            steps.extend(turn_steps)
            for step in turn_steps:
                records.extend(step.records)
            forced = self._cap_reached(turn_no, usage)
            followup = prompts.FINAL_ANSWER_REQUEST if forced is not None else None
            outcomes = [s.outcome() for s in turn_steps]
            messages.extend(provider.tool_results(turn, outcomes, followup))

    def _cap_reached(self, turns_done: int, usage: Usage) -> StopReason | None:
        if turns_done + 1 >= self.max_turns:
            return "max_turns"
        if self.token_budget is not None and usage.total_tokens >= self.token_budget:
            return "token_budget"
        return None


def _system_text(system: str | None, programmatic: bool) -> str | None:
    parts = [p for p in (system, prompts.PROGRAMMATIC_SYSTEM if programmatic else None) if p]
    return "\n\n".join(parts) or None


def _runtime_modules(runtime: Any) -> tuple[str, ...]:
    for attribute in ("allowed_modules", "modules"):
        value = getattr(runtime, attribute, None)
        if value and isinstance(value, (list, tuple, set, frozenset)):
            return tuple(sorted(value))
    return prompts.DEFAULT_MODULES
