"""The compile-time policy: RestrictedPython's transformer, tuned for speed.

RestrictedPython rewrites every attribute access, subscript, iteration,
unpacking and augmented assignment into a call to a guard function. Those
guards exist for Zope's security proxies; in a sandbox whose only objects are
JSON data, the script's own objects and curated module facades, most of them
protect nothing and cost 1.5-2x in compute-heavy scripts. This policy keeps
RestrictedPython's static checks (private names, forbidden nodes, exec/eval,
frame and generator internals) and emits a runtime guard only where one
decides something:

* attribute *loads* of ``format``/``format_map`` (``str.format`` can walk
  attributes), ``__class__`` (must not hand out the real ``type``) and
  single-underscore names (allowed only on the script's own objects);
* every attribute *store/delete* (``_write_``): classes, functions and module
  facades that the script did not create are read-only;
* ``**`` and ``<<`` (``_pow_``/``_lshift_``), which can build integers of
  billions of digits in one C call;
* the start of every ``except`` handler, ``finally`` block and script-defined
  ``__exit__`` (``_check_abort_``), so that a limit breach cannot be
  swallowed by ``except BaseException``, by ``return``/``break``/``continue``
  in a ``finally`` block, or by an ``__exit__`` that returns True;
* loads of ``__init__`` (calling it again re-initialises an object, which is
  a write), ``register`` (``ABC.register`` changes ``isinstance`` for the
  whole process) and ``mro`` (``type.mro`` would list the real class behind
  a facade, e.g. the real ``enum.Enum`` whose functional API writes any
  name; the guard lists the facades instead, :func:`.standins.visible_mro`).

Why no guard on subscripts, iteration and item writes is safe: those
operations only ever reach objects a script can name, and every way to name
a live capability (an attribute of a facade member, a metaclass, a frame) is
closed by the checks above and by :mod:`.guards`/:mod:`.modules`. The
adversarial suite (``tests/security``) broke this several times through
objects that *perform* or *forward* writes for the script -
``functools.update_wrapper``, ``dataclass`` code generation, ``typing``
aliases, ``ABC.register``, ``__init__`` on shared objects, the ``decimal``
template contexts, a stdlib class-level dict - each now closed where the
object is handed out. The rule that keeps it true: a facade never exposes a
mutable object shared with the rest of the process (``textwrap`` is a private
copy of the module for that reason).

It also allows what models write and RestrictedPython refuses: ``match``,
``nonlocal``, augmented assignment of items and attributes, ``_private``
names, dunder methods in class bodies, the safe dunder reads
``__name__``, ``__qualname__``, ``__doc__``, ``__init__`` and ``__class__``,
and async code: ``async def``, ``await``, ``async for``/``async with`` and
top-level ``await`` (compiled with ``PyCF_ALLOW_TOP_LEVEL_AWAIT``; the final
expression then becomes an assignment inside the script's coroutine). Every
call in async code is compiled as ``_defer_(f)(...)``, which turns a tool stub
into an awaitable tool call (:mod:`.asyncsupport`); an ``__aexit__`` gets the
abort check of ``__exit__``.

Names chosen by scripts
-----------------------

A string that a script chose must never reach the interpreter's own
``getattr``/``setattr`` past these rules, whatever carries it:

* attribute syntax: :func:`attribute_rule` at compile time (hidden names are
  refused, guarded ones are routed to ``_getattr_``);
* computed names - ``getattr``/``setattr``/``delattr``, ``str.format`` fields,
  ``operator.attrgetter``/``methodcaller`` - the same rule at run time;
* class patterns: keyword names at compile time (plain names only);
  positional names come from ``__match_args__``, so the class goes through
  ``_match_class_`` (:meth:`SandboxPolicy.visit_Match`), which reads the
  value once, checks it and hands the pattern a stand-in carrying that very
  value: a later change to the class changes nothing the pattern reads;
* names that become fields, members or instance-dictionary keys
  (``namedtuple``, ``typing.NamedTuple``, ``dataclass``, the functional
  ``Enum`` API, ``cached_property``): plain identifiers only, nothing
  reserved or hidden, exact ``str`` (:func:`field_name_problem`), read once
  and used as read (a checked name is never read again after script code
  could change it);
* writes: only to the script's own objects and never special names;
  ``vars()`` is a snapshot whose item writes go through ``setattr``, so no
  script plants ``__reduce_ex__``/``__deepcopy__``/``__getstate__`` on an
  instance for ``copy`` to trust.

Nothing hands out a code object, a frame, a function or code constructor or
a real ``compile``: frame, code and generator internals are hidden names;
``type()`` reports stand-ins for functions, methods, code, frames,
tracebacks, generators, coroutines, cells, typing aliases and
``ForwardRef`` (``isinstance`` works, calling does not) and the sandbox's
``type`` for every metaclass; a class statement cannot subclass a metaclass
(``class M(typing.Type)``); ``AttributeError.obj`` is cleared before a
handler sees the exception. ``typing`` still compiles annotation strings
into ``ForwardRef`` objects in the standard library's own code; that code
object is reachable only through a hidden attribute.

The rule each facade follows, and every class and callable a script may be
handed, are data in :mod:`.inventory` (``MODULES``: how each module is exposed
and the rule of its facade; ``CLASSES``: every class a script may hold, with
its rule; ``BUILTINS``; ``FACADE_FUNCTIONS``). ``tests/security/
test_reachability.py`` crawls every route a script has on every backend and
fails on any class not listed there. Members a facade does not name are the
module's ``__all__`` minus the exclusions in :mod:`.modules`;
``__build_class__`` records the script's classes, refuses metaclass bases and
bases with a finalizer (``io.StringIO``'s would call the script's ``close()``
after the run, in process in a host thread), and hands a class's ``__exit__``
a traceback stand-in instead of the live traceback.

Class bodies may define every special method of the numeric protocol and
bind one by assignment (``__radd__ = __add__``; not ``__exit__``, which must
be a ``def`` so that it gets its abort check). ``**=`` and ``<<=`` on names,
attributes and items keep the integer limit (``_ipow_``/``_ilshift_``/
``_augment_``); calls of ``bytes``/``bytearray`` by name pass a size check
(``_bytes_``). A script may rebind any builtin name except the guard names
(:data:`GUARD_NAMES`).
"""

