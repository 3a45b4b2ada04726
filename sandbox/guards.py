"""Runtime guards called by policy-compiled code, and the checks behind them.

Each guard is a small function with one decision. The policy
(:mod:`.policy`) decides *where* they are called; this module decides *what*
they allow. A :class:`Guards` instance belongs to one interpreter: it knows
which classes and functions that interpreter's scripts created.
"""

from __future__ import annotations

import string
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from RestrictedPython.transformer import INSPECT_ATTRIBUTES

from .policy import NAMEDTUPLE_API, PLAIN_DUNDER_READS

MAX_INT_BITS = 4_000_000
"""Largest integer ``**`` and ``<<`` may build (about 1.2 million decimal digits)."""


class SandboxAbort(BaseException):
    """Ends the run because a limit was reached; scripts cannot catch it for good.

    ``error_type`` is the stable error type reported to the host.
    """

    def __init__(self, error_type: str = "aborted", message: str = "") -> None:
        super().__init__(message or error_type)
        self.error_type = error_type
        self.message = message or error_type


class AbortState:
    """The pending abort of the current run, shared by the guards and the watchdog."""

    __slots__ = ("error_type", "message")

    def __init__(self) -> None:
        self.error_type: str | None = None
        self.message = ""

    def set(self, error_type: str, message: str) -> None:
        """Record the first reason to abort (later ones are ignored)."""
        if self.error_type is None:
            self.error_type = error_type
            self.message = message

    def clear(self) -> None:
        """Forget the abort (at the start of each run)."""
        self.error_type = None
        self.message = ""

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
            result = type(args[0])
            return cls if result is type else result
        raise TypeError(
            "type() with three arguments is not available in the sandbox; use a class statement"
        )

    def __repr__(cls) -> str:
        return "<class 'type'>"


SafeType: Any = _SafeTypeMeta("type", (), {"__module__": "builtins", "__qualname__": "type"})
"""The sandbox's ``type``: ``type(x)``, ``isinstance(C, type)`` work; class creation does not."""


