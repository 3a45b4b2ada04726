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
* Calls the agent answers itself (``final_answer``) are given as
  ``intercept`` handlers and never reach the session.
* A call that waits for a person (the approval hook answered
  ``Decision.defer``) gives a *paused* step (``Step.paused``): a script that
  paused, or a classic call that was deferred, which is then issued again as
  a one-call script so that it pauses durably (journal, signed continuation)
  like any script. The driver stops the run there (:mod:`.paused`).

:meth:`TurnExecutor.groups` yields the turn one group at a time (a script, a
write call, a batch of read-only calls ...): a driver can report each group
as it starts and finishes, and an async driver runs each in a thread.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .. import prompts
from ..providers.base import ToolCall, ToolOutcome
from ..providers.schema import drop_nulls_for_optional
from .format import cap, format_run_result, format_tool_record
from .offer import Offer, found_tools, function_name
from .protocols import RunResultLike, SessionLike, ToolCallRecordLike

__all__ = ["Group", "Step", "TurnExecutor", "classic_script", "classic_step", "not_executed",
           "script_step"]


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
        paused: ``""``, or why the step waits for a person: ``"script"`` (the
            script paused) or ``"classic"`` (a deferred classic call, whose
            one-call script paused; ``run`` is that script's result).
    """

    call_id: str
    name: str
    arguments: Any
    executed: bool
    ok: bool
    output: str
    records: list[ToolCallRecordLike] = field(default_factory=list)
    run: RunResultLike | None = None
    paused: str = ""

    def outcome(self) -> ToolOutcome:
        """The reply for the provider."""
        return ToolOutcome(call_id=self.call_id, content=self.output, is_error=not self.ok)


@dataclass
class Group:
    """Calls of a turn that run together; :meth:`run` executes them.

    Attributes:
        calls: the calls, in call order.
        kind: ``"script"``, ``"write"``, ``"read"`` (a batch of read-only
            calls), ``"agent"`` (answered by the agent), or ``"refused"``
            (unknown or skipped calls: nothing runs).
    """

    calls: list[ToolCall]
    kind: str
    _run: Callable[[], list[Step]] = field(repr=False)

    def run(self) -> list[Step]:
        """Execute the calls; one :class:`Step` per call, in call order."""
        return self._run()


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
        intercept: dict[str, Callable[[ToolCall], Step]] | None = None,
    ) -> None:
        self.session = session
        self.offer = offer
        self.max_script_chars = max_script_chars
        self.max_tool_chars = max_tool_chars
        self.strict = strict
        self.intercept = dict(intercept or {})
        self.loaded: dict[str, Any] = {}
        """Deferred tools found by a search of this run, by function name: offered and
        callable from the next turn on."""

    def execute(self, calls: list[ToolCall]) -> list[Step]:
        """One :class:`Step` per call, in call order."""
        steps: list[Step] = []
        for group in self.groups(calls):
            steps.extend(group.run())
        return steps

    def groups(self, calls: list[ToolCall], halted_by: str | None = None) -> Iterator[Group]:
        """The turn's calls as groups, in order; run each group before taking the next
        (a failed script or write turns the rest of the turn into refusals; so does
        ``halted_by``, the reason given)."""
        i = 0
        while i < len(calls):
            call = calls[i]
            outcome: list[Step] = []
            if halted_by is not None:
                refuse = functools.partial(not_executed, reason=halted_by)
                yield Group([call], "refused", functools.partial(_one, refuse, call, outcome))
                i += 1
                continue
            handler = self.intercept.get(call.name)
            if handler is not None:
                yield Group([call], "agent", functools.partial(_one, handler, call, outcome))
                i += 1
                continue
            if call.name == prompts.RUN_SCRIPT_NAME and self.offer.run_script:
                yield Group([call], "script", functools.partial(_one, self._script, call, outcome))
                if outcome and outcome[0].executed and not outcome[0].ok:
                    halted_by = f"the earlier run_script call {call.id} failed"
                i += 1
                continue
            tool = self._tool(call.name)
            if tool is None:
                unknown = functools.partial(_one, self._unknown, call, outcome)
                yield Group([call], "refused", unknown)
                i += 1
                continue
            if getattr(tool, "read_only", False):
                j = i
                while j < len(calls) and self._is_read_only_direct(calls[j]):
                    j += 1
                batch = calls[i:j]
                yield Group(batch, "read", functools.partial(self._read_batch, batch))
                i = j
                continue
            yield Group([call], "write", functools.partial(_one, self._direct, call, outcome))
            if outcome and not outcome[0].ok:
                halted_by = f"the earlier write call {call.name} ({call.id}) failed"
            i += 1

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
        if getattr(result, "status", "") == "paused":
            return Step(call.id, call.name, code, True, False, "", list(result.tool_calls),
                        result, paused="script")
        return script_step(call, code, result, self.max_script_chars)

    # ----------------------------------------------------------- direct calls
    def _tool(self, name: str) -> Any:
        return self.offer.direct.get(name) or self.loaded.get(name)

    def _name(self, call: ToolCall) -> str:
        """The registry name of the tool a call names by its function name."""
        tool = self._tool(call.name)
        return str(tool.name) if tool is not None else call.name

    def _load_found(self, record: ToolCallRecordLike) -> None:
        for name in found_tools(record):
            wire = function_name(name)
            if wire in self.offer.deferred:
                self.loaded[wire] = self.offer.deferred[wire]

    def _is_read_only_direct(self, call: ToolCall) -> bool:
        tool = self._tool(call.name)
        return tool is not None and bool(getattr(tool, "read_only", False))

    def _arguments(self, call: ToolCall) -> dict[str, Any] | str:
        parsed = call.parsed_arguments()
        if parsed is None:
            return call.arguments if isinstance(call.arguments, str) else str(call.arguments)
        if self.strict:
            tool = self._tool(call.name)
            parsed = drop_nulls_for_optional(parsed, tool.parameters_schema)
        return parsed

    def _direct(self, call: ToolCall) -> Step:
        args = self._arguments(call)
        record = self.session.call_tool(self._name(call), args)
        self._load_found(record)
        if _deferred(record) and isinstance(args, dict):
            return self._defer_classic(call, args, record)
        return self._step(call, record)

    def _read_batch(self, calls: list[ToolCall]) -> list[Step]:
        if len(calls) == 1:
            return [self._direct(calls[0])]
        arguments = [self._arguments(c) for c in calls]
        records = self.session.call_tools([(self._name(c), a) for c, a in zip(calls, arguments,
                                                                              strict=True)])
        for record in records:
            self._load_found(record)
        return [self._defer_classic(c, a, r) if _deferred(r) and isinstance(a, dict)
                else self._step(c, r) for c, a, r in zip(calls, arguments, records, strict=True)]

    def _defer_classic(self, call: ToolCall, args: dict[str, Any],
                       record: ToolCallRecordLike) -> Step:
        """A classic call the approval hook deferred: issued again as a one-call script,
        which pauses durably (journal, signed continuation) like any script."""
        result = self.session.run(classic_script(self._name(call), args))
        records = [record, *result.tool_calls]
        if getattr(result, "status", "") == "paused":
            return Step(call.id, call.name, call.arguments, True, False, "", records, result,
                        paused="classic")
        return classic_step(call, result, self.max_tool_chars, records)

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


def _one(run: Callable[[ToolCall], Step], call: ToolCall, out: list[Step]) -> list[Step]:
    """``[run(call)]``, the step also kept in ``out`` (where the group iterator reads
    the outcome)."""
    step = run(call)
    out.append(step)
    return [step]


def _deferred(record: ToolCallRecordLike) -> bool:
    """The classic call was deferred to a person (it has no journal of its own)."""
    error = record.error
    return error is not None and error.type == "paused"


def classic_script(name: str, args: dict[str, Any]) -> str:
    """The one-call script a deferred classic call is issued again as (``args`` are
    JSON data, so their ``repr`` is a Python literal of the same value)."""
    return f"{name}(**{args!r})"


def script_step(call: ToolCall, code: str, result: RunResultLike, max_chars: int) -> Step:
    """The step of a ``run_script`` call that ran (or was resumed) to its end."""
    text, is_error = format_run_result(result, max_chars)
    return Step(call.id, call.name, code, True, not is_error, text, list(result.tool_calls),
                result)


def classic_step(call: ToolCall, result: RunResultLike, max_chars: int,
                 records: list[ToolCallRecordLike] | None = None) -> Step:
    """The step of a classic call run through its one-call script: the reply is the
    call's own record (as for any classic call)."""
    calls = list(result.tool_calls)
    if calls:
        text, is_error = format_tool_record(calls[-1], max_chars)
    else:  # the script failed before calling (it cannot, short of an infrastructure error)
        text, is_error = format_run_result(result, max_chars)
    return Step(call.id, call.name, call.arguments, True, not is_error, text,
                list(records if records is not None else calls), result)


def not_executed(call: ToolCall, reason: str) -> Step:
    """The reply to a call that was not run, saying why."""
    text = f"error: not_executed: this call was not executed because {reason}."
    return Step(call.id, call.name, call.arguments, False, False, text)
