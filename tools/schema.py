"""Python type hints -> JSON Schema (draft 2020-12).

Supported: ``str``, ``int``, ``float`` (``number``: integers are accepted),
``bool``, ``None``, ``Any``/``object`` (any value), ``list[T]`` and other
sequences, ``set[T]``/``frozenset[T]`` (``uniqueItems``), ``dict[str, T]`` and
other mappings with string keys, ``tuple[A, B]`` and ``tuple[T, ...]``,
``Optional``/``Union``/``X | None``, ``Literal[...]``, ``Enum`` subclasses,
``TypedDict`` (``total``, ``Required``, ``NotRequired``), dataclasses,
``NewType``, ``Annotated[T, "description"]`` and any nesting of these.
Enums, TypedDicts and dataclasses are named types: they go to ``$defs`` and
are referenced with ``$ref`` (which also handles recursive types).

An annotation that JSON Schema cannot express raises :class:`SchemaError`;
there is never a silent fallback to ``"string"``.
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import enum
import math
import types
import typing
from typing import Any

try:  # optional: only to recognise typing_extensions' TypedDict and markers
    import typing_extensions as _tx
except ImportError:  # pragma: no cover - typing_extensions is nearly always present
    _tx = None  # type: ignore[assignment]

from toolscript.errors import SchemaError

from . import pydantic_models
from .constraints import ConstraintError, constraint_keywords, json_types, metadata_description
from .docstrings import parse_docstring
from .hosttypes import json_form

__all__ = [
    "MISSING",
    "SchemaBuilder",
    "UnsupportedType",
    "annotated_description",
    "class_docstring",
    "explain_unsupported",
    "is_named_type",
    "is_typeddict",
    "json_type_of",
    "resolve_hints",
    "schema_for_type",
    "to_json_default",
    "type_label",
    "typeddict_required_keys",
    "unwrap_annotated",
]

JSONSchema = dict[str, Any]


class _Missing:
    """Sentinel type for "no default"."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()
"""Marks a parameter or field without a default value."""


class UnsupportedType(Exception):
    """Internal: a (possibly nested) annotation cannot be expressed.

    Callers turn it into a :class:`SchemaError` that names the tool and parameter.
    """

    def __init__(self, annotation: Any, reason: str) -> None:
        super().__init__(f"{type_label(annotation)}: {reason}")
        self.annotation = annotation
        self.reason = reason


_SEQUENCE_ORIGINS: tuple[Any, ...] = (
    list,
    cabc.Sequence,
    cabc.MutableSequence,
    cabc.Collection,
    cabc.Iterable,
)
_SET_ORIGINS: tuple[Any, ...] = (set, frozenset, cabc.Set, cabc.MutableSet)
_MAPPING_ORIGINS: tuple[Any, ...] = (dict, cabc.Mapping, cabc.MutableMapping)
_REQUIRED_MARKERS: frozenset[Any] = frozenset(
    {typing.Required} | ({_tx.Required} if _tx is not None else set())
)
_NOT_REQUIRED_MARKERS: frozenset[Any] = frozenset(
    {typing.NotRequired} | ({_tx.NotRequired} if _tx is not None else set())
)
_READ_ONLY_MARKERS: frozenset[Any] = frozenset(
    {getattr(_tx, "ReadOnly", None), getattr(typing, "ReadOnly", None)} - {None}
)
_REQUIRED_WRAPPERS = _REQUIRED_MARKERS | _NOT_REQUIRED_MARKERS | _READ_ONLY_MARKERS


def type_label(tp: Any) -> str:
    """A short, readable rendering of an annotation for error messages."""
    if tp is type(None) or tp is None:
        return "None"
    if tp is Ellipsis:
        return "..."
    if isinstance(tp, list):  # Callable's parameter list
        return "[" + ", ".join(type_label(a) for a in tp) + "]"
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return type_label(tp.__origin__)
    if origin is typing.Literal:
        return "Literal[" + ", ".join(repr(a) for a in args) + "]"
    if origin is typing.Union or origin is types.UnionType:
        return " | ".join(type_label(a) for a in args)
    if origin is not None and args:
        name = getattr(origin, "__name__", None) or type_label(origin)
        return f"{name}[" + ", ".join(type_label(a) for a in args) + "]"
    if isinstance(tp, type):
        return tp.__qualname__
    text = repr(tp)
    for prefix in ("typing_extensions.", "typing.", "collections.abc."):
        text = text.replace(prefix, "")
    return text


