"""The agent loop: request, execute, return results, continue — until an answer.

Each turn sends the conversation and the offered functions; the model's calls
run through :class:`~.executor.TurnExecutor`; the replies go back in the
provider's shape. :class:`~.state.RunState` keeps the books (caps, structured
answers, continued conversations). The run itself is written once, as a plan
(:meth:`Agent._plan`) that yields events to report and the I/O it needs —
run a script, ask the model, run a group of calls — and two drivers carry
that I/O out, one blocking (:meth:`Agent.run`, :meth:`Agent.stream`) and one
async (:meth:`Agent.run_async`, :meth:`Agent.stream_async`); every run
reports to the same tracing hooks (:mod:`.tracing`).

Async runs use the provider's async client for model requests; the sandbox
I/O (scripts and direct tool calls) runs in a worker thread while the event
loop stays free, and ``async def`` tools run on that loop.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Generator, Iterable, Iterator, Mapping
from contextlib import closing
from dataclasses import dataclass
from typing import Any, TypeVar

from toolscript.tools.asynctools import offload

from toolscript.errors import ConfigurationError

from .. import prompts
from ..calls.stopping import stoppable
from ..events import EventHooks
from ..providers import (
    PROVIDER_NAMES,
    Provider,
    Request,
    make_provider,
    split_model,
)
from ..providers.base import Message, ModelTurn, ToolCall, ToolChoice, normalize_tool_choice
from ..providers.errors import ModelResponseError
from .events import (
    AgentEvent,
    ModelResponded,
    RunFinished,
    ScriptFinished,
    ScriptStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from .executor import Group, Step, classic_step, script_step
from .offer import MODES, Offer, build_offer
from .output import OutputSpec
from .paused import AgentState, PausedStep
from .protocols import RuntimeLike, SessionLike
from .result import AgentResult
from .settings import AgentLimits, Endpoint, ModelSettings, check_model_settings
from .state import RunState, step_of
from .tracing import ModelCallEvents, NoTrace, RunTrace

__all__ = ["Agent"]

log = logging.getLogger("toolscript.agent")

_G = TypeVar("_G", AgentLimits, Endpoint)


def _group(name: str, value: object, kind: type[_G]) -> _G:
    """``value`` if it is a ``kind`` (its defaults when None), else a ConfigurationError."""
    if value is None:
        return kind()
    if not isinstance(value, kind):
        hint = (" (the runtime's Limits go in runtime_options={'limits': ...})"
                if name == "limits" else "")
        raise ConfigurationError(
            f"{name}= takes a {kind.__name__}, not {type(value).__name__}{hint}"
        )
    return value


class Agent:
    """A model driving a toolscript runtime, in programmatic, classic or mixed mode.

    ``Agent("anthropic:claude-sonnet-4-5", tools=[...])`` builds its own runtime
    (close it with :meth:`close` or ``with``); ``Agent(runtime, provider=...,
    model=...)`` drives a runtime you built.

    Args:
        target: (positional) the runtime, or the model as ``"provider:model"``,
            or a :class:`~toolscript.runtime.providers.Provider` object.
        provider: a dialect name — ``"openai"`` (Chat Completions),
            ``"openai-responses"``, ``"anthropic"``, ``"gemini"``, or an
            OpenAI-compatible profile (``"deepseek"``, ``"gemini-openai"``,
            ``"kimi"``, ``"glm"``, ``"qwen"``, ``"openai-compatible"``) — or a
            :class:`~toolscript.runtime.providers.Provider` object (any model;
            see :mod:`toolscript.runtime.agent.testing` for scripted ones).
            Default: the prefix of ``model``, else ``"openai"``.
        model: the model name, optionally prefixed with its provider
            (``"gemini:gemini-2.5-flash"``); optional for a Provider object.
        runtime: the :class:`~toolscript.Runtime` whose tools and sandbox are used
            (default: the agent builds one from ``tools``).
        tools: tools for a runtime the agent builds itself (functions,
            ``Tool`` s, MCP and OpenAPI sources — :meth:`close` closes the
            sources too); not together with ``runtime``.
        runtime_options: keyword arguments for that runtime (``backend``,
            ``approve``, ``limits`` ...).
        system: extra system text (programmatic modes add their own guidance after it).
        output_type: a structured final answer: a pydantic model, a TypedDict, a
            dataclass, another annotation, or a JSON Schema dict; the checked
            answer is ``result.output`` (see :mod:`.output`).
        mode: ``"programmatic"`` (one ``run_script`` tool), ``"classic"`` (each tool
            a function) or ``"mixed"`` (both).
        model_settings: per-request model settings (temperature, max_tokens,
            tool_choice, strict, retry, ...): a :class:`~.settings.ModelSettings`.
        limits: how far a run goes (max_turns, token_budget, result caps): an
            :class:`~.settings.AgentLimits`.
        endpoint: where the model is reached (base_url, api_key, a ready SDK
            client): an :class:`~.settings.Endpoint`; by default the SDK's URL
            and the usual environment variables.

    The arguments that nearly every agent names stay flat; the rest are grouped
    as data (see :mod:`.settings`), each group checked once.

    Raises:
        ConfigurationError: a bad argument; the message names it (for a group,
            the group and the field).
    """

    def __init__(
        self,
        target: RuntimeLike | str | Provider | None = None,
        /,
        provider: str | Provider | None = None,
        model: str | None = None,
        *,
        runtime: RuntimeLike | None = None,
        tools: Iterable[Any] | None = None,
        runtime_options: Mapping[str, Any] | None = None,
        system: str | None = None,
        output_type: Any = None,
        mode: str = "programmatic",
        model_settings: ModelSettings | None = None,
        limits: AgentLimits | None = None,
        endpoint: Endpoint | None = None,
    ) -> None:
        if isinstance(target, str):
            if model is not None:
                raise ConfigurationError(
                    "the model is given twice: as the first argument and as model="
                )
            model = target
        elif isinstance(target, Provider):
            if provider is not None:
                raise ConfigurationError("the provider is given twice")
            provider = target
        elif target is not None:
            if runtime is not None:
                raise ConfigurationError("the runtime is given twice")
            runtime = target
        provider, model = _resolve_model(provider, model)
        if runtime is not None and (tools is not None or runtime_options):
            raise ConfigurationError(
                "tools= and runtime_options= build the agent's own runtime; with a runtime "
                "given, register the tools on it"
            )
        if mode not in MODES:
            raise ConfigurationError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.limits: AgentLimits = _group("limits", limits, AgentLimits)
        """How far a run goes (the defaults of :class:`AgentLimits` when not given)."""
        self.endpoint: Endpoint = _group("endpoint", endpoint, Endpoint)
        """Where the model is reached."""
        self.model_settings: ModelSettings = check_model_settings(model_settings)
        """The model settings in force: the given keys over the defaults."""
        settings = self.model_settings
        self.output: OutputSpec | None = (
            OutputSpec(output_type) if output_type is not None else None
        )
        self.provider: Provider = (
            provider if isinstance(provider, Provider)
            else make_provider(
                provider,
                client=self.endpoint.client,
                async_client=self.endpoint.async_client,
                base_url=self.endpoint.base_url,
                api_key=self.endpoint.api_key,
                timeout_s=settings.get("timeout_s"),
                retry=settings.get("retry"),
                prompt_cache=settings.get("prompt_cache", True),
            )
        )
        self._owns_runtime = runtime is None
        self._sources = [t for t in tools or () if _is_source(t)] if runtime is None else []
        self.runtime: RuntimeLike = _runtime(runtime, tools, runtime_options)
        self.mode = mode
        self.model = model
        self.telemetry: Any = None
        """The tracing of this agent's runs: an object whose ``agent_trace(agent,
        session)`` gives the :class:`~.tracing.RunTrace` of one run (None: no
        tracing); :func:`~toolscript.runtime.integrations.telemetry.instrument_agent`
        sets it. The runtime's ``model_call`` event hooks fire either way."""
        tool_choice = settings.get("tool_choice", "auto")
        try:
            self.offer: Offer = build_offer(
                self.runtime.registry,
                mode,
                max_result_chars=self.limits.max_result_chars,
                modules=_runtime_modules(self.runtime),
            )
            if self.output is not None and prompts.FINAL_ANSWER_NAME in self.runtime.registry:
                raise ConfigurationError(
                    f"a tool is named {prompts.FINAL_ANSWER_NAME!r}, the function that takes "
                    "the structured answer; rename it"
                )
            self._check_tool_choice(tool_choice)
        except BaseException:
            self.close()
            raise
        specs = list(self.offer.specs)
        if self.output is not None:
            specs.append(self.output.tool_spec())
        self.request = Request(
            model=model,
            system=_system_text(system, self.offer.run_script, self.output is not None),
            tools=specs,
            tool_choice=tool_choice,
            parallel_tool_calls=settings.get("parallel_tool_calls"),
            strict=settings.get("strict", False),
            temperature=settings.get("temperature"),
            max_tokens=settings.get("max_tokens"),
            extra_body=dict(settings.get("extra_body") or {}),
        )

    def _check_tool_choice(self, tool_choice: ToolChoice) -> None:
        kind, name = normalize_tool_choice(tool_choice)
        offered = [spec.name for spec in self.offer.specs]
        if self.output is not None:
            offered.append(prompts.FINAL_ANSWER_NAME)
        if kind == "named" and name not in offered:
            raise ConfigurationError(
                f"tool_choice names {name!r}, which is not offered in {self.mode} mode; "
                f"offered: {', '.join(offered) or '(none)'}"
            )

    # --- lifecycle -------------------------------------------------------------------
    def close(self) -> None:
        """Close the runtime the agent built itself and the tool sources (MCP ...)
        given to it in ``tools=``; a runtime you passed stays open. Idempotent."""
        runtime = getattr(self, "runtime", None)
        if self._owns_runtime and runtime is not None:
            closer = getattr(runtime, "close", None)
            if callable(closer):
                closer()
        for source in self._sources:
            closer = getattr(source, "close", None)
            if callable(closer):
                closer()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await offload(self.close)

    # --- sync ------------------------------------------------------------------------
    def run(
        self,
        prompt: str,
        *,
        session: SessionLike | None = None,
        message_history: list[Message] | None = None,
    ) -> AgentResult:
        """Run the loop on ``prompt`` until the model answers or a cap forces an answer.

        Scripts of one run share a session (variables persist across turns).
        Pass ``session`` to reuse one across runs; by default a fresh session is
        opened and closed. ``message_history`` (``result.all_messages()`` of an
        earlier run with the same provider) continues that conversation; the
        model is told which of its earlier variables the session still holds.

        Raises:
            ModelEndpointError: the model endpoint failed (after retries for
                transient failures; at once for 400/401/403).
            AgentOutputError: ``output_type`` is set and no valid structured
                answer came within the turns.
            ToolscriptError: from the session, e.g. an approval hook that stops
                the run or an unavailable backend.
        """
        result: AgentResult | None = None
        for event in self._events(prompt, session, message_history, streaming=False):
            if isinstance(event, RunFinished):
                result = event.result
        assert result is not None
        return result

    def stream(
        self,
        prompt: str,
        *,
        session: SessionLike | None = None,
        message_history: list[Message] | None = None,
    ) -> Iterator[AgentEvent]:
        """:meth:`run`, as the events of :mod:`.events` (model text as it arrives,
        scripts and tool calls as they start and finish); the last event is
        :class:`~.events.RunFinished` with the result."""
        return self._events(prompt, session, message_history, streaming=True)

    def _events(
        self,
        prompt: str,
        session: SessionLike | None,
        history: list[Message] | None,
        *,
        streaming: bool,
    ) -> Iterator[AgentEvent]:
        if session is not None:
            yield from self._tagged_events(prompt, session, history, streaming)
            return
        with self.runtime.session() as fresh:
            yield from self._tagged_events(prompt, fresh, history, streaming)

    def _tagged_events(
        self, prompt: str, session: SessionLike, history: list[Message] | None, streaming: bool
    ) -> Iterator[AgentEvent]:
        previous = _tag(session)
        try:
            yield from self._drive(RunState(self, prompt, session, history), streaming)
        finally:
            _untag(session, previous)

    def _plan(self, state: RunState, streaming: bool) -> Plan:
        """The run, once for every driver: yields the events to report and the
        I/O to do (:class:`_RunScript`, :class:`_AskModel`, :class:`_RunGroup`),
        and is sent each I/O's outcome (or has its exception thrown in)."""
        trace = self._trace(state.session)
        trace.start(state.prompt)
        try:
            code = state.probe()
            state.start((yield _RunScript(code)) if code else None)
            probe = state.probe_step
            if probe is not None:  # the stream shows every call of the run
                yield ScriptStarted(probe.call_id, str(code))
                yield ScriptFinished(probe.call_id, probe.ok, probe.output,
                                     list(probe.records), probe)
            yield from self._turns(state, trace, streaming)
        except BaseException as exc:
            trace.end(state.result, exc)
            raise
        trace.end(state.result)
        yield RunFinished(state.result)

    def _turns(self, state: RunState, trace: RunTrace, streaming: bool) -> Plan:
        """Model turns and their calls until the run has its result (an answer, or a
        pause)."""
        while state.result is None:
            request = state.request()
            turn_no = state.turn_no + 1
            with trace.chat(request, turn_no, state.messages) as record_turn:
                answer = yield _AskModel(list(state.messages), request, streaming, turn_no)
                turn = _checked(answer, self.provider)
                record_turn(turn)
            calls = state.on_turn(turn)
            yield ModelResponded(state.turn_no, turn.text, list(turn.tool_calls), turn.usage)
            if calls:
                yield from self._answer(state, trace, turn, calls, [])

    def _answer(self, state: RunState, trace: RunTrace, turn: ModelTurn, calls: list[ToolCall],
                steps: list[Step], halted_by: str | None = None) -> Plan:
        """Run ``calls`` (the rest of ``turn``; ``steps``: its calls answered so far)
        group by group; send the replies back, or pause the run at a call that
        waits for a person."""
        taken = 0
        for group in state.executor.groups(calls, halted_by):
            yield from _started(group)
            with trace.group(group) as record_steps:
                done: list[Step] = yield _RunGroup(group)
                record_steps(done)
            taken += len(group.calls)
            steps.extend(done)
            yield from _finished(group, done)
            if any(step.paused for step in done):
                state.pause(turn, steps, calls[taken:])
                return
        state.after_tools(turn, steps)

    # --- resume (durable approvals) --------------------------------------------------
    def resume(
        self,
        state: AgentState | dict[str, Any] | str,
        decisions: Mapping[str, Any],
        *,
        session: SessionLike | None = None,
    ) -> AgentResult:
        """Continue a paused run (``result.status == "paused"``) once its calls are
        decided: ``decisions`` maps every id of ``result.pending`` to
        ``Decision.allow()`` or ``Decision.deny(reason)``.

        ``state`` is ``result.state`` (an :class:`~.paused.AgentState`, its dict or
        its JSON), from this process or a stored one. Each paused call resumes
        through :meth:`Runtime.resume <toolscript.Runtime.resume>` (the calls its
        script made before the pause are answered from the journal, never run
        again); the rest of the turn runs, the replies go to the model, and the
        conversation goes on — to an answer or to the next pause.

        ``session``: the paused run's own session, to keep its variables (same
        process); by default a new session under the paused run's session id:
        variables of earlier scripts are gone then, as after any restart.

        Raises:
            ContinuationError: a continuation was refused (tampered, expired,
                already resumed, other tools or approval configuration, a
                decision missing).
            ConfigurationError: the state is not a paused run's, or of another provider.
            ModelEndpointError, AgentOutputError, ToolscriptError: as :meth:`run`.
        """
        saved = self._saved(state)
        result: AgentResult | None = None
        for event in self._resumed_events(saved, decisions, session, streaming=False):
            if isinstance(event, RunFinished):
                result = event.result
        assert result is not None
        return result

    def _saved(self, state: AgentState | dict[str, Any] | str) -> AgentState:
        saved = AgentState.coerce(state)
        if saved.provider != self.provider.name:
            raise ConfigurationError(
                f"the paused run speaks {saved.provider!r}, this agent {self.provider.name!r}: "
                "resume it with an agent of the same provider")
        return saved

    def _resumed_events(self, saved: AgentState, decisions: Mapping[str, Any],
                        session: SessionLike | None, *, streaming: bool
                        ) -> Iterator[AgentEvent]:
        if session is None:
            with self.runtime.session() as fresh:
                _adopt_session_id(fresh, saved)
                yield from self._resumed_events(saved, decisions, fresh, streaming=streaming)
            return
        previous = _tag(session)
        try:
            yield from self._drive(self._resume_state(saved, session), streaming,
                                   _Resuming(saved, dict(decisions)))
        finally:
            _untag(session, previous)

    async def resume_async(
        self,
        state: AgentState | dict[str, Any] | str,
        decisions: Mapping[str, Any],
        *,
        session: SessionLike | None = None,
    ) -> AgentResult:
        """:meth:`resume` for async code (model requests through the async client)."""
        saved = self._saved(state)
        fresh = session is None
        if session is None:
            session = await offload(self.runtime.session)
            _adopt_session_id(session, saved)
        assert session is not None
        previous = _tag(session)
        result: AgentResult | None = None
        try:
            async for event in self._drive_async(self._resume_state(saved, session), False,
                                                 _Resuming(saved, dict(decisions))):
                if isinstance(event, RunFinished):
                    result = event.result
        finally:
            _untag(session, previous)
            if fresh:
                await offload(getattr(session, "close"))  # noqa: B009
        assert result is not None
        return result

    def _resume_state(self, saved: AgentState, session: SessionLike) -> RunState:
        state = RunState(self, saved.prompt, session)
        state.restore(saved)
        return state

    def _resume_plan(self, state: RunState, resuming: _Resuming) -> Plan:
        """The paused turn: resume each paused call, run the rest of the turn, go on."""
        saved = resuming.saved
        trace = self._trace(state.session)
        trace.start(saved.prompt)
        try:
            calls = [AgentState.call_of(c) for c in saved.turn_calls]
            turn = ModelTurn(text=saved.turn_text, tool_calls=calls,
                             history=list(saved.turn_history))
            answered = {d["call_id"]: step_of(d) for d in saved.done}
            halted_by: str | None = None
            for paused in saved.paused:
                ids = [str(p["id"]) for p in paused.pending]
                chosen = {pid: resuming.decisions[pid] for pid in ids
                          if pid in resuming.decisions}
                result = yield _Resume(paused.continuation, chosen)
                step = self._resumed_step(paused, result)
                answered[paused.call_id] = step
                kind = "script" if paused.kind == "script" else "write"
                yield from _finished(Group([AgentState.call_of(
                    {"id": paused.call_id, "name": paused.name,
                     "arguments": paused.arguments})], kind, list), [step])
                if not step.ok and not step.paused and halted_by is None:
                    halted_by = (f"the earlier run_script call {paused.call_id} failed"
                                 if paused.kind == "script" else
                                 f"the earlier write call {paused.name} ({paused.call_id}) failed")
            steps = [answered[c.id] for c in calls if c.id in answered]
            remaining = [AgentState.call_of(c) for c in saved.remaining]
            if any(step.paused for step in steps):
                state.pause(turn, steps, remaining)
            else:
                yield from self._answer(state, trace, turn, remaining, steps, halted_by)
            yield from self._turns(state, trace, False)
        except BaseException as exc:
            trace.end(state.result, exc)
            raise
        trace.end(state.result)
        yield RunFinished(state.result)

    def _resumed_step(self, paused: PausedStep, result: Any) -> Step:
        call = AgentState.call_of({"id": paused.call_id, "name": paused.name,
                                   "arguments": paused.arguments})
        if getattr(result, "status", "") == "paused":
            return Step(call.id, call.name, paused.arguments, True, False, "",
                        list(result.tool_calls), result, paused=paused.kind)
        if paused.kind == "script":
            return script_step(call, str(paused.arguments), result, self.limits.max_result_chars)
        return classic_step(call, result, self.limits.max_tool_result_chars)

    def _drive(self, state: RunState, streaming: bool,
               resuming: _Resuming | None = None) -> Iterator[AgentEvent]:
        """Carry out :meth:`_plan` (or :meth:`_resume_plan`) with blocking I/O."""
        plan = (self._plan(state, streaming) if resuming is None
                else self._resume_plan(state, resuming))
        steps = _Stepper(plan)
        with closing(steps.plan):
            for item in steps:
                if not isinstance(item, _EFFECTS):
                    yield item
                    continue
                try:
                    if isinstance(item, _RunScript):
                        steps.outcome = state.session.run(item.code)
                    elif isinstance(item, _Resume):
                        steps.outcome = _runtime_resume(self.runtime, item, state.session)
                    elif isinstance(item, _RunGroup):
                        steps.outcome = item.group.run()
                    elif item.streaming:  # _AskModel from here on
                        for part in self.provider.stream(item.messages, item.request):
                            if isinstance(part, str):
                                yield TextDelta(part, item.turn_no)
                            else:
                                steps.outcome = part
                    else:
                        steps.outcome = self.provider.complete(item.messages, item.request)
                except BaseException as exc:  # the plan reports it (trace) and re-raises
                    steps.failure = exc

    # --- async -----------------------------------------------------------------------
    async def run_async(
        self,
        prompt: str,
        *,
        session: SessionLike | None = None,
        message_history: list[Message] | None = None,
    ) -> AgentResult:
        """:meth:`run` for async code: model requests through the async SDK client,
        sandbox I/O in a worker thread (the loop stays free), ``async def`` tools
        on this loop. Raises what :meth:`run` raises."""
        result: AgentResult | None = None
        events = self._events_async(prompt, session, message_history, streaming=False)
        async for event in events:
            if isinstance(event, RunFinished):
                result = event.result
        assert result is not None
        return result

    def stream_async(
        self,
        prompt: str,
        *,
        session: SessionLike | None = None,
        message_history: list[Message] | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """:meth:`stream` for async code (``async for event in agent.stream_async(...)``).
        Leaving the loop early: close the iterator (``contextlib.aclosing``) so
        the session is closed at once."""
        return self._events_async(prompt, session, message_history, streaming=True)

    async def _events_async(
        self,
        prompt: str,
        session: SessionLike | None,
        history: list[Message] | None,
        *,
        streaming: bool,
    ) -> AsyncIterator[AgentEvent]:
        fresh = session is None
        if session is None:
            session = await offload(self.runtime.session)
        assert session is not None
        previous = _tag(session)
        try:
            async for event in self._drive_async(
                RunState(self, prompt, session, history), streaming
            ):
                yield event
        finally:
            _untag(session, previous)
            if fresh:
                await offload(getattr(session, "close"))  # noqa: B009

    async def _drive_async(self, state: RunState, streaming: bool,
                           resuming: _Resuming | None = None) -> AsyncIterator[AgentEvent]:
        """Carry out :meth:`_plan` (or :meth:`_resume_plan`) on the event loop: model
        requests through the async client, sandbox I/O in a worker thread."""
        plan = (self._plan(state, streaming) if resuming is None
                else self._resume_plan(state, resuming))
        steps = _Stepper(plan)
        with closing(steps.plan):
            for item in steps:
                if not isinstance(item, _EFFECTS):
                    yield item
                    continue
                try:
                    if isinstance(item, _RunScript):
                        steps.outcome = await stoppable(state.session.run, item.code)
                    elif isinstance(item, _Resume):
                        steps.outcome = await stoppable(_runtime_resume, self.runtime, item,
                                                        state.session)
                    elif isinstance(item, _RunGroup):
                        steps.outcome = await stoppable(item.group.run)
                    elif item.streaming:  # _AskModel from here on
                        async for part in self.provider.stream_async(item.messages,
                                                                     item.request):
                            if isinstance(part, str):
                                yield TextDelta(part, item.turn_no)
                            else:
                                steps.outcome = part
                    else:
                        steps.outcome = await self.provider.complete_async(item.messages,
                                                                           item.request)
                except BaseException as exc:  # the plan reports it (trace) and re-raises
                    steps.failure = exc

    def _trace(self, session: SessionLike) -> RunTrace:
        telemetry = self.telemetry
        trace: RunTrace = NoTrace() if telemetry is None else telemetry.agent_trace(self, session)
        events = getattr(self.runtime, "events", None)
        if isinstance(events, EventHooks):  # the runtime's model_call hooks
            trace = ModelCallEvents(trace, events, self.provider.name, session)
        return trace


# --- the I/O a plan asks its driver for ------------------------------------------------
@dataclass(frozen=True, slots=True)
class _RunScript:
    """Run ``code`` in the run's session; the outcome is its ``RunResult``."""

    code: str


@dataclass(frozen=True, slots=True)
class _AskModel:
    """One model request; the outcome is the ``ModelTurn`` (``None``: a stream
    ended without one). Streamed text goes out as ``TextDelta(turn_no)``."""

    messages: list[Message]
    request: Request
    streaming: bool
    turn_no: int


@dataclass(frozen=True, slots=True)
class _RunGroup:
    """Run one group of the model's calls; the outcome is its list of ``Step``."""

    group: Group


@dataclass(frozen=True, slots=True)
class _Resume:
    """Resume one paused call (``runtime.resume``); the outcome is its ``RunResult``."""

    continuation: str
    decisions: dict[str, Any]


@dataclass(frozen=True, slots=True)
class _Resuming:
    """What :meth:`Agent._resume_plan` continues: the saved state and the decisions."""

    saved: AgentState
    decisions: dict[str, Any]


_Effect = _RunScript | _AskModel | _RunGroup | _Resume
"""Something :meth:`Agent._plan` needs done; the driver does it, sync or async."""
_EFFECTS = (_RunScript, _AskModel, _RunGroup, _Resume)


def _runtime_resume(runtime: Any, item: _Resume, session: SessionLike) -> Any:
    """``runtime.resume(continuation, decisions, session=session)``."""
    resume = getattr(runtime, "resume", None)
    if not callable(resume):
        raise ConfigurationError("this runtime cannot resume paused runs (no resume())")
    return resume(item.continuation, item.decisions, session=session)


def _adopt_session_id(session: Any, saved: AgentState) -> None:
    """A new session takes the paused run's session id (its continuations are bound
    to it)."""
    ids = {p.session_id for p in saved.paused if p.session_id}
    if len(ids) == 1 and hasattr(session, "id"):
        session.id = ids.pop()

Plan = Generator["AgentEvent | _Effect", Any, None]


class _Stepper:
    """Iterates a plan, sending in the outcome (or throwing in the failure) of the
    effect its last item asked for; a driver sets one of them before the next step."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.outcome: Any = None
        self.failure: BaseException | None = None

    def __iter__(self) -> _Stepper:
        return self

    def __next__(self) -> AgentEvent | _Effect:
        outcome, failure = self.outcome, self.failure
        self.outcome = self.failure = None
        return self.plan.send(outcome) if failure is None else self.plan.throw(failure)


# --- helpers ---------------------------------------------------------------------------
def _resolve_model(
    provider: str | Provider | None, model: str | None
) -> tuple[str | Provider, str]:
    """The provider (name or object) and the bare model name."""
    if isinstance(provider, Provider):
        name = model or getattr(provider, "model", None) or provider.name
        return provider, str(name)
    if not model:
        raise ConfigurationError(
            "Agent needs model=, the model name to request (e.g. 'openai:gpt-4.1')"
        )
    prefix, bare = split_model(model)
    if prefix is not None:
        if provider is not None and provider != prefix:
            raise ConfigurationError(
                f"model {model!r} names provider {prefix!r}, but provider={provider!r}"
            )
        provider, model = prefix, bare
    provider = provider or "openai"
    if provider not in PROVIDER_NAMES:
        raise ConfigurationError(
            f"unknown provider {provider!r}; choose one of {', '.join(PROVIDER_NAMES)} "
            "or pass a Provider object"
        )
    return provider, model


def _runtime(
    runtime: RuntimeLike | None, tools: Iterable[Any] | None,
    options: Mapping[str, Any] | None,
) -> RuntimeLike:
    if runtime is not None:
        return runtime
    from ..runtime import Runtime

    return Runtime(tools=list(tools or ()), **dict(options or {}))


def _is_source(item: Any) -> bool:
    """A tool source (``tools()`` gives its tools), as the tool registry takes them."""
    return not callable(item) and callable(getattr(item, "tools", None))


def _checked(turn: ModelTurn | None, provider: Provider) -> ModelTurn:
    if turn is None:
        raise ModelResponseError(f"{provider.name}: the stream ended without a turn",
                                 provider=provider.name)
    return turn


def _tag(session: SessionLike) -> Any:
    """Tag the session's calls with a new agent run id (what approval hooks and
    per-agent-run policy budgets key on); returns the previous tag."""
    previous = getattr(session, "agent_run_id", None)
    if hasattr(session, "agent_run_id"):
        setattr(session, "agent_run_id", uuid.uuid4().hex[:12])  # noqa: B010
    return previous


def _untag(session: SessionLike, previous: Any) -> None:
    if hasattr(session, "agent_run_id"):
        setattr(session, "agent_run_id", previous)  # noqa: B010


def _started(group: Group) -> Iterator[AgentEvent]:
    for call in group.calls:
        if group.kind == "script":
            code = (call.parsed_arguments() or {}).get("code")
            yield ScriptStarted(call.id, code if isinstance(code, str) else "")
        elif group.kind in ("write", "read"):
            yield ToolCallStarted(call.id, call.name, call.arguments)


def _finished(group: Group, steps: list[Step]) -> Iterator[AgentEvent]:
    for step in steps:
        if group.kind == "script":
            yield ScriptFinished(step.call_id, step.ok, step.output, list(step.records), step)
        else:
            yield ToolCallFinished(step.call_id, step.name, step.ok, step.output, step)


def _system_text(system: str | None, programmatic: bool, structured: bool) -> str | None:
    parts = [
        system,
        prompts.PROGRAMMATIC_SYSTEM if programmatic else None,
        prompts.OUTPUT_SYSTEM if structured else None,
    ]
    return "\n\n".join(p for p in parts if p) or None


def _runtime_modules(runtime: Any) -> tuple[str, ...]:
    for attribute in ("allowed_modules", "modules"):
        value = getattr(runtime, attribute, None)
        if value and isinstance(value, (list, tuple, set, frozenset)):
            return tuple(sorted(value))
    return prompts.DEFAULT_MODULES
