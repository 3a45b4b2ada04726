"""Runs the calls of one model turn through the session and collects the replies.

* ``run_script`` calls run in the agent's session, one after the other.
* Direct tool calls go through ``Session.call_tool(s)`` — the same dispatcher
  (validation, approval, timeouts, audit) as calls from scripts. A run of
  consecutive read-only calls is dispatched together with ``call_tools`` (the
  core runs them concurrently); a write call runs alone, in the model's order.
* After a failed script or a failed write call, the remaining calls of the
  turn are not executed (they may depend on it); each still gets a reply,
  marked as an error saying so, so every call id is answered.
* Bad arguments, unknown tools and tool failures become error replies the
  model can act on; authorisation failures and infrastructure errors are
  exceptions from the session and end the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import prompts
from ..providers.base import ToolCall, ToolOutcome
from ..providers.schema import drop_nulls_for_optional
from .format import cap, format_run_result, format_tool_record
from .offer import Offer
from .protocols import RunResultLike, SessionLike, ToolCallRecordLike

__all__ = ["Step", "TurnExecutor"]


@dataclass
class Step:
    """One call the model asked for and the reply it got.

    Attributes:
        call_id: the dialect's call id.
        name: ``run_script`` or a tool name.
        arguments: the arguments as the model sent them.
        executed: False when the call was refused before running or skipped.
        ok: whether it succeeded.
        output: the text sent back to the model.
        records: the host tool calls it caused (audited by the core).
        run: the script's result, for ``run_script`` calls that ran.
    """

    call_id: str
    name: str
    arguments: Any
    executed: bool
    ok: bool
    output: str
    records: list[ToolCallRecordLike] = field(default_factory=list)
    run: RunResultLike | None = None

    def outcome(self) -> ToolOutcome:
        """The reply for the provider."""
        return ToolOutcome(call_id=self.call_id, content=self.output, is_error=not self.ok)


class TurnExecutor:
    """Executes the tool calls of a turn for one agent run."""

    def __init__(
        self,
        session: SessionLike,
        offer: Offer,
        *,
        max_script_chars: int,
        max_tool_chars: int,
        strict: bool = False,
    ) -> None:
        self.session = session
        self.offer = offer
        self.max_script_chars = max_script_chars
        self.max_tool_chars = max_tool_chars
        self.strict = strict

    def execute(self, calls: list[ToolCall]) -> list[Step]:
        """One :class:`Step` per call, in call order."""
        steps: list[Step] = []
        halted_by: str | None = None
        i = 0
        while i < len(calls):
            call = calls[i]
            if halted_by is not None:
                steps.append(_not_executed(call, halted_by))
                i += 1
                continue
            if call.name == prompts.RUN_SCRIPT_NAME and self.offer.run_script:
                step = self._script(call)
                steps.append(step)
                if step.executed and not step.ok:
                    halted_by = f"the earlier run_script call {call.id} failed"
                i += 1
                continue
            tool = self.offer.direct.get(call.name)
            if tool is None:
                steps.append(self._unknown(call))
                i += 1
                continue
            if getattr(tool, "read_only", False):
                j = i
                while j < len(calls) and self._is_read_only_direct(calls[j]):
                    j += 1
                steps.extend(self._read_batch(calls[i:j]))
                i = j
                continue
            step = self._direct(call)
            steps.append(step)
            if not step.ok:
                halted_by = f"the earlier write call {call.name} ({call.id}) failed"
            i += 1
        return steps

    # --------------------------------------------------------------- scripts
    def _script(self, call: ToolCall) -> Step:
        parsed = call.parsed_arguments()
        code = parsed.get("code") if parsed is not None else None
        if not isinstance(code, str):
            shown = call.arguments if isinstance(call.arguments, str) else repr(call.arguments)
            text = (
                'error: invalid_arguments: run_script takes a JSON object {"code": "<Python '
                f'source>"}}; got {cap(shown, 300)}'
            )
            return Step(call.id, call.name, call.arguments, False, False, text)
        result = self.session.run(code)
        text, is_error = format_run_result(result, self.max_script_chars)
        return Step(
            call.id, call.name, code, True, not is_error, text, list(result.tool_calls), result
        )

    # ----------------------------------------------------------- direct calls
    def _is_read_only_direct(self, call: ToolCall) -> bool:
        tool = self.offer.direct.get(call.name)
        return tool is not None and bool(getattr(tool, "read_only", False))

    def _arguments(self, call: ToolCall) -> dict[str, Any] | str:
        parsed = call.parsed_arguments()
        if parsed is None:
            return call.arguments if isinstance(call.arguments, str) else str(call.arguments)
        if self.strict:
            tool = self.offer.direct[call.name]
            parsed = drop_nulls_for_optional(parsed, tool.parameters_schema)
        return parsed

    def _direct(self, call: ToolCall) -> Step:
        record = self.session.call_tool(call.name, self._arguments(call))
        return self._step(call, record)

    def _read_batch(self, calls: list[ToolCall]) -> list[Step]:
        if len(calls) == 1:
            return [self._direct(calls[0])]
        records = self.session.call_tools([(c.name, self._arguments(c)) for c in calls])
        return [self._step(c, r) for c, r in zip(calls, records, strict=True)]

    def _step(self, call: ToolCall, record: ToolCallRecordLike) -> Step:
        text, is_error = format_tool_record(record, self.max_tool_chars)
        return Step(call.id, call.name, call.arguments, True, not is_error, text, [record])

    def _unknown(self, call: ToolCall) -> Step:
        available = sorted(
            ([prompts.RUN_SCRIPT_NAME] if self.offer.run_script else []) + list(self.offer.direct)
        )
        hint = ""
        if call.name in self.offer.script_tools:
            hint = f" {call.name} can only be called from inside a run_script script."
        text = (
            f"error: unknown_tool: no function named {call.name!r} is available here.{hint} "
            f"Available: {', '.join(available) or '(none)'}."
        )
        return Step(call.id, call.name, call.arguments, False, False, text)


def _not_executed(call: ToolCall, reason: str) -> Step:
    text = f"error: not_executed: this call was not executed because {reason}."
    return Step(call.id, call.name, call.arguments, False, False, text)
