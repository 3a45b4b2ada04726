"""Declarative approval policies: rules as data, usable as ``approve=``.

A :class:`Policy` is an ordered list of :class:`Rule` objects plus budgets.
For each call the first rule whose tool pattern and argument conditions
match decides: ``allow``, ``deny`` or ``ask`` (delegate to an interactive
hook such as the CLI's terminal prompt; without one, ``ask`` denies). No rule
matching applies ``default``. Every decision carries a reason naming the
rule, which the audit log records. Rules see the call's final arguments:
after validation, conversion and defaults (an omitted ``recursive`` shows as
its default ``true``), exactly what the tool will run with.

Rules load from Python, a dict, TOML (``tomllib``), JSON or YAML (if
``pyyaml`` is installed), and every key and value is checked at load time
(:mod:`toolscript.runtime.approval.policy_schema`)::

    default = "ask"

    [budgets]
    send_email = { limit = 3, per = "agent_run" }   # or a bare number: per run

    [[rules]]
    tool = "refund"
    action = "allow"
    when = { amount = { gt = 0, lt = 100 } }
    reason = "small refunds are automatic"

    [[rules]]
    tool = "refund"
    action = "ask"
    reason = "other refunds need a human"

    [[rules]]
    tool = "send_email"
    action = "deny"
    when = { to = { in = ["ceo@corp.example", "board@corp.example"] } }

    [[rules]]
    tool = "delete_*"                   # fnmatch patterns
    action = "deny"

Conditions map an argument name (or dotted path, ``"customer.tier"``) to a
plain value (equality) or ``{operator: operand}`` with operators
``eq ne lt le gt ge in not_in contains startswith endswith matches exists``;
all operators of a condition and all conditions of a rule must hold.

Comparing:

* **numbers** compare exactly, as the numbers they are (``99.995 < 100``;
  no rounding, no float conversion of ``Decimal`` values; a ``Decimal``
  argument is shown as its exact string, ``"99.995"``, and compares as that
  number). A tool that rounds must round in its parameter type (a pydantic
  validator, a dataclass ``__post_init__``): the rule then sees the rounded
  value, since conversion happens before approval. A boolean is not a number.
* **strings** compare in two forms, exact and normalised (NFKC, invisible
  characters removed, common Cyrillic/Greek look-alikes folded, case folded,
  whitespace and trailing dots stripped: :mod:`toolscript.runtime.approval.textnorm`),
  and the rule's action decides how: a ``deny`` or ``ask`` rule matches if a
  condition holds in *either* form, an ``allow`` rule only if it holds in
  *both*. So ``"CEO@Corp.Example."`` is caught by a deny rule on
  ``ceo@corp.example`` and is not let through by an allow rule on it.
  ``compare = "exact"`` on a rule turns normalisation off.
* a condition that cannot be evaluated (``lt`` on a string, ``startswith``
  on a number) holds for ``deny``/``ask`` rules and fails for ``allow``.

Tools marked ``requires_approval`` are never allowed by ``default =
"allow"`` or by a rule whose ``tool`` is a pattern: those turn into ``ask``.
Only an ``allow`` rule naming the tool exactly allows it without asking.

Tool names are exact (``fnmatch`` is case-sensitive). When a policy meets
its tools (``Runtime(approve=policy)``, ``runtime.approve = policy``, also as
a plan's fallback: :func:`check_policy_tools`), a rule or budget whose name or
pattern matches no registered tool but would match one if case, look-alike
characters and ``-``/``_`` were ignored (``Send_Email`` for ``send_email``) is
a ``ConfigurationError``: it was meant for that tool and would never apply. So is
one that matches only a namespaced tool's short name (``merge_pr``, ``merge_*``
for ``github.merge_pr``) or its wire name (``github__merge_pr``): rules name
tools by their full dotted names.
One that matches no tool at all warns (:class:`~toolscript.errors.PolicyWarning`,
which ``warnings.simplefilter("error", PolicyWarning)`` turns into an error):
a policy may be shared by runtimes with different tools.

Budgets (:mod:`toolscript.runtime.approval.budgets`) count approved calls per
``run``, ``session``, ``agent_run`` or ``runtime``; a bare number means per
run. Counts never expire while their scope can still make calls.
"""