from __future__ import annotations

import ast
import keyword
import threading
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import CodeType
from typing import Any

from RestrictedPython.transformer import (
    INSPECT_ATTRIBUTES,
    RestrictingNodeTransformer,
    copy_locations,
)

from . import provenance_transform

SCRIPT_FILENAME = "<script>"
"""The filename scripts are compiled under: tracebacks and the audit hook's trust
table recognise a script's frames by it."""

ALLOWED_DUNDER_METHODS = frozenset(
    {
        "__init__", "__post_init__", "__repr__", "__str__", "__format__",
        "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__",
        "__bool__", "__len__", "__iter__", "__next__", "__reversed__",
        "__contains__", "__getitem__", "__setitem__", "__delitem__", "__missing__",
        "__call__", "__enter__", "__exit__", "__aenter__", "__aexit__", "__aiter__", "__anext__",
        "__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__",
        "__mul__", "__rmul__", "__imul__", "__truediv__", "__rtruediv__",
        "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__matmul__",
        "__neg__", "__pos__", "__abs__", "__round__", "__int__", "__float__",
        "__and__", "__or__", "__xor__", "__rand__", "__ror__", "__rxor__",
        "__itruediv__", "__ifloordiv__", "__imod__", "__ipow__", "__imatmul__",
        "__iand__", "__ior__", "__ixor__", "__irshift__", "__ilshift__",
        "__pow__", "__rpow__", "__rshift__", "__lshift__", "__rrshift__", "__rlshift__",
        "__rmatmul__", "__invert__", "__divmod__", "__rdivmod__", "__index__",
        "__complex__", "__trunc__", "__floor__", "__ceil__",
    }
)
"""Special methods a script may define in a class body."""

SIZED_CONSTRUCTORS = frozenset({"bytes", "bytearray"})
"""Builtin types whose calls by name go through ``_bytes_`` (a size check)."""

ENUM_HOOKS = frozenset({"_missing_", "_generate_next_value_"})
"""``enum`` hooks a class body may define: the enum machinery calls them with the
class and a value, nothing else."""

ASSIGNABLE_DUNDER_METHODS = ALLOWED_DUNDER_METHODS - {"__exit__", "__aexit__"}
"""Special methods a class body may also bind by assignment (``__radd__ = __add__``,
``__hash__ = None``): calling the value is what the script could do itself.
``__exit__`` must be a ``def``, which the policy gives an abort check."""

SPECIAL_ATTRIBUTE_SUBSTITUTES = {
    "__dict__": "use vars(obj)",
    "__module__": "use type(obj).__name__",
    "__bases__": "use isinstance() or issubclass()",
    "__mro__": "use isinstance() or issubclass()",
    "__annotations__": "use dataclasses.fields(cls)",
    "__slots__": "use a dataclass(slots=True)",
    "__len__": "use len(x)",
    "__getitem__": "use x[key]",
    "__call__": "call the object: f(...)",
}
"""What to write instead of reading a hidden special attribute, named in the refusal."""

PLAIN_DUNDER_READS = frozenset({"__name__", "__qualname__", "__doc__", "__init__"})
"""Dunder attributes any object may expose: strings and the bound initializer."""

GUARDED_ATTRIBUTES = frozenset({"format", "format_map", "__class__", "__init__", "register",
                                "mro"})
"""Attribute loads that always go through the runtime ``_getattr_`` guard."""

CLOCK_ATTRIBUTES = frozenset({"now", "utcnow", "today"})
"""Attribute loads guarded too: ``datetime.now()`` and friends read the run's recorded
wall clock (see :mod:`.runsources`)."""

LAYOUT_CHECKED_ATTRIBUTES = frozenset({"replace"})
"""Attribute loads guarded too: a C base class's method of that name is unsafe on a C
subclass's instances (``datetime.date.replace(dt)``, see :mod:`.layouts`)."""

