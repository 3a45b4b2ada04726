"""Type hints -> JSON Schema (draft 2020-12)."""
# ruff: noqa: UP007, UP035, UP045  (the typing forms are what these tests cover)

import collections.abc as cabc
import dataclasses
import datetime as _dt
import decimal
import enum
import ipaddress
import pathlib
import uuid
from dataclasses import dataclass, field
from typing import (
    Annotated,
    Any,
    Callable,
    Literal,
    NewType,
    NotRequired,
    Optional,
    Required,
    TypedDict,
    TypeVar,
    Union,
)

import jsonschema
import pytest
from toolscript.tools import Tool, schema_for_type
from toolscript.tools.markers import Inject, find_marker

from toolscript.errors import SchemaError, ToolDefinitionError


def check_valid_schema(schema: dict) -> dict:
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


@pytest.mark.parametrize(
    ("tp", "expected"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (None, {"type": "null"}),
        (type(None), {"type": "null"}),
        (Any, {}),
        (object, {}),
        (list, {"type": "array"}),
        (dict, {"type": "object"}),
        (tuple, {"type": "array"}),
        (list[str], {"type": "array", "items": {"type": "string"}}),
        (cabc.Sequence[int], {"type": "array", "items": {"type": "integer"}}),
        (set[str], {"type": "array", "uniqueItems": True, "items": {"type": "string"}}),
        (frozenset[int], {"type": "array", "uniqueItems": True, "items": {"type": "integer"}}),
        (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}),
        (cabc.Mapping[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
        (
            tuple[int, str],
            {
                "type": "array",
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "minItems": 2,
                "maxItems": 2,
                "items": False,
            },
        ),
        (tuple[float, ...], {"type": "array", "items": {"type": "number"}}),
        (Optional[int], {"type": ["integer", "null"]}),
        (int | None, {"type": ["integer", "null"]}),
        (Union[int, str], {"type": ["integer", "string"]}),
        (str | int | None, {"type": ["string", "integer", "null"]}),
        (Any | None, {}),
        (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
        (Literal["only"], {"type": "string", "const": "only"}),
        (Literal[1, "x", None], {"enum": [1, "x", None]}),
        (Literal[1, True], {"enum": [1, True]}),
        (Annotated[str, "the name"], {"type": "string", "description": "the name"}),
        (
            list[Annotated[int, "a count"]],
            {"type": "array", "items": {"type": "integer", "description": "a count"}},
        ),
        (
            dict[str, list[int | None]],
            {
                "type": "object",
                "additionalProperties": {"type": "array", "items": {"type": ["integer", "null"]}},
            },
        ),
    ],
)
def test_simple_types(tp, expected):
    assert check_valid_schema(schema_for_type(tp)) == expected


def test_union_of_complex_members_uses_anyof():
    schema = schema_for_type(Optional[list[int]])
    assert schema == {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}]}


UserId = NewType("UserId", str)


def test_newtype_uses_its_supertype():
    assert schema_for_type(UserId) == {"type": "string"}
    assert schema_for_type(dict[UserId, int])["additionalProperties"] == {"type": "integer"}


class Color(enum.Enum):
    """A paint colour."""

    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


def test_enum_goes_to_defs_with_values():
    schema = check_valid_schema(schema_for_type(Color))
    assert schema["$ref"] == "#/$defs/Color"
    assert schema["$defs"]["Color"] == {
        "title": "Color",
        "description": "A paint colour.",
        "type": "string",
        "enum": ["red", "green"],
    }
    level = schema_for_type(Level)["$defs"]["Level"]
    assert level["type"] == "integer" and level["enum"] == [1, 2]
    assert "description" not in level  # no invented docstring


def test_literal_of_enum_member_uses_value():
    assert schema_for_type(Literal[Color.RED]) == {"type": "string", "const": "red"}


class Address(TypedDict):
    """A postal address."""

    street: str
    city: Annotated[str, "City name"]