from __future__ import annotations

import decimal
import difflib
import fnmatch
import fractions
import re
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscript.runtime.approval.budgets import Budget, BudgetBook, budgets_from
from toolscript.runtime.approval.hooks import ApprovalHook, Decision, ToolCallRequest, decide
from toolscript.runtime.approval.policy_schema import (
    ACTIONS,
    check_policy_data,
    check_rule_data,
    check_rule_fields,
    is_number,
)
from toolscript.runtime.approval.textnorm import normalize
from toolscript.tools.catalog import short_name, wire_name

from toolscript.errors import ConfigurationError, PolicyWarning

__all__ = ["ACTIONS", "Budget", "Policy", "Rule", "check_policy_tools", "load_policy"]

_MISSING = object()
_UNKNOWN = None  # a condition that cannot be evaluated on this value
_DECIMAL = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?")
_PATTERN_CHARS = frozenset("*?[")


def _lookup(args: Mapping[str, Any], path: str) -> Any:
    value: Any = args
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return _MISSING
        value = value[part]
    return value


def _exact_number(value: Any) -> fractions.Fraction | None:
    """The exact rational value of a number (or of a decimal string), else None."""
    if isinstance(value, str):
        if not _DECIMAL.fullmatch(value):
            return None
        value = decimal.Decimal(value)
    if not is_number(value):
        return None
    return fractions.Fraction(value)


def _equal(value: Any, operand: Any, fold: Callable[[str], str] | None) -> bool:
    """Equality in one form: exact (``fold`` None) or normalised (strings folded, and a
    decimal string equal to the number it spells)."""
    if isinstance(value, bool) or isinstance(operand, bool):
        return isinstance(value, bool) and isinstance(operand, bool) and value == operand
    if isinstance(value, str) and isinstance(operand, str):
        return value == operand if fold is None else fold(value) == fold(operand)
    if is_number(value) and is_number(operand):
        return fractions.Fraction(value) == fractions.Fraction(operand)
    if fold is not None and (isinstance(value, str) or isinstance(operand, str)):
        left, right = _exact_number(value), _exact_number(operand)
        return left is not None and left == right
    if isinstance(value, (list, tuple)) and isinstance(operand, (list, tuple)):
        return len(value) == len(operand) and all(
            _equal(v, o, fold) for v, o in zip(value, operand, strict=True))
    if isinstance(value, Mapping) and isinstance(operand, Mapping):
        return value.keys() == operand.keys() and all(
            _equal(value[k], operand[k], fold) for k in value)
    return value is None and operand is None


def _evaluate(operator: str, value: Any, operand: Any,
              fold: Callable[[str], str] | None) -> bool | None:
    """One operator on one value in one string form; None when it cannot be evaluated."""
    if operator == "eq":
        return _equal(value, operand, fold)
    if operator == "ne":
        return not _equal(value, operand, fold)
    if operator in ("lt", "le", "gt", "ge"):
        left, right = _exact_number(value), _exact_number(operand)
        if left is None or right is None:
            return _UNKNOWN
        return {"lt": left < right, "le": left <= right,
                "gt": left > right, "ge": left >= right}[operator]
    if operator == "in":
        return any(_equal(value, item, fold) for item in operand)
    if operator == "not_in":
        return not any(_equal(value, item, fold) for item in operand)
    if operator == "contains":
        if isinstance(value, str):
            if not isinstance(operand, str):
                return _UNKNOWN
            return (operand in value) if fold is None else (fold(operand) in fold(value))
        if isinstance(value, (list, tuple)):
            return any(_equal(item, operand, fold) for item in value)
        if isinstance(value, Mapping):
            return any(_equal(key, operand, fold) for key in value)
        return _UNKNOWN
    if not isinstance(value, str):
        return _UNKNOWN
    text, wanted = (value, operand) if fold is None else (fold(value), fold(operand))
    if operator == "startswith":
        return text.startswith(wanted)
    if operator == "endswith":
        return text.endswith(wanted)
    if operator == "matches":
        return re.fullmatch(operand, text) is not None
    return _UNKNOWN


