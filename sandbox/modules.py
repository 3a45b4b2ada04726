"""Curated facades of the modules a script may import.

A script never receives a real module object: ``dataclasses.sys``,
``typing.sys``, ``statistics.sys``, ``random._os`` and friends would hand it
the interpreter. Each facade is a read-only namespace built from an explicit
list of public members; members that evaluate strings as code
(``typing.get_type_hints``, ``functools.singledispatch``) or reach shared
state (the global ``random`` generator) are left out or replaced. Members
that build classes or take attribute names come from :mod:`.classfacades`;
the rule each facade follows is listed in :mod:`.inventory`.
"""

from __future__ import annotations
import __future__ as _future

import dataclasses as _dataclasses
import decimal as _decimal
import functools as _functools
import importlib
import importlib.util
import operator as _operator
import random as _random
from collections.abc import Callable
from typing import Any

from . import asynciofacade, classfacades, datafacades, pathfacade, sysfacade, zonedata
from .guards import Guards, ModuleFacade
from .runsources import RunSources

DEFAULT_MODULES: tuple[str, ...] = (
    "math", "statistics", "json", "re", "datetime", "collections", "collections.abc",
    "itertools", "functools", "dataclasses", "typing", "string", "decimal", "fractions",
    "random", "operator", "textwrap", "time", "enum", "heapq", "bisect", "copy",
    "unicodedata", "hashlib", "base64", "csv", "io", "uuid", "zoneinfo", "queue", "sys",
    "pathlib", "asyncio",
)
"""Modules a script may import unless the runtime is configured otherwise."""

OPTIONAL_MODULES: tuple[str, ...] = ("calendar",)
"""Further modules with facades that a runtime may allow."""

WRITTEN_IN_SANDBOX: frozenset[str] = frozenset({"asyncio"})
"""Modules whose facade is written in the sandbox and never imports the real one:
not preloaded (the real ``asyncio`` would import sockets, selectors, threads)."""

_EXCLUDED: dict[str, frozenset[str]] = {
    "functools": frozenset({"singledispatch", "singledispatchmethod"}),
    "enum": classfacades.ENUM_EXCLUDED,
    "dataclasses": frozenset({"make_dataclass"}),
    "string": frozenset({"Formatter"}),
    "re": frozenset({"template", "purge"}),
    "json": frozenset({"load", "dump"}),
    "calendar": frozenset({"main", "TextCalendar", "HTMLCalendar", "LocaleTextCalendar",
                           "LocaleHTMLCalendar", "setfirstweekday", "prcal", "prmonth"}),
}

_TYPING_MEMBERS = (
    "Any", "Optional", "Union", "List", "Dict", "Tuple", "Set", "FrozenSet", "Iterable",
    "Iterator", "Sequence", "Mapping", "MutableMapping", "MutableSequence", "Callable",
    "Generator", "NamedTuple", "TypedDict", "Literal", "Final", "ClassVar", "TypeVar",
    "Generic", "Protocol", "cast", "NotRequired", "Required", "Annotated", "Type",
    "DefaultDict", "Counter", "Deque", "OrderedDict", "Hashable", "Sized", "Collection",
    "Container", "Self", "TYPE_CHECKING", "get_args", "get_origin", "NoReturn", "Never",
    "TypeAlias", "AbstractSet", "SupportsInt", "SupportsFloat", "Reversible", "overload",
    "final", "runtime_checkable",
)
_MATH_LIKE = ("math", "itertools", "bisect", "heapq")


FUTURE = "__future__"
"""``from __future__ import ...`` is a compiler directive: every script may write it."""

INTERNAL_IMPORTS = frozenset({"time", "_strptime"})
"""Modules the standard library's C code imports through the caller's
``__import__`` (``datetime.strftime`` needs ``time``, ``strptime`` needs
``_strptime``). Import statements in scripts never reach them: the policy
compiles an import of a module without a facade to a ``ModuleNotFoundError``
raised at the statement, and scripts cannot call ``__import__``."""


def _public_members(module: Any, name: str) -> dict[str, Any]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")]
    excluded = _EXCLUDED.get(name, frozenset())
    members = {}
    for member in names:
        if member in excluded or member.startswith("_"):
            continue
        value = getattr(module, member, None)
        if value is None and member != "TYPE_CHECKING":
            continue
        if type(value).__name__ == "module":
            continue
        if isinstance(value, type) and issubclass(value, type):
            continue  # a metaclass creates classes from any namespace (see guards.safe_type_of)
        members[member] = value
    return members


