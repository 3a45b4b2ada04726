"""Facade members that build classes or read and write attributes by name.

``namedtuple``, ``typing.NamedTuple``, ``dataclass``, the functional ``Enum``
API and ``functools.cached_property`` take names chosen by the script and
turn them into generated source code, ``__match_args__``, class attributes
or keys of instance dictionaries; ``dataclasses.asdict``/``replace`` read
attributes by field name; ``typing`` hands out aliases that call their origin
and forward attribute reads to it. Each wrapper here checks the names with
:func:`.policy.check_field_names` (plain identifiers, nothing reserved or
hidden) and works only on the script's own classes, so that no name chosen
by a script reaches the interpreter's own ``getattr``/``setattr`` past the
guards. The rule of every facade is listed in :mod:`.inventory`.
"""

from __future__ import annotations

import copy
import dataclasses as _dataclasses
import enum as _enum
import functools as _functools
import inspect
import types
import typing as _typing
from collections import namedtuple as _namedtuple
from collections.abc import Callable, Mapping
from typing import Any

from .guards import Guards, SafeType
from .policy import check_field_names, field_name_problem
from .standins import hide_constructor, show_facade

SCRIPT_MODULE = "__sandbox__"
"""``__module__`` of the classes scripts create (the script namespace's ``__name__``)."""


def not_owned(what: str, obj: Any) -> TypeError:
    """The refusal for a facade function applied to an object the script did not create."""
    return TypeError(f"{what} works only on the script's own classes and functions, "
                     f"not on {type(obj).__name__!r} objects it did not create")


# --- collections.namedtuple ----------------------------------------------------------

def namedtuple_facade(guards: Guards) -> Callable[..., Any]:
    """``collections.namedtuple`` with checked field names; the class counts as the
    script's own, and its ``__module__`` is always the script's."""

    def namedtuple(typename: Any, field_names: Any, *, rename: bool = False,
                   defaults: Any = None, module: Any = None) -> Any:
        if isinstance(field_names, str):
            field_names = field_names.replace(",", " ").split()
        names = [str(name) for name in field_names]
        make: Callable[..., Any] = _namedtuple  # called with values, not literals
        # ``module`` only serves pickling; a real module's name would make
        # ``dataclass`` run its generated code in that module's globals
        cls = make(typename, names, rename=rename, defaults=defaults, module=SCRIPT_MODULE)
        check_field_names(f"namedtuple {cls.__name__!r}", cls._fields)
        return guards.adopt(cls)

    return namedtuple


# --- functools ------------------------------------------------------------------------

class cached_property:
    """``functools.cached_property``, written here so that a script never holds the
    real class (``functools.cached_property.mro()`` lists only this one).

    The real one stores the value with ``instance.__dict__[self.attrname] = value``
    and reads ``attrname`` again after calling the getter, so a script could
    plant ``__reduce_ex__`` or ``__deepcopy__`` on an instance for ``copy`` to
    trust by rewriting ``attrname`` (on its own subclass) before or during the
    call. Here the name is read once per access, checked, and that same string
    is used to store the value.
    """

    def __init__(self, func: Callable[[Any], Any]) -> None:
        name = getattr(func, "__name__", None)
        if type(name) is str and name.isidentifier():  # refused where the message reaches
            check_field_names("functools.cached_property", [name])  # the script unwrapped
        self.func = func
        self.attrname: Any = None
        self.__doc__ = getattr(func, "__doc__", None)
        self.__module__ = getattr(func, "__module__", None)  # type: ignore[assignment]

    def __set_name__(self, owner: type, name: str) -> None:
        check_field_names("functools.cached_property", [name])
        if self.attrname is None:
            self.attrname = name
        elif name != self.attrname:
            raise TypeError("Cannot assign the same cached_property to two different names "
                            f"({self.attrname!r} and {name!r}).")

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        name = self.attrname
        if name is None:
            raise TypeError("Cannot use cached_property instance without calling "
                            "__set_name__ on it.")
        check_field_names("functools.cached_property", [name])
        try:
            cache = instance.__dict__
        except AttributeError:
            raise TypeError(f"No '__dict__' attribute on {type(instance).__name__!r} instance "
                            f"to cache {name!r} property.") from None
        if type(cache) is not dict:
            raise TypeError(f"cached_property needs a plain instance dictionary on "
                            f"{type(instance).__name__!r} objects")
        if name in cache:
            return cache[name]
        value = self.func(instance)
        cache[name] = value
        return value

    __class_getitem__ = classmethod(types.GenericAlias)  # type: ignore[var-annotated]