HIDDEN_ATTRIBUTES = INSPECT_ATTRIBUTES | frozenset({"co_consts", "cell_contents"})
"""Non-dunder attribute names that lead to frames, code objects or closure
cells: refused wherever a script can name an attribute (syntax, ``getattr``,
format fields, ``operator.attrgetter``, class patterns, field names)."""

PLAIN, GUARDED, HIDDEN = "plain", "guarded", "hidden"
"""The three outcomes of :func:`attribute_rule`."""


def attribute_rule(name: str) -> str:
    """How the sandbox treats a read of the attribute ``name``, wherever the name
    comes from (source text, a computed string, ``__match_args__``, a field name):

    * ``PLAIN`` - an ordinary attribute, read with no runtime guard;
    * ``GUARDED`` - read only through :meth:`.guards.Guards.getattr`
      (single-underscore names, ``format``/``format_map``, ``register``,
      ``__class__``, ``__init__``), which decides by the object;
    * ``HIDDEN`` - never readable: special attributes other than ``__name__``,
      ``__qualname__`` and ``__doc__``, name-mangled names, and frame, code and
      generator internals (:data:`HIDDEN_ATTRIBUTES`).
    """
    if name.startswith("__"):
        if not name.endswith("__"):
            return HIDDEN
        if name in PLAIN_DUNDER_READS or name == "__class__":
            return GUARDED if name in GUARDED_ATTRIBUTES else PLAIN
        return HIDDEN
    if name in HIDDEN_ATTRIBUTES:
        return HIDDEN
    if name in GUARDED_ATTRIBUTES or name in LAYOUT_CHECKED_ATTRIBUTES or (
            name in CLOCK_ATTRIBUTES) or (
            name.startswith("_") and name != "_"):
        return GUARDED
    return PLAIN

NAMEDTUPLE_API = frozenset({"_replace", "_asdict", "_fields", "_make", "_field_defaults"})
"""The documented underscore API of namedtuples, readable on any namedtuple."""

HINTS = {
    "TryStar": "except* is not supported: use a plain except clause.",
}


IMPORT_SUBSTITUTES: dict[str, str] = {
    "os": "tools for files and the environment; string methods for paths",
    "os.path": "string methods (str.rsplit('/', 1), str.endswith) for paths",
    "pathlib": "string methods for paths; the tools for files",
    "sys": "print() for output; raise an exception to stop",
    "subprocess": "the tools", "shutil": "the tools", "glob": "the tools",
    "requests": "the tools", "urllib": "the tools", "urllib.parse": "the tools",
    "http": "the tools", "httpx": "the tools", "socket": "the tools",
    "threading": "parallel(...) for concurrent tool calls",
    "concurrent.futures": "parallel(...) for concurrent tool calls",
    "multiprocessing": "parallel(...) for concurrent tool calls",
    "pickle": "json", "shelve": "json", "marshal": "json",
    "pandas": "lists of dicts with collections, itertools and statistics",
    "numpy": "lists with math and statistics", "scipy": "statistics",
    "dateutil": "datetime.strptime / datetime.fromisoformat",
    "pytz": "zoneinfo.ZoneInfo", "calendar": "datetime",
    "secrets": "uuid.uuid4() or random", "hmac": "hashlib",
    "pprint": "json.dumps(obj, indent=2)", "logging": "print()", "warnings": "print()",
    "traceback": "str(exc) and type(exc).__name__", "array": "list",
    "struct": "int.to_bytes / int.from_bytes", "numbers": "isinstance(x, (int, float))",
    "types": "a class, a dict, or collections.namedtuple",
    "abc": "collections.abc, or a plain base class",
    "contextlib": "try/finally, or a class with __enter__/__exit__",
    "inspect": "the objects themselves", "importlib": "import statements",
    "tabulate": "f-strings with widths, e.g. f'{name:<10}{value:>8}'",
    "locale": "format specs, e.g. f'{n:,.2f}'", "zlib": "base64 (no compression)",
    "gzip": "base64 (no compression)", "difflib": "set operations or ==",
}
"""What to write instead of an unavailable module, named in the refusal."""


def import_substitute(module: str) -> str:
    """A sentence naming what to use instead of ``module`` ('' if nothing fits)."""
    for name in (module, module.split(".")[0]):
        if name in IMPORT_SUBSTITUTES:
            return f" Use {IMPORT_SUBSTITUTES[name]} instead."
    return ""


@dataclass(frozen=True)
class CompiledScript:
    """A script that passed the policy: its body and, if the script ends with a
    bare expression, that expression compiled separately so its value can be
    returned."""

    body: CodeType
    final_expression: CodeType | None
    awaits: bool = False
    """The top level awaits: ``eval(body)`` gives a coroutine for the sandbox's loop
    (:mod:`.asyncsupport`)."""
    has_value: bool = False
    """An async script's final expression was compiled into ``body`` as an
    assignment to :data:`ASYNC_VALUE_NAME`."""


ASYNC_VALUE_NAME = "__sandbox_value__"
"""Where a script whose top level awaits leaves the value of its final expression."""