def unwrap_annotated(tp: Any) -> tuple[Any, list[Any]]:
    """Strip ``Annotated`` and ``Required``/``NotRequired`` wrappers.

    Returns the bare type and the collected ``Annotated`` metadata (outermost first).
    """
    metadata: list[Any] = []
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            metadata.extend(tp.__metadata__)
            tp = tp.__origin__
        elif origin in _REQUIRED_WRAPPERS:
            tp = typing.get_args(tp)[0]
        else:
            return tp, metadata


def annotated_description(metadata: list[Any]) -> str | None:
    """The description in ``Annotated`` metadata: strings, ``Field(description=)``
    and pydantic's ``Field(description=)``, joined; None if there is none."""
    texts = [m if isinstance(m, str) else metadata_description(m) for m in metadata]
    return " ".join(t.strip() for t in texts if t and t.strip()) or None


def json_type_of(value: Any) -> str | None:
    """The JSON Schema type name of a scalar JSON value, else None."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def _is_scalar_json(value: Any) -> bool:
    """True for str, int, finite float, bool and None."""
    if isinstance(value, float):
        return math.isfinite(value)
    return json_type_of(value) is not None


def is_typeddict(tp: Any) -> bool:
    """True for TypedDict classes (from typing or typing_extensions)."""
    return typing.is_typeddict(tp) or (_tx is not None and _tx.is_typeddict(tp))


def is_named_type(tp: Any) -> bool:
    """True for types that go to ``$defs``: Enum, TypedDict and dataclass classes."""
    return isinstance(tp, type) and (
        issubclass(tp, enum.Enum)
        or is_typeddict(tp)
        or dataclasses.is_dataclass(tp)
        or pydantic_models.is_model(tp)
    )


def resolve_hints(obj: Any, localns: dict[str, Any] | None = None) -> dict[str, Any]:
    """``typing.get_type_hints(obj, include_extras=True)`` with a clear error."""
    try:
        return typing.get_type_hints(obj, localns=localns, include_extras=True)
    except NameError as exc:
        raise UnsupportedType(
            obj,
            f"cannot resolve a forward reference ({exc}); define the type at module level",
        ) from exc
    except Exception as exc:
        raise UnsupportedType(obj, f"cannot evaluate annotations ({exc})") from exc


def typeddict_required_keys(tp: type, hints: dict[str, Any]) -> frozenset[str]:
    """The required keys of a TypedDict.

    ``__required_keys__`` is wrong on Python 3.11 when annotations are strings
    (``from __future__ import annotations``): ``Required``/``NotRequired`` are
    only visible after evaluation, so they are read from the resolved hints.
    """
    declared = frozenset(getattr(tp, "__required_keys__", frozenset(hints)))
    required = set(declared)
    for name, hint in hints.items():
        marker = _required_marker(hint)
        if marker is True:
            required.add(name)
        elif marker is False:
            required.discard(name)
    return frozenset(required)


def _required_marker(tp: Any) -> bool | None:
    """True for ``Required[...]``, False for ``NotRequired[...]``, else None."""
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp = tp.__origin__
        elif origin in _REQUIRED_MARKERS:
            return True
        elif origin in _NOT_REQUIRED_MARKERS:
            return False
        elif origin in _READ_ONLY_MARKERS:
            tp = typing.get_args(tp)[0]
        else:
            return None


def class_docstring(tp: type) -> str | None:
    """A class's own docstring, ignoring the ones dataclasses/Enum generate."""
    doc = tp.__dict__.get("__doc__")
    if not isinstance(doc, str) or not doc.strip():
        return None
    if dataclasses.is_dataclass(tp) and doc.startswith(f"{tp.__name__}("):
        return None
    if doc.strip() in ("An enumeration.",):
        return None
    return doc


