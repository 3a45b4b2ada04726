"""The compile-time half of provenance labels (issue 27): an AST pass run after
:class:`.policy.SandboxPolicy` when labels are on.

It rewrites every operation that makes a value from other values into a call of
a :class:`.provenance.Provenance` helper (names ``_pv_*_``, reserved: a script
cannot name or rebind them), and every control-flow test into ``_pv_br_``:

* ``a + b`` → ``_pv_bin_(0, a, b)``, ``-a`` → ``_pv_un_(1, a)``, ``a < b`` →
  ``_pv_cmp_(2, a, b)`` (a chain: ``_pv_cmpn_``), ``x[k]`` → ``_pv_sub_(x, k)``
  (slices through ``_pv_slc_``), ``x[k] = v``/``del x[k]`` → ``_pv_tgt_(x)[k]``
  (a list whose item was chosen by a labelled index gets its label),
  ``x.name`` → ``_pv_at_(x, 'name')``,
  ``x[k] += v``/``x.a += v`` → ``_pv_aug_``, ``f(...)`` → ``_pv_call_(f, ...)``
  (``*args`` through ``_pv_it_``, ``**kwargs`` through ``_pv_mp_``),
  f-strings → ``_pv_join_(..., _pv_fv_(value, conversion, spec))``;
* ``for``/comprehension iterables and unpacking assignments → ``_pv_it_``;
* tests of ``if``/``while``/``assert``/``x if c else y``/comprehension
  conditions and the left operands of ``and``/``or`` → ``_pv_br_``; the first
  statement of every ``except`` block → ``_pv_exc_()``;
* ``return v``, ``yield v``, generator-expression elements and lambda bodies →
  ``_pv_rv_(v)``.

Constructs whose values it cannot follow are refused while labels are on, with
a substitute: ``async``/``await`` (call tools directly or with ``parallel``).
A ``match`` subject joins the pc label (``_pv_ms_``), which covers what its
cases capture.
"""

from __future__ import annotations

import ast
from typing import Any

from RestrictedPython.transformer import copy_locations

_BINARY = {ast.Add: 0, ast.Sub: 1, ast.Mult: 2, ast.Div: 3, ast.FloorDiv: 4, ast.Mod: 5,
           ast.Pow: 6, ast.LShift: 7, ast.RShift: 8, ast.BitOr: 9, ast.BitXor: 10,
           ast.BitAnd: 11, ast.MatMult: 12}
_INPLACE = 13
_COMPARE = {ast.Eq: 0, ast.NotEq: 1, ast.Lt: 2, ast.LtE: 3, ast.Gt: 4, ast.GtE: 5,
            ast.Is: 6, ast.IsNot: 7, ast.In: 8, ast.NotIn: 9}
_UNARY = {ast.Not: 0, ast.USub: 1, ast.UAdd: 2, ast.Invert: 3}

HELPER_NAMES = frozenset({
    "_pv_call_", "_pv_bin_", "_pv_un_", "_pv_cmp_", "_pv_cmpn_", "_pv_sub_", "_pv_slc_",
    "_pv_at_", "_pv_aug_", "_pv_br_", "_pv_exc_", "_pv_it_", "_pv_mp_", "_pv_fv_",
    "_pv_join_", "_pv_rv_", "_pv_tgt_", "_pv_ms_",
})
"""The names the transformed script calls (builtins of a labelled interpreter)."""

_NOT_WRAPPED = frozenset({"super", "_check_abort_"})
"""Calls left alone: ``super()`` reads its caller's frame; the abort check is the sandbox's."""


def _helper(name: str, args: list[ast.expr], like: ast.AST) -> ast.Call:
    node = ast.Call(func=ast.Name(name, ast.Load()), args=args, keywords=[])
    copy_locations(node, like)  # type: ignore[arg-type]
    for child in ast.walk(node):
        if "lineno" in child._attributes and not hasattr(child, "lineno"):
            copy_locations(child, like)  # type: ignore[arg-type]
    return node


def _const(value: Any, like: ast.AST) -> ast.Constant:
    node = ast.Constant(value)
    copy_locations(node, like)  # type: ignore[arg-type]
    return node