class PolicyViolation(Exception):
    """Internal: the script is valid Python that the sandbox refuses; ``errors`` say why."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


def field_name_problem(name: object) -> str | None:
    """Why ``name`` cannot be a field or attribute name chosen by a script
    (a namedtuple or dataclass field, an enum member, a ``cached_property``),
    or ``None`` if it can.

    Such names end up in generated source code (``dataclass``,
    ``namedtuple``), in ``__match_args__`` and as keys of instance
    dictionaries, where a special name (``__reduce_ex__``, ``__deepcopy__``...)
    would be trusted by the standard library. Only plain identifiers that are
    not reserved and not frame or code internals pass; ``str`` subclasses do
    not (their ``isidentifier`` could lie).
    """
    if type(name) is not str:
        return "is not a plain string"
    if not name.isidentifier() or keyword.iskeyword(name):
        return "is not an identifier"
    if name.startswith("__") or (name.startswith("_") and name.endswith("_") and name != "_"):
        return "is reserved (names that start with '__' or start and end with '_' belong to " \
            "Python and the sandbox)"
    if name in HIDDEN_ATTRIBUTES:
        return "names frame, code or generator internals"
    return None


def check_field_names(what: str, names: Iterable[object]) -> None:
    """Raise ``TypeError`` for the first name that :func:`field_name_problem` refuses."""
    for name in names:
        problem = field_name_problem(name)
        if problem is not None:
            raise TypeError(f"{what}: the name {name!r} {problem}; rename it (e.g. 'x', "
                            "'value', 'private_value')")


def _call(name: str, args: list[ast.expr], like: ast.AST) -> ast.Call:
    node = ast.Call(func=ast.Name(name, ast.Load()), args=args, keywords=[])
    copy_locations(node, like)  # type: ignore[arg-type]
    return node


def _check_abort_statement(like: ast.AST) -> ast.Expr:
    """``_check_abort_()`` as a statement, located at ``like``."""
    check = ast.Expr(_call("_check_abort_", [], like))
    copy_locations(check, like)  # type: ignore[arg-type]
    return check


def _is_dotted(node: ast.expr) -> bool:
    """True for ``a`` and ``a.b.c``: what a pattern may name (a guarded attribute
    read has already become a ``_getattr_`` call)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


GUARD_NAMES = frozenset({
    "__builtins__", "__import__", "__build_class__", "_getattr_", "_write_",
    "_write_private_", "_pow_", "_lshift_", "_ipow_", "_ilshift_", "_augment_", "_bytes_",
    "_check_abort_", "_match_class_", "_import_refused_", "_defer_",
})
"""Names the compiled script calls or the interpreter relies on: never rebindable.
Every other builtin name (``print``, ``list``, ``id``...) a script may rebind in its
own namespace, as in Python."""


def _is_reserved(name: str) -> bool:
    """Names the sandbox keeps for itself: dunders and ``_guard_``-style names."""
    if name == "_":
        return False
    return name.startswith("__") or (name.startswith("_") and name.endswith("_"))