class Partial(TypedDict, total=False):
    a: Required[int]
    b: str
    c: NotRequired[list[str]]


class Mixed(TypedDict):
    x: int
    y: NotRequired[Address]


def test_typeddict_total_and_required_markers():
    schema = check_valid_schema(schema_for_type(Partial))
    body = schema["$defs"]["Partial"]
    assert body["type"] == "object"
    assert body["required"] == ["a"]
    assert body["additionalProperties"] is False
    assert body["properties"]["c"] == {"type": "array", "items": {"type": "string"}}

    mixed = schema_for_type(Mixed)
    assert mixed["$defs"]["Mixed"]["required"] == ["x"]
    assert mixed["$defs"]["Mixed"]["properties"]["y"] == {"$ref": "#/$defs/Address"}
    address = mixed["$defs"]["Address"]
    assert address["description"] == "A postal address."
    assert address["properties"]["city"] == {"type": "string", "description": "City name"}
    assert address["required"] == ["street", "city"]


@dataclass
class Line:
    """An order line.

    Attributes:
        sku: Stock keeping unit.
    """

    sku: str
    qty: int = 1
    tags: list[str] = field(default_factory=list)
    color: Color = Color.RED
    note: str = field(default="", metadata={"description": "Free text."})
    internal: int = field(default=0, init=False)


@dataclass
class Tree:
    name: str
    children: "list[Tree]" = field(default_factory=list)


def test_dataclass_fields_defaults_and_descriptions():
    schema = check_valid_schema(schema_for_type(Line))
    body = schema["$defs"]["Line"]
    assert body["title"] == "Line"
    assert body["description"] == "An order line."
    assert body["required"] == ["sku"]
    assert set(body["properties"]) == {"sku", "qty", "tags", "color", "note"}  # init=False skipped
    assert body["properties"]["sku"] == {"type": "string", "description": "Stock keeping unit."}
    assert body["properties"]["qty"] == {"type": "integer", "default": 1}
    assert "default" not in body["properties"]["tags"]  # default_factory: optional, no default
    assert body["properties"]["color"] == {"$ref": "#/$defs/Color", "default": "red"}
    assert body["properties"]["note"]["description"] == "Free text."
    assert body["additionalProperties"] is False


def test_recursive_dataclass_uses_ref_to_itself():
    schema = check_valid_schema(schema_for_type(Tree))
    assert schema["$ref"] == "#/$defs/Tree"
    children = schema["$defs"]["Tree"]["properties"]["children"]
    assert children == {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"name": "a", "children": [{"name": "b", "children": []}]})
    assert not validator.is_valid({"name": "a", "children": [{"name": 5}]})


def test_nested_combination_shares_defs():
    schema = check_valid_schema(schema_for_type(dict[str, list[Line | None]]))
    assert set(schema["$defs"]) == {"Line", "Color"}
    items = schema["additionalProperties"]["items"]
    assert items == {"anyOf": [{"$ref": "#/$defs/Line"}, {"type": "null"}]}


def _make_same_name():
    @dataclass
    class Line:  # same __name__ as the module-level Line, different class
        other: int

    return Line


def test_def_names_do_not_collide():
    other = _make_same_name()
    schema = schema_for_type(tuple[Line, other])
    assert {"Line", "Line2"} <= set(schema["$defs"])
    assert schema["$defs"]["Line2"]["properties"] == {"other": {"type": "integer"}}


class Opaque:
    pass


T = TypeVar("T")


@pytest.mark.parametrize(
    ("tp", "fragment"),
    [
        (Callable[[int], int], "callables cannot be passed as JSON"),
        (bytes, "bytes cannot travel as JSON"),
        (Opaque, "cannot express Opaque as JSON Schema: this class has no JSON Schema"),
        (list[Opaque], "cannot express list[Opaque] as JSON Schema: Opaque: this class"),
        (dict[int, str], "int keys are not supported"),
        (T, "type variables are not supported"),
        (type[int], "classes cannot be passed as JSON"),
        (Literal[b"x"], "not a JSON scalar"),
    ],
)
def test_inexpressible_annotations_are_refused(tp, fragment):
    with pytest.raises(SchemaError) as info:
        schema_for_type(tp)
    assert fragment in str(info.value)
    assert isinstance(info.value, ToolDefinitionError)


