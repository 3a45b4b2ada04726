"""Provenance labels on a script's values (issue 27), inside the sandbox.

A *label* is the frozenset of untrusted sources a value depends on (the names of
the tools whose results it was computed from); the empty label means trusted.
Labels are on only when the host configures ``provenance`` for the session; the
script is then compiled with :mod:`.provenance_transform`, which routes every
operation that can make a value from other values through the helpers of
:class:`Provenance`:

* where labels live: a table from ``id(obj)`` to ``(obj, label)`` (it keeps the
  object alive, so an id is never reused while its label is kept). Containers,
  instances and exceptions are labelled in place; a labelled ``str``, ``int``,
  ``float``, ``bytes``, ``bool`` or ``None`` is a *box*, a fresh object of a
  subclass (:class:`LStr`, :class:`LInt`...; ``bool`` and ``None`` cannot be
  subclassed: :class:`LBool` is an ``int`` that prints as ``True``/``False``,
  :class:`LNone` a falsy object that prints as ``None``). Literals and values
  computed only from trusted values are never boxed.
* what a value depends on: its own label, and for a container the labels of
  everything in it (:meth:`Provenance.deep_label`, walked when the container
  is used by code the script did not write: a builtin, a method, a tool, print).
* data flow: operators, comparisons, subscripts (the element gets the label
  of the container and of the key), attribute reads, iteration (each element
  gets the label of the iterable), unpacking, f-strings and calls of anything
  the script did not write (the result gets the labels of the callee and of
  every argument; a mutable argument gets them too, since the callee may have
  stored data in it; labels that script callbacks return or yield while the
  callee runs - ``sorted(key=)``, ``map`` - join the result); exceptions raised
  there get the labels of the operation.
* control flow: the *pc label*, monotone for the session: the tests of ``if``,
  ``while``, ``assert``, conditional expressions, ``and``/``or``, comprehension
  conditions, ``match`` subjects, and every exception handler entered, join it. Every tool call,
  every printed line and the final value depend on the pc label.

What leaves the sandbox: each tool call names, per argument, the untrusted
sources it depends on (``labels``); the result says which of ``stdout`` and
``value`` depend on which sources (:meth:`Provenance.output_labels`). The
host's reply to a call names the label of its result.
"""

from __future__ import annotations

import contextlib
import json
import operator
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

Label = frozenset[str]
"""The untrusted sources a value depends on; empty: trusted."""

EMPTY: Label = frozenset()


class LStr(str):
    """A labelled ``str`` (its label is in the :class:`Provenance` table)."""

    __slots__ = ()


class LInt(int):
    """A labelled ``int``."""

    __slots__ = ()


class LFloat(float):
    """A labelled ``float``."""

    __slots__ = ()


class LBytes(bytes):
    """A labelled ``bytes``."""

    __slots__ = ()