class SchemaBuilder:
    """Builds schemas for several annotations that share one ``$defs`` table.

    Use one builder per tool: :meth:`schema` for each annotation, then
    :attr:`defs` (or :meth:`attach_defs`) for the collected named types.
    """

    def __init__(self) -> None:
        """Start with an empty ``$defs`` table."""
        self.defs: dict[str, JSONSchema] = {}
        self._names: dict[Any, str] = {}
        self.uses_models = False
        """True once a pydantic model was used (its validators must also run)."""

    def attach_defs(self, schema: JSONSchema) -> JSONSchema:
        """Return ``schema`` with a ``$defs`` section if named types were used."""
        if not self.defs:
            return schema
        return {**schema, "$defs": {k: self.defs[k] for k in sorted(self.defs)}}

    def schema(self, tp: Any) -> JSONSchema:
        """The JSON Schema of annotation ``tp``; raises :class:`UnsupportedType`."""
        bare, metadata = unwrap_annotated(tp)
        result = self._schema(bare)
        if any(not isinstance(m, str) for m in metadata):
            try:
                keywords = constraint_keywords(metadata, json_types(result, self.defs))
            except ConstraintError as exc:
                raise UnsupportedType(tp, str(exc)) from exc
            if keywords:
                result = {**result, **keywords}
        description = annotated_description(metadata)
        if description:
            result = {**result, "description": description}
        return result

    # -- dispatch ---------------------------------------------------------------

    def _schema(self, tp: Any) -> JSONSchema:
        if tp is cabc.Callable:
            raise UnsupportedType(tp, "callables cannot be passed as JSON")
        if tp is Any or tp is object:
            return {}
        if tp is None or tp is type(None):
            return {"type": "null"}
        if tp is bool:
            return {"type": "boolean"}
        if tp is int:
            return {"type": "integer"}
        if tp is float:
            return {"type": "number"}
        if tp is str:
            return {"type": "string"}
        if tp in (bytes, bytearray, memoryview):
            raise UnsupportedType(tp, "bytes cannot travel as JSON; use str (e.g. base64 text)")
        supertype = getattr(tp, "__supertype__", None)
        if supertype is not None:  # typing.NewType
            return self.schema(supertype)
        if isinstance(tp, typing.TypeVar):
            raise UnsupportedType(tp, "type variables are not supported; use a concrete type")
        if isinstance(tp, (str, typing.ForwardRef)):
            raise UnsupportedType(tp, "unresolved forward reference")

        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is typing.Literal:
            return self._literal(tp, args)
        if origin is typing.Union or origin is types.UnionType:
            return self._union(args)
        if origin is not None:
            return self._generic(tp, origin, args)
        if isinstance(tp, type):
            return self._class(tp)
        raise UnsupportedType(tp, "not a type JSON Schema can express")

    def _literal(self, tp: Any, args: tuple[Any, ...]) -> JSONSchema:
        values: list[Any] = []
        for value in args:
            if isinstance(value, enum.Enum):
                value = value.value
            if not _is_scalar_json(value):
                raise UnsupportedType(
                    tp, f"Literal value {value!r} is not a JSON scalar (str, int, bool, None)"
                )
            if not any(type(v) is type(value) and v == value for v in values):
                values.append(value)
        result: JSONSchema = {}
        kinds = {json_type_of(v) for v in values}
        if len(kinds) == 1:
            result["type"] = kinds.pop()
        if len(values) == 1:
            result["const"] = values[0]
        else:
            result["enum"] = values
        return result

    def _union(self, args: tuple[Any, ...]) -> JSONSchema:
        members = [self.schema(a) for a in args]
        if any(m == {} for m in members):
            return {}
        if all(set(m) == {"type"} and isinstance(m["type"], str) for m in members):
            names: list[str] = []
            for m in members:
                if m["type"] not in names:
                    names.append(m["type"])
            return {"type": names[0] if len(names) == 1 else names}
        return {"anyOf": members}

    def _generic(self, tp: Any, origin: Any, args: tuple[Any, ...]) -> JSONSchema:
        if origin in _SEQUENCE_ORIGINS:
            if not args:
                return {"type": "array"}
            return {"type": "array", "items": self.schema(args[0])}
        if origin in _SET_ORIGINS:
            result: JSONSchema = {"type": "array", "uniqueItems": True}
            if args:
                result["items"] = self.schema(args[0])
            return result
        if origin is tuple:
            return self._tuple(args)
        if origin in _MAPPING_ORIGINS:
            if not args:
                return {"type": "object"}
            key, value = args
            bare_key, _ = unwrap_annotated(key)
            while getattr(bare_key, "__supertype__", None) is not None:
                bare_key = bare_key.__supertype__
            if bare_key is not str and bare_key is not Any:
                raise UnsupportedType(
                    tp, f"JSON object keys are strings; {type_label(key)} keys are not supported"
                )
            value_schema = self.schema(value)
            return {"type": "object", "additionalProperties": value_schema}
        if origin is cabc.Callable:
            raise UnsupportedType(tp, "callables cannot be passed as JSON")
        if origin is type:
            raise UnsupportedType(tp, "classes cannot be passed as JSON")
        if isinstance(origin, type) and is_named_type(origin):
            raise UnsupportedType(tp, "generic TypedDicts/dataclasses are not supported")
        raise UnsupportedType(tp, "this generic type has no JSON Schema equivalent")

    def _tuple(self, args: tuple[Any, ...]) -> JSONSchema:
        if not args:
            return {"type": "array"}
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": self.schema(args[0])}
        if args == ((),):  # tuple[()]
            return {"type": "array", "maxItems": 0}
        items = [self.schema(a) for a in args]
        return {
            "type": "array",
            "prefixItems": items,
            "minItems": len(items),
            "maxItems": len(items),
            "items": False,
        }

    def _class(self, tp: type) -> JSONSchema:
        if tp is list or tp is tuple:
            return {"type": "array"}
        if tp is set or tp is frozenset:
            return {"type": "array", "uniqueItems": True}
        if tp is dict:
            return {"type": "object"}
        if issubclass(tp, enum.Enum) or is_typeddict(tp) or dataclasses.is_dataclass(tp):
            return self._named(tp)
        if pydantic_models.is_model(tp):
            return self._pydantic(tp)
        if issubclass(tp, tuple) and hasattr(tp, "_fields"):
            raise UnsupportedType(tp, "NamedTuple is not supported; use a TypedDict or dataclass")
        form = json_form(tp)
        if form is not None:
            iso = hasattr(tp, "fromisoformat")
            parse = f"{tp.__name__}.fromisoformat(value)" if iso else f"{tp.__name__}(value)"
            raise UnsupportedType(
                tp,
                f"a script sends JSON, where a {tp.__name__} is a string ({form.note}); "
                f"take `str` and convert it in the tool (e.g. {parse}), or use a pydantic "
                "model field of this type",
            )
        raise UnsupportedType(
            tp,
            "this class has no JSON Schema; use a TypedDict, a dataclass, an Enum "
            "or builtin types (str, int, float, bool, list, dict); if the host holds "
            "this object (a client, an account, a store), inject it instead: annotate "
            "it `Injected[...]` or register the tool with inject=[...]",
        )

    # -- named types --------------------------------------------------------------

    def _named(self, tp: type) -> JSONSchema:
        name = self._names.get(tp)
        if name is None:
            name = self._new_name(tp)
            self._names[tp] = name
            self.defs[name] = {}  # placeholder: lets recursive references resolve
            if issubclass(tp, enum.Enum):
                body = self._enum(tp)
            elif is_typeddict(tp):
                body = self._typeddict(tp)
            else:
                body = self._dataclass(tp)
            self.defs[name] = body
        return {"$ref": f"#/$defs/{name}"}

    def _pydantic(self, tp: type) -> JSONSchema:
        """A pydantic model: its own JSON Schema, its ``$defs`` merged into ours."""
        self.uses_models = True
        name = self._names.get(tp)
        if name is not None:
            return {"$ref": f"#/$defs/{name}"}
        try:
            schema, defs = pydantic_models.model_schema(tp)
        except Exception as exc:
            raise UnsupportedType(tp, f"pydantic cannot make its JSON Schema: {exc}") from exc
        for key, body in defs.items():
            if key in self.defs and self.defs[key] != body:
                raise UnsupportedType(
                    tp, f"two different types are named {key!r}; rename one of them"
                )
            self.defs[key] = body
        ref = schema.get("$ref")
        if set(schema) == {"$ref"} and isinstance(ref, str):  # recursive model: lives in $defs
            name = ref.rsplit("/", 1)[-1]
        else:
            name = tp.__name__
            if name in self.defs and self.defs[name] != schema:
                raise UnsupportedType(
                    tp, f"two different types are named {name!r}; rename one of them"
                )
            self.defs[name] = schema
        self._names[tp] = name
        return {"$ref": f"#/$defs/{name}"}

    def _new_name(self, tp: type) -> str:
        base = tp.__name__
        name = base
        n = 2
        while name in self.defs:
            name = f"{base}{n}"
            n += 1
        return name

    def _enum(self, tp: type[enum.Enum]) -> JSONSchema:
        values = [member.value for member in tp]
        for value in values:
            if not _is_scalar_json(value):
                raise UnsupportedType(
                    tp, f"Enum value {value!r} is not a JSON scalar (str, int, float, bool, None)"
                )
        result: JSONSchema = {"title": tp.__name__}
        doc = class_docstring(tp)
        if doc:
            result["description"] = parse_docstring(doc).description
        kinds = {json_type_of(v) for v in values}
        if len(kinds) == 1:
            result["type"] = kinds.pop()
        result["enum"] = values
        return result

    def _object(
        self,
        tp: type,
        fields: list[tuple[str, Any, bool, Any]],
    ) -> JSONSchema:
        """Object schema from (name, annotation, required, default) tuples."""
        doc = parse_docstring(class_docstring(tp))
        properties: dict[str, JSONSchema] = {}
        required: list[str] = []
        for name, annotation, is_required, default in fields:
            try:
                prop = self.schema(annotation)
            except UnsupportedType as exc:
                raise UnsupportedType(
                    tp, f"field {name!r}: {type_label(exc.annotation)}: {exc.reason}"
                ) from exc
            if "description" not in prop and name in doc.params:
                prop = {**prop, "description": doc.params[name]}
            if default is not MISSING:
                jsonable = to_json_default(default)
                if jsonable is not MISSING:
                    prop = {**prop, "default": jsonable}
            properties[name] = prop
            if is_required:
                required.append(name)
        result: JSONSchema = {"title": tp.__name__}
        if doc.description:
            result["description"] = doc.description
        result.update(
            {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            }
        )
        return result

    def _typeddict(self, tp: type) -> JSONSchema:
        hints = resolve_hints(tp, {tp.__name__: tp})
        required_keys = typeddict_required_keys(tp, hints)
        fields = [(name, hint, name in required_keys, MISSING) for name, hint in hints.items()]
        return self._object(tp, fields)

    def _dataclass(self, tp: type) -> JSONSchema:
        hints = resolve_hints(tp, {tp.__name__: tp})
        fields: list[tuple[str, Any, bool, Any]] = []
        for f in dataclasses.fields(tp):
            if not f.init:
                continue
            has_default = f.default is not dataclasses.MISSING
            has_factory = f.default_factory is not dataclasses.MISSING
            default = f.default if has_default else MISSING
            annotation = hints.get(f.name, f.type)
            fields.append((f.name, annotation, not (has_default or has_factory), default))
        result = self._object(tp, fields)
        for f in dataclasses.fields(tp):
            description = f.metadata.get("description") if f.metadata else None
            if isinstance(description, str) and f.name in result["properties"]:
                result["properties"][f.name].setdefault("description", description)
        return result