def _holds(operator: str, value: Any, operand: Any, strict: bool, normalized: bool) -> bool:
    """Whether one operator holds, over both string forms (see the module docstring)."""
    outcomes = [_evaluate(operator, value, operand, None)]
    if normalized:
        outcomes.append(_evaluate(operator, value, operand, normalize))
    if strict:  # deny/ask: holds in either form, or when it cannot be evaluated
        return any(o is None or o for o in outcomes)
    return all(o is True for o in outcomes)


@dataclass(frozen=True)
class Rule:
    """One policy rule (checked when it is made).

    Attributes:
        tool: tool name or ``fnmatch`` pattern (``"*"``, ``"delete_*"``).
        action: ``"allow"``, ``"deny"`` or ``"ask"``.
        when: argument conditions that must all hold (see module docstring).
        reason: why; recorded with the decision.
        read_only: if set, the rule applies only to tools with that flag.
        compare: ``"normalized"`` (default: strings compare in both forms) or
            ``"exact"``.

    Raises:
        ConfigurationError: a field has the wrong type or value (named).
    """

    tool: str = "*"
    action: str = "ask"
    when: Mapping[str, Any] = field(default_factory=dict)
    reason: str = ""
    read_only: bool | None = None
    compare: str = "normalized"

    def __post_init__(self) -> None:
        check_rule_fields(self.tool, self.action, self.when or None, self.reason,
                          self.read_only, self.compare, f"rule for {self.tool!r}")

    @property
    def names_tool_exactly(self) -> bool:
        """True if ``tool`` is a plain name, not a pattern."""
        return not (set(self.tool) & _PATTERN_CHARS)

    def matches(self, request: ToolCallRequest) -> bool:
        """True if this rule applies to ``request``."""
        if not fnmatch.fnmatchcase(request.tool, self.tool):
            return False
        if self.read_only is not None and request.read_only != self.read_only:
            return False
        args = request.args if isinstance(request.args, Mapping) else {}
        strict = self.action != "allow"
        normalized = self.compare == "normalized"
        for path, condition in self.when.items():
            value = _lookup(args, path)
            if not isinstance(condition, Mapping):
                condition = {"eq": condition}
            for operator, operand in condition.items():
                if operator == "exists":
                    if (value is not _MISSING) != operand:
                        return False
                    continue
                if value is _MISSING or not _holds(operator, value, operand, strict,
                                                   normalized):
                    return False
        return True

    def describe(self, index: int) -> str:
        """``rule 2 (refund: allow when amount {'lt': 100})``."""
        when = ", ".join(f"{path} {cond}" for path, cond in self.when.items())
        return f"rule {index} ({self.tool}: {self.action}{' when ' + when if when else ''})"


