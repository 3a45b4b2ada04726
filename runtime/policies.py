"""Declarative approval policies: rules as data, usable as ``approve=``.

A :class:`Policy` is an ordered list of :class:`Rule` objects plus per-run
budgets. For each call the first rule whose tool pattern and argument
conditions match decides: ``allow``, ``deny`` or ``ask`` (delegate to an
interactive hook such as the CLI's terminal prompt; without one, ``ask``
denies). No rule matching applies ``default``. Every decision carries a
reason naming the rule, which the audit log records.

Rules load from Python, a dict, TOML (``tomllib``) or YAML (if ``pyyaml`` is
installed)::

    default = "ask"

    [budgets]
    send_email = 3                      # at most 3 approved calls per run

    [[rules]]
    tool = "refund"
    action = "allow"
    when = { amount = { lt = 100 } }
    reason = "small refunds are automatic"

    [[rules]]
    tool = "refund"
    action = "ask"
    reason = "refunds of 100 or more need a human"

    [[rules]]
    tool = "delete_*"                   # fnmatch patterns
    action = "deny"

Conditions map an argument name (or dotted path, ``"customer.tier"``) to
either a plain value (equality) or ``{operator: operand}`` with operators
``eq ne lt le gt ge in not_in contains startswith endswith matches exists``.
"""

from __future__ import annotations

import fnmatch
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscript.errors import ConfigurationError

from .approval import ApprovalHook, Decision, ToolCallRequest, decide

__all__ = ["ACTIONS", "Policy", "Rule", "load_policy"]

ACTIONS = ("allow", "deny", "ask")

_MISSING = object()

_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": lambda value, operand: value == operand,
    "ne": lambda value, operand: value != operand,
    "lt": lambda value, operand: value < operand,
    "le": lambda value, operand: value <= operand,
    "gt": lambda value, operand: value > operand,
    "ge": lambda value, operand: value >= operand,
    "in": lambda value, operand: value in operand,
    "not_in": lambda value, operand: value not in operand,
    "contains": lambda value, operand: operand in value,
    "startswith": lambda value, operand: str(value).startswith(operand),
    "endswith": lambda value, operand: str(value).endswith(operand),
    "matches": lambda value, operand: re.fullmatch(operand, str(value)) is not None,
}


def _lookup(args: Mapping[str, Any], path: str) -> Any:
    value: Any = args
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return _MISSING
        value = value[part]
    return value


def _check_condition(args: Mapping[str, Any], path: str, condition: Any) -> bool:
    value = _lookup(args, path)
    if not isinstance(condition, Mapping):
        return value is not _MISSING and bool(value == condition)
    for operator, operand in condition.items():
        if operator == "exists":
            if (value is not _MISSING) != bool(operand):
                return False
            continue
        if value is _MISSING:
            return False
        try:
            if not _OPERATORS[operator](value, operand):
                return False
        except TypeError:  # e.g. "abc" < 100: the condition does not hold
            return False
    return True


@dataclass(frozen=True)
class Rule:
    """One policy rule.

    Attributes:
        tool: tool name or ``fnmatch`` pattern (``"*"``, ``"delete_*"``).
        action: ``"allow"``, ``"deny"`` or ``"ask"``.
        when: argument conditions that must all hold (see module docstring).
        reason: why; recorded with the decision.
        read_only: if set, the rule applies only to tools with that flag.
    """

    tool: str = "*"
    action: str = "ask"
    when: Mapping[str, Any] = field(default_factory=dict)
    reason: str = ""
    read_only: bool | None = None

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ConfigurationError(f"rule action must be one of {ACTIONS}, got {self.action!r}")
        for path, condition in self.when.items():
            if isinstance(condition, Mapping):
                unknown = set(condition) - set(_OPERATORS) - {"exists"}
                if unknown:
                    raise ConfigurationError(
                        f"rule for {self.tool!r}: unknown operator(s) {sorted(unknown)} on "
                        f"{path!r}; use {sorted([*_OPERATORS, 'exists'])}")

    def matches(self, request: ToolCallRequest) -> bool:
        """True if this rule applies to ``request``."""
        if not fnmatch.fnmatchcase(request.tool, self.tool):
            return False
        if self.read_only is not None and request.read_only != self.read_only:
            return False
        args = request.args if isinstance(request.args, Mapping) else {}
        return all(_check_condition(args, path, cond) for path, cond in self.when.items())

    def describe(self, index: int) -> str:
        """``rule 2 (refund: allow when amount lt 100)``."""
        when = ", ".join(f"{path} {cond}" for path, cond in self.when.items())
        return f"rule {index} ({self.tool}: {self.action}{' when ' + when if when else ''})"