cached_property.__module__ = "functools"
show_facade(_functools.cached_property, cached_property)


def functools_members(guards: Guards, members: dict[str, Any]) -> dict[str, Any]:
    """``update_wrapper``/``wraps``/``total_ordering`` write attributes from C-speed
    code, past ``_write_``: ``update_wrapper(f, g, (), ("__globals__",))`` would
    copy a stdlib module's globals (``sys``, real builtins) into the script's
    namespace. Here they write only to the script's own objects and only the
    standard attribute names; ``cached_property`` checks its attribute name."""
    assignments = frozenset(_functools.WRAPPER_ASSIGNMENTS)
    updates = frozenset(_functools.WRAPPER_UPDATES)

    def update_wrapper(wrapper: Any, wrapped: Any,
                       assigned: Any = _functools.WRAPPER_ASSIGNMENTS,
                       updated: Any = _functools.WRAPPER_UPDATES) -> Any:
        assigned, updated = tuple(assigned), tuple(updated)
        if not set(assigned) <= assignments or not set(updated) <= updates:
            raise TypeError("update_wrapper: only the standard attributes "
                            f"{sorted(assignments | updates)} can be copied in the sandbox")
        if not (guards.owns_function(wrapper) or guards.owns(wrapper)):
            raise not_owned("functools.update_wrapper", wrapper)
        for attr in assigned:
            try:
                value = getattr(wrapped, attr)
            except AttributeError:
                continue
            setattr(wrapper, attr, value)
        for attr in updated:
            extra = getattr(wrapped, attr, {})
            if not (guards.owns_function(wrapped) or guards.owns(wrapped)):
                extra = {k: v for k, v in extra.items() if not str(k).startswith("_")}
            getattr(wrapper, attr).update(extra)
        wrapper.__wrapped__ = wrapped
        return wrapper

    def wraps(wrapped: Any, assigned: Any = _functools.WRAPPER_ASSIGNMENTS,
              updated: Any = _functools.WRAPPER_UPDATES) -> Callable[[Any], Any]:
        def decorate(wrapper: Any) -> Any:
            return update_wrapper(wrapper, wrapped, assigned, updated)

        return decorate

    def total_ordering(cls: Any) -> Any:
        if not (isinstance(cls, type) and guards.owns(cls)):
            raise not_owned("functools.total_ordering", cls)
        return _functools.total_ordering(cls)

    members.update(update_wrapper=update_wrapper, wraps=wraps, total_ordering=total_ordering,
                   cached_property=cached_property)
    return members


# --- dataclasses ----------------------------------------------------------------------

def _field_problem(field: Any) -> str | None:
    if type(field) is not _dataclasses.Field:
        return (f"is a {type(field).__name__!r}, not a dataclasses.Field (subclasses of Field "
                "are not available: use dataclasses.field(...))")
    problem = field_name_problem(field.name)
    return None if problem is None else f"has the name {field.name!r}, which {problem}"