_RANDOM_FUNCTIONS = (
    "random", "randint", "randrange", "choice", "choices", "shuffle", "sample",
    "uniform", "gauss", "normalvariate", "lognormvariate", "expovariate",
    "triangular", "betavariate", "gammavariate", "paretovariate", "vonmisesvariate",
    "weibullvariate", "getrandbits", "randbytes",
)


def random_members(guards: Guards) -> dict[str, Any]:
    """``random``'s module functions: methods of the run's generator, which draws its
    seed from the run's recorded readings on first use (:mod:`.runsources`), so a
    replayed run draws the same numbers. ``Random`` is the real class."""
    sources = guards.sources
    generator = sources.generator
    members: dict[str, Any] = {"Random": _random.Random}
    for name in _RANDOM_FUNCTIONS:
        members[name] = _seeded(sources, getattr(generator, name))

    def seed(a: Any = None, version: int = 2) -> None:
        """Initialize the generator (from ``a``; without it, from the run's seed)."""
        if a is None:
            sources.reseed()
            return
        sources.seeded()
        generator.seed(a, version)

    members["seed"] = seed
    return members


def _seeded(sources: RunSources, method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` of the run's generator, seeded first if the run has not yet."""
    def draw(*args: Any, **kwargs: Any) -> Any:
        sources.seed()
        return method(*args, **kwargs)

    draw.__name__ = method.__name__
    draw.__qualname__ = "Random." + method.__name__
    draw.__doc__ = method.__doc__
    return draw


def _operator_members(guards: Guards) -> dict[str, Any]:
    members = _public_members(_operator, "operator")

    def attrgetter(*names: str) -> Callable[[Any], Any]:
        for dotted in names:
            if type(dotted) is not str:
                raise TypeError("attribute name must be a string")
            for part in dotted.split("."):
                guards.check_name(part)
        paths = [name.split(".") for name in names]

        def resolve(obj: Any, path: list[str]) -> Any:
            for part in path:
                obj = guards.dynamic_getattr(obj, part)
            return obj

        if len(paths) == 1:
            return lambda obj: resolve(obj, paths[0])
        return lambda obj: tuple(resolve(obj, path) for path in paths)

    def methodcaller(name: str, /, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
        if type(name) is not str:
            raise TypeError("method name must be a string")
        guards.check_name(name)
        return lambda obj: guards.dynamic_getattr(obj, name)(*args, **kwargs)

    members["attrgetter"] = attrgetter
    members["methodcaller"] = methodcaller
    # the integer-size limits of ``**`` and ``<<`` hold for the operator functions too
    members.update(pow=guards.pow, ipow=guards.ipow, lshift=guards.lshift, ilshift=guards.ilshift)
    return members


def _decimal_members() -> dict[str, Any]:
    """The template contexts are process-wide (new threads copy
    ``DefaultContext``): each interpreter gets its own copies."""
    members = _public_members(_decimal, "decimal")
    for name in ("DefaultContext", "BasicContext", "ExtendedContext"):
        members[name] = getattr(_decimal, name).copy()
    return members


def _private_copy(name: str) -> Any:
    """A fresh instance of a pure-Python module, not shared with anyone.

    For modules whose classes hold mutable state that item assignment (which
    has no guard) could change for the whole process, e.g.
    ``textwrap.TextWrapper.unicode_whitespace_trans``.
    """
    spec, code = _module_code(name)
    module = importlib.util.module_from_spec(spec)
    exec(code, module.__dict__)
    return module


@_functools.cache
def _module_code(name: str) -> tuple[Any, Any]:
    """The spec and code of a module, read once: a copy made after the process
    sandbox's audit hook is installed needs no file access (see :mod:`.audithook`)."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:  # pragma: no cover - stdlib always has it
        raise ImportError(name)
    code = spec.loader.get_code(name)  # type: ignore[attr-defined]
    if code is None:  # pragma: no cover - a package without code
        raise ImportError(name)
    return spec, code


_PRIVATE_COPIES = frozenset({"textwrap"})

_DATA_FACADES: dict[str, Callable[[Guards], dict[str, Any]]] = {
    "time": datafacades.time_members,
    "copy": lambda guards: datafacades.copy_members(),
    "hashlib": lambda guards: datafacades.hashlib_members(),
    "io": lambda guards: datafacades.io_members(),
    "csv": datafacades.csv_members,
    "uuid": datafacades.uuid_members,
    "queue": datafacades.queue_members,
    "zoneinfo": lambda guards: zonedata.zoneinfo_members(),
    "sys": lambda guards: sysfacade.sys_members(),
    "pathlib": lambda guards: pathfacade.pathlib_members(),
    "asyncio": lambda guards: asynciofacade.asyncio_members(),
}
"""Facades built from an explicit member list (see :mod:`.datafacades`)."""


def private_copy_codes() -> list[Any]:
    """The code objects of the privately copied modules (loaded now if not yet)."""
    return [_module_code(name)[1] for name in sorted(_PRIVATE_COPIES)]


def build_facade(name: str, guards: Guards) -> ModuleFacade:
    """Build the facade for one allowed module name."""
    if name == "random":
        return ModuleFacade(name, random_members(guards))
    if name == "operator":
        return ModuleFacade(name, _operator_members(guards))
    if name == "functools":
        members = _public_members(_functools, name)
        return ModuleFacade(name, classfacades.functools_members(guards, members))
    if name == "dataclasses":
        members = _public_members(_dataclasses, name)
        return ModuleFacade(name, classfacades.dataclasses_members(guards, members))
    if name == "enum":
        members = _public_members(importlib.import_module(name), name)
        return ModuleFacade(name, classfacades.enum_members(members))
    if name == "decimal":
        return ModuleFacade(name, _decimal_members())
    special = _DATA_FACADES.get(name)
    if special is not None:
        return ModuleFacade(name, special(guards))
    if name in _PRIVATE_COPIES:
        members = _public_members(_private_copy(name), name)
        guards.writable_instances += tuple(
            v for v in members.values() if isinstance(v, type) and not issubclass(v, type)
        )
        return ModuleFacade(name, members)
    module = importlib.import_module(name)
    if name == "typing":
        members = {m: getattr(module, m) for m in _TYPING_MEMBERS if hasattr(module, m)}
        return ModuleFacade(name, classfacades.typing_members(guards, members))
    members = _public_members(module, name)
    if name == "collections":
        members["namedtuple"] = classfacades.namedtuple_facade(guards)
    return ModuleFacade(name, members)


class ModuleTable:
    """The facades of one interpreter, built lazily on first import."""

    def __init__(self, allowed: frozenset[str], guards: Guards) -> None:
        unknown = allowed - set(DEFAULT_MODULES) - set(OPTIONAL_MODULES)
        if unknown:
            raise ValueError(f"no sandbox facade for module(s): {', '.join(sorted(unknown))}")
        self.allowed = allowed
        self._guards = guards
        self._facades: dict[str, ModuleFacade] = {}

    def _future(self) -> ModuleFacade:
        """``from __future__ import annotations``: the feature records (plain data);
        the compiler has already acted on the statement."""
        facade = self._facades.get(FUTURE)
        if facade is None:
            features = {n: getattr(_future, n) for n in _future.all_feature_names}
            facade = self._facades[FUTURE] = ModuleFacade(FUTURE, features)
        return facade

    def get(self, name: str) -> ModuleFacade:
        """The facade for ``name`` (``ImportError`` if it is not allowed)."""
        facade = self._facades.get(name)
        if facade is not None:
            return facade
        if name not in self.allowed:
            raise ImportError(f"module {name!r} is not available in the sandbox")
        facade = build_facade(name, self._guards)
        self._facades[name] = facade
        return facade

    def _with_names(self, facade: ModuleFacade, name: str, fromlist: Any) -> ModuleFacade:
        """``from M import a, b``: every name must be a member of the facade (or an
        allowed submodule, set on it now). The interpreter's ``IMPORT_FROM`` falls
        back to ``sys.modules['M.a']`` for a missing attribute, which would hand the
        script the real submodule (``from json import decoder`` -> ``decoder.re`` ->
        the real ``sys``): a missing name raises here, before that fallback."""
        for member in fromlist:
            if type(member) is not str:
                raise TypeError("import names must be strings")
            if member == "*":
                continue
            child = f"{name}.{member}"
            if child in self.allowed:
                object.__setattr__(facade, member, self.get(child))
                continue
            try:
                object.__getattribute__(facade, member)
            except AttributeError:
                raise ImportError(f"cannot import name {member!r} from {name!r} (it is not "
                                  "available in the sandbox)", name=name) from None
        return facade

    def import_(
        self,
        name: str,
        globals: Any = None,
        locals: Any = None,
        fromlist: Any = (),
        level: int = 0,
    ) -> ModuleFacade:
        """``__import__`` for the sandbox: facades only, no relative imports."""
        if level:
            raise ImportError("relative imports are not available in the sandbox")
        if name == FUTURE and fromlist:
            return self._future()
        if name in INTERNAL_IMPORTS and name not in self.allowed:
            return importlib.import_module(name)  # type: ignore[return-value]
        if fromlist:
            return self._with_names(self.get(name), name, fromlist)
        top = name.split(".")[0]
        facade = self.get(top)
        if name != top:
            self.get(name)
            child = name.split(".", 1)[1]
            if child == "abc" and top == "collections":
                object.__setattr__(facade, "abc", self.get(name))
        return facade
