"""Annotated constraints: schema, fast path and jsonschema agree; no silent coercion."""

from __future__ import annotations

from typing import Annotated, Any

import annotated_types as at
import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolkit_helpers import run_ok
from toolscript.tools import Field, render_stub, schema_for_type
from toolscript.tools.fastpath import compile_fast_check
from toolscript.tools.validation import make_jsonschema_validator

from toolscript import Runtime, tool
from toolscript.errors import SchemaError

Page = Annotated[int, Field(ge=1, le=100, description="Rows per page")]
Sku = Annotated[str, Field(pattern=r"^[A-Z]{3}-\d{4}$", description="Stock unit, e.g. 'ABC-1234'")]


@tool(read_only=True)
def find_items(
    sku: Sku,
    limit: Page = 10,
    tags: Annotated[list[str], at.MaxLen(3)] = [],  # noqa: B006
    discount: Annotated[float, at.Interval(ge=0, lt=1)] = 0.0,
    step: Annotated[int | None, pydantic.Field(gt=0, multiple_of=5)] = None,
    day: Annotated[str, Field(format="date")] = "2026-01-01",
) -> dict[str, Any]:
    """Find items by stock unit."""
    return {"sku": sku, "limit": limit, "tags": tags, "discount": discount, "step": step}


def test_schema_keywords_from_each_spelling():
    props = find_items.parameters_schema["properties"]
    assert props["limit"] == {"type": "integer", "minimum": 1, "maximum": 100,
                              "description": "Rows per page", "default": 10}
    assert props["sku"]["pattern"] == r"^[A-Z]{3}-\d{4}$"
    assert props["tags"]["maxItems"] == 3
    assert props["discount"]["minimum"] == 0 and props["discount"]["exclusiveMaximum"] == 1
    assert props["step"]["exclusiveMinimum"] == 0 and props["step"]["multipleOf"] == 5
    assert props["day"]["format"] == "date"


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"sku": "ABC-1234", "limit": 0}, "less than the minimum of 1"),
        ({"sku": "ABC-1234", "limit": 101}, "greater than the maximum of 100"),
        ({"sku": "ABC-1234", "limit": "50"}, "got the string '50' — write 50"),  # no coercion
        ({"sku": "ABC-1234", "limit": 5.0}, "expected an integer, got the float 5.0"),
        ({"sku": "abc-1234"}, "does not match"),
        ({"sku": "ABC-1234", "tags": ["a", "b", "c", "d"]}, "expected at most 3 items"),
        ({"sku": "ABC-1234", "discount": 1}, "greater than or equal to the maximum of 1"),
        ({"sku": "ABC-1234", "step": 7}, "is not a multiple of 5"),
        ({"sku": "ABC-1234", "step": 0}, "less than or equal to the minimum of 0"),
        ({"sku": "ABC-1234", "day": "24/08/2026"}, "is not a 'date'"),
    ],
)
def test_violations_are_named(args, problem):
    problems = find_items.problems(args)
    assert problems and problem in str(problems[0]), problems


def test_valid_arguments_pass_the_fast_path():
    fast = compile_fast_check(find_items.parameters_schema)  # what the tool validates with
    assert fast is not None
    # Without "day" (format goes to jsonschema), the fast path answers yes alone.
    assert fast({"sku": "ABC-1234", "limit": 100, "tags": ["x"], "discount": 0.5, "step": 10})
    assert find_items.problems({"sku": "ABC-1234", "step": None, "day": "2026-08-24"}) == []


def test_end_to_end_in_scripts_and_classic_calls(backend):
    with Runtime([find_items], backend=backend) as rt:
        assert run_ok(rt, "find_items('ABC-1234', limit=5)")["limit"] == 5
        bad = rt.run("try:\n    find_items('ABC-1234', limit='5')\nexcept ToolArgumentError as e:"
                     "\n    r = str(e)\nr")
        assert bad.ok and "argument 'limit': expected an integer, got the string '5'" in bad.value
        with rt.session() as s:
            record = s.call_tool("find_items", {"sku": "ABC-1234", "limit": 500})
            assert record.error is not None and record.error.type == "invalid_arguments"
            assert "maximum of 100" in record.error.message


def test_stub_shows_constraints():
    stub = render_stub(find_items)
    assert "limit: Rows per page (>= 1, <= 100)" in stub
    assert r"sku: Stock unit, e.g. 'ABC-1234' (pattern ^[A-Z]{3}-\d{4}$)" in stub
    assert "tags: At most 3 items" in stub
    assert "day: Format: date" in stub


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        (Annotated[str, Field(ge=1)], "minimum applies to numbers"),
        (Annotated[int, Field(pattern="^a")], "pattern applies to strings"),
        (Annotated[int, Field(min_length=1)], "min_length/max_length apply"),
        (Annotated[str, Field(format="no-such-format")], "is not checked"),
        (Annotated[int, Field(ge=5, le=1)], "lower bound 5 is above the upper bound 1"),
        (Annotated[str, Field(pattern="(")], "not a valid regular expression"),
        (Annotated[int, at.Predicate(lambda x: x > 0)], "no JSON Schema equivalent"),
    ],
)
def test_constraints_that_cannot_apply_are_definition_errors(annotation, message):
    with pytest.raises(SchemaError, match=message):
        schema_for_type(annotation)


SCHEMAS = [
    schema_for_type(Annotated[int, Field(ge=-3, lt=7, multiple_of=2)]),
    schema_for_type(Annotated[float | None, Field(gt=-1.5, le=2.5)]),
    schema_for_type(Annotated[str, Field(min_length=1, max_length=4, pattern="b")]),
    schema_for_type(Annotated[list[int], Field(min_length=1, max_length=2)]),
    schema_for_type(list[Annotated[str | int, Field(max_length=2)]] | None),
]
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10) | st.floats(-3, 3, allow_nan=False)
    | st.text("abc", max_size=6),
    lambda inner: st.lists(inner, max_size=4),
    max_leaves=8,
)


@pytest.mark.slow  # a property run (hypothesis)
@pytest.mark.parametrize("index", range(len(SCHEMAS)))
def test_fast_path_agrees_with_jsonschema(index):
    schema = SCHEMAS[index]
    fast = compile_fast_check(schema)
    slow = make_jsonschema_validator(schema)
    assert fast is not None
    seen = {"fast_true": 0}

    @settings(max_examples=300, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(value=st.one_of(VALUES, st.integers(-4, 8), st.floats(-2, 3),
                           st.text("abc", min_size=1, max_size=5),
                           st.lists(st.integers(-4, 8), min_size=1, max_size=3)))
    def check(value: Any) -> None:
        if fast(value):
            seen["fast_true"] += 1
            assert slow.is_valid(value), (schema, value)
        elif type(value) is not float:  # floats may take the slow path (multipleOf)
            assert not slow.is_valid(value) or _needs_slow(schema, value), (schema, value)

    check()
    assert seen["fast_true"] > 0


def _needs_slow(schema: dict[str, Any], value: Any) -> bool:
    """Values the fast path may leave to jsonschema: floats inside lists."""
    return isinstance(value, list) and any(type(v) is float for v in value)