def dataclasses_members(guards: Guards, members: dict[str, Any]) -> dict[str, Any]:
    """``dataclass`` compiles ``__init__`` and friends from source text built
    with ``Field.name``, sets ``__match_args__`` and class attributes, and
    ``asdict``/``astuple``/``replace`` read ``getattr(obj, field.name)``. So:
    only the script's own classes, only plain field names (annotation keys
    can be any string through ``typing.TypedDict``, and ``str`` subclasses can
    lie about ``isidentifier``), and only exact ``Field`` objects (a
    subclass's ``name`` could be a property). ``asdict``/``astuple`` are
    re-implemented so that nested dataclasses are checked too."""

    def checked_fields(what: str, obj: Any) -> tuple[Any, ...]:
        if not guards.owns(obj):
            raise not_owned(what, obj)
        fields = _dataclasses.fields(obj)
        for field in fields:
            problem = _field_problem(field)
            if problem is not None:
                raise TypeError(f"{what}: field {problem}")
        return fields

    def check(cls: Any) -> Any:
        if not (isinstance(cls, type) and guards.owns(cls)):
            raise not_owned("dataclasses.dataclass", cls)
        annotations = inspect.get_annotations(cls)
        check_field_names(f"dataclass {cls.__name__}", annotations)
        for name in annotations:
            default = getattr(cls, name, None)
            if isinstance(default, _dataclasses.Field) and type(default) is not _dataclasses.Field:
                raise TypeError(f"dataclass {cls.__name__}: the default of {name!r} "
                                f"{_field_problem(default)}")
        for base in cls.__mro__[1:]:
            for field in base.__dict__.get("__dataclass_fields__", {}).values():
                problem = _field_problem(field)
                if problem is not None:
                    raise TypeError(f"dataclass {cls.__name__}: inherited field {problem}")
        return cls

    def decorate(cls: Any, options: dict[str, Any]) -> Any:
        result = guards.adopt(_dataclasses.dataclass(check(cls), **options))
        guards.match_classes.clear()  # the class (and its subclasses) may have new match args
        return result

    def dataclass(cls: Any = None, /, **options: Any) -> Any:
        if cls is None:
            return lambda cls: decorate(cls, options)
        return decorate(cls, options)

    def fields(class_or_instance: Any) -> tuple[Any, ...]:
        return checked_fields("dataclasses.fields", class_or_instance)

    def inner(obj: Any, factory: Callable[[Any], Any], as_dict: bool) -> Any:
        if hasattr(type(obj), "__dataclass_fields__"):
            values = [(f.name, inner(getattr(obj, f.name), factory, as_dict))
                      for f in checked_fields("dataclasses.asdict", obj)]
            return factory(values if as_dict else [value for _, value in values])
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):
            return type(obj)(*[inner(v, factory, as_dict) for v in obj])
        if isinstance(obj, (list, tuple)):
            return type(obj)(inner(v, factory, as_dict) for v in obj)
        if isinstance(obj, dict):
            return type(obj)((inner(k, factory, as_dict), inner(v, factory, as_dict))
                             for k, v in obj.items())
        return copy.deepcopy(obj)

    def asdict(obj: Any, *, dict_factory: Callable[[Any], Any] = dict) -> Any:
        if not _dataclasses.is_dataclass(obj) or isinstance(obj, type):
            raise TypeError("asdict() should be called on dataclass instances")
        return inner(obj, dict_factory, True)

    def astuple(obj: Any, *, tuple_factory: Callable[[Any], Any] = tuple) -> Any:
        if not _dataclasses.is_dataclass(obj) or isinstance(obj, type):
            raise TypeError("astuple() should be called on dataclass instances")
        return inner(obj, tuple_factory, False)

    def replace(obj: Any, /, **changes: Any) -> Any:
        checked_fields("dataclasses.replace", obj)
        return _dataclasses.replace(obj, **changes)

    members.update(dataclass=dataclass, fields=fields, asdict=asdict, astuple=astuple,
                   replace=replace)
    return members


# --- typing ---------------------------------------------------------------------------