class Policy:
    """Ordered rules and per-run budgets; an approval hook (``approve=policy``).

    Args:
        rules: :class:`Rule` objects or dicts with the same fields.
        default: the action when no rule matches (``"ask"`` by default).
        budgets: ``{tool_or_pattern: N}``: at most N *approved* calls of a
            matching tool per run; further calls are denied.
        ask: the hook that answers ``ask`` (e.g. the CLI's ``TerminalApproval``).
            Without one, ``ask`` denies with a reason saying a human is needed.
    """

    def __init__(self, rules: Iterable[Rule | Mapping[str, Any]] = (), *, default: str = "ask",
                 budgets: Mapping[str, int] | None = None,
                 ask: ApprovalHook | None = None) -> None:
        if default not in ACTIONS:
            raise ConfigurationError(f"default must be one of {ACTIONS}, got {default!r}")
        self.rules = [rule if isinstance(rule, Rule) else _rule_from_dict(rule) for rule in rules]
        self.default = default
        self.budgets = dict(budgets or {})
        for name, budget in self.budgets.items():
            if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
                raise ConfigurationError(f"budget of {name!r} must be a count >= 0")
        self.ask = ask
        self._used: OrderedDict[str, dict[str, int]] = OrderedDict()
        self._lock = threading.Lock()

    # --- loading -----------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, ask: ApprovalHook | None = None) -> Policy:
        """Build from ``{"default", "budgets", "rules": [...]}``."""
        unknown = set(data) - {"default", "budgets", "rules"}
        if unknown:
            raise ConfigurationError(f"unknown policy key(s) {sorted(unknown)}")
        return cls(data.get("rules") or [], default=data.get("default", "ask"),
                   budgets=data.get("budgets"), ask=ask)

    @classmethod
    def from_toml(cls, text: str, *, ask: ApprovalHook | None = None) -> Policy:
        """Build from TOML text."""
        import tomllib

        try:
            return cls.from_dict(tomllib.loads(text), ask=ask)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigurationError(f"policy is not valid TOML: {exc}") from None

    @classmethod
    def from_yaml(cls, text: str, *, ask: ApprovalHook | None = None) -> Policy:
        """Build from YAML text (needs ``pyyaml``)."""
        try:
            import yaml  # type: ignore[import-untyped]
        except ImportError:
            raise ConfigurationError("YAML policies need pyyaml: pip install pyyaml") from None
        data = yaml.safe_load(text) or {}
        if not isinstance(data, Mapping):
            raise ConfigurationError("a YAML policy must be a mapping")
        return cls.from_dict(data, ask=ask)

    # --- deciding ------------------------------------------------------------------
    def __call__(self, request: ToolCallRequest) -> Decision:
        index, rule = self.match(request)
        action = rule.action if rule is not None else self.default
        source = rule.describe(index) if rule is not None else f"default ({self.default})"
        reason = f"policy {source}" + (f": {rule.reason}" if rule is not None and rule.reason
                                       else "")
        if action == "deny":
            return Decision.deny(reason)
        if action == "ask":
            if self.ask is None:
                return Decision.deny(f"{reason}; needs a human and no one was asked")
            answer, _ = decide(self.ask, request)
            if not answer.approved:
                return Decision.deny(f"{reason}; asked: {answer.reason or 'denied'}")
            reason = f"{reason}; asked: {answer.reason or 'approved'}"
        return self._spend(request, reason)

    def match(self, request: ToolCallRequest) -> tuple[int, Rule | None]:
        """The first matching rule (1-based index) or ``(0, None)``."""
        for index, rule in enumerate(self.rules, start=1):
            if rule.matches(request):
                return index, rule
        return 0, None

    def _spend(self, request: ToolCallRequest, reason: str) -> Decision:
        budgets = [(pattern, limit) for pattern, limit in self.budgets.items()
                   if fnmatch.fnmatchcase(request.tool, pattern)]
        if not budgets:
            return Decision.allow(reason)
        with self._lock:
            used = self._used.setdefault(request.run_id, {})
            self._used.move_to_end(request.run_id)
            while len(self._used) > 10_000:  # forget old runs
                self._used.popitem(last=False)
            for pattern, limit in budgets:
                if used.get(pattern, 0) >= limit:
                    return Decision.deny(
                        f"policy budget: at most {limit} call(s) of {pattern!r} per run")
            for pattern, _ in budgets:
                used[pattern] = used.get(pattern, 0) + 1
        return Decision.allow(reason)


def _rule_from_dict(data: Mapping[str, Any]) -> Rule:
    unknown = set(data) - {"tool", "action", "when", "reason", "read_only"}
    if unknown:
        raise ConfigurationError(f"unknown rule key(s) {sorted(unknown)} in {dict(data)!r}")
    return Rule(tool=str(data.get("tool", "*")), action=str(data.get("action", "ask")),
                when=dict(data.get("when") or {}), reason=str(data.get("reason", "")),
                read_only=data.get("read_only"))


def load_policy(path: str | Path, *, ask: ApprovalHook | None = None) -> Policy:
    """Load a policy file by extension (``.toml``, ``.yaml``/``.yml`` or ``.json``)."""
    path = Path(path)
    text = path.read_text("utf-8")
    suffix = path.suffix.lower()
    if suffix == ".toml":
        return Policy.from_toml(text, ask=ask)
    if suffix in (".yaml", ".yml"):
        return Policy.from_yaml(text, ask=ask)
    if suffix == ".json":
        import json

        return Policy.from_dict(json.loads(text), ask=ask)
    raise ConfigurationError(f"{path}: policy files end in .toml, .yaml, .yml or .json")
