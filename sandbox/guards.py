"""Runtime guards called by policy-compiled code, and the checks behind them.

Each guard is a small function with one decision. The policy
(:mod:`.policy`) decides *where* they are called; this module decides *what*
they allow. A :class:`Guards` instance belongs to one interpreter: it knows
which classes and functions that interpreter's scripts created.
"""

from __future__ import annotations

import abc
import collections
import contextlib
import decimal
import functools
import json
import operator as _operator
import random
import string
import sys
import threading
import types
from collections import UserString
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .layouts import LAYOUT_CHECKED_ATTRIBUTES, checked_method
from .policy import (
    GUARDED,
    HIDDEN,
    NAMEDTUPLE_API,
    PLAIN,
    PLAIN_DUNDER_READS,
    attribute_rule,
    check_field_names,
)
from .runsources import CLOCK_ATTRIBUTES, RunSources
from .standins import STAND_INS, visible_mro

WRITABLE_INSTANCES: tuple[type, ...] = (
    BaseException, decimal.Context, collections.defaultdict, functools.partial,
    json.JSONEncoder, json.JSONDecoder, random.Random, string.Template,
)
"""Types, besides the script's own classes, whose instances a script may set
attributes on: every instance it can reach is its own (it created it, or the
facade made a per-interpreter copy as for ``decimal.DefaultContext``). Module
facades add their private classes (see :mod:`.modules`)."""

_thread_id = threading.get_ident
_USERSTRING_METHODS = {"format": UserString.format, "format_map": UserString.format_map}

MAX_INT_BITS = 4_000_000
"""Largest integer ``**`` and ``<<`` may build (about 1.2 million decimal digits)."""


class SandboxAbort(GeneratorExit):
    """Internal: ends the run because a limit was reached; scripts cannot catch it for good.

    ``error_type`` is the stable error type reported to the host. It is a
    ``GeneratorExit`` (a ``BaseException``) so that a script generator that is
    finalised while an abort is pending ends quietly inside ``close()``
    instead of reporting an "exception ignored" from the garbage collector.
    """

    def __init__(self, error_type: str = "aborted", message: str = "") -> None:
        super().__init__(message or error_type)
        self.error_type = error_type
        self.message = message or error_type


class AbortState:
    """The pending abort of the current run, shared by the guards and the watchdog."""

    __slots__ = ("error_type", "message", "thread")

    def __init__(self) -> None:
        self.error_type: str | None = None
        self.message = ""
        self.thread: int | None = None
        """The thread the current run executes in (set by :meth:`clear`)."""

    def set(self, error_type: str, message: str) -> None:
        """Record the first reason to abort (later ones are ignored)."""
        if self.error_type is None:
            self.error_type = error_type
            self.message = message

    def clear(self) -> None:
        """Forget the abort (at the start of each run, in the run's thread)."""
        self.error_type = None
        self.message = ""
        self.thread = threading.get_ident()

    def raise_if_set(self) -> None:
        """Raise the recorded abort, if any."""
        if self.error_type is not None:
            raise SandboxAbort(self.error_type, self.message)


def _hidden(name: str) -> AttributeError:
    return AttributeError(f"attribute {name!r} is not available in the sandbox")


class _SafeTypeMeta(type):
    """Metaclass that lets the sandbox's ``type`` behave like ``type`` for
    inspection while refusing to create classes outside a class statement."""

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, type)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, type)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs:
            return safe_type_of(args[0])
        raise TypeError(
            "type() with three arguments is not available in the sandbox; use a class statement"
        )

    def __repr__(cls) -> str:
        return "<class 'type'>"


SafeType: Any = _SafeTypeMeta("type", (), {"__module__": "builtins", "__qualname__": "type"})
"""The sandbox's ``type``: ``type(x)``, ``isinstance(C, type)`` work; class creation does not."""


def safe_type_of(obj: object) -> Any:
    """``type(obj)``, except that every metaclass is reported as :data:`SafeType`
    and types whose constructor builds code-running objects as stand-ins.

    A metaclass (``type`` itself, ``ABCMeta`` from ``type(collections.abc.Mapping)``,
    ``EnumType`` from ``type(re.RegexFlag)``, ``_SafeTypeMeta`` from
    ``type(type)``...) called with three arguments creates a class whose body
    never went through the policy: ``__del__``, ``__getattribute__``,
    ``__subclasshook__``, ``__reduce__`` and any other special method. Scripts
    get classes only from class statements. ``type(lambda: 0)`` would be the
    real ``FunctionType`` (a function from any code object and globals),
    ``type(ref)`` for a ``typing.ForwardRef`` a class that compiles strings,
    ``type(typing.List[int])`` an alias class that calls any origin and writes
    ``__orig_class__`` onto what it returns: those are reported as stand-ins
    (see :mod:`.standins`).
    """
    kind = type(obj)
    stand_in = STAND_INS.get(kind)
    if stand_in is not None:
        return stand_in
    return SafeType if issubclass(kind, type) else kind


