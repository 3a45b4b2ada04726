"""Tool, @tool, parameter descriptions, invoke conversions."""

import enum
import functools
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypedDict

import pytest
from toolscript.tools import MISSING, ArgumentError, Param, Tool, tool
from toolscript.tools.docstrings import parse_docstring

from toolscript.errors import SchemaError, ToolDefinitionError


def google(store_id: str, date: str, limit: int = 10) -> dict:
    """Revenue of one store on one day, in yuan.

    Reads the nightly ledger; values are final after 02:00.

    Args:
        store_id: The store id, e.g. "ST001".
        date (str): ISO date,
            e.g. "2026-08-24".
        limit: Maximum rows.

    Returns:
        A dict with ``revenue_yuan``.
    """
    return {}


def numpy_style(a: int, b: str) -> None:
    """Add things.

    Parameters
    ----------
    a : int
        First value.
    b : str
        Second value.

    Returns
    -------
    None
    """


def rest_style(a: int) -> None:
    """Do a thing.

    :param a: the value
    :returns: nothing
    """


def test_google_args_section():
    t = Tool.from_function(google)
    assert t.name == "google"
    assert [p.description for p in t.params] == [
        'The store id, e.g. "ST001".',
        'ISO date, e.g. "2026-08-24".',
        "Maximum rows.",
    ]
    assert "Args:" not in t.description
    assert "store_id" not in t.description
    assert t.description.startswith("Revenue of one store on one day, in yuan.\n\nReads the")
    assert "Returns:" in t.description  # other sections stay
    assert (
        t.parameters_schema["properties"]["store_id"]["description"]
        == 'The store id, e.g. "ST001".'
    )
    assert t.returns_description == "A dict with ``revenue_yuan``."


def test_numpy_parameters_section():
    t = Tool.from_function(numpy_style)
    assert [p.description for p in t.params] == ["First value.", "Second value."]
    assert "Parameters" not in t.description
    assert "First value" not in t.description
    assert t.description.startswith("Add things.")


def test_rest_fields():
    t = Tool.from_function(rest_style)
    assert t.params[0].description == "the value"
    assert ":param" not in t.description


def annotated_wins(
    q: Annotated[str, "From Annotated."],
    n: Annotated[int, "Count."] = 3,
) -> list[str]:
    """Search.

    Args:
        q: From the docstring.
    """
    return []


def test_annotated_description_wins_over_docstring():
    t = Tool.from_function(annotated_wins)
    assert t.params[0].description == "From Annotated."
    assert t.params[1].description == "Count."
    assert t.parameters_schema["properties"]["n"] == {
        "type": "integer",
        "description": "Count.",
        "default": 3,
    }


def test_parse_docstring_empty():
    parsed = parse_docstring(None)
    assert parsed.description == "" and parsed.params == {}


def test_parameters_schema_shape_and_params():
    def f(a: str, b: int = 2, *args: int, c: float | None = None, **kw: Any) -> int:
        return 0

    t = Tool.from_function(f)
    assert t.parameters_schema == {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "integer", "default": 2},
            "c": {"type": ["number", "null"], "default": None},
        },
        "required": ["a"],
        "additionalProperties": False,
    }
    assert t.params == (
        Param("a", "positional_or_keyword", True, MISSING, "", {"type": "string"}, str),
        Param("b", "positional_or_keyword", False, 2, "", {"type": "integer", "default": 2}, int),
        Param(
            "c",
            "keyword_only",
            False,
            None,
            "",
            {"type": ["number", "null"], "default": None},
            float | None,
        ),
    )
    assert t.returns_schema == {"type": "integer"}


def test_decorator_forms_and_flags():
    @tool
    def plain(x: int) -> int:
        """Double."""
        return 2 * x

    @tool(read_only=True, requires_approval=True, timeout_s=5, name="renamed", description="D.")
    def fancy(x: int) -> int:
        return x

    assert isinstance(plain, Tool) and isinstance(fancy, Tool)
    assert plain(21) == 42  # still callable as the function
    assert plain.__name__ == "plain" and plain.__doc__ == "Double."
    assert (plain.read_only, plain.requires_approval, plain.timeout_s) == (False, False, None)
    assert fancy.name == "renamed"
    assert (fancy.read_only, fancy.requires_approval, fancy.timeout_s) == (True, True, 5.0)
    assert fancy.description == "D."
    assert "read_only=True" in repr(fancy)


def test_return_schema_absent_or_inexpressible_is_none():
    def no_return(x: int):
        return x

    def odd_return(x: int) -> "functools.partial[int]":
        return functools.partial(int)

    assert Tool.from_function(no_return).returns_schema is None
    assert Tool.from_function(odd_return).returns_schema is None
    assert Tool.from_function(numpy_style).returns_schema == {"type": "null"}


def test_unannotated_parameter_is_refused_with_clear_message():
    def f(store_id, date: str) -> dict:
        return {}

    with pytest.raises(SchemaError) as info:
        Tool.from_function(f)
    message = str(info.value)
    assert "tool 'f'" in message and "parameter 'store_id'" in message
    assert "no type annotation" in message


class Opaque:
    pass


def test_inexpressible_parameter_names_tool_parameter_and_annotation():
    def send(to: str, callback: "list[Opaque]") -> None:
        pass

    with pytest.raises(SchemaError) as info:
        Tool.from_function(send)
    message = str(info.value)
    assert "tool 'send'" in message
    assert "parameter 'callback'" in message
    assert "list[Opaque]" in message
    assert "string" not in message.split("JSON Schema:")[0]