class Policy:
    """Ordered rules and budgets; an approval hook (``approve=policy``).

    Args:
        rules: :class:`Rule` objects or dicts with the same fields.
        default: the action when no rule matches (``"ask"`` by default).
        budgets: ``{tool_or_pattern: N}`` (at most N approved calls per run)
            or ``{tool_or_pattern: {"limit": N, "per": scope}}`` with scope
            ``run``, ``session``, ``agent_run`` or ``runtime``; further calls
            are denied.
        ask: the hook that answers ``ask`` (e.g. the CLI's ``TerminalApproval``).
            Without one, ``ask`` denies with a reason saying a human is needed.

    Raises:
        ConfigurationError: a rule, budget or the default is wrong (named).
    """

    def __init__(self, rules: Iterable[Rule | Mapping[str, Any]] = (), *, default: str = "ask",
                 budgets: Mapping[str, Any] | None = None,
                 ask: ApprovalHook | None = None) -> None:
        if default not in ACTIONS:
            raise ConfigurationError(f"default must be one of {ACTIONS}, got {default!r}")
        self.rules = [rule if isinstance(rule, Rule) else _rule_from_dict(rule, i)
                      for i, rule in enumerate(rules)]
        self.default = default
        self.budgets = budgets_from(budgets)
        self.ask = ask
        self._book = BudgetBook()

    # --- loading -----------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, ask: ApprovalHook | None = None,
                  where: str = "policy") -> Policy:
        """Build from ``{"default", "budgets", "rules": [...]}``, checked key by key."""
        check_policy_data(data, where)
        return cls(data.get("rules") or [], default=data.get("default", "ask"),
                   budgets=data.get("budgets"), ask=ask)

    @classmethod
    def from_toml(cls, text: str, *, ask: ApprovalHook | None = None) -> Policy:
        """Build from TOML text."""
        import tomllib

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigurationError(f"policy is not valid TOML: {exc}") from None
        return cls.from_dict(data, ask=ask)

    @classmethod
    def from_yaml(cls, text: str, *, ask: ApprovalHook | None = None) -> Policy:
        """Build from YAML text (needs ``pyyaml``)."""
        try:
            import yaml  # type: ignore[import-untyped]
        except ImportError:
            raise ConfigurationError("YAML policies need pyyaml: pip install pyyaml") from None
        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as exc:
            raise ConfigurationError(f"policy is not valid YAML: {exc}") from None
        return cls.from_dict(data, ask=ask)

    @classmethod
    def from_json(cls, text: str, *, ask: ApprovalHook | None = None) -> Policy:
        """Build from JSON text (``NaN`` and ``Infinity`` are refused)."""
        import json

        def refuse(name: str) -> Any:
            raise ConfigurationError(f"policy JSON holds {name}, which is not a number")

        try:
            data = json.loads(text, parse_constant=refuse)
        except ValueError as exc:
            raise ConfigurationError(f"policy is not valid JSON: {exc}") from None
        return cls.from_dict(data, ask=ask)

    # --- deciding ------------------------------------------------------------------
    def __call__(self, request: ToolCallRequest) -> Decision:
        index, rule = self.match(request)
        action = rule.action if rule is not None else self.default
        source = rule.describe(index) if rule is not None else f"default ({self.default})"
        reason = f"policy {source}" + (f": {rule.reason}" if rule is not None and rule.reason
                                       else "")
        if action == "allow" and request.requires_approval and not (
                rule is not None and rule.names_tool_exactly):
            action = "ask"
            reason += (f"; {request.tool} requires approval, which only a rule naming it "
                       "exactly gives without asking")
        if action == "deny":
            return Decision.deny(reason)
        if action == "ask":
            if self.ask is None:
                return Decision.deny(f"{reason}; needs a human and no one was asked")
            answer, _ = decide(self.ask, request)
            if not answer.approved:
                return Decision.deny(f"{reason}; asked: {answer.reason or 'denied'}")
            reason = f"{reason}; asked: {answer.reason or 'approved'}"
        spent = self._book.spend(self.budgets, request)
        if spent is not None:
            return Decision.deny(f"policy budget: {spent.describe()}")
        return Decision.allow(reason)

    def check_tools(self, names: Iterable[str]) -> None:
        """Check every rule's and budget's tool name or pattern against the registered
        tool ``names`` (see the module docs).

        Raises:
            ConfigurationError: a name or pattern matches a tool only when case,
                look-alikes and ``-``/``_`` are ignored (a typo that fails open).

        Warns:
            PolicyWarning: a name or pattern matches no registered tool.
        """
        tools = sorted(set(names))
        named = [(f"rule {i} ({rule.tool}: {rule.action})", rule.tool)
                 for i, rule in enumerate(self.rules, start=1)]
        named += [(f"budget {budget.pattern!r}", budget.pattern) for budget in self.budgets]
        for where, pattern in named:
            if any(fnmatch.fnmatchcase(tool, pattern) for tool in tools):
                continue
            meant = [tool for tool in tools
                     if fnmatch.fnmatchcase(_loose(tool), _loose(pattern))]
            if meant:
                raise ConfigurationError(
                    f"policy {where} names {pattern!r}, which matches no tool; tool names are "
                    f"exact: did you mean {', '.join(map(repr, meant[:5]))}?")
            namespaced = [tool for tool in tools if "." in tool and any(
                fnmatch.fnmatchcase(form, pattern)
                or fnmatch.fnmatchcase(_loose(form), _loose(pattern))
                for form in (short_name(tool), wire_name(tool)))]
            if namespaced:
                raise ConfigurationError(
                    f"policy {where} names {pattern!r}, which matches no tool: it matches the "
                    f"short or wire name of the namespaced {', '.join(map(repr, namespaced[:5]))}; "
                    f"a rule names a tool by its full dotted name ('namespace.tool', or a pattern "
                    f"such as 'github.*' or '*.{short_name(namespaced[0])}')")
            close = difflib.get_close_matches(pattern, tools, n=3)
            hint = f" (close: {', '.join(map(repr, close))})" if close else ""
            warnings.warn(f"policy {where} names {pattern!r}, which matches no registered "
                          f"tool{hint}: it never applies here", PolicyWarning, stacklevel=3)

    def match(self, request: ToolCallRequest) -> tuple[int, Rule | None]:
        """The first matching rule (1-based index) or ``(0, None)``."""
        for index, rule in enumerate(self.rules, start=1):
            if rule.matches(request):
                return index, rule
        return 0, None