class SandboxPolicy(RestrictingNodeTransformer):
    """RestrictedPython's transformer with the changes described in the module docstring."""

    allowed_modules: frozenset[str] = frozenset()
    _match_classes = 0
    _async_scope = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._class_dunders: set[int] = set()

    # --- names -----------------------------------------------------------------
    def check_name(self, node: Any, name: str | None, allow_magic_methods: bool = False) -> None:
        if name is None:
            return
        if name in GUARD_NAMES:
            self.error(node, f'"{name}" is one of the sandbox\'s guard names (compiled scripts '
                       'call it); rename yours (e.g. "tmp"). Other builtin names such as print, '
                       'list or id may be rebound.')
            return
        if _is_reserved(name):
            if id(node) in self._class_dunders:
                return
            if allow_magic_methods and node.col_offset != 0 and (
                    name in ALLOWED_DUNDER_METHODS or name in ENUM_HOOKS):
                return
            if name.startswith("__") and name.endswith("__"):
                self.error(
                    node,
                    f'"{name}" is a reserved name. Special names are not available in '
                    "scripts (only common special methods such as __init__, __repr__, "
                    "__eq__ may be defined in a class body).",
                )
            else:
                self.error(
                    node,
                    f'"{name}" is a reserved name: names that start with "__" or both start '
                    'and end with "_" belong to the sandbox. Rename it (e.g. "tmp").',
                )
            return

    def visit_Name(self, node: ast.Name) -> Any:
        node = self.node_contents_visit(node)
        if isinstance(node.ctx, ast.Load):
            self.used_names[node.id] = True
        self.check_name(node, node.id)
        return node

    def inject_print_collector(self, node: Any, position: int = 0) -> None:
        """``print`` is a plain builtin here, so there is nothing to inject."""

    # --- attributes --------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> Any:
        attr = node.attr
        rule = attribute_rule(attr)
        if rule == HIDDEN:
            if attr.startswith("__") and attr.endswith("__"):
                message = ('special attributes are hidden in the sandbox (readable: __name__, '
                           "__qualname__, __doc__, __class__, __init__); "
                           + SPECIAL_ATTRIBUTE_SUBSTITUTES.get(
                               attr, "use the builtin or operator instead (len(x), str(x), x + y)"))
            elif attr.startswith("__"):
                message = ("name-mangled attributes are hidden; use a single underscore "
                           "(self._name)")
            else:
                message = ("frames, code objects and generator internals are hidden in the "
                           "sandbox; use the values themselves")
            self.error(node, f'"{attr}" is not available: {message}.')
            return node
        if attr.startswith("__") and not isinstance(node.ctx, ast.Load):
            self.error(node, f'"{attr}" cannot be assigned or deleted; use a plain attribute '
                       'name (e.g. obj.value) or a method.')
            return node
        node = self.node_contents_visit(node)
        if isinstance(node.ctx, ast.Load):
            if rule == GUARDED:
                return _call("_getattr_", [node.value, ast.Constant(attr)], node)
            return node
        guard = "_write_private_" if attr.startswith("_") and attr != "_" else "_write_"
        node.value = _call(guard, [node.value], node.value)
        return node

    # --- subscripts, iteration, unpacking: no runtime guard needed ---------------
    def visit_Subscript(self, node: ast.Subscript) -> Any:
        return self.node_contents_visit(node)

    def guard_iter(self, node: Any) -> Any:
        return self.node_contents_visit(node)

    def visit_Assign(self, node: ast.Assign) -> Any:
        return self.node_contents_visit(node)

    def visit_With(self, node: ast.With) -> Any:
        return self.node_contents_visit(node)

    def visit_Call(self, node: ast.Call) -> Any:
        if isinstance(node.func, ast.Name) and node.func.id in ("exec", "eval", "compile"):
            self.error(node, f"{node.func.id}() is not available in the sandbox: write the "
                       "code itself, or parse data with json.loads(), int() or float().")
        node = self.node_contents_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in SIZED_CONSTRUCTORS:
            # ``bytes(10**10)`` allocates in one C call: the guard checks the size
            # when the name still means the real type (a script may rebind it)
            node.args.insert(0, node.func)
            node.func = ast.Name("_bytes_", ast.Load())
            copy_locations(node.func, node)
        if self._async_scope:
            # a tool called from async code gives an awaitable (asyncsupport.defer)
            node.func = _call("_defer_", [node.func], node.func)
        return node

    # --- arithmetic that can allocate without bound in one C call --------------
    def visit_BinOp(self, node: ast.BinOp) -> Any:
        node = self.node_contents_visit(node)
        if isinstance(node.op, ast.Pow):
            return _call("_pow_", [node.left, node.right], node)
        if isinstance(node.op, ast.LShift):
            return _call("_lshift_", [node.left, node.right], node)
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        """``**=`` and ``<<=`` keep the integer-size limit whatever the target:
        ``x **= y`` becomes ``x = _ipow_(x, y)``; ``obj.a **= y`` and
        ``obj[k] **= y`` become ``_augment_(op, obj, 'a' or k, y, is_attribute)``,
        which reads, applies the guarded operator and writes back once (the
        object of an attribute target has passed ``_write_`` already)."""
        node = self.node_contents_visit(node)
        if not isinstance(node.op, (ast.Pow, ast.LShift)):
            return node
        op = "pow" if isinstance(node.op, ast.Pow) else "lshift"
        target = node.target
        if isinstance(target, ast.Name):
            load = ast.Name(target.id, ast.Load())
            copy_locations(load, target)
            value = _call(f"_i{op}_", [load, node.value], node)
            assign = ast.Assign(targets=[target], value=value)
            copy_locations(assign, node)
            return assign
        if isinstance(target, ast.Attribute):
            args = [ast.Constant(op), target.value, ast.Constant(target.attr), node.value,
                    ast.Constant(True)]
        elif isinstance(target, ast.Subscript) and not isinstance(target.slice, ast.Slice):
            args = [ast.Constant(op), target.value, target.slice, node.value,
                    ast.Constant(False)]
        else:
            self.error(node, "augmented ** or << on a slice is not available in the sandbox; "
                       "write it out: x[a:b] = [v ** n for v in x[a:b]]")
            return node
        for arg in args:
            copy_locations(arg, node)
        statement = ast.Expr(_call("_augment_", args, node))
        copy_locations(statement, node)
        return statement

    # --- control flow -------------------------------------------------------------
    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> Any:
        node = self.node_contents_visit(node)
        self.check_name(node, node.name)
        node.body.insert(0, _check_abort_statement(node))
        return node

    def visit_Try(self, node: ast.Try) -> Any:
        node = self.node_contents_visit(node)
        if node.finalbody:
            node.finalbody.insert(0, _check_abort_statement(node.finalbody[0]))
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        with self._scope(is_async=False):
            result = super().visit_FunctionDef(node)
        if node.name == "__exit__" and node.col_offset != 0:
            node.body.insert(0, _check_abort_statement(node.body[0]))
        return result

    # --- async code (run by the sandbox's own loop, see asyncsupport) -------------
    @contextmanager
    def _scope(self, is_async: bool) -> Iterator[None]:
        """Inside: whether calls are made from async code (``_defer_`` wraps them)."""
        outer = self._async_scope
        self._async_scope = is_async
        try:
            yield
        finally:
            self._async_scope = outer

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> Any:
        """``async def``, checked as ``def`` is; an ``__aexit__`` gets the abort check an
        ``__exit__`` gets. Tool calls in its body give awaitables (``_defer_``)."""
        self.check_name(node, node.name, allow_magic_methods=True)
        self.check_function_argument_names(node)
        with self._scope(is_async=True):
            node = self.node_contents_visit(node)
        if node.name == "__aexit__" and node.col_offset != 0:
            node.body.insert(0, _check_abort_statement(node.body[0]))
        return node

    def visit_Lambda(self, node: ast.Lambda) -> Any:
        with self._scope(is_async=False):
            return super().visit_Lambda(node)

    def visit_Await(self, node: ast.Await) -> Any:
        return self.node_contents_visit(node)

    def visit_AsyncFor(self, node: ast.AsyncFor) -> Any:
        return self.node_contents_visit(node)

    def visit_AsyncWith(self, node: ast.AsyncWith) -> Any:
        return self.node_contents_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> Any:
        if not node.simple and isinstance(node.target, ast.Name):
            self.check_name(node, node.target.id)
        return self.node_contents_visit(node)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> Any:
        for name in node.names:
            self.check_name(node, name)
        return node

    def visit_Global(self, node: ast.Global) -> Any:
        for name in node.names:
            self.check_name(node, name)
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> Any:
        with self._scope(is_async=False):
            return self._visit_class(node)

    def _visit_class(self, node: ast.ClassDef) -> Any:
        self.check_name(node, node.name)
        for statement in node.body:  # ``__radd__ = __add__``, ``__hash__ = None``
            if isinstance(statement, ast.Assign):
                for target in statement.targets:
                    if isinstance(target, ast.Name) and target.id in ASSIGNABLE_DUNDER_METHODS:
                        self._class_dunders.add(id(target))
                value = statement.value  # a method of this class body: ``__radd__ = __add__``
                if isinstance(value, ast.Name) and value.id in ALLOWED_DUNDER_METHODS:
                    self._class_dunders.add(id(value))
        if any(keyword.arg == "metaclass" for keyword in node.keywords):
            self.error(node, 'The keyword argument "metaclass" is not allowed: use a plain '
                       "class, a base class or a class decorator.")
        return self.node_contents_visit(node)

    def visit_Import(self, node: ast.Import) -> Any:
        """An import of a module without a facade raises ``ModuleNotFoundError`` when
        it runs, as in CPython (``try: import numpy`` / ``except ImportError:``
        works); the statement never reaches ``__import__``, so nothing is loaded."""
        checked = self.check_import_names(node)
        if all(alias.name in self.allowed_modules for alias in node.names):
            return checked
        statements: list[ast.stmt] = []
        for alias in node.names:
            if alias.name in self.allowed_modules:
                if statements and isinstance(statements[-1], ast.Import):
                    statements[-1].names.append(alias)
                else:
                    kept = ast.Import(names=[alias])
                    copy_locations(kept, node)
                    statements.append(kept)
            else:
                statements.append(self._refused_import(node, alias.name, 0))
        return statements

    def visit_ImportFrom(self, node: ast.ImportFrom) -> Any:
        checked = self.check_import_names(node)
        if node.module == "__future__" and not node.level:
            return checked  # a compiler directive (annotations); its names are data
        if node.level or (node.module or "") not in self.allowed_modules:
            return self._refused_import(node, node.module or "", node.level)
        return checked

    def _refused_import(self, node: ast.AST, module: str, level: int) -> ast.stmt:
        """``_import_refused_(module, message, relative)``: raises at run time."""
        if level:
            message = ("attempted relative import with no known parent package: a script has "
                       "no package; import the module by its name (import json)")
        else:
            available = ", ".join(sorted(self.allowed_modules))
            message = (f"No module named {module!r}: it is not available in the sandbox."
                       f"{import_substitute(module)} Available: {available}. Tools are "
                       "already defined as functions: call them directly.")
        call = _call("_import_refused_", [ast.Constant(module), ast.Constant(message),
                                          ast.Constant(bool(level))], node)
        statement = ast.Expr(call)
        copy_locations(statement, node)  # type: ignore[arg-type]
        return statement

    def not_allowed(self, node: ast.AST) -> None:
        name = type(node).__name__
        hint = HINTS.get(name, "")
        message = f"{name} statements are not allowed."
        self.error(node, f"{message} {hint}".strip())

    # --- match statements ---------------------------------------------------------
    def visit_Match(self, node: Any) -> Any:
        """Route every class pattern with positional sub-patterns through
        ``_match_class_``.

        ``case C(a, b)`` reads the attributes named by ``C.__match_args__`` with
        the interpreter's own ``getattr``, which no guard sees, and
        ``__match_args__`` is written by ``namedtuple``, ``dataclass`` and friends
        from names the script chose. The pattern's class expression is therefore
        evaluated once, just before the ``match`` statement, as
        ``_match_class_[C, n]``, and the pattern uses what that gives: ``C``
        itself when the first ``n`` names are plain attributes, otherwise a
        stand-in that checks each read against the subject when the pattern is
        tried (see :meth:`.guards.Guards.match_class`). A class expression that
        reads a guarded attribute (``case mod._Private()``) is hoisted the same
        way, since a pattern may only name ``a.b.c``. Keyword sub-patterns are
        checked here, by name; value patterns may not read guarded attributes.
        """
        node = self.node_contents_visit(node)
        hoisted: list[ast.stmt] = []
        for case in node.cases:
            for pattern in ast.walk(case.pattern):
                if isinstance(pattern, ast.MatchValue) and isinstance(
                        pattern.value, (ast.Attribute, ast.Call)) and not _is_dotted(pattern.value):
                    self.error(pattern, "a value pattern cannot read a private or guarded "
                               "attribute; compare in a guard instead (case x if x == obj._name)")
            for pattern in [p for p in ast.walk(case.pattern) if isinstance(p, ast.MatchClass)]:
                if not pattern.patterns and _is_dotted(pattern.cls):
                    continue
                self._match_classes += 1
                name = f"__sandbox_match_{self._match_classes}__"
                key = ast.Tuple([pattern.cls, ast.Constant(len(pattern.patterns))], ast.Load())
                value = ast.Subscript(ast.Name("_match_class_", ast.Load()), key, ast.Load())
                for part in (key, key.elts[1], value, value.value):
                    copy_locations(part, pattern)
                target = ast.Name(name, ast.Store())
                copy_locations(target, pattern)
                assign = ast.Assign(targets=[target], value=value)
                copy_locations(assign, pattern)
                hoisted.append(assign)
                cls = ast.Name(name, ast.Load())
                copy_locations(cls, pattern.cls)
                pattern.cls = cls
        return [*hoisted, node] if hoisted else node

    def visit_match_case(self, node: Any) -> Any:
        return self.node_contents_visit(node)

    def visit_MatchValue(self, node: Any) -> Any:
        return self.node_contents_visit(node)

    def visit_MatchSingleton(self, node: Any) -> Any:
        return self.node_contents_visit(node)

    def visit_MatchSequence(self, node: Any) -> Any:
        return self.node_contents_visit(node)

    def visit_MatchStar(self, node: Any) -> Any:
        self.check_name(node, node.name)
        return self.node_contents_visit(node)

    def visit_MatchMapping(self, node: Any) -> Any:
        self.check_name(node, node.rest)
        return self.node_contents_visit(node)

    def visit_MatchClass(self, node: Any) -> Any:
        for attr in node.kwd_attrs:
            rule = attribute_rule(attr)
            if rule == HIDDEN:
                self.error(node, f'"{attr}" cannot be matched: the attribute is hidden.')
            elif rule == GUARDED:
                self.error(
                    node,
                    f'"{attr}" cannot be matched by keyword: a class pattern would read it '
                    "without the sandbox's checks. Capture the object instead and read the "
                    f"attribute in the case body (case C() as obj: ... obj.{attr}).",
                )
        return self.node_contents_visit(node)

    def visit_MatchAs(self, node: Any) -> Any:
        self.check_name(node, node.name)
        return self.node_contents_visit(node)

    def visit_MatchOr(self, node: Any) -> Any:
        return self.node_contents_visit(node)