@dataclass
class HasOpaque:
    ok: int
    bad: Opaque


def test_refusal_names_the_nested_field():
    with pytest.raises(SchemaError, match=r"field 'bad'.*Opaque"):
        schema_for_type(HasOpaque)


class BadEnum(enum.Enum):
    A = (1, 2)


def test_enum_with_non_json_values_is_refused():
    with pytest.raises(SchemaError, match="not a JSON scalar"):
        schema_for_type(BadEnum)


def test_dataclass_generated_docstring_is_not_a_description():
    @dataclass
    class NoDoc:
        a: int

    body = schema_for_type(NoDoc)["$defs"]["NoDoc"]
    assert "description" not in body
    assert dataclasses.is_dataclass(NoDoc)


# -- host types and host-held objects as parameters -------------------------------------


@pytest.mark.parametrize(
    ("tp", "fragment"),
    [
        (_dt.datetime, "datetime is a string (ISO 8601 date-time); take `str` and convert it "
                       "in the tool (e.g. datetime.fromisoformat(value))"),
        (_dt.date, "(ISO 8601 date); take `str` and convert it in the tool (e.g. "
                   "date.fromisoformat(value))"),
        (decimal.Decimal, "Decimal is a string (decimal number as text, e.g. '12.50'); take "
                          "`str` and convert it in the tool (e.g. Decimal(value))"),
        (uuid.UUID, "UUID is a string (UUID)"),
        (pathlib.Path, "Path is a string (file path)"),
        (ipaddress.IPv4Address, "IPv4Address is a string (IPv4 address)"),
        (Optional[_dt.time], "time is a string (ISO 8601 time)"),
    ],
)
def test_host_type_parameters_are_refused_with_their_json_form(tp, fragment):
    with pytest.raises(SchemaError) as info:
        schema_for_type(tp)
    assert fragment in str(info.value)


class Mailbox:
    """A service object: state and methods, no JSON form."""

    def __init__(self) -> None:
        self.messages: list[str] = []


def test_a_service_object_parameter_is_refused_with_the_injection_fix():
    def count(mailbox: Mailbox) -> int:
        return len(mailbox.messages)

    with pytest.raises(SchemaError, match=r"parameter 'mailbox'.*inject it instead: annotate it "
                                          r"`Injected\[\.\.\.\]` or register the tool with "
                                          r"inject=\[\.\.\.\]"):
        Tool(count)
    assert "mailbox" not in Tool(count, inject=["mailbox"]).parameters_schema["properties"]


class Depends:
    """A framework's dependency marker (matched by its class name)."""

    def __init__(self, env_dependency: str) -> None:
        self.env_dependency = env_dependency


class CallableDepends:
    """A marker holding a callable, as FastAPI's ``Depends(get_db)``."""

    def __init__(self, dependency: Any) -> None:
        self.dependency = dependency


CallableDepends.__name__ = "Depends"


def test_dependency_markers_are_injection():
    assert find_marker(["a description", Depends("mailbox")]) == Inject("mailbox")
    assert find_marker([CallableDepends(lambda: None)]) == Inject(None)
    assert find_marker([Depends]) == Inject(None)
    assert find_marker(["text", 3]) is None

    def count(mailbox: Annotated[Mailbox, Depends("inbox")], folder: str = "in") -> int:
        return len(mailbox.messages)

    t = Tool(count)
    assert t.parameters_schema["properties"] == {"folder": {"type": "string", "default": "in"}}
    assert [(p.name, p.key, p.check) for p in t.host_supplied.injected] == [
        ("mailbox", "inbox", Mailbox)
    ]