def mro_of(obj: Any) -> Any:
    """``obj.mro``: ``type.mro`` lists the real classes behind the facades
    (``enum.Enum.mro()[1]`` was the real ``Enum``, whose functional API takes any
    member name), so for a class the method is replaced by one that lists what
    :func:`.standins.visible_mro` shows; ``type.mro(C)`` (the sandbox's ``type``)
    works as in Python. A script's own ``mro`` method or attribute is left alone."""
    value = obj.mro
    if not (isinstance(value, types.BuiltinMethodType) and isinstance(obj, type)):
        return value
    if obj is SafeType:
        def mro(cls: Any) -> list[type]:
            if not isinstance(cls, type):
                raise TypeError("descriptor 'mro' for 'type' objects doesn't apply to a "
                                f"'{type(cls).__name__}' object")
            return visible_mro(cls)

        mro.__qualname__ = "type.mro"
        return mro

    def mro_bound() -> list[type]:
        return visible_mro(obj)

    mro_bound.__qualname__ = mro_bound.__name__ = "mro"
    return mro_bound


def _check_finalizer_free(name: str, base: type) -> None:
    """Refuse a base class with a finalizer (``__del__``; ``io.StringIO`` and
    ``io.BytesIO`` have one that calls ``close()``).

    A finalizer runs when the garbage collector gets to the object, which can
    be after the run ended: in process in a host thread, with no watchdog, so
    a script's ``close()`` (or any method the finalizer calls) would run
    outside every limit. Class bodies cannot define ``__del__`` themselves."""
    for klass in _MRO_OF(base):
        if "__del__" in klass.__dict__:
            raise TypeError(
                f"class {name}: {base.__name__} cannot be subclassed in the sandbox (its "
                "finalizer would call the script's methods after the run); keep an instance "
                f"in an attribute instead (self.buffer = {base.__name__}())")


_MRO_OF = type.__dict__["__mro__"].__get__