class SyntaxProblem(Exception):
    """Internal: the script is not valid Python; carries the line and column."""

    def __init__(self, message: str, line: int | None, column: int | None, text: str | None):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.text = text


def compile_script(
    source: str, allowed_modules: frozenset[str], filename: str = SCRIPT_FILENAME,
    labels: bool = False,
) -> CompiledScript:
    """Parse, check and compile a script (``labels``: with the provenance pass,
    :mod:`.provenance_transform`).

    Raises :class:`SyntaxProblem` for invalid Python and :class:`PolicyViolation`
    for constructs the sandbox refuses.
    """
    key = (source, allowed_modules, filename, labels)
    compiled = COMPILED.get(key)
    if compiled is not None:
        return compiled
    try:
        compiled = _compile_script(source, allowed_modules, filename, labels)
    except (RecursionError, MemoryError):
        # ``1+1+...+1`` ten thousand times or ``a.a.a...`` nests deeper than the
        # parser, the policy visitor or the compiler can recurse: a script
        # error, never an exception out of the sandbox (found by fuzzing).
        raise SyntaxProblem(
            "the script is nested too deeply to compile; split long expressions "
            "into several statements", None, None, None
        ) from None
    COMPILED.put(key, compiled)
    return compiled


class CompileCache:
    """The scripts of this process compiled lately, by ``(source, modules, filename,
    labels)``: a script run again (a batch's item script, a retried or resumed
    run, the same script in another session) skips the parse, the policy pass
    and the compiler, which are most of a short run's cost.

    Only scripts that passed are kept (a refusal is found again each time). What
    is kept is immutable (code objects and flags) and follows from the key
    alone, so one run cannot change what another gets; a sandbox process keeps
    its own, and in process the sessions of the host share one. Bounded in
    entries and in source characters, least recently used first out.
    """

    def __init__(self, max_entries: int = 256, max_chars: int = 4_000_000,
                 max_source_chars: int = 200_000) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[str, frozenset[str], str, bool], CompiledScript] = (
            OrderedDict())
        self._chars = 0
        self.max_entries = max_entries
        self.max_chars = max_chars
        self.max_source_chars = max_source_chars

    def get(self, key: tuple[str, frozenset[str], str, bool]) -> CompiledScript | None:
        """The compiled script of ``key``, or None."""
        with self._lock:
            compiled = self._entries.get(key)
            if compiled is not None:
                self._entries.move_to_end(key)
            return compiled

    def put(self, key: tuple[str, frozenset[str], str, bool], compiled: CompiledScript) -> None:
        """Keep ``compiled`` for ``key`` (not if its source is over the size kept)."""
        size = len(key[0])
        if size > self.max_source_chars:
            return
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = compiled
            self._chars += size
            while len(self._entries) > self.max_entries or self._chars > self.max_chars:
                old, _ = self._entries.popitem(last=False)
                self._chars -= len(old[0])

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def clear(self) -> None:
        """Forget every compiled script."""
        with self._lock:
            self._entries.clear()
            self._chars = 0