class _SandboxAnnotatedAlias(_typing._AnnotatedAlias, _root=True):  # type: ignore[name-defined,misc,call-arg]
    """``Annotated[T, x]`` that cannot be called: calling a typing alias calls its
    origin and writes ``__orig_class__`` onto what it returns, and the origin of
    ``Annotated`` can be any callable (``Annotated[lambda: shared, 0]()``)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("calling an Annotated[...] type is not available in the sandbox: "
                        "call the underlying type itself (e.g. int(...))")

    def copy_with(self, params: Any) -> Any:
        """The alias for another origin (generic substitution), still not callable."""
        assert len(params) == 1
        return _SandboxAnnotatedAlias(params[0], self.__metadata__)


hide_constructor(_SandboxAnnotatedAlias, "subscript Annotated, e.g. Annotated[int, 'meta']")


class Annotated:
    """``typing.Annotated`` whose aliases cannot be called (see :class:`_SandboxAnnotatedAlias`)."""

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("Type Annotated cannot be instantiated.")

    def __class_getitem__(cls, params: Any) -> Any:
        alias = _typing.Annotated[params]
        return _SandboxAnnotatedAlias(alias.__origin__, alias.__metadata__)

    def __init_subclass__(cls, *args: Any, **kwargs: Any) -> None:
        raise TypeError("Cannot subclass typing.Annotated")


Annotated.__module__ = "typing"


def _overload_dummy(*args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(
        "You should not call an overloaded function. A series of @overload-decorated "
        "functions outside a stub module should always be followed by an implementation "
        "that is not @overload-ed.")


def typing_members(guards: Guards, members: dict[str, Any]) -> dict[str, Any]:
    """``typing`` with the members that write, register or hand out metaclasses replaced:

    * ``get_origin(typing.Type[int])`` is the real ``type`` (a class from any
      namespace): metaclasses come back as the sandbox's ``type``, and the real
      ``Annotated`` as the facade's;
    * ``NamedTuple`` checks field names (the class statement form is checked
      when the class is built, see :meth:`.guards.Guards.build_class`);
    * ``Annotated`` aliases cannot be called (see :class:`_SandboxAnnotatedAlias`);
    * ``final`` writes ``__final__`` and ``runtime_checkable`` writes
      ``_is_runtime_protocol``: only on the script's own objects (the real
      ones write onto any object, e.g. ``typing.Protocol`` itself);
    * ``overload`` does not record the function in the process-wide registry.
    """

    def get_origin(tp: Any) -> Any:
        origin = _typing.get_origin(tp)
        if origin is _typing.Annotated:
            return Annotated
        if isinstance(origin, type) and issubclass(origin, type):
            return SafeType
        return origin

    def NamedTuple(typename: Any, fields: Any = None, /, **kwargs: Any) -> Any:
        if fields is None:
            fields = list(kwargs.items())
        elif kwargs:
            raise TypeError("Either list of fields or keywords can be provided to NamedTuple, "
                            "not both")
        fields = [tuple(item) for item in fields]
        check_field_names(f"NamedTuple {typename!r}", [item[0] for item in fields])
        make = getattr(_typing, "_make_nmtuple", None)
        if make is None:  # pragma: no cover - a Python without the helper
            return guards.adopt(_typing.NamedTuple(typename, fields))
        return guards.adopt(make(typename, fields, module=SCRIPT_MODULE))

    NamedTuple.__mro_entries__ = lambda bases: (_typing._NamedTuple,)  # type: ignore[attr-defined]

    def final(f: Any) -> Any:
        if guards.owns(f) or guards.owns_function(f):
            return _typing.final(f)
        return f

    def runtime_checkable(cls: Any) -> Any:
        if not (isinstance(cls, type) and guards.owns(cls)):
            raise not_owned("typing.runtime_checkable", cls)
        return _typing.runtime_checkable(cls)

    def overload(func: Any) -> Any:
        return _overload_dummy

    for name, value in (("get_origin", get_origin), ("NamedTuple", NamedTuple),
                        ("Annotated", Annotated), ("final", final),
                        ("runtime_checkable", runtime_checkable), ("overload", overload)):
        if name in members:
            members[name] = value
    return members


# --- enum -----------------------------------------------------------------------------

ENUM_EXCLUDED = frozenset({
    "EnumType", "EnumMeta",  # metaclasses build classes from any namespace
    "global_enum", "global_enum_repr", "global_flag_repr", "global_str",  # write module globals
    "pickle_by_enum_name", "pickle_by_global_name",  # hand out the real getattr
    "property",  # reads getattr(anything, self.name) on 3.12 once a subclass rewrites it
    "ReprEnum",  # a memberless base whose functional API would skip the name checks
})
"""``enum`` members no script may reach."""


def _functional_names(names: Any) -> tuple[Any, list[Any]]:
    """``names`` as the functional API will see it, and the member names in it.

    What is passed on is a new plain list or dict built from one read of
    ``names``: a script's mapping, iterator or pair could answer differently
    when the real functional API reads it a second time, after the check."""
    if isinstance(names, str):
        names = str.split(str.replace(str(names), ",", " "))
        return names, list(names)
    if isinstance(names, Mapping):
        pairs = {}
        for name in list(names):
            pairs[name] = names[name]
        return pairs, list(pairs)
    items: list[Any] = []
    for item in list(names):
        if type(item) is str:
            items.append(item)
        else:
            name, value = item
            items.append((name, value))
    if any(type(item) is str for item in items) and not all(type(item) is str for item in items):
        raise TypeError("enum names must be all strings or all (name, value) pairs")
    return items, [item if type(item) is str else item[0] for item in items]


class _SafeEnumType(_enum.EnumType):
    """The metaclass of the facade's enum bases: the functional API
    (``Enum('Color', names)``) checks member names, which the real one turns
    into class attributes without the policy's checks (``{'__del__': f}``)."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if not cls._member_map_ and (len(args) > 1 or kwargs.get("names") is not None):
            if len(args) > 1:
                names, member_names = _functional_names(args[1])
                args = (args[0], names, *args[2:])
            else:
                kwargs["names"], member_names = _functional_names(kwargs["names"])
            label = args[0] if args else kwargs.get("value")
            check_field_names(f"{cls.__name__}({label!r}, ...)", member_names)
            kwargs["module"] = SCRIPT_MODULE  # a real module's name would only serve global_enum
        return super().__call__(*args, **kwargs)

    def __instancecheck__(cls, obj: object) -> bool:
        real = _REAL_ENUM_BASES.get(cls)
        return isinstance(obj, real) if real is not None else type.__instancecheck__(cls, obj)

    def __subclasscheck__(cls, sub: type) -> bool:
        real = _REAL_ENUM_BASES.get(cls)
        return issubclass(sub, real) if real is not None else type.__subclasscheck__(cls, sub)


