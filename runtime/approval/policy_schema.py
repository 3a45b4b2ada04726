"""Load-time checks of approval policies: each key and value, by name.

A policy that is mistyped must not load as a policy that allows more. YAML
reads ``ge: 1e3`` as the *string* ``"1e3"``, a JSON ``"read_only": "false"``
is a non-empty string, ``tool: [a, b]`` is a list, ``in: "admin"`` would do a
substring test and ``amount: {}`` a condition without operators: each of
these, unchecked, switches a rule off or on silently. Every check here raises
:class:`~toolscript.errors.ConfigurationError` naming the key (``rules[2].
when.amount.ge``), what it must be and what it got.
"""

from __future__ import annotations

import decimal
import fractions
import math
import re
from collections.abc import Mapping
from typing import Any

from toolscript.errors import ConfigurationError

__all__ = [
    "ACTIONS",
    "BUDGET_SCOPES",
    "COMPARE_MODES",
    "OPERATORS",
    "check_budget",
    "check_policy_data",
    "check_rule_data",
    "check_rule_fields",
    "check_when",
]

ACTIONS = ("allow", "deny", "ask")
OPERATORS = ("eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "contains", "startswith",
             "endswith", "matches", "exists")
COMPARE_MODES = ("normalized", "exact")
BUDGET_SCOPES = ("run", "session", "agent_run", "runtime")
POLICY_KEYS = ("default", "budgets", "rules")
RULE_KEYS = ("tool", "action", "when", "reason", "read_only", "compare")
BUDGET_KEYS = ("limit", "per")

_NUMBER_TYPES = (int, float, decimal.Decimal, fractions.Fraction)


def _got(value: Any) -> str:
    if isinstance(value, str):
        text = repr(value)
        return f"the string {text if len(text) <= 60 else text[:57] + '...'}"
    if isinstance(value, bool):
        return f"the boolean {value}"
    if value is None:
        return "nothing (null)"
    return f"{type(value).__name__} {value!r:.60}"


def _fail(where: str, must: str, value: Any, hint: str = "") -> ConfigurationError:
    return ConfigurationError(f"{where} must be {must}, got {_got(value)}{hint}")


def is_number(value: Any) -> bool:
    """A finite number that is not a bool."""
    if isinstance(value, bool) or not isinstance(value, _NUMBER_TYPES):
        return False
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, decimal.Decimal):
        return value.is_finite()
    return True


def _check_json(value: Any, where: str, depth: int = 0) -> None:
    """Operands compared for equality: JSON data with finite numbers."""
    if depth > 20:
        raise ConfigurationError(f"{where} is nested too deeply")
    if isinstance(value, float) and not math.isfinite(value):
        raise _fail(where, "a finite number", value)
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_json(item, f"{where}[{i}]", depth + 1)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise _fail(f"{where} (a key)", "a string", key)
            _check_json(item, f"{where}.{key}", depth + 1)
    elif not (value is None or isinstance(value, (str, bool)) or is_number(value)):
        raise _fail(where, "JSON data (string, number, boolean, null, list or table)", value)


def check_operand(operator: str, operand: Any, where: str) -> None:
    """Check the operand of one operator (``where`` names it)."""
    if operator in ("lt", "le", "gt", "ge"):
        if not is_number(operand):
            hint = ""
            if isinstance(operand, str):
                hint = (" (YAML reads 1e3 as a string: write 1000 or 1.0e+3; quote nothing "
                        "that is a number)")
            raise _fail(where, "a number", operand, hint)
    elif operator in ("in", "not_in"):
        if not isinstance(operand, (list, tuple)):
            hint = " (a string here would be a substring test: write a list, [\"a\", \"b\"])" \
                if isinstance(operand, str) else ""
            raise _fail(where, "a list of values", operand, hint)
        _check_json(operand, where)
    elif operator in ("startswith", "endswith"):
        if not isinstance(operand, str) or not operand:
            raise _fail(where, "a non-empty string", operand)
    elif operator == "matches":
        if not isinstance(operand, str):
            raise _fail(where, "a regular expression (a string)", operand)
        try:
            re.compile(operand)
        except re.error as exc:
            raise ConfigurationError(f"{where} is not a valid regular expression: {exc}") from None
    elif operator == "exists":
        if not isinstance(operand, bool):
            raise _fail(where, "true or false", operand,
                        " (the string \"false\" is not false)" if isinstance(operand, str) else "")
    elif operator == "contains":
        if not (operand is None or isinstance(operand, (str, bool)) or is_number(operand)):
            raise _fail(where, "a string, number, boolean or null", operand)
    else:  # eq, ne
        _check_json(operand, where)