def to_json_default(value: Any) -> Any:
    """A default value as JSON data (Enum -> value, tuple -> list...), or MISSING."""
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, (tuple, frozenset, set)):
        items = [to_json_default(v) for v in value]
        if any(v is MISSING for v in items):
            return MISSING
        if isinstance(value, (set, frozenset)):
            try:
                items = sorted(items)
            except TypeError:
                return MISSING
        return items
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
        return to_json_default(value)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            jv = to_json_default(v)
            if not isinstance(k, str) or jv is MISSING:
                return MISSING
            out[k] = jv
        return out
    if isinstance(value, list):
        items = [to_json_default(v) for v in value]
        return MISSING if any(v is MISSING for v in items) else items
    if _is_scalar_json(value):
        return value
    return MISSING


def explain_unsupported(tp: Any, exc: UnsupportedType) -> str:
    """The reason of ``exc``, naming the nested annotation when it is not ``tp``."""
    if exc.annotation is tp or exc.annotation == unwrap_annotated(tp)[0]:
        return exc.reason
    return f"{type_label(exc.annotation)}: {exc.reason}"


def schema_for_type(tp: Any) -> JSONSchema:
    """The JSON Schema (draft 2020-12) of one annotation, with ``$defs`` if needed.

    Raises:
        SchemaError: the annotation cannot be expressed as JSON Schema.
    """
    builder = SchemaBuilder()
    try:
        schema = builder.schema(tp)
    except UnsupportedType as exc:
        raise SchemaError(
            f"cannot express {type_label(tp)} as JSON Schema: {explain_unsupported(tp, exc)}"
        ) from exc
    return builder.attach_defs(schema)