def _facade_enum(real: type) -> type:
    namespace = _SafeEnumType.__prepare__(real.__name__, (real,))
    namespace["__module__"] = "enum"
    namespace["__qualname__"] = real.__qualname__
    return _SafeEnumType(real.__name__, (real,), namespace)


_REAL_ENUM_BASES: dict[type, type] = {}
_FACADE_ENUM_BASES: dict[str, type] = {}
for _base in (_enum.Enum, _enum.IntEnum, _enum.StrEnum, _enum.Flag, _enum.IntFlag):
    _facade = _facade_enum(_base)
    _REAL_ENUM_BASES[_facade] = _base
    _FACADE_ENUM_BASES[_base.__name__] = _facade
    show_facade(_base, _facade)
# ``ReprEnum`` cannot have a facade subclass (it must be mixed with a data type); in the
# MRO of ``IntEnum``, ``re.RegexFlag``... it shows as an inert stand-in
hide_constructor(_enum.ReprEnum, "subclass enum.IntEnum or enum.StrEnum")


def enum_members(members: dict[str, Any]) -> dict[str, Any]:
    """``enum`` with the memberless bases replaced by subclasses whose metaclass
    checks the functional API's member names, and without the members of
    :data:`ENUM_EXCLUDED`."""
    members = {k: v for k, v in members.items() if k not in ENUM_EXCLUDED}
    members.update(_FACADE_ENUM_BASES)
    return members