class TracebackStandIn:
    """What a script's ``__exit__`` receives instead of a live traceback: a
    traceback leads to frames, so it is not handed out; this one is true, as a
    traceback is, and has nothing to read."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<traceback object>"


TRACEBACK_STAND_IN = TracebackStandIn()


def _exit_without_traceback(exit_method: Any) -> Callable[..., Any]:
    """The class attribute ``__exit__`` of a script's class, called with
    :data:`TRACEBACK_STAND_IN` (or None) as its traceback argument; a
    ``staticmethod``, ``classmethod`` or other descriptor is bound as ``with``
    would bind it."""
    binder = getattr(type(exit_method), "__get__", None)

    def __exit__(self: Any, kind: Any, value: Any, traceback: Any, /) -> Any:
        if traceback is not None:
            traceback = TRACEBACK_STAND_IN
        if binder is None:
            return exit_method(kind, value, traceback)
        return binder(exit_method, self, type(self))(kind, value, traceback)

    return __exit__


class InstanceVars(dict):  # type: ignore[type-arg]
    """What ``vars(obj)`` returns: a snapshot of the instance's attributes whose
    writes go to the object through the sandbox's ``setattr``/``delattr``.

    The real ``__dict__`` is never handed out: a script that held it could
    plant ``__reduce_ex__``, ``__deepcopy__``, ``__getstate__`` or other names
    that the standard library looks up on instances and trusts (``copy``
    would then call a script function and ``setattr`` its results on any
    object). Unlike CPython the mapping does not see attribute changes made
    after ``vars()`` was called; ``vars(obj).update(...)`` and item writes
    still change the object.
    """

    __slots__ = ("_sandbox_guards", "_sandbox_target")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sandbox_target: Any = None
        self._sandbox_guards: Guards | None = None

    def _set(self, key: Any, value: Any) -> None:
        if self._sandbox_guards is not None:
            self._sandbox_guards.setattr(self._sandbox_target, key, value)

    def _del(self, key: Any) -> None:
        if self._sandbox_guards is not None:
            self._sandbox_guards.delattr(self._sandbox_target, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._set(key, value)
        super().__setitem__(key, value)

    def __delitem__(self, key: Any) -> None:
        self._del(key)
        super().__delitem__(key)

    def update(self, *args: Any, **kwargs: Any) -> None:
        """``dict.update``, written through to the object."""
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def setdefault(self, key: Any, default: Any = None) -> Any:
        """``dict.setdefault``, written through to the object."""
        if key not in self:
            self[key] = default
        return self[key]

    def pop(self, key: Any, *default: Any) -> Any:
        """``dict.pop``, written through to the object."""
        if key in self:
            value = self[key]
            del self[key]
            return value
        return super().pop(key, *default)

    def popitem(self) -> tuple[Any, Any]:
        """``dict.popitem``, written through to the object."""
        key = next(reversed(self.keys()))
        return key, self.pop(key)

    def clear(self) -> None:
        """``dict.clear``, written through to the object."""
        for key in list(self):
            del self[key]

    def __ior__(self, other: Any) -> InstanceVars:  # type: ignore[misc]
        self.update(other)
        return self


STAND_INS[InstanceVars] = dict


class MatchClasses(dict):  # type: ignore[type-arg]
    """``_match_class_``: ``_match_class_[C, n]`` is what :meth:`Guards.match_class`
    decided for ``(C, n)`` (a dictionary hit costs a fraction of a call).

    A remembered verdict cannot go stale in a way that matters: for a class
    whose attributes can change, the verdict is a stand-in carrying the very
    ``__match_args__`` value that was checked, and that copy is what the
    interpreter reads when the pattern runs; a write that changes
    ``C.__match_args__`` afterwards changes nothing the pattern reads. (The
    ``dataclass`` facade clears the table so that a pattern sees the fields a
    decorated class gained.) At most :data:`LIMIT` entries are kept.
    """

    LIMIT = 1024

    def __init__(self, decide: Callable[[Any, int], Any]) -> None:
        super().__init__()
        self._decide = decide

    def __missing__(self, key: tuple[Any, int]) -> Any:
        cls, nargs = key
        if not isinstance(cls, type):
            return cls  # not a class: the interpreter raises its own TypeError
        verdict = self._decide(cls, nargs)
        if len(self) >= self.LIMIT:
            self.clear()
        self[key] = verdict
        return verdict


def _match_args(cls: type) -> Any:
    try:
        return cls.__match_args__  # type: ignore[attr-defined]
    except AttributeError:
        return _NO_MATCH_ARGS


_NO_MATCH_ARGS = object()
_IMMUTABLE_TYPE = 1 << 8
"""``Py_TPFLAGS_IMMUTABLETYPE``: builtin and extension types whose attributes no
one can set, so their ``__match_args__`` is the same at check and at match."""
_MATCH_SELF = 1 << 22
"""``Py_TPFLAGS_MATCH_SELF``: ``case int(x)`` binds the subject itself."""
_MATCH_SELF_BASES = (int, float, str, bytes, bytearray, list, tuple, dict, set, frozenset)


class _MatchClassMeta(type):
    """Metaclass of the stand-ins :meth:`Guards.match_class` hands to class
    patterns: each stand-in gets a subclass whose ``__instancecheck__`` is
    ``cls``'s ``isinstance`` plus the stand-in's checks on the subject."""


def _scrub_exception(exc: BaseException) -> None:
    """Drop ``AttributeError.obj`` from an exception a script is about to see.

    CPython stores the object whose attribute lookup failed there; when the
    lookup happened inside the standard library (``typing.Type.x`` forwards to
    the real ``type``), that is an object the script must never hold.
    """
    pending = [exc]
    while pending:
        current = pending.pop()
        if isinstance(current, AttributeError):
            with contextlib.suppress(AttributeError, TypeError):
                current.obj = None
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)


class Guards:
    """The runtime guards of one interpreter."""

    def __init__(self, namespace: dict[str, Any], abort: AbortState,
                 sources: RunSources | None = None) -> None:
        self.namespace = namespace
        self.abort = abort
        self.sources = sources if sources is not None else RunSources()
        """The run's recorded clocks and seed (:mod:`.runsources`)."""
        self.classes: set[type] = set()
        self.writable_instances: tuple[type, ...] = WRITABLE_INSTANCES
        self._formatter = _SafeFormatter(self)
        self.match_classes = MatchClasses(self.match_class)

    # --- ownership ---------------------------------------------------------------
    def build_class(self, func: Callable[..., Any], name: str, *bases: Any, **kw: Any) -> Any:
        """``__build_class__`` that remembers the classes scripts define.

        A class statement never defines a metaclass: ``class M(typing.Type)``
        resolves its base to the real ``type``, and ``M('X', (), {...})`` would
        build classes from any namespace. A class that sets ``__match_args__``
        itself (``class P(typing.NamedTuple)``) must name plain fields.
        """
        for base in types.resolve_bases(bases):
            if isinstance(base, type) and issubclass(base, type):
                raise TypeError(f"class {name}: a class statement cannot subclass type (or a "
                                "metaclass) in the sandbox; define a plain class instead")
            if isinstance(base, type):
                _check_finalizer_free(name, base)
        cls = __build_class__(func, name, *bases, **kw)
        if isinstance(cls, type):
            if issubclass(cls, type):  # pragma: no cover - the bases check above decides
                raise TypeError(f"class {name}: metaclasses are not available in the sandbox")
            match_args = cls.__dict__.get("__match_args__")
            if type(match_args) is tuple:
                check_field_names(f"class {name}", match_args)
            for exit_name in ("__exit__", "__aexit__"):  # ``__aexit__``'s coroutine likewise
                if exit_name in cls.__dict__:
                    type.__setattr__(cls, exit_name,
                                     _exit_without_traceback(cls.__dict__[exit_name]))
            self.classes.add(cls)
        return cls

    def adopt(self, cls: Any) -> Any:
        """Count a class that a facade built for the script (``namedtuple``,
        ``dataclass(slots=True)``, a functional ``Enum``) as the script's own."""
        if isinstance(cls, type) and not issubclass(cls, type):
            self.classes.add(cls)
        return cls

    def owns(self, obj: object) -> bool:
        """True for classes the scripts defined and instances of them."""
        if isinstance(obj, type):
            return obj in self.classes or any(base in self.classes for base in obj.__mro__)
        kind = type(obj)
        return kind in self.classes or any(base in self.classes for base in kind.__mro__)

    def owns_function(self, obj: object) -> bool:
        """True for functions defined by the scripts of this interpreter."""
        return isinstance(obj, types.FunctionType) and obj.__globals__ is self.namespace

    # --- reads -------------------------------------------------------------------
    def getattr(self, obj: Any, name: str) -> Any:
        """Guard for attribute loads the policy routes here (see :func:`.policy.attribute_rule`)."""
        if name in LAYOUT_CHECKED_ATTRIBUTES:  # first: str.replace is the common case
            return getattr(obj, name) if type(obj) is str else checked_method(obj, name)
        if name in CLOCK_ATTRIBUTES:
            return self.sources.clock_attribute(obj, name)
        if name == "format" or name == "format_map":
            if isinstance(obj, str):
                return getattr(self._formatter, name + "_bound")(obj)
            if isinstance(obj, type) and issubclass(obj, str):
                return getattr(self._formatter, name)
            return self._formatter.replace_unsafe(getattr(obj, name), name)
        if name == "__class__":
            return safe_type_of(obj)
        if name == "__init__":
            return self.init_of(obj)
        if name == "register":
            return self.register_of(obj)
        if name == "mro":
            return mro_of(obj)
        if name[:1] == "_":
            self.check_private(obj, name)
        return getattr(obj, name)

    def init_of(self, obj: Any) -> Any:
        """``obj.__init__``: re-initialising an object is a write to it.

        ``typing.Optional.__init__(f)`` or ``type(x).__init__(shared, ...)``
        would rebuild objects the script shares with the rest of the process
        (on the inprocess backend, with the host). Allowed: the script's own
        objects and exceptions, ``super().__init__`` from the script's own
        methods, and unbound initialisers whose first argument passes the same
        test when called.
        """
        init = obj.__init__
        if isinstance(obj, super):
            target = obj.__self__  # type: ignore[attr-defined]
            if not isinstance(target, type) and self._may_init(target):
                return init
        elif isinstance(obj, type):
            if self.owns_function(init) or init is object.__init__:
                return init
            return self._checked_init(init)
        elif self._may_init(obj):
            return init
        raise AttributeError(
            f"'__init__' of a {type(obj).__name__!r} object that the script did not create is "
            "not available in the sandbox"
        )

    def _may_init(self, obj: Any) -> bool:
        return self.owns(obj) or isinstance(obj, self.writable_instances)

    def _checked_init(self, init: Callable[..., Any]) -> Callable[..., Any]:
        guards = self

        def __init__(self: Any, /, *args: Any, **kwargs: Any) -> Any:
            if not guards._may_init(self):
                raise TypeError(
                    f"cannot re-initialise a {type(self).__name__!r} object that the script "
                    "did not create"
                )
            return init(self, *args, **kwargs)

        return __init__

    def register_of(self, obj: Any) -> Any:
        """``obj.register``: ``ABC.register`` changes ``isinstance`` for the whole
        process (``collections.abc.Sequence.register(dict)``); only the script's
        own abstract classes may register subclasses, and only classes the
        script created: ``MyABC.register(type(generator))`` would make a class
        pattern on ``MyABC`` accept generators and frames."""
        value = obj.register
        owner = getattr(value, "__self__", None)
        if not isinstance(owner, abc.ABCMeta):
            return value
        if not self.owns(owner):
            raise AttributeError(
                f"{owner.__name__}.register is not available in the sandbox: it would change "
                "isinstance() outside the script (subclass the ABC instead)"
            )
        guards = self

        def register(subclass: Any) -> Any:
            if not (isinstance(subclass, type) and guards.owns(subclass)):
                raise TypeError(
                    f"{owner.__name__}.register() accepts only classes the script defined; "
                    f"subclass {owner.__name__} in a class statement instead, or test "
                    f"isinstance(x, ({owner.__name__}, OtherType))"
                )
            return value(subclass)

        return register

    def check_private(self, obj: Any, name: str) -> None:
        """Allow ``obj._name`` only on the script's own objects and namedtuples."""
        if name.startswith("__") or (name.endswith("_") and name != "_"):
            if name in PLAIN_DUNDER_READS:
                return
            raise _hidden(name)
        if name in NAMEDTUPLE_API and (
            isinstance(obj, tuple) or (isinstance(obj, type) and issubclass(obj, tuple))
        ):
            return
        if not self.owns(obj):
            raise AttributeError(
                f"attribute {name!r} is private to {safe_type_of(obj).__name__!r} and not "
                "available in the sandbox (private attributes are readable only on the script's "
                "own objects)"
            )

    def dynamic_getattr(self, obj: Any, name: str, *default: Any) -> Any:
        """The sandbox's ``getattr`` builtin: the same rules for computed names."""
        if type(name) is not str:
            raise TypeError("attribute name must be a string")
        if len(default) > 1:
            raise TypeError("getattr expected at most 3 arguments")
        rule = attribute_rule(name)
        if rule == HIDDEN:
            raise _hidden(name)
        try:
            return self.getattr(obj, name) if rule == GUARDED else getattr(obj, name)
        except AttributeError:
            if default:
                return default[0]
            raise

    def check_name(self, name: str) -> None:
        """Refuse frame/generator internals and hidden dunders for computed names."""
        if attribute_rule(name) == HIDDEN:
            raise _hidden(name)

    # --- class patterns ----------------------------------------------------------
    def match_class(self, cls: type, nargs: int) -> Any:
        """What a class pattern with ``nargs`` positional sub-patterns uses for the
        class ``cls`` (the policy evaluates ``_match_class_[C, n]`` just before
        the ``match``, see :class:`MatchClasses`).

        The pattern reads ``__match_args__[:nargs]`` from the subject with the
        interpreter's own ``getattr``. ``cls.__match_args__`` is read once, here.
        An immutable type (``int``, ``str``...) whose names are plain is used as
        it is. Any other class is replaced by a stand-in whose
        ``__match_args__`` is the value read here (the interpreter never reads
        ``cls``'s again) and whose ``isinstance`` is ``cls``'s. When a subject is
        an instance of ``cls``, the stand-in refuses hidden names and reads
        every other name that is not a plain attribute through :meth:`getattr`
        first (private names only on the script's own objects,
        ``format``/``register``/``mro``/``__class__``/``__init__`` only where the
        guard would hand out the same object). A class without
        ``__match_args__`` keeps ``case int(x)``'s meaning: its stand-in
        derives from the builtin type that binds the subject itself.
        """
        names = _match_args(cls)
        read = names[:nargs] if type(names) is tuple else ()
        checked = tuple(n for n in read if type(n) is str and attribute_rule(n) != PLAIN)
        if nargs == 0 or (not checked and cls.__flags__ & _IMMUTABLE_TYPE):
            return cls
        return self._match_stand_in(cls, names, checked)

    def _match_stand_in(self, cls: type, names: Any, checked: tuple[str, ...]) -> type:
        guards = self

        def check(subject: object) -> bool:
            if not isinstance(subject, cls):
                return False
            for name in checked:
                if attribute_rule(name) == HIDDEN:
                    raise AttributeError(
                        f"class pattern {cls.__name__}(...) would read the hidden attribute "
                        f"{name!r}; capture the object instead (case {cls.__name__}() as obj) "
                        "and read the attributes you need in the case body")
                value = guards.getattr(subject, name)
                if name.startswith("_") and name not in ("__class__", "__init__"):
                    continue  # a private name: the guard allowed the read
                raw = getattr(subject, name)
                if value is not raw and value != raw:
                    raise AttributeError(
                        f"class pattern {cls.__name__}(...) cannot read {name!r} from a "
                        f"{type(subject).__name__!r} object; capture the object instead (case "
                        f"{cls.__name__}() as obj) and use obj.{name}")
            return True

        def plain(meta: type, subject: object) -> bool:
            return isinstance(subject, cls)

        def checking(meta: type, subject: object) -> bool:
            return check(subject)

        namespace: dict[str, Any] = {
            "__module__": cls.__module__, "__qualname__": cls.__qualname__, "__slots__": (),
        }
        bases: tuple[type, ...] = ()
        if names is _NO_MATCH_ARGS:
            if cls.__flags__ & _MATCH_SELF:
                bases = next(((b,) for b in _MATCH_SELF_BASES if issubclass(cls, b)), ())
        else:
            namespace["__match_args__"] = names
        meta = type("_MatchClassMeta", (_MatchClassMeta,),
                    {"__instancecheck__": checking if checked else plain})
        stand_in: type = meta(cls.__name__, bases, namespace)
        return stand_in

    def hasattr(self, obj: Any, name: str) -> bool:
        """The sandbox's ``hasattr``: existence is harmless to reveal."""
        if type(name) is not str:
            raise TypeError("attribute name must be a string")
        return hasattr(obj, name)

    # --- writes ------------------------------------------------------------------
    def write(self, obj: Any) -> Any:
        """Guard for ``obj.attr = ...``: only objects the script created are writable.

        An allow-list: the script's classes, their instances, its functions and
        exception instances. Everything else may be shared with the rest of
        the process, and some objects forward writes elsewhere
        (``typing.Counter.x = f`` sets ``collections.Counter.x``).
        """
        kind = type(obj)
        if kind in self.classes:
            return obj
        if isinstance(obj, type):
            if self.owns(obj):
                return obj
            raise TypeError(
                f"cannot modify class {obj.__name__!r}: it is not defined by the script"
            )
        if isinstance(obj, (types.ModuleType, ModuleFacade)):
            raise TypeError("modules are read-only in the sandbox")
        if kind is types.FunctionType:
            if self.owns_function(obj):
                return obj
            raise TypeError("cannot modify a function that the script did not define")
        if self.owns(obj) or isinstance(obj, self.writable_instances):
            return obj
        if kind in _NO_ATTRIBUTE_VALUES:
            return obj  # the real write raises CPython's own AttributeError: nothing to set
        raise TypeError(
            f"cannot set attributes on a {kind.__name__!r} object: only the script's own "
            "objects (instances of its classes, its functions) are writable in the sandbox"
        )

    def write_private(self, obj: Any) -> Any:
        """Guard for ``obj._attr = ...``: only on the script's own objects."""
        self.write(obj)
        if not self.owns(obj):
            raise AttributeError(
                f"cannot set a private attribute on {type(obj).__name__!r}: only the script's "
                "own objects have private attributes in the sandbox"
            )
        return obj

    def setattr(self, obj: Any, name: str, value: Any) -> None:
        """The sandbox's ``setattr`` builtin."""
        if type(name) is not str:
            raise TypeError("attribute name must be a string")
        self.check_name(name)
        if name.startswith("__"):
            raise _hidden(name)
        target = self.write_private(obj) if name.startswith("_") else self.write(obj)
        setattr(target, name, value)

    def delattr(self, obj: Any, name: str) -> None:
        """The sandbox's ``delattr`` builtin."""
        if type(name) is not str:
            raise TypeError("attribute name must be a string")
        if name.startswith("__"):
            raise _hidden(name)
        target = self.write_private(obj) if name.startswith("_") else self.write(obj)
        delattr(target, name)

    def vars(self, *obj: Any) -> Any:
        """The sandbox's ``vars``: only for the script's own objects."""
        if not obj:
            raise TypeError("vars() without an argument is not available in the sandbox")
        if len(obj) > 1:
            raise TypeError("vars expected at most 1 argument")
        target = obj[0]
        if not self.owns(target) or isinstance(target, type):
            raise TypeError("vars() is available only for instances of the script's own classes")
        snapshot = InstanceVars(vars(target))
        snapshot._sandbox_target = target
        snapshot._sandbox_guards = self
        return snapshot

    # --- arithmetic ----------------------------------------------------------------
    def pow(self, base: Any, exponent: Any, modulus: Any = None) -> Any:
        """``**`` and ``pow()``, refusing integers larger than :data:`MAX_INT_BITS`."""
        if modulus is None:
            self._check_pow(base, exponent)
            return base**exponent
        return pow(base, exponent, modulus)

    def lshift(self, value: Any, shift: Any) -> Any:
        """``<<``, refusing integers larger than :data:`MAX_INT_BITS`."""
        self._check_lshift(value, shift)
        return value << shift

    def _check_pow(self, base: Any, exponent: Any) -> None:
        if type(base) is int and type(exponent) is int and exponent > 1:
            bits = abs(base).bit_length()
            if bits > 1 and (bits - 1) * exponent > MAX_INT_BITS:
                self._limit(
                    f"{base if bits < 64 else 'a large integer'} ** {exponent} would have more "
                    f"than {MAX_INT_BITS:,} bits; the sandbox refuses integers that large"
                )

    def _check_lshift(self, value: Any, shift: Any) -> None:
        if (type(value) is int and type(shift) is int and shift > 0 and value
                and value.bit_length() + shift > MAX_INT_BITS):
            self._limit(f"<< {shift} would build an integer of more than {MAX_INT_BITS:,} bits")

    def ipow(self, base: Any, exponent: Any) -> Any:
        """``**=`` (``__ipow__`` first, as in CPython), with the limit of :meth:`pow`."""
        self._check_pow(base, exponent)
        return _operator.ipow(base, exponent)  # type: ignore[no-untyped-call]

    def ilshift(self, value: Any, shift: Any) -> Any:
        """``<<=`` (``__ilshift__`` first), with the limit of :meth:`lshift`."""
        self._check_lshift(value, shift)
        return _operator.ilshift(value, shift)  # type: ignore[no-untyped-call]

    def augment(self, op: str, obj: Any, key: Any, value: Any, is_attribute: bool) -> None:
        """``obj.key **= value``/``obj[key] <<= value`` and friends (see
        :meth:`.policy.SandboxPolicy.visit_AugAssign`): the object of an attribute
        target has passed :meth:`write`; the read follows the ``getattr`` rules."""
        apply = self.ipow if op == "pow" else self.ilshift
        if is_attribute:
            setattr(obj, key, apply(self.dynamic_getattr(obj, key), value))
        else:
            obj[key] = apply(obj[key], value)

    def _limit(self, message: str) -> None:
        """End the run with ``integer_limit``; recorded first so that no
        ``except BaseException`` can swallow it for good."""
        self.abort.set("integer_limit", message)
        raise SandboxAbort("integer_limit", message)

    def check_abort(self) -> None:
        """Called at the top of every ``except``/``finally`` block and script
        ``__exit__``: re-raise a pending abort, and never let a script swallow
        the host's Ctrl-C (on the inprocess backend it is raised in the
        script's thread)."""
        abort = self.abort
        if abort.error_type is not None:
            raise SandboxAbort(abort.error_type, abort.message)
        if abort.thread is not None and _thread_id() != abort.thread:
            # A script generator finalised by the garbage collector in another
            # thread while the run goes on (in process: a host thread, where the
            # run's watchdog cannot reach): its handler ends at its first line.
            raise SandboxAbort("outside_run", "script code ran outside its run's thread")
        handling = sys.exc_info()[1]
        if handling is None:
            return
        if isinstance(handling, (KeyboardInterrupt, SystemExit)):
            raise handling
        _scrub_exception(handling)


