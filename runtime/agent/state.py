"""The bookkeeping of one agent run, apart from any I/O.

:class:`RunState` holds the conversation, usage, steps and caps of one run and
decides what happens after each model turn; the drivers in :mod:`.loop` (sync,
async, streamed) do the I/O — model requests, tool groups, the session probe —
and feed the outcomes back. One state machine, so the four ways to run an
agent cannot drift apart.

After the turn cap or the token budget, the replies of the last turn carry a
request to answer, and one final turn is sent with ``tool_choice="none"`` (or
without tools where the endpoint cannot say "none"; with ``output_type``: the
choice names ``final_answer``). Calls the model still makes in that turn are
not run; they are answered as such, so the conversation stays well formed for
a later ``message_history``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from toolscript.errors import AgentOutputError

from .. import prompts
from ..providers.base import Message, ModelTurn, Request, ToolCall, ToolOutcome, Usage
from .executor import Step, TurnExecutor, not_executed
from .format import to_json
from .history import bound_names, earlier_scripts, parse_probe, probe_script
from .offer import tool_spec
from .output import OutputInvalid
from .paused import AgentState, PausedStep
from .protocols import RunResultLike, SessionLike, ToolCallRecordLike
from .result import AgentResult, StopReason

if TYPE_CHECKING:
    from .loop import Agent

__all__ = ["RunState"]

log = logging.getLogger("toolscript.agent")

#: The call id of the session probe's step, if it ever has one.
PROBE_CALL_ID = "toolscript-session-probe"

#: Names scripts see besides the tools (never reported as the model's variables).
_SANDBOX_NAMES = ("parallel", "ToolError", "ToolArgumentError", "ToolDenied", "ToolNotFound",
                  "ToolTimeout")


class RunState:
    """One run's conversation and progress; see the module docstring."""

    def __init__(
        self,
        agent: Agent,
        prompt: str,
        session: SessionLike,
        history: list[Message] | None = None,
    ) -> None:
        self.agent = agent
        self.provider = agent.provider
        self.prompt = prompt
        self.session = session
        self.history = list(history or [])
        intercept: dict[str, Callable[[ToolCall], Step]] = {}
        if agent.output is not None:
            intercept[prompts.FINAL_ANSWER_NAME] = self._final_answer_reply
        self.executor = TurnExecutor(
            session,
            agent.offer,
            max_script_chars=agent.limits.max_result_chars,
            max_tool_chars=agent.limits.max_tool_result_chars,
            strict=agent.model_settings.get("strict", False),
            intercept=intercept,
        )
        self.messages: list[Message] = list(self.history)
        self.usage = Usage()
        self.steps: list[Step] = []
        self.records: list[ToolCallRecordLike] = []
        self.turn_no = 0
        self.forced: StopReason | None = "max_turns" if agent.limits.max_turns == 1 else None
        self.result: AgentResult | None = None
        self._earlier_names: list[str] = []
        self._probe_code: str | None = None
        self.probe_step: Step | None = None
        """The probe's step, when it made tool calls (reported, see :meth:`start`)."""

    # --- start -----------------------------------------------------------------------
    def probe(self) -> str | None:
        """A script asking the session which variables of the earlier conversation it
        holds (run it before :meth:`start`), or None when there is nothing to ask."""
        if not self.history or not self.agent.offer.run_script:
            return None
        exclude = [*self.agent.offer.script_tools, *_SANDBOX_NAMES]
        self._earlier_names = bound_names(earlier_scripts(self.provider, self.history), exclude)
        self._probe_code = probe_script(self._earlier_names) if self._earlier_names else None
        return self._probe_code

    def start(self, probe_result: RunResultLike | None = None) -> None:
        """Append the user's message (with what the probe found, if it ran).

        Tool calls of the probe (it makes none; this is the record if one
        ever did) are reported like any other: in ``tool_calls`` and as a step.
        """
        text = self.prompt
        calls = list(getattr(probe_result, "tool_calls", None) or [])
        if calls:
            self.probe_step = Step(PROBE_CALL_ID, prompts.RUN_SCRIPT_NAME,
                                   {"code": self._probe_code}, True, False,
                                   "error: the agent's session probe made tool calls",
                                   calls, probe_result)
            self.steps.append(self.probe_step)
            self.records.extend(calls)
        if self._earlier_names and probe_result is not None:
            found = parse_probe(probe_result, self._earlier_names)
            if found is not None:
                kept = [n for n in self._earlier_names if n in found]
                gone = [n for n in self._earlier_names if n not in found]
                text = f"{prompts.session_notice(kept, gone)}\n\n{text}"
        self.messages.extend(self.provider.user_message(text))

    # --- turns -----------------------------------------------------------------------
    def request(self) -> Request:
        """The request of the next turn."""
        request: Request = self.agent.request
        loaded = self.executor.loaded
        if loaded:  # deferred tools a search found: offered from now on, after the rest
            request = replace(request, tools=[*request.tools, *(
                tool_spec(loaded[name]) for name in sorted(loaded))])
        if self.forced is None:
            return request
        if self.agent.output is not None:
            return replace(request, tool_choice={"name": prompts.FINAL_ANSWER_NAME})
        return replace(request, tool_choice="none")

    def on_turn(self, turn: ModelTurn) -> list[ToolCall]:
        """Take a model turn: the calls to execute now (then :meth:`after_tools`), or
        none — then :attr:`result` is set (the run is over) or the next turn follows."""
        self.turn_no += 1
        self.usage.add(turn.usage)
        self.messages.extend(turn.history)
        if self.agent.output is not None:
            return self._structured(turn)
        if self.forced is not None or not turn.tool_calls:
            if turn.tool_calls:
                log.warning("the final turn still asked for tools; they were not run")
                self._answer_unrun(turn, "the run had reached its limit of tool use")
            self._finish(turn.text)
            return []
        return list(turn.tool_calls)

    def after_tools(self, turn: ModelTurn, steps: list[Step]) -> None:
        """Record the steps of ``turn`` and send their replies back."""
        self.steps.extend(steps)
        for step in steps:
            self.records.extend(step.records)
        self.forced = self._cap_reached()
        followup = self._final_request() if self.forced is not None else None
        outcomes = [s.outcome() for s in steps]
        self.messages.extend(self.provider.tool_results(turn, outcomes, followup))

    # --- structured answers ------------------------------------------------------------
    def _structured(self, turn: ModelTurn) -> list[ToolCall]:
        spec = self.agent.output
        assert spec is not None
        finals = [c for c in turn.tool_calls if c.name == prompts.FINAL_ANSWER_NAME]
        if finals:
            final = finals[0]
            try:
                output = spec.check(final.parsed_arguments())
            except OutputInvalid as exc:
                if self.forced is not None:
                    self._give_up(turn, f"the final answer was invalid: {exc}")
                return list(turn.tool_calls)
            accepted = Step(final.id, final.name, final.arguments, True, True,
                            "ok: final answer accepted")
            self._answer_unrun(turn, "the final answer ended the run", accepted)
            self._finish(to_json(final.parsed_arguments()), output)
            return []
        if turn.tool_calls:
            if self.forced is not None:
                self._give_up(turn, "the model called tools instead of final_answer")
            return list(turn.tool_calls)
        try:
            output = spec.check_text(turn.text)
        except OutputInvalid:
            if self.forced is not None:
                self._give_up(turn, "the model answered in plain text, not with final_answer")
            self.forced = self._cap_reached()
            request = self._final_request() if self.forced else prompts.OUTPUT_REQUEST
            self.messages.extend(self.provider.user_message(request))
            return []
        self._finish(turn.text, output)
        return []

    def _final_answer_reply(self, call: ToolCall) -> Step:
        """The executor's reply to a ``final_answer`` call that :meth:`_structured`
        did not accept (an invalid answer, or a second one in the turn)."""
        assert self.agent.output is not None
        try:
            self.agent.output.check(call.parsed_arguments())
            text = "error: not_executed: only the first final_answer of a turn is read."
        except OutputInvalid as exc:
            text = f"error: invalid_output: {exc}. Call final_answer again with a fixed answer."
        return Step(call.id, call.name, call.arguments, False, False, text)

    def _give_up(self, turn: ModelTurn, why: str) -> None:
        self._answer_unrun(turn, "the run had reached its limit of tool use")
        self._finish(turn.text)
        raise AgentOutputError(
            f"no valid structured answer within {self.turn_no} turns: {why}", self.result
        )

    def _final_request(self) -> str:
        if self.agent.output is not None:
            return prompts.FINAL_OUTPUT_REQUEST
        return prompts.FINAL_ANSWER_REQUEST

    # --- pauses (durable approvals) -----------------------------------------------------
    def pause(self, turn: ModelTurn, steps: list[Step], remaining: list[ToolCall]) -> None:
        """End the run paused: some of ``steps`` (the turn's calls answered or paused so
        far, in call order) wait for a person; ``remaining`` have not run."""
        waiting = [s for s in steps if s.paused]
        pending = [p for s in waiting for p in getattr(s.run, "pending", None) or []]
        session_id = str(getattr(self.session, "id", ""))
        saved = AgentState(
            provider=self.provider.name, model=str(self.agent.model), mode=self.agent.mode,
            prompt=self.prompt, messages=list(self.messages),
            history_length=len(self.history), turn_no=self.turn_no,
            usage=dataclasses.asdict(self.usage), turn_text=turn.text,
            turn_calls=[AgentState.call_dict(c) for c in turn.tool_calls],
            turn_history=list(turn.history),
            done=[step_dict(s) for s in steps if not s.paused],
            paused=[PausedStep(s.call_id, s.name, s.arguments, s.paused,
                               str(getattr(s.run, "continuation", "") or ""),
                               [p.to_dict() for p in getattr(s.run, "pending", None) or []],
                               session_id) for s in waiting],
            remaining=[AgentState.call_dict(c) for c in remaining],
            earlier_steps=[step_dict(s) for s in self.steps],
        )
        for step in steps:
            self.records.extend(step.records)
        self.steps.extend(steps)
        self._finish("")
        assert self.result is not None
        self.result.status = "paused"
        self.result.pending = pending
        self.result.state = saved

    def restore(self, saved: AgentState) -> None:
        """Take over the conversation and counts of a paused run (before resuming it)."""
        self.messages = list(saved.messages)
        self.history = self.messages[: saved.history_length]
        self.turn_no = saved.turn_no
        self.usage = saved.usage_object()
        self.steps = [step_of(d) for d in saved.earlier_steps]
        self.forced = None

    # --- the end -----------------------------------------------------------------------
    def _answer_unrun(self, turn: ModelTurn, reason: str, accepted: Step | None = None) -> None:
        """Reply to every call of ``turn`` that will not run (the conversation stays
        well formed: every call has its answer)."""
        steps = [
            accepted if accepted is not None and call.id == accepted.call_id
            else not_executed(call, reason)
            for call in turn.tool_calls
        ]
        self.steps.extend(steps)
        outcomes = [ToolOutcome(s.call_id, s.output, not s.ok) for s in steps]
        self.messages.extend(self.provider.tool_results(turn, outcomes))

    def _finish(self, answer: str, output: Any = None) -> None:
        self.result = AgentResult(
            answer=answer,
            turns=self.turn_no,
            usage=self.usage,
            messages=self.messages,
            tool_calls=self.records,
            steps=self.steps,
            stopped_by=self.forced or "answer",
            output=output,
            provider=self.provider.name,
            history_length=len(self.history),
        )

    def _cap_reached(self) -> StopReason | None:
        agent = self.agent
        if self.turn_no + 1 >= agent.limits.max_turns:
            return "max_turns"
        budget = agent.limits.token_budget
        if budget is not None and self.usage.total_tokens >= budget:
            return "token_budget"
        return None


def step_dict(step: Step) -> dict[str, Any]:
    """A step as JSON data (its records and run result stay behind)."""
    return {"call_id": step.call_id, "name": step.name, "arguments": step.arguments,
            "executed": step.executed, "ok": step.ok, "output": step.output}


def step_of(data: dict[str, Any]) -> Step:
    """The inverse of :func:`step_dict` (without records)."""
    return Step(str(data["call_id"]), str(data["name"]), data.get("arguments"),
                bool(data.get("executed")), bool(data.get("ok")), str(data.get("output", "")))