COMPILED = CompileCache()
"""This process's :class:`CompileCache`."""

_COMPILER_WARNINGS = threading.Lock()


@contextmanager
def _compiler_warnings_ignored() -> Iterator[None]:
    """Ignore what the compiler warns about a script (``'\\d'`` in a plain string,
    ``1if x``, ``x is 1``): CPython runs such scripts, but under a host's
    ``-W error`` (a test suite's ``filterwarnings = error``) they would become
    syntax errors in process, and elsewhere print to the host's stderr. The
    filters are process-wide, so compiles take turns, and for those
    milliseconds other threads' SyntaxWarning and DeprecationWarning are
    ignored too."""
    with _COMPILER_WARNINGS, warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def _compile_script(source: str, allowed_modules: frozenset[str], filename: str,
                    labels: bool = False) -> CompiledScript:
    with _compiler_warnings_ignored():
        return _compile_quietly(source, allowed_modules, filename, labels)


def _compile_quietly(source: str, allowed_modules: frozenset[str], filename: str,
                     labels: bool = False) -> CompiledScript:
    try:
        tree = ast.parse(source, filename=filename, mode="exec")
    except SyntaxError as exc:
        raise SyntaxProblem(
            exc.msg, exc.lineno, exc.offset, (exc.text or "").rstrip("\n") or None
        ) from None
    except ValueError as exc:  # NUL bytes: a ValueError before Python 3.11.4
        raise SyntaxProblem(str(exc), None, None, None) from None
    final: ast.Expression | None = None
    last_value: ast.Expression | None = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body.pop()
        assert isinstance(last, ast.Expr)
        final = last_value = ast.Expression(body=last.value)
        ast.copy_location(final, last)

    # ``await``/``async`` appear in the text of any script that uses them (a
    # string naming them only costs the walk)
    awaits = ("await" in source or "async" in source) and (
        top_level_awaits(tree) or (final is not None and top_level_awaits(final)))
    errors: list[str] = []
    policy = SandboxPolicy(errors=errors, warnings=[], used_names={})
    policy.allowed_modules = allowed_modules
    policy._async_scope = awaits
    tree = policy.visit(tree)
    if final is not None:
        final = policy.visit(final)
    if labels and not errors:  # provenance labels (issue 27): a second pass
        tree = provenance_transform.transform(tree, errors)
        if final is not None:
            final = provenance_transform.transform(final, errors)
    if errors:
        raise PolicyViolation(errors)
    if awaits and final is not None:
        # evaluated inside the script's coroutine, after the statements before it
        target = ast.Name(ASYNC_VALUE_NAME, ast.Store())
        assign = ast.Assign(targets=[target], value=final.body)
        copy_locations(target, final.body)
        copy_locations(assign, final.body)
        tree.body.append(assign)
        final = None
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if awaits else 0
    try:
        body = compile(tree, filename, "exec", flags=flags, dont_inherit=True)
        final_code = (compile(final, filename, "eval", dont_inherit=True)
                      if final is not None else None)
    except SyntaxError as exc:
        # Errors only the compiler finds (``return`` or ``break`` outside their
        # block, ``*a = 1``, ``nonlocal`` at top level): a syntax error of the
        # script, never an exception out of the sandbox (found by fuzzing).
        raise SyntaxProblem(
            exc.msg, exc.lineno, exc.offset, (exc.text or "").rstrip("\n") or None
        ) from None
    return CompiledScript(body=body, final_expression=final_code,
                          awaits=bool(awaits and body.co_flags & _CO_COROUTINE),
                          has_value=awaits and last_value is not None)


_CO_COROUTINE = 0x80
"""``inspect.CO_COROUTINE``: the compiled top level is a coroutine."""


def top_level_awaits(tree: ast.AST) -> bool:
    """True if the module's own statements (not a function, lambda or class body) use
    ``await``, ``async for``, ``async with`` or an async comprehension."""
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Await, ast.AsyncFor, ast.AsyncWith)) or (
                    isinstance(child, ast.comprehension) and child.is_async):
                return True
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                      ast.ClassDef)):
                pending.append(child)
    return False