_NO_ATTRIBUTE_VALUES = frozenset({
    int, float, complex, bool, str, bytes, bytearray, list, tuple, dict, set, frozenset,
    range, slice, type(None), object,
})
"""Exact builtin value types whose instances have no ``__dict__`` and no settable
attribute (a dunder such as ``__class__`` never reaches a write guard): a write to one
is left to fail as in CPython, with ``AttributeError``."""


class _SafeFormatter(string.Formatter):
    """``str.format`` whose fields may not reach hidden attributes."""

    def __init__(self, guards: Guards) -> None:
        self._guards = guards

    @staticmethod
    def _needs_checks(template: str) -> bool:
        for _literal, field, spec, _conversion in _parser(template):
            if field is not None and ("." in field or "[" in field):
                return True
            if spec and "{" in spec:
                return True
        return False

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        first, rest = _field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, key in rest:
            obj = self._guards.dynamic_getattr(obj, key) if is_attr else obj[key]
        return obj, first

    def format(self, template: str, /, *args: Any, **kwargs: Any) -> str:
        if not self._needs_checks(template):
            return str.format(template, *args, **kwargs)
        return self.vformat(template, args, kwargs)

    def format_map(self, template: str, mapping: Mapping[str, Any]) -> str:
        """``str.format_map`` with the same checks."""
        if not self._needs_checks(template):
            return str.format_map(template, mapping)
        return self.vformat(template, (), mapping)

    def replace_unsafe(self, value: Any, name: str) -> Any:
        """Swap a real ``str.format``/``format_map`` reached indirectly for the safe one.

        ``super(S, s).format`` (``S`` a ``str`` subclass) is the real bound
        method, ``super(S, S).format`` the real unbound one, and
        ``collections.UserString.format`` calls the real one on ``self.data``.
        """
        if value is str.format or value is str.format_map:
            return getattr(self, name)
        owner = getattr(value, "__self__", None)
        if isinstance(value, types.BuiltinMethodType) and isinstance(owner, str):
            return getattr(self, name + "_bound")(owner)
        func = getattr(value, "__func__", value)
        if func is _USERSTRING_METHODS.get(name):
            if isinstance(owner, UserString):
                return getattr(self, name + "_bound")(str(owner.data))
            return getattr(self, "userstring_" + name)
        return value

    def userstring_format(self, us: Any, /, *args: Any, **kwargs: Any) -> str:
        """``UserString.format`` unbound, with the checks."""
        return self.format(str(us.data), *args, **kwargs)

    def userstring_format_map(self, us: Any, mapping: Mapping[str, Any]) -> str:
        """``UserString.format_map`` unbound, with the checks."""
        return self.format_map(str(us.data), mapping)

    def format_bound(self, template: str) -> Callable[..., str]:
        """``template.format`` as a bound callable."""

        def format(*args: Any, **kwargs: Any) -> str:
            return self.format(template, *args, **kwargs)

        return format

    def format_map_bound(self, template: str) -> Callable[[Mapping[str, Any]], str]:
        """``template.format_map`` as a bound callable."""

        def format_map(mapping: Mapping[str, Any]) -> str:
            return self.format_map(template, mapping)

        return format_map