def check_when(when: Any, where: str) -> None:
    """Check a rule's conditions: ``{path: value or {operator: operand}}``, non-empty."""
    if not isinstance(when, Mapping):
        raise _fail(where, "a table of conditions {argument: condition}", when)
    if not when:
        raise ConfigurationError(
            f"{where} is empty: leave it out to apply the rule to every call, or give "
            "conditions")
    for path, condition in when.items():
        here = f"{where}.{path}"
        if not isinstance(path, str) or not path or any(not part for part in path.split(".")):
            raise _fail(f"{where} (a key)", "an argument name or dotted path", path)
        if isinstance(condition, Mapping):
            if not condition:
                raise ConfigurationError(
                    f"{here} has no operators and would match every call; give one, e.g. "
                    f"{{eq = ...}}, or compare with a plain value")
            for operator, operand in condition.items():
                if operator not in OPERATORS:
                    raise ConfigurationError(
                        f"{here}: unknown operator {operator!r}; use {', '.join(OPERATORS)}")
                check_operand(operator, operand, f"{here}.{operator}")
        else:
            _check_json(condition, here)


def check_rule_fields(tool: Any, action: Any, when: Any, reason: Any, read_only: Any,
                      compare: Any, where: str) -> None:
    """Check every field of one rule."""
    if not isinstance(tool, str) or not tool:
        hint = " (write one rule per tool, or a pattern such as \"delete_*\")" \
            if isinstance(tool, (list, tuple)) else ""
        raise _fail(f"{where}.tool", "a tool name or fnmatch pattern (a string)", tool, hint)
    if action not in ACTIONS:
        raise _fail(f"{where}.action", f"one of {', '.join(ACTIONS)}", action)
    if when is not None:
        check_when(when, f"{where}.when")
    if not isinstance(reason, str):
        raise _fail(f"{where}.reason", "a string", reason)
    if read_only is not None and not isinstance(read_only, bool):
        raise _fail(f"{where}.read_only", "true or false", read_only,
                    " (the string \"false\" is not false)" if isinstance(read_only, str) else "")
    if compare is not None and compare not in COMPARE_MODES:
        raise _fail(f"{where}.compare", f"one of {', '.join(COMPARE_MODES)}", compare)


def check_budget(name: Any, value: Any, where: str) -> tuple[int, str]:
    """``(limit, scope)`` of one budget entry: ``N`` (per run) or ``{limit, per}``."""
    here = f"{where}.{name}"
    if not isinstance(name, str) or not name:
        raise _fail(f"{where} (a key)", "a tool name or pattern", name)
    limit: Any = value
    per: Any = "run"
    if isinstance(value, Mapping):
        unknown = set(value) - set(BUDGET_KEYS)
        if unknown:
            raise ConfigurationError(
                f"{here}: unknown key(s) {sorted(map(str, unknown))}; use limit and per")
        if "limit" not in value or "per" not in value:
            raise ConfigurationError(
                f"{here} needs both limit and per, e.g. {{limit = 3, per = \"agent_run\"}}")
        limit, per = value["limit"], value["per"]
        here_limit = f"{here}.limit"
    else:
        here_limit = here
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise _fail(here_limit, "a whole number >= 0", limit)
    if per not in BUDGET_SCOPES:
        raise _fail(f"{here}.per", f"one of {', '.join(BUDGET_SCOPES)}", per)
    return limit, str(per)


def _check_table(data: Any, where: str, keys: tuple[str, ...], must: str) -> None:
    """``data`` is a mapping whose keys are all among ``keys``."""
    if not isinstance(data, Mapping):
        raise _fail(where, must, data)
    unknown = [str(k) for k in data if k not in keys]
    if unknown:
        raise ConfigurationError(
            f"{where}: unknown key(s) {sorted(unknown)}; use {', '.join(keys)}")


def check_policy_data(data: Any, where: str = "policy") -> None:
    """Check a whole policy document (``{"default", "budgets", "rules"}``)."""
    _check_table(data, where, POLICY_KEYS, "a table with default, budgets and rules")
    if "default" in data and data["default"] not in ACTIONS:
        raise _fail(f"{where}.default", f"one of {', '.join(ACTIONS)}", data["default"])
    budgets = data.get("budgets")
    if budgets is not None:
        if not isinstance(budgets, Mapping):
            raise _fail(f"{where}.budgets", "a table {tool: count}", budgets)
        for name, value in budgets.items():
            check_budget(name, value, f"{where}.budgets")
    rules = data.get("rules")
    if rules is not None:
        if not isinstance(rules, (list, tuple)):
            raise _fail(f"{where}.rules", "a list of rules", rules)
        for index, rule in enumerate(rules):
            check_rule_data(rule, f"{where}.rules[{index}]")


def check_rule_data(rule: Any, where: str) -> None:
    """Check one rule given as a table (``where`` names it, e.g. ``rules[2]``)."""
    _check_table(rule, where, RULE_KEYS, "a table")
    if "action" not in rule:
        raise ConfigurationError(f"{where} needs an action: {', '.join(ACTIONS)}")
    if "when" in rule and rule["when"] is None:
        raise ConfigurationError(
            f"{where}.when is empty: leave it out to apply the rule to every call, "
            "or give conditions")
    check_rule_fields(rule.get("tool", "*"), rule["action"], rule.get("when"),
                      rule.get("reason", ""), rule.get("read_only"), rule.get("compare"), where)