class Guards:
    """The runtime guards of one interpreter."""

    def __init__(self, namespace: dict[str, Any], abort: AbortState) -> None:
        self.namespace = namespace
        self.abort = abort
        self.classes: set[type] = set()
        self._formatter = _SafeFormatter(self)

    # --- ownership ---------------------------------------------------------------
    def build_class(self, func: Callable[..., Any], name: str, *bases: Any, **kw: Any) -> Any:
        """``__build_class__`` that remembers the classes scripts define."""
        cls = __build_class__(func, name, *bases, **kw)  # noqa: F821
        if isinstance(cls, type):
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
        """Guard for attribute loads the policy routes here (see policy docstring)."""
        if name == "format" or name == "format_map":
            if isinstance(obj, str):
                return getattr(self._formatter, name + "_bound")(obj)
            if isinstance(obj, type) and issubclass(obj, str):
                return getattr(self._formatter, name)
            return getattr(obj, name)
        if name == "__class__":
            cls = type(obj)
            return SafeType if cls is type else cls
        if name[:1] == "_":
            self.check_private(obj, name)
        return getattr(obj, name)

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
                f"attribute {name!r} is private to {type(obj).__name__!r} and not available in "
                "the sandbox (private attributes are readable only on the script's own objects)"
            )

    def dynamic_getattr(self, obj: Any, name: str, *default: Any) -> Any:
        """The sandbox's ``getattr`` builtin: the same rules for computed names."""
        if type(name) is not str:
            raise TypeError("attribute name must be a string")
        if len(default) > 1:
            raise TypeError("getattr expected at most 3 arguments")
        self.check_name(name)
        try:
            return self.getattr(obj, name) if name in ("format", "format_map", "__class__") or (
                name[:1] == "_"
            ) else getattr(obj, name)
        except AttributeError:
            if default:
                return default[0]
            raise

    def check_name(self, name: str) -> None:
        """Refuse frame/generator internals and hidden dunders for computed names."""
        if name in INSPECT_ATTRIBUTES:
            raise _hidden(name)
        if name.startswith("__") and name not in PLAIN_DUNDER_READS and name != "__class__":
            raise _hidden(name)

    def hasattr(self, obj: Any, name: str) -> bool:
        """The sandbox's ``hasattr``: existence is harmless to reveal."""
        if type(name) is not str:
            raise TypeError("attribute name must be a string")
        return hasattr(obj, name)

    # --- writes ------------------------------------------------------------------
    def write(self, obj: Any) -> Any:
        """Guard for ``obj.attr = ...``: shared classes, functions and modules are read-only."""
        if isinstance(obj, type):
            if obj in self.classes:
                return obj
            raise TypeError(f"cannot modify class {obj.__name__!r}: it is not defined by the script")
        if isinstance(obj, (types.ModuleType, ModuleFacade)):
            raise TypeError("modules are read-only in the sandbox")
        if isinstance(
            obj,
            (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.LambdaType),
        ) and not self.owns_function(obj):
            raise TypeError("cannot modify a function that the script did not define")
        return obj

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
        if not self.owns(obj[0]) or isinstance(obj[0], type):
            raise TypeError("vars() is available only for instances of the script's own classes")
        return vars(obj[0])

    # --- arithmetic ----------------------------------------------------------------
    def pow(self, base: Any, exponent: Any, modulus: Any = None) -> Any:
        """``**`` and ``pow()``, refusing integers larger than :data:`MAX_INT_BITS`."""
        if modulus is None and type(base) is int and type(exponent) is int and exponent > 1:
            bits = abs(base).bit_length()
            if bits > 1 and (bits - 1) * exponent > MAX_INT_BITS:
                self._limit(
                    f"{base if bits < 64 else 'a large integer'} ** {exponent} would have more "
                    f"than {MAX_INT_BITS:,} bits; the sandbox refuses integers that large"
                )
        if modulus is None:
            return base**exponent
        return pow(base, exponent, modulus)

    def lshift(self, value: Any, shift: Any) -> Any:
        """``<<``, refusing integers larger than :data:`MAX_INT_BITS`."""
        if type(value) is int and type(shift) is int and shift > 0 and value:
            if value.bit_length() + shift > MAX_INT_BITS:
                self._limit(f"<< {shift} would build an integer of more than "
                            f"{MAX_INT_BITS:,} bits")
        return value << shift

    def _limit(self, message: str) -> None:
        """End the run with ``integer_limit``; recorded first so that no
        ``except BaseException`` can swallow it for good."""
        self.abort.set("integer_limit", message)
        raise SandboxAbort("integer_limit", message)

    def check_abort(self) -> None:
        """Called at the top of every ``except`` block: re-raise a pending abort."""
        if self.abort.error_type is not None:
            raise SandboxAbort(self.abort.error_type, self.abort.message)


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
            if is_attr:
                self._guards.check_name(key)
                obj = self._guards.getattr(obj, key) if key[:1] == "_" or key in (
                    "format", "format_map", "__class__"
                ) else getattr(obj, key)
            else:
                obj = obj[key]
        return obj, first

    def format(self, template: str, /, *args: Any, **kwargs: Any) -> str:  # type: ignore[override]
        if not self._needs_checks(template):
            return str.format(template, *args, **kwargs)
        return self.vformat(template, args, kwargs)

    def format_map(self, template: str, mapping: Mapping[str, Any]) -> str:
        """``str.format_map`` with the same checks."""
        if not self._needs_checks(template):
            return str.format_map(template, mapping)
        return self.vformat(template, (), mapping)

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
        for key, value in members.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError("modules are read-only in the sandbox")

    def __delattr__(self, name: str) -> None:
        raise TypeError("modules are read-only in the sandbox")

    def __repr__(self) -> str:
        return f"<module {object.__getattribute__(self, '_facade_name')!r} (sandbox)>"