def _loose(name: str) -> str:
    """A tool name with case, look-alikes and ``-``/``_`` differences removed."""
    return normalize(name).replace("-", "").replace("_", "")


def check_policy_tools(hook: Any, names: Iterable[str]) -> None:
    """Check the :class:`Policy` objects an approval hook consists of (the hook
    itself, a plan's ``fallback``, a policy's ``ask``) against the tool ``names``.

    Raises:
        ConfigurationError: see :meth:`Policy.check_tools`.
    """
    names = list(names)
    seen: set[int] = set()
    while hook is not None and id(hook) not in seen:
        seen.add(id(hook))
        if isinstance(hook, Policy):
            hook.check_tools(names)
            hook = hook.ask
        else:
            hook = getattr(hook, "fallback", None)


def _rule_from_dict(data: Mapping[str, Any], index: int = 0) -> Rule:
    check_rule_data(data, f"rules[{index}]")
    return Rule(tool=data.get("tool", "*"), action=data["action"],
                when=dict(data.get("when") or {}), reason=data.get("reason", ""),
                read_only=data.get("read_only"), compare=data.get("compare", "normalized"))


def load_policy(path: str | Path, *, ask: ApprovalHook | None = None) -> Policy:
    """Load a policy file by extension (``.toml``, ``.yaml``/``.yml`` or ``.json``).

    Raises:
        ConfigurationError: the file is not a valid policy; the message names the key.
    """
    path = Path(path)
    text = path.read_text("utf-8")
    suffix = path.suffix.lower()
    try:
        if suffix == ".toml":
            return Policy.from_toml(text, ask=ask)
        if suffix in (".yaml", ".yml"):
            return Policy.from_yaml(text, ask=ask)
        if suffix == ".json":
            return Policy.from_json(text, ask=ask)
    except ConfigurationError as exc:
        raise ConfigurationError(f"{path}: {exc}") from None
    raise ConfigurationError(f"{path}: policy files end in .toml, .yaml, .yml or .json")