class ProvenanceTransform(ast.NodeTransformer):
    """Rewrites a policy-checked module (see the module docstring)."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors

    def _refuse(self, node: ast.AST, message: str) -> None:
        line = getattr(node, "lineno", "?")
        self.errors.append(f"Line {line}: {message}")

    # --- refused ------------------------------------------------------------------
    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> Any:
        self._refuse(node, "async code is not available with provenance labels on: call the "
                     "tools directly, or several at once with parallel(...)")
        return node

    def visit_Await(self, node: ast.Await) -> Any:
        self._refuse(node, "await is not available with provenance labels on: call the tool "
                     "directly")
        return node

    def visit_AsyncFor(self, node: ast.AsyncFor) -> Any:
        self._refuse(node, "async for is not available with provenance labels on: use for")
        return node

    def visit_AsyncWith(self, node: ast.AsyncWith) -> Any:
        self._refuse(node, "async with is not available with provenance labels on: use with")
        return node

    def visit_Match(self, node: Any) -> Any:
        # which case runs, and what its captures hold, depends on the subject: the
        # subject joins the pc label, which every later call, print and value carries
        self.generic_visit(node)
        node.subject = _helper("_pv_ms_", [node.subject], node.subject)
        return node

    # --- operators ------------------------------------------------------------------
    def visit_BinOp(self, node: ast.BinOp) -> Any:
        self.generic_visit(node)
        return _helper("_pv_bin_", [_const(_BINARY[type(node.op)], node), node.left,
                                    node.right], node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        self.generic_visit(node)
        if isinstance(node.operand, ast.Constant):
            return node
        return _helper("_pv_un_", [_const(_UNARY[type(node.op)], node), node.operand], node)

    def visit_Compare(self, node: ast.Compare) -> Any:
        self.generic_visit(node)
        indexes = [_COMPARE[type(op)] for op in node.ops]
        if len(indexes) == 1:
            return _helper("_pv_cmp_", [_const(indexes[0], node), node.left,
                                        node.comparators[0]], node)
        return _helper("_pv_cmpn_", [_const(tuple(indexes), node), node.left,
                                     *node.comparators], node)

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:
        self.generic_visit(node)
        node.values = [_helper("_pv_br_", [value], value) for value in node.values[:-1]] \
            + [node.values[-1]]
        return node

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        self.generic_visit(node)
        node.test = _helper("_pv_br_", [node.test], node.test)
        return node

    # --- data access ----------------------------------------------------------------
    def _key(self, key: ast.expr) -> ast.expr:
        if isinstance(key, ast.Slice):
            none = _const(None, key)
            return _helper("_pv_slc_", [key.lower or none, key.upper or none,
                                        key.step or none], key)
        return key

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):  # x[k] = v / del x[k]: the target knows k
            node.value = _helper("_pv_tgt_", [node.value], node.value)
            node.slice = self._key(node.slice)
            return node
        return _helper("_pv_sub_", [node.value, self._key(node.slice)], node)

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        return _helper("_pv_at_", [node.value, _const(node.attr, node)], node)

    def visit_Call(self, node: ast.Call) -> Any:
        func = node.func
        if isinstance(func, ast.Name) and (func.id in _NOT_WRAPPED or func.id in HELPER_NAMES):
            self.generic_visit(node)
            return node
        if isinstance(func, ast.Attribute):  # a method: the bound method carries its object
            func.value = self.visit(func.value)
        else:
            func = self.visit(func)
        args: list[ast.expr] = []
        for arg in node.args:
            arg = self.visit(arg)
            if isinstance(arg, ast.Starred):
                arg.value = _helper("_pv_it_", [arg.value], arg)
            args.append(arg)
        keywords = []
        for keyword in node.keywords:
            keyword.value = self.visit(keyword.value)
            if keyword.arg is None:
                keyword.value = _helper("_pv_mp_", [keyword.value], keyword.value)
            keywords.append(keyword)
        call = ast.Call(func=ast.Name("_pv_call_", ast.Load()), args=[func, *args],
                        keywords=keywords)
        copy_locations(call, node)
        copy_locations(call.func, node)
        return call

    def visit_Starred(self, node: ast.Starred) -> Any:
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load):
            node.value = _helper("_pv_it_", [node.value], node)
        return node

    def visit_Dict(self, node: ast.Dict) -> Any:
        self.generic_visit(node)
        node.values = [_helper("_pv_mp_", [value], value) if key is None else value
                       for key, value in zip(node.keys, node.values, strict=True)]
        return node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> Any:
        parts: list[ast.expr] = []
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                value = self.visit(part.value)
                spec: ast.expr = (self.visit(part.format_spec) if part.format_spec is not None
                                  else _const(None, part))
                parts.append(_helper("_pv_fv_", [value, _const(part.conversion, part), spec],
                                     part))
            else:
                parts.append(part)
        return _helper("_pv_join_", parts, node)

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        self.generic_visit(node)
        index = _const(_INPLACE + _BINARY[type(node.op)], node)
        target = node.target
        if isinstance(target, ast.Name):
            load = ast.Name(target.id, ast.Load())
            copy_locations(load, target)
            assign = ast.Assign(targets=[target],
                                value=_helper("_pv_bin_", [index, load, node.value], node))
            copy_locations(assign, node)
            return assign
        if isinstance(target, ast.Attribute):
            args = [index, target.value, _const(target.attr, node), node.value,
                    _const(True, node)]
        else:
            assert isinstance(target, ast.Subscript)
            container = target.value  # _pv_aug_ reads and writes itself: no store target
            if (isinstance(container, ast.Call) and isinstance(container.func, ast.Name)
                    and container.func.id == "_pv_tgt_"):
                container = container.args[0]
            args = [index, container, self._key(target.slice), node.value,
                    _const(False, node)]
        statement = ast.Expr(_helper("_pv_aug_", args, node))
        copy_locations(statement, node)
        return statement

    # --- control flow -------------------------------------------------------------
    def visit_If(self, node: ast.If) -> Any:
        self.generic_visit(node)
        node.test = _helper("_pv_br_", [node.test], node.test)
        return node

    def visit_While(self, node: ast.While) -> Any:
        self.generic_visit(node)
        node.test = _helper("_pv_br_", [node.test], node.test)
        return node

    def visit_Assert(self, node: ast.Assert) -> Any:
        self.generic_visit(node)
        node.test = _helper("_pv_br_", [node.test], node.test)
        return node

    def visit_For(self, node: ast.For) -> Any:
        self.generic_visit(node)
        node.iter = _helper("_pv_it_", [node.iter], node.iter)
        return node

    def visit_comprehension(self, node: ast.comprehension) -> Any:
        self.generic_visit(node)
        node.iter = _helper("_pv_it_", [node.iter], node.iter)
        node.ifs = [_helper("_pv_br_", [test], test) for test in node.ifs]
        return node

    def visit_Assign(self, node: ast.Assign) -> Any:
        self.generic_visit(node)
        if any(isinstance(target, (ast.Tuple, ast.List)) for target in node.targets):
            node.value = _helper("_pv_it_", [node.value], node.value)
        return node

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> Any:
        self.generic_visit(node)
        check = ast.Expr(_helper("_pv_exc_", [], node))
        copy_locations(check, node)
        node.body.insert(1 if node.body else 0, check)
        return node

    def visit_Return(self, node: ast.Return) -> Any:
        self.generic_visit(node)
        if node.value is not None:
            node.value = _helper("_pv_rv_", [node.value], node.value)
        return node

    def visit_Yield(self, node: ast.Yield) -> Any:
        self.generic_visit(node)
        if node.value is not None:
            node.value = _helper("_pv_rv_", [node.value], node.value)
        return node

    def visit_YieldFrom(self, node: ast.YieldFrom) -> Any:
        self.generic_visit(node)  # a labelled iterable's items come out labelled
        node.value = _helper("_pv_it_", [node.value], node.value)
        return node

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> Any:
        self.generic_visit(node)
        node.elt = _helper("_pv_rv_", [node.elt], node.elt)  # consumed by C code: report it
        return node

    def visit_Lambda(self, node: ast.Lambda) -> Any:
        self.generic_visit(node)
        node.body = _helper("_pv_rv_", [node.body], node.body)
        return node


def transform(tree: ast.AST, errors: list[str]) -> Any:
    """Rewrite ``tree`` in place for labels; refusals are appended to ``errors``."""
    return ProvenanceTransform(errors).visit(tree)