class LBool(int):
    """A labelled ``bool`` (``bool`` cannot be subclassed): an ``int`` 0 or 1 that
    prints, formats and compares like ``False``/``True``; ``is True`` compares the
    boolean (the transform routes ``is`` through :meth:`Provenance.compare`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "True" if self else "False"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return format(bool(self), spec)


class LNone:
    """A labelled ``None``: falsy, equal to ``None``, prints as ``None``."""

    __slots__ = ()

    def __bool__(self) -> bool:
        return False

    def __eq__(self, other: object) -> bool:
        return other is None or type(other) is LNone

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(None)

    def __repr__(self) -> str:
        return "None"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return format(None, spec)


BOX_OF: dict[type, type] = {str: LStr, int: LInt, float: LFloat, bytes: LBytes,
                            bool: LBool, type(None): LNone}
"""The box class of each scalar type."""

BOXES = frozenset(BOX_OF.values())
"""Every box class."""

_FAKE_BOXES = (LBool, LNone)
"""Boxes that are not instances of the type they stand for: unboxed for code the
script did not write."""

_MUTABLE = (list, dict, set, bytearray)
_PLAIN = frozenset({str, int, float, bool, type(None), bytes})
"""Plain scalars: never labelled (a labelled scalar is a box)."""


def _push(pending: list[Any], items: Any) -> None:
    """Queue the items of a container that may hold labels: plain scalars never do,
    and a container of nothing else is skipped at C speed."""
    kinds = set(map(type, items))
    if kinds <= _PLAIN:
        return
    pending.extend(item for item in items if type(item) not in _PLAIN)


def unbox(value: Any) -> Any:
    """The plain value of a box (``value`` itself for anything else)."""
    kind = type(value)
    if kind not in BOXES:
        return value
    if kind is LNone:
        return None
    if kind is LBool:
        return bool(value)
    if kind is LStr:
        return str.__str__(value)
    if kind is LInt:
        return int.__int__(value)
    if kind is LFloat:
        return float.__float__(value)
    return bytes(value)


def _plain_singletons(value: Any, depth: int = 0) -> Any:
    """``value`` with a labelled bool or None (also inside tuples) as the plain one:
    ``case True:``/``case None:`` compare by identity."""
    kind = type(value)
    if kind in _FAKE_BOXES:
        return unbox(value)
    if kind is tuple and depth < 8:
        return tuple(_plain_singletons(item, depth + 1) for item in value)
    return value


def unbox_deep(value: Any, depth: int = 0) -> Any:
    """A copy of ``value`` with every box replaced by its plain value (what
    crosses the wire); containers other than list/tuple/dict are kept."""
    kind = type(value)
    if kind in BOXES:
        return unbox(value)
    if depth > 120:
        return value
    if kind is list or kind is tuple:
        return [unbox_deep(item, depth + 1) for item in value]
    if kind is dict:
        return {unbox_deep(key, depth + 1): unbox_deep(item, depth + 1)
                for key, item in value.items()}
    return value


def _reflected(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def swapped(a: Any, b: Any) -> Any:
        return op(b, a)
    return swapped


BINARY_OPS: tuple[Callable[[Any, Any], Any], ...] = (
    operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
    operator.mod, operator.pow, operator.lshift, operator.rshift, operator.or_,
    operator.xor, operator.and_, operator.matmul,
    operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ifloordiv,
    operator.imod, operator.ipow, operator.ilshift, operator.irshift, operator.ior,
    operator.ixor, operator.iand, operator.imatmul,
)
"""Binary operators by index (the transform emits the index); 13 + i is the
in-place form of i."""

COMPARE_OPS: tuple[Callable[[Any, Any], Any], ...] = (
    operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge,
    operator.is_, operator.is_not, _reflected(operator.contains),
    lambda a, b: not operator.contains(b, a),
)
"""Comparisons by index: ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``is``,
``is not``, ``in``, ``not in``."""

UNARY_OPS: tuple[Callable[[Any], Any], ...] = (
    operator.not_, operator.neg, operator.pos, operator.invert,
)
"""Unary operators by index: ``not``, ``-``, ``+``, ``~``."""


class _StoreTarget:
    """Stands in for the container of one item store or delete (never bound to a name)."""

    __slots__ = ("_container", "_prov")

    def __init__(self, prov: Provenance, container: Any) -> None:
        self._prov = prov
        self._container = container

    def _key(self, key: Any) -> Any:
        prov = self._prov
        label = prov.label_of(key)
        if label and not isinstance(self._container, dict):
            prov.mark(self._container, label)
        return unbox(key) if type(key) in _FAKE_BOXES else key

    def __setitem__(self, key: Any, value: Any) -> None:
        self._container[self._key(key)] = value

    def __delitem__(self, key: Any) -> None:
        del self._container[self._key(key)]


class Provenance:
    """The labels of one interpreter's values (kept across runs of a session)."""

    def __init__(self, owns_function: Callable[[object], bool],
                 owns: Callable[[object], bool], type_builtin: Any) -> None:
        self._owns_function = owns_function
        self._owns = owns
        self._type = type_builtin
        self.table: dict[int, tuple[Any, Label]] = {}
        self.pc: Label = EMPTY
        self.output: list[tuple[int, int, Label]] = []
        """Spans of this run's printed text that depend on untrusted data."""
        self._extents: list[list[Label]] = []
        self.dumps: Any = json.dumps
        """The ``json.dumps`` a script may call (its arguments are unboxed deeply)."""
        self.tool_type: type | None = None
        self.tool_call: Callable[[Any, tuple[Any, ...], dict[str, Any]], Any] | None = None
        """How a call of a tool stub is made (per-argument labels out, the result's in)."""

    # --- the table ----------------------------------------------------------------
    @property
    def active(self) -> bool:
        """True once any value is labelled or control flow depended on one."""
        return bool(self.table) or bool(self.pc)

    def label_of(self, value: Any) -> Label:
        """The value's own label (not what its contents depend on)."""
        entry = self.table.get(id(value))
        return entry[1] if entry is not None and entry[0] is value else EMPTY

    def mark(self, value: Any, label: Label) -> Any:
        """``value`` labelled with ``label`` as well: a box for a scalar, the
        object itself (labelled in place) otherwise."""
        if not label:
            return value
        kind = type(value)
        key = id(value)
        entry = self.table.get(key)
        old = entry[1] if entry is not None and entry[0] is value else EMPTY
        if old >= label:
            return value
        label = old | label
        if kind in BOXES:
            value = unbox(value)
            kind = type(value)
        box_class = BOX_OF.get(kind)
        if box_class is not None:
            value = LNone() if box_class is LNone else box_class(value)
            key = id(value)
        elif isinstance(value, (type, types.ModuleType, types.BuiltinFunctionType)):
            # classes, modules and builtins are shared by every value: labelling one
            # would label everything; their dependence goes to the pc instead
            self.pc = self.pc | label
            return value
        self.table[key] = (value, label)
        return value

    def deep_label(self, value: Any) -> Label:
        """What ``value`` depends on: its label and, for containers and the script's
        instances, the labels of everything they hold."""
        table = self.table
        if not table:
            return EMPTY
        kind = type(value)
        if kind in _PLAIN:
            return EMPTY
        if kind in BOXES:
            return self.label_of(value)
        label: set[str] = set()
        seen: set[int] = set()
        pending = [value]
        while pending:
            item = pending.pop()
            key = id(item)
            if key in seen:
                continue
            seen.add(key)
            entry = table.get(key)
            if entry is not None and entry[0] is item:
                label |= entry[1]
            kind = type(item)
            if kind is list or kind is tuple or kind is set or kind is frozenset:
                _push(pending, item)
            elif kind is dict:
                _push(pending, item.keys())
                _push(pending, item.values())
            elif kind in _PLAIN or kind in BOXES:
                continue
            elif isinstance(item, (list, tuple, set, frozenset)):
                _push(pending, list(item))
            elif isinstance(item, dict):
                _push(pending, list(dict.keys(item)))
                _push(pending, list(dict.values(item)))
            elif isinstance(item, BaseException):
                _push(pending, item.args)
            elif self._owns(item) and not isinstance(item, type):
                with contextlib.suppress(AttributeError, TypeError):
                    _push(pending, list(object.__getattribute__(item, "__dict__").values()))
        return frozenset(label)

    def _args_label(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Label:
        label = EMPTY
        for item in args:
            label = label | self.deep_label(item)
        for item in kwargs.values():
            label = label | self.deep_label(item)
        return label

    def ambient(self) -> Label:
        """The pc label and the labels of the calls running now (a tool or ``print``
        called by code the script did not write, e.g. through ``map``)."""
        label = self.pc
        for extent in self._extents:
            label = label | extent[0]
        return label

    def report(self, value: Any) -> Any:
        """A value a script function returns or yields: its labels join the call
        of non-script code running now (``sorted(key=f)`` orders by what ``f`` returned)."""
        if self._extents and self.table:
            extent = self._extents[-1]
            extent[0] = extent[0] | self.deep_label(value)
        return value

    def reset(self) -> None:
        """Forget every label (the session's variables are gone)."""
        self.table.clear()
        self.pc = EMPTY
        self.output = []
        self._extents = []

    # --- helpers the transformed script calls ---------------------------------------
    def call(self, func: Any, /, *args: Any, **kwargs: Any) -> Any:
        """``func(*args, **kwargs)``."""
        kind = type(func)
        if kind is self.tool_type and self.tool_call is not None:
            return self.tool_call(func, args, kwargs)
        if not self.table and not self.pc:
            return func(*args, **kwargs)
        if kind is types.FunctionType and self._owns_function(func):
            return self.mark(func(*args, **kwargs), self.label_of(func))
        if kind is types.MethodType and self._owns_function(func.__func__):
            return self.mark(func(*args, **kwargs), self.label_of(func))
        if isinstance(func, type) and self._owns(func):
            return self.mark(func(*args, **kwargs), self.label_of(func))
        owner = getattr(func, "__self__", None)
        if (not self._extents and _PLAIN.issuperset(map(type, args))
                and _PLAIN.issuperset(map(type, kwargs.values()))
                and (owner is None or type(owner) in _PLAIN or isinstance(owner, types.ModuleType))
                and id(func) not in self.table):
            # nothing labelled goes in and no script callback runs under this call (the
            # arguments are plain scalars): nothing labelled comes out
            return func(*args, **kwargs)
        label = self.label_of(func) | self._args_label(args, kwargs)
        if owner is not None and not isinstance(owner, types.ModuleType):
            label = label | self.deep_label(owner)
        if func is self._type or func is self.dumps:
            args = tuple(unbox_deep(a) if func is self.dumps else unbox(a) for a in args)
            kwargs = {k: unbox(v) for k, v in kwargs.items()}
        else:
            args = tuple(unbox(a) if type(a) in _FAKE_BOXES else a for a in args)
            kwargs = {k: unbox(v) if type(v) in _FAKE_BOXES else v for k, v in kwargs.items()}
        extent = [label]
        self._extents.append(extent)
        try:
            result = func(*args, **kwargs)
        except BaseException as exc:
            self._extents.pop()
            self.mark(exc, extent[0])
            raise
        self._extents.pop()
        label = extent[0]
        if label:
            if self._extents:
                self._extents[-1][0] = self._extents[-1][0] | label
            for item in (owner, *args, *kwargs.values()):
                if isinstance(item, _MUTABLE) or (self._owns(item) and
                                                  not isinstance(item, type)):
                    self.mark(item, label)
        return self.mark(result, label)

    def binary(self, index: int, left: Any, right: Any) -> Any:
        """``left <op> right`` (``BINARY_OPS[index]``)."""
        op = BINARY_OPS[index]
        if not self.table or (type(left) in _PLAIN and type(right) in _PLAIN):
            return op(left, right)
        label = self._operand(left) | self._operand(right)
        try:
            result = op(unbox(left), unbox(right))
        except BaseException as exc:
            self.mark(exc, label)
            raise
        return self.mark(result, label)

    def _operand(self, value: Any) -> Label:
        kind = type(value)
        if kind in BOXES:
            return self.label_of(value)
        if kind in _PLAIN:
            return EMPTY
        return self.deep_label(value)

    def unary(self, index: int, value: Any) -> Any:
        """``<op> value`` (``UNARY_OPS[index]``)."""
        op = UNARY_OPS[index]
        if not self.table:
            return op(value)
        label = self._operand(value)
        try:
            result = op(unbox(value))
        except BaseException as exc:
            self.mark(exc, label)
            raise
        return self.mark(result, label)

    def compare(self, index: int, left: Any, right: Any) -> Any:
        """``left <op> right`` (``COMPARE_OPS[index]``)."""
        op = COMPARE_OPS[index]
        if not self.table or (type(left) in _PLAIN and type(right) in _PLAIN):
            return op(left, right)
        label = self._operand(left) | self._operand(right)
        if index in (6, 7):  # is / is not: the box's plain value
            left = unbox(left) if type(left) in _FAKE_BOXES else left
            right = unbox(right) if type(right) in _FAKE_BOXES else right
        try:
            result = op(left, right)
        except BaseException as exc:
            self.mark(exc, label)
            raise
        return self.mark(result, label)

    def compare_chain(self, indexes: tuple[int, ...], *operands: Any) -> Any:
        """``a < b < c``: every operand evaluated first (with labels on, a chain
        does not short-circuit the evaluation of its operands)."""
        result: Any = True
        for position, index in enumerate(indexes):
            result = self.compare(index, operands[position], operands[position + 1])
            if not result:
                return result
        return result

    def subscript(self, container: Any, key: Any) -> Any:
        """``container[key]``: the element gets the labels of both."""
        if not self.table:
            return container[key]
        label = self.label_of(container) | self._operand(key)
        try:
            result = container[unbox(key) if type(key) in _FAKE_BOXES else key]
        except BaseException as exc:
            self.mark(exc, label)
            raise
        return self.mark(result, label)

    def slice(self, lower: Any, upper: Any, step: Any) -> Any:
        """``lower:upper:step`` in a subscript."""
        if not self.table:
            return slice(lower, upper, step)
        label = self._operand(lower) | self._operand(upper) | self._operand(step)
        made = slice(unbox(lower), unbox(upper), unbox(step))
        if label:
            self.table[id(made)] = (made, label)
        return made

    def attribute(self, obj: Any, name: str) -> Any:
        """``obj.name`` for a name the policy allows plainly."""
        value = getattr(obj, name)
        if not self.table:
            return value
        return self.mark(value, self.label_of(obj))

    def augment(self, index: int, obj: Any, key: Any, value: Any, is_attribute: bool) -> None:
        """``obj.key <op>= value`` / ``obj[key] <op>= value``: one read, one write."""
        if is_attribute:
            setattr(obj, key, self.binary(index, self.attribute(obj, key), value))
        else:
            obj[key] = self.binary(index, self.subscript(obj, key), value)

    def target(self, container: Any) -> Any:
        """The container of ``container[key] = value``/``del container[key]``: where
        the store lands depends on the key, so the container gets the key's label
        (a dict keeps the key itself, box and all)."""
        if not self.table:
            return container
        return _StoreTarget(self, container)

    def branch(self, value: Any) -> Any:
        """A value control flow depends on: its labels join the pc label."""
        if self.table:
            label = self._operand(value)
            if label:
                self.pc = self.pc | label
        return value

    def match_subject(self, value: Any) -> Any:
        """The subject of a ``match``: control flow and the captures depend on it (the pc
        label); a labelled bool or None is matched as the plain value."""
        self.branch(value)
        return _plain_singletons(value)

    def handler(self) -> None:
        """Entering an ``except`` block: whether it runs depends on the exception."""
        if self.table:
            exc = sys.exc_info()[1]
            if exc is not None:
                self.branch(exc)

    def iterate(self, iterable: Any) -> Iterator[Any]:
        """``for x in iterable``: each element gets the iterable's labels."""
        if not self.table:
            return iter(iterable)
        label = self._operand(iterable) if type(iterable) in BOXES else self.label_of(iterable)
        if not label:
            return iter(iterable)
        return self._labelled(iter(iterable), label)

    def _labelled(self, iterator: Iterator[Any], label: Label) -> Iterator[Any]:
        for item in iterator:
            yield self._spread(item, label, 0)

    def _spread(self, item: Any, label: Label, depth: int) -> Any:
        """``item`` labelled; a plain tuple is rebuilt of labelled items (``for k, v in
        d.items()`` unpacks it: each name gets the label)."""
        if type(item) is tuple and depth < 8:
            return tuple(self._spread(part, label, depth + 1) for part in item)
        return self.mark(item, label)

    def mapping(self, value: Any) -> Any:
        """``f(**value)``: each value gets the mapping's label."""
        label = self.label_of(value)
        if not label:
            return value
        return {key: self.mark(item, label) for key, item in value.items()}

    def format_value(self, value: Any, conversion: int, spec: Any) -> Any:
        """One ``{value!r:spec}`` field of an f-string."""
        label = self._operand(value) | self._operand(spec) if self.table else EMPTY
        plain = unbox(value)
        if conversion == 115:
            plain = str(plain)
        elif conversion == 114:
            plain = repr(plain)
        elif conversion == 97:
            plain = ascii(plain)
        text = format(plain, unbox(spec) if spec is not None else "")
        return self.mark(text, label)

    def join(self, *parts: Any) -> Any:
        """The pieces of an f-string, joined."""
        label = EMPTY
        if self.table:
            for part in parts:
                label = label | self.label_of(part)
        return self.mark("".join([unbox(part) for part in parts]), label)

    # --- what leaves the sandbox ------------------------------------------------------
    def call_labels(self, bound: dict[str, Any]) -> dict[str, list[str]]:
        """Per argument of one tool call: the sorted sources it depends on (with the
        pc label and the labels of the calls running now); only untrusted ones."""
        ambient = self.ambient()
        labels = {}
        for name, value in bound.items():
            label = ambient | self.deep_label(value)
            if label:
                labels[name] = sorted(label)
        return labels

    def print_label(self, values: tuple[Any, ...]) -> Label:
        """What one ``print`` call's text depends on."""
        label = self.ambient()
        for value in values:
            label = label | self.deep_label(value)
        return label

    def record_output(self, start: int, end: int, label: Label) -> None:
        """Printed characters ``start:end`` depend on ``label``."""
        if label and end > start:
            self.output.append((start, end, label))

    def output_labels(self, value: Any) -> dict[str, Any]:
        """The ``labels`` of a result message: printed spans and the final value."""
        value_label = self.pc | self.deep_label(value)
        return {
            "stdout": [[start, end, sorted(label)] for start, end, label in self.output],
            "value": sorted(value_label),
        }
