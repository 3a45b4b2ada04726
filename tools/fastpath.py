"""A compiled, conservative fast path for argument validation.

``jsonschema`` costs 10-50 µs per call; a tool call must cost about 2 µs.
:func:`compile_fast_check` turns a schema into generated plain-Python code
(``type(v) is str`` checks, inlined, one function per object/array node) that
answers *True* only when the value is certainly valid.  *False* means "not
sure": the caller then runs ``jsonschema``, which decides and produces the
field-level errors.

Soundness rule: ``fast(x) is True`` implies ``jsonschema`` accepts ``x``.
Anything outside the supported subset compiles to ``False`` (never to
``True``), so unknown keywords can only cost speed, not correctness.

Supported subset: ``type`` (string, integer, number, boolean, null, object,
array, or a list of these), ``enum``/``const`` of str/int/finite float/bool/
None, ``properties``/``required``/``additionalProperties`` (false, true or a
schema) on ``type: object``, ``items``/``prefixItems``/``minItems``/
``maxItems``/``uniqueItems`` (for string or integer items) on ``type: array``,
``anyOf``, ``allOf``, local ``$ref`` to ``#/$defs/NAME`` (recursion included),
the value constraints ``minimum``/``maximum``/``exclusiveMinimum``/
``exclusiveMaximum``, ``multipleOf`` (integers), ``minLength``/``maxLength``
and ``pattern`` (``re.search``, as ``jsonschema`` does), and the annotations
``title``/``description``/``default``/``examples``.
Integers are strict: ``1.0`` is not an integer here (the validator agrees);
``bool`` is never a number.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["FastCheck", "compile_fast_check"]

FastCheck = Callable[[Any], bool]
"""Returns True only if the value is certainly valid."""

_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment", "deprecated"})
_OBJECT_KEYS = frozenset({"properties", "required", "additionalProperties"})
_ARRAY_KEYS = frozenset({"items", "prefixItems", "minItems", "maxItems", "uniqueItems"})
_GENERAL_KEYS = frozenset({"type", "enum", "const", "anyOf", "allOf", "$ref"})
_NUMBER_BOUNDS = {
    "minimum": ">=",
    "maximum": "<=",
    "exclusiveMinimum": ">",
    "exclusiveMaximum": "<",
}
_STRING_KEYS = frozenset({"minLength", "maxLength", "pattern"})
_SCALAR_KEYS = frozenset(_NUMBER_BOUNDS) | {"multipleOf"} | _STRING_KEYS
_KNOWN = _ANNOTATIONS | _OBJECT_KEYS | _ARRAY_KEYS | _GENERAL_KEYS | _SCALAR_KEYS | {"$defs"}
_IS_NUMBER = "(type({v}) is int or type({v}) is float)"

_TYPE_EXPR = {
    "string": "type({v}) is str",
    "integer": "type({v}) is int",
    "number": "(type({v}) is int or type({v}) is float)",
    "boolean": "({v} is True or {v} is False)",
    "null": "{v} is None",
    "object": "type({v}) is dict",
    "array": "type({v}) is list",
}


class _Unsupported(Exception):
    """Internal: this node is outside the subset; compile it to ``False``."""


def compile_fast_check(schema: Mapping[str, Any] | bool) -> FastCheck | None:
    """Compile ``schema`` into a fast, conservative checker.

    Returns None when the root is outside the subset (the checker would always
    answer False, so the caller should go straight to ``jsonschema``).
    """
    compiler = _Compiler(schema)
    expr = compiler.expr(schema, "x")
    if expr == "False":
        return None
    direct = re.fullmatch(r"(_\w+)\(x\)", expr)  # the root is one generated function
    root = direct.group(1) if direct else "_root"
    if not direct:
        compiler.lines.append(f"def _root(x):\n    return {expr}\n")
    source = "\n".join(compiler.lines)
    namespace: dict[str, Any] = dict(compiler.constants)
    exec(compile(source, "<toolscript fast path>", "exec"), namespace)
    check: FastCheck = namespace[root]
    check.__doc__ = "Fast conservative validity check (generated):\n" + source
    return check


class _Compiler:
    """Generates the source of the checker functions."""

    def __init__(self, root: Mapping[str, Any] | bool) -> None:
        self.defs: Mapping[str, Any] = root.get("$defs", {}) if isinstance(root, Mapping) else {}
        self.lines: list[str] = []
        self.constants: dict[str, Any] = {}
        self._ref_names: dict[str, str] = {}
        self._counter = 0

    def _name(self, prefix: str) -> str:
        self._counter += 1
        return f"_{prefix}{self._counter}"

    def expr(self, node: Any, v: str) -> str:
        """A boolean Python expression over variable ``v``; "False" if unsupported."""
        try:
            return self._expr(node, v)
        except _Unsupported:
            return "False"

    def _expr(self, node: Any, v: str) -> str:
        if node is True:
            return "True"
        if node is False or not isinstance(node, Mapping):
            raise _Unsupported
        keys = set(node)
        if not keys <= _KNOWN:
            raise _Unsupported
        conds: list[str] = []
        types = node.get("type")
        type_list: list[str] | None = None
        if types is not None:
            type_list = [types] if isinstance(types, str) else list(types)
            if not type_list or any(t not in _TYPE_EXPR for t in type_list):
                raise _Unsupported
        if keys & _OBJECT_KEYS:
            if type_list != ["object"]:
                raise _Unsupported
            conds.append(f"{self._object(node)}({v})")
        elif keys & _ARRAY_KEYS:
            if type_list != ["array"]:
                raise _Unsupported
            conds.append(f"{self._array(node)}({v})")
        elif type_list is not None:
            parts = [_TYPE_EXPR[t].format(v=v) for t in type_list]
            conds.append(parts[0] if len(parts) == 1 else "(" + " or ".join(parts) + ")")
        if keys & _SCALAR_KEYS:
            conds.extend(self._scalar(node, v, type_list))
        if "enum" in node:
            conds.append(self._enum(node["enum"], v))
        if "const" in node:
            conds.append(self._enum([node["const"]], v))
        if "anyOf" in node:
            branches = [self.expr(b, v) for b in _as_list(node["anyOf"])]
            branches = [b for b in branches if b != "False"]
            if not branches:
                raise _Unsupported
            conds.append("(" + " or ".join(branches) + ")")
        if "allOf" in node:
            for b in _as_list(node["allOf"]):
                conds.append(self._expr(b, v))
        if "$ref" in node:
            conds.append(f"{self._ref(node['$ref'])}({v})")
        conds = [c for c in conds if c != "True"]
        if not conds:
            return "True"
        return conds[0] if len(conds) == 1 else "(" + " and ".join(conds) + ")"

    def _scalar(self, node: Mapping[str, Any], v: str, type_list: list[str] | None) -> list[str]:
        """Conditions for numeric bounds and string constraints.

        Each keyword only applies to values of its kind (as in JSON Schema), so
        its condition is guarded by a type test unless ``type`` already
        restricts the value to that kind.
        """
        numeric_only = type_list is not None and set(type_list) <= {"integer", "number"}
        string_only = type_list == ["string"]
        if type_list is not None and not type_list:
            raise _Unsupported
        number_guard = "" if numeric_only else f"not {_IS_NUMBER.format(v=v)} or "
        string_guard = "" if string_only else f"type({v}) is not str or "
        conds: list[str] = []
        for keyword, op in _NUMBER_BOUNDS.items():
            if keyword in node:
                bound = node[keyword]
                if type(bound) not in (int, float) or not math.isfinite(bound):
                    raise _Unsupported
                conds.append(f"({number_guard}{v} {op} {bound!r})")
        if "multipleOf" in node:
            step = node["multipleOf"]
            if type(step) is not int or step <= 0:
                raise _Unsupported  # float steps: jsonschema's float arithmetic decides
            # Float values answer "not sure" (False) and go to jsonschema.
            conds.append(f"({number_guard}(type({v}) is int and {v} % {step} == 0))")
        for keyword, op in (("minLength", ">="), ("maxLength", "<=")):
            if keyword in node:
                bound = node[keyword]
                if type(bound) is not int:
                    raise _Unsupported
                conds.append(f"({string_guard}len({v}) {op} {bound})")
        if "pattern" in node:
            pattern = node["pattern"]
            if not isinstance(pattern, str):
                raise _Unsupported
            try:
                search = re.compile(pattern).search
            except re.error:
                raise _Unsupported from None
            const = self._name("re")
            self.constants[const] = search
            conds.append(f"({string_guard}{const}({v}) is not None)")
        return conds

    def _enum(self, values: Any, v: str) -> str:
        if not isinstance(values, list) or not values:
            raise _Unsupported
        by_type: dict[type, set[Any]] = {}
        for value in values:
            kind = type(value)
            if kind not in (str, int, float, bool, type(None)):
                raise _Unsupported
            if kind is float and not math.isfinite(value):
                raise _Unsupported
            by_type.setdefault(kind, set()).add(value)
        parts: list[str] = []
        for kind, members in by_type.items():
            if kind is type(None):
                parts.append(f"{v} is None")
            elif kind is bool:
                parts.extend(f"{v} is {b!r}" for b in sorted(members))
            else:
                const = self._name("c")
                self.constants[const] = frozenset(members)
                parts.append(f"(type({v}) is {kind.__name__} and {v} in {const})")
        return parts[0] if len(parts) == 1 else "(" + " or ".join(parts) + ")"

    def _ref(self, ref: Any) -> str:
        if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
            raise _Unsupported
        key = ref[len("#/$defs/") :]
        if "/" in key or "~" in key or key not in self.defs:
            raise _Unsupported
        name = self._ref_names.get(key)
        if name is None:
            name = self._name("ref")
            self._ref_names[key] = name  # before compiling the body: recursion
            body = self.expr(self.defs[key], "x")
            self.lines.append(f"def {name}(x):\n    return {body}\n")
        return name

    def _object(self, node: Mapping[str, Any]) -> str:
        props = node.get("properties", {})
        required = node.get("required", [])
        additional = node.get("additionalProperties", True)
        if not isinstance(props, Mapping) or not isinstance(required, list):
            raise _Unsupported
        if any(not isinstance(r, str) for r in required) or len(set(required)) != len(required):
            raise _Unsupported
        name = self._name("obj")
        sentinel = "_MISSING"
        self.constants[sentinel] = _MISSING
        body = ["    if type(x) is not dict:", "        return False"]
        counted = additional is False
        # Required keys missing from "properties" are still required (and, with
        # additionalProperties false, make the object invalid: not counted in n).
        for key in required:
            if key not in props:
                body += [f"    if {key!r} not in x:", "        return False"]
        if any(not isinstance(key, str) for key in props):
            raise _Unsupported
        checks = {key: self.expr(sub, "v") for key, sub in props.items()}
        present_required = [k for k in props if k in required]
        optional = [k for k in props if k not in required]
        if present_required:
            # One zero-cost try block for all required keys.
            body.append("    try:")
            for key in present_required:
                body.append(f"        v = x[{key!r}]")
                if checks[key] != "True":
                    body += [f"        if not ({checks[key]}):", "            return False"]
            body += ["    except KeyError:", "        return False"]
        if counted:
            body.append(f"    n = {len(present_required)}")
        for key in optional:
            body.append(f"    v = x.get({key!r}, {sentinel})")
            body.append(f"    if v is not {sentinel}:")
            if counted:
                body.append("        n += 1")
            if checks[key] != "True":
                body += [f"        if not ({checks[key]}):", "            return False"]
            elif not counted:
                body.append("        pass")
        if counted:
            body.append("    return len(x) == n")
        elif additional is True:
            body.append("    return True")
        else:
            check = self.expr(additional, "v")
            known = self._name("keys")
            self.constants[known] = frozenset(props)
            if check == "False":
                raise _Unsupported
            body += [
                "    for k, v in x.items():",
                "        if type(k) is not str:",
                "            return False",
                f"        if k not in {known} and not ({check}):",
                "            return False",
                "    return True",
            ]
        self.lines.append(f"def {name}(x):\n" + "\n".join(body) + "\n")
        return name

    def _array(self, node: Mapping[str, Any]) -> str:
        name = self._name("arr")
        body = ["    if type(x) is not list:", "        return False"]
        min_items = node.get("minItems")
        max_items = node.get("maxItems")
        for bound, op in ((min_items, "<"), (max_items, ">")):
            if bound is not None:
                if type(bound) is not int:
                    raise _Unsupported
                body += [f"    if len(x) {op} {bound}:", "        return False"]
        prefix = node.get("prefixItems", [])
        if not isinstance(prefix, list):
            raise _Unsupported
        for i, sub in enumerate(prefix):
            check = self.expr(sub, "v")
            if check == "True":
                continue
            body += [
                f"    if len(x) > {i}:",
                f"        v = x[{i}]",
                f"        if not ({check}):",
                "            return False",
            ]
        items = node.get("items", True)
        seq = f"x[{len(prefix)}:]" if prefix else "x"
        if items is False:
            body += [f"    if len(x) > {len(prefix)}:", "        return False"]
        elif items is not True:
            check = self.expr(items, "v")
            if check == "False":
                raise _Unsupported
            if check != "True":
                body += [
                    f"    for v in {seq}:",
                    f"        if not ({check}):",
                    "            return False",
                ]
        unique = node.get("uniqueItems", False)
        if unique is True:
            # Python equality matches JSON equality only for str and int items.
            item_type = items.get("type") if isinstance(items, Mapping) else None
            if prefix or item_type not in ("string", "integer"):
                raise _Unsupported
            body += ["    if len(set(x)) != len(x):", "        return False"]
        elif unique is not False:
            raise _Unsupported
        body.append("    return True")
        self.lines.append(f"def {name}(x):\n" + "\n".join(body) + "\n")
        return name


class _MissingType:
    """Sentinel for absent dict keys in generated code."""

    __slots__ = ()


_MISSING = _MissingType()


def _as_list(value: Any) -> list[Any]:
    if not isinstance(value, list) or not value:
        raise _Unsupported
    return value