def test_unresolvable_forward_reference_is_refused():
    def f(x: "DoesNotExist") -> None:  # noqa: F821
        pass

    with pytest.raises(SchemaError, match="DoesNotExist"):
        Tool.from_function(f)


def test_async_generators_are_refused_and_async_functions_are_tools():
    async def gen(x: int):  # type: ignore[no-untyped-def]
        yield x

    with pytest.raises(ToolDefinitionError, match="async generators"):
        Tool.from_function(gen)

    async def f(x: int) -> int:
        """Double x."""
        return 2 * x

    t = Tool.from_function(f)
    assert t.parameters_schema["required"] == ["x"] and t.description == "Double x."
    assert t.invoke({"x": 4}) == 8  # runs the coroutine (see tests/agent/test_agent_async.py)


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan"), "5", True])
def test_bad_timeout_is_refused(bad):
    def f(x: int) -> int:
        return x

    with pytest.raises(ToolDefinitionError, match="timeout_s"):
        Tool.from_function(f, timeout_s=bad)


def test_lambda_needs_a_name():
    with pytest.raises(ToolDefinitionError, match="name="):
        Tool.from_function(lambda x: x)


def test_callable_object_and_partial():
    class Adder:
        def __call__(self, a: int, b: int) -> int:
            return a + b

    t = Tool.from_function(Adder(), name="adder")
    assert [p.name for p in t.params] == ["a", "b"]
    assert t.invoke({"a": 1, "b": 2}) == 3

    def scale(x: float, factor: float) -> float:
        return x * factor

    p = Tool.from_function(functools.partial(scale, factor=2.0), name="double")
    assert p.parameters_schema["properties"]["x"] == {"type": "number"}
    assert p.invoke({"x": 4}) == 8.0


# -- invoke: JSON values -> annotated Python values ------------------------------------


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Size(enum.IntEnum):
    S = 1
    L = 3


@dataclass
class Line:
    sku: str
    qty: int = 1
    color: Color = Color.RED


@dataclass
class Order:
    lines: list[Line]
    by_size: dict[str, Size] = field(default_factory=dict)
    gift: Line | None = None
    coords: tuple[float, float] = (0.0, 0.0)


class Options(TypedDict):
    colors: list[Color]


@dataclass
class Tree:
    name: str
    children: "list[Tree]" = field(default_factory=list)


def test_enum_and_dataclass_conversion_on_invoke():
    seen: dict[str, Any] = {}

    @tool
    def place(
        order: Order, color: Color, opts: Options, sizes: set[Size], pair: tuple[int, str]
    ) -> str:
        seen.update(order=order, color=color, opts=opts, sizes=sizes, pair=pair)
        return "ok"

    args = {
        "order": {
            "lines": [{"sku": "A", "qty": 2, "color": "green"}, {"sku": "B"}],
            "by_size": {"x": 3},
            "gift": {"sku": "G"},
            "coords": [1.5, 2],
        },
        "color": "red",
        "opts": {"colors": ["green", "red"]},
        "sizes": [1, 3],
        "pair": [7, "x"],
    }
    place.validate(args)
    assert place.invoke(args) == "ok"
    order = seen["order"]
    assert order == Order(
        lines=[Line("A", 2, Color.GREEN), Line("B")],
        by_size={"x": Size.L},
        gift=Line("G"),
        coords=(1.5, 2),
    )
    assert type(order.lines[0].color) is Color
    assert seen["color"] is Color.RED
    assert seen["opts"] == {"colors": [Color.GREEN, Color.RED]}
    assert seen["sizes"] == {Size.S, Size.L}
    assert seen["pair"] == (7, "x")
    assert args["color"] == "red"  # caller's dict untouched


def test_optional_dataclass_none_stays_none_and_recursion():
    seen = []

    @tool
    def walk(tree: Tree, gift: Line | None = None) -> int:
        seen.append((tree, gift))
        return 0

    walk.invoke({"tree": {"name": "a", "children": [{"name": "b", "children": []}]}, "gift": None})
    tree, gift = seen[0]
    assert tree == Tree("a", [Tree("b")])
    assert isinstance(tree.children[0], Tree)
    assert gift is None


def test_literal_and_plain_types_are_not_touched():
    @tool
    def f(mode: Literal["a", "b"], xs: list[int]) -> list[int]:
        return xs

    xs = [1, 2]
    assert f.invoke({"mode": "a", "xs": xs}) is xs  # no copy on the fast path


def test_positional_only_parameters():
    @tool
    def f(a: int, b: int = 10, c: int = 100, /, *, d: int = 0) -> tuple:
        return (a, b, c, d)

    assert [p.kind for p in f.params] == ["positional_or_keyword"] * 3 + ["keyword_only"]
    assert f.invoke({"a": 1}) == (1, 10, 100, 0)
    assert f.invoke({"a": 1, "c": 3, "d": 4}) == (1, 10, 3, 4)


def test_validate_and_invoke():
    @tool
    def f(x: int) -> int:
        return x + 1

    assert f.validate_and_invoke({"x": 1}) == 2
    with pytest.raises(ArgumentError):
        f.validate_and_invoke({"x": "1"})


def test_function_spec():
    t = Tool.from_function(google)
    spec = t.function_spec()
    assert spec["name"] == "google"
    assert spec["parameters"] is t.parameters_schema
    assert spec["description"] == t.description
