"""Two-phase writes: a prepare tool that plans, a commit tool that carries out.

::

    def transfer(src: str, dst: str, amount_cents: int) -> dict:
        \"\"\"Plan a transfer between two accounts (fees included).\"\"\"
        return {"from": src, "to": dst, "amount_cents": amount_cents, "fee_cents": 30}

    def do_transfer(plan: dict) -> dict:
        return bank.transfer(**plan)

    pair = two_phase(transfer, do_transfer)     # tools prepare_transfer, commit_transfer
    rt = Runtime(tools=[*pair, ...], approve=hook)

A script (or the model, in classic mode) calls ``prepare_transfer(...)``,
which must not change anything; the host keeps the returned plan and answers
``{"plan_id", "plan", "expires_in_s", "next"}``. ``commit_transfer(plan_id)``
then looks the plan up on the host (the script cannot alter it: it only holds
an id), shows the approval hook ``args = {"plan_id": ..., "plan": <the exact
plan>}``, and only if approved calls ``do_transfer(plan)`` with that same
plan. A plan belongs to the session that prepared it, expires after
``ttl_s`` and is committed at most once: a repeated commit returns the first
result. The commit tool requires approval by default.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterator
from typing import Any, TypedDict

from toolscript.errors import SchemaError, ToolDefinitionError

from .convert import Converter, build_converter
from .definition import HostSupplied, Tool
from .schema import MISSING, resolve_hints, schema_for_type

__all__ = ["CommitTool", "TwoPhase", "two_phase"]

DEFAULT_PLAN_TTL_S = 900.0


class CommitTool(Tool):
    """The commit half of a two-phase write; its one argument is ``plan_id``.

    Calling it runs only through a runtime (which looks the plan up);
    :meth:`apply_plan` calls the commit function with a plan.
    """

    plan_ttl_s: float
    _commit: Callable[..., Any]
    _plan_converter: Converter | None

    def apply_plan(self, plan: Any) -> Any:
        """Call the commit function with ``plan`` (JSON data, converted per its annotation)."""
        convert = self._plan_converter
        return self._commit(convert(plan) if convert is not None else plan)

    def _wrap_extra(self, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
        """A wrapper of a commit tool wraps the commit function (what really runs)."""
        self._commit = wrap(self._commit)

    def _setup(self, commit: Callable[..., Any], converter: Converter | None, ttl_s: float) -> None:
        self._commit = commit
        self._plan_converter = converter
        self.plan_ttl_s = ttl_s


@dataclasses.dataclass(frozen=True)
class TwoPhase:
    """The two tools of a two-phase write; iterate it to register both.

    Attributes:
        prepare: the read-only planning tool.
        commit: the tool that carries out a prepared plan.
    """

    prepare: Tool
    commit: CommitTool

    def __iter__(self) -> Iterator[Tool]:
        """``prepare`` then ``commit``."""
        return iter((self.prepare, self.commit))


def two_phase(
    prepare: Callable[..., Any],
    commit: Callable[[Any], Any],
    *,
    name: str | None = None,
    prepare_name: str | None = None,
    commit_name: str | None = None,
    description: str | None = None,
    requires_approval: bool = True,
    ttl_s: float = DEFAULT_PLAN_TTL_S,
    timeout_s: float | None = None,
    inject: Any = None,
) -> TwoPhase:
    """Declare a write as a prepare/commit pair.

    Args:
        prepare: plans the write from the model's arguments, without side
            effects; its return value (JSON data) is the plan.
        commit: carries out one plan; takes the plan as its only argument
            (annotated with a dataclass, TypedDict or pydantic model, the plan
            is converted to it).
        name: the base name (default: ``prepare``'s function name); the tools are
            ``prepare_<name>`` and ``commit_<name>`` unless named explicitly.
        prepare_name: the prepare tool's name.
        commit_name: the commit tool's name.
        description: the prepare tool's description (default: its docstring).
        requires_approval: whether each commit must be approved (default True).
        ttl_s: how long a plan can be committed, in seconds.
        timeout_s: per-call timeout of both tools.
        inject: parameters of ``prepare`` filled from the run's context.

    Raises:
        ToolDefinitionError: bad names, or ``commit`` does not take one argument.
    """
    base = name or getattr(prepare, "__name__", None)
    if not isinstance(base, str) or base == "<lambda>":
        raise ToolDefinitionError("two_phase: pass name= (cannot derive it from the function)")
    if not (isinstance(ttl_s, (int, float)) and ttl_s > 0):
        raise ToolDefinitionError(f"two_phase {base!r}: ttl_s must be positive, got {ttl_s!r}")
    p_name = prepare_name or f"prepare_{base}"
    c_name = commit_name or f"commit_{base}"
    prepare_tool = Tool.from_function(
        prepare, name=p_name, description=description, read_only=True,
        timeout_s=timeout_s, inject=inject,
    )
    note = (
        f"Nothing changes yet: returns {{plan_id, plan, expires_in_s}}. Check the plan, then "
        f"call {c_name}(plan_id=...) to carry it out"
        + (" (each commit is approved first)." if requires_approval else ".")
    )
    prepare_tool.description = f"{prepare_tool.description}\n\n{note}".strip()
    _wrap_returns(prepare_tool, base)
    prepare_tool.host_supplied = dataclasses.replace(
        prepare_tool.host_supplied or HostSupplied(), phase="prepare", partner=c_name
    )

    converter = _plan_converter(base, commit)
    summary = inspect.getdoc(commit) or ""

    def commit_stub(plan_id: str) -> Any:
        """Carry out a prepared plan.

        Args:
            plan_id: the ``plan_id`` returned by the prepare tool.
        """
        raise ToolDefinitionError(
            f"{c_name} runs through a toolscript Runtime, which looks up the plan; "
            "call apply_plan(plan) to commit a plan directly"
        )

    commit_tool = CommitTool(
        commit_stub,
        name=c_name,
        description=(
            f"Carry out a plan made by {p_name} (pass its plan_id). "
            f"{summary.splitlines()[0] if summary else ''}"
        ).strip(),
        requires_approval=requires_approval,
        timeout_s=timeout_s,
    )
    commit_tool._setup(commit, converter, float(ttl_s))
    commit_tool.host_supplied = HostSupplied(phase="commit", partner=p_name)
    return TwoPhase(prepare_tool, commit_tool)


def _wrap_returns(tool: Tool, base: str) -> None:
    """The prepare tool answers ``{plan_id, plan, expires_in_s, next}``: say so."""
    plan_type = tool.return_annotation if tool.return_annotation is not MISSING else Any
    record_name = "Prepared" + "".join(w.capitalize() for w in base.split("_"))
    record = TypedDict(  # type: ignore[misc]  # noqa: UP013 - the name is computed
        record_name,
        {"plan_id": str, "plan": plan_type, "expires_in_s": float, "next": str},
    )
    tool.return_annotation = record
    try:
        tool.returns_schema = schema_for_type(record)
    except SchemaError:
        tool.returns_schema = None


def _plan_converter(base: str, commit: Callable[..., Any]) -> Converter | None:
    try:
        signature = inspect.signature(commit)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"two_phase {base!r}: cannot read commit's signature") from exc
    params = [
        p for p in signature.parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.default is p.empty
    ]
    if len(params) != 1:
        raise ToolDefinitionError(
            f"two_phase {base!r}: commit must take exactly one required argument (the plan), "
            f"got {[p.name for p in params]}"
        )
    try:
        hints = resolve_hints(commit)
    except Exception:
        return None
    hint = hints.get(params[0].name)
    return build_converter(hint) if hint is not None else None