def _parser(template: str) -> Iterable[tuple[str, str | None, str | None, str | None]]:
    import _string  # type: ignore[import-not-found]

    result: Iterable[tuple[str, str | None, str | None, str | None]] = _string.formatter_parser(
        template
    )
    return result


def _field_name_split(field_name: str) -> tuple[Any, Iterable[tuple[bool, Any]]]:
    import _string

    result: tuple[Any, Iterable[tuple[bool, Any]]] = _string.formatter_field_name_split(
        field_name
    )
    return result


class ModuleFacade:
    """A read-only stand-in for an allowed module, holding only curated members."""

    def __init__(self, name: str, members: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_facade_name", name)
        object.__setattr__(self, "__name__", name)  # "cannot import name 'X' from 'json'"
        for key, value in members.items():
            object.__setattr__(self, key, value)

    def __getattr__(self, name: str) -> Any:
        # Only for a missing member: CPython's message, and a plain refusal when the
        # real module has the name (looked up among loaded modules, never imported).
        module = object.__getattribute__(self, "_facade_name")
        message = f"module {module!r} has no attribute {name!r}"
        real = sys.modules.get(module)
        if real is not None and isinstance(name, str) and hasattr(real, name):
            message += ": it is not available in the sandbox"
        raise AttributeError(message)

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError("modules are read-only in the sandbox")

    def __delattr__(self, name: str) -> None:
        raise TypeError("modules are read-only in the sandbox")

    def __repr__(self) -> str:
        return f"<module {object.__getattribute__(self, '_facade_name')!r} (sandbox)>"
