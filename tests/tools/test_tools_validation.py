"""Argument validation: messages a model can act on, no coercion."""

import enum
import pickle
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from toolscript.tools import ArgumentError, Problem, tool
from toolscript.tools.validation import ArgsValidator, render_path


@tool(read_only=True)
def get_daily_revenue(store_id: str, date: str) -> dict:
    """Revenue of one store on one day."""
    return {"store_id": store_id, "date": date}


class Unit(enum.Enum):
    PIECE = "piece"
    BOX = "box"


@dataclass
class Item:
    sku: str
    qty: int
    unit: Unit = Unit.PIECE


@tool
def order(
    items: list[Item],
    price: float,
    count: int = 1,
    note: str | None = None,
    mode: Literal["fast", "slow"] = "fast",
    pair: tuple[int, str] = (0, ""),
    tags: set[str] = frozenset(),
) -> dict:
    """Place an order."""
    return {}


def error_of(t, args) -> ArgumentError:
    with pytest.raises(ArgumentError) as info:
        t.validate(args)
    return info.value


def test_message_like_the_spec():
    err = error_of(get_daily_revenue, {"date": 5})
    assert err.message == (
        "get_daily_revenue(): argument 'date': expected a string, got the integer 5 "
        "— write '5'; missing required argument 'store_id' (a string)"
    )
    assert str(err) == err.message
    assert err.tool == "get_daily_revenue"
    assert err.problems == [
        Problem("date", "expected a string, got the integer 5 — write '5'"),
        Problem("store_id", "missing required argument 'store_id' (a string)", "missing"),
    ]


def test_unexpected_argument_suggests_close_name_or_lists_valid():
    err = error_of(get_daily_revenue, {"store_id": "a", "date": "d", "dat": "x"})
    assert err.message == (
        "get_daily_revenue(): unexpected argument 'dat': did you mean 'date'? "
        "(accepted arguments: date, store_id)"
    )
    err = error_of(get_daily_revenue, {"store_id": "a", "date": "d", "zzz": 1})
    assert "unexpected argument 'zzz' (accepted arguments: date, store_id)" in err.message
    assert err.problems[0].kind == "unexpected"


def test_nested_path_enum_and_missing_field():
    err = error_of(
        order,
        {
            "items": [
                {"sku": "a", "qty": 1},
                {"sku": "b", "qty": "2", "unit": "crate"},
                {"qty": 1},
            ],
            "price": 1.0,
        },
    )
    paths = {p.path: p for p in err.problems}
    assert paths["items[1].qty"].reason == "expected an integer, got the string '2' — write 2"
    assert paths["items[1].unit"].reason == "expected one of 'piece', 'box', got 'crate'"
    assert paths["items[2].sku"].kind == "missing"
    assert "missing required field 'items[2].sku' (a string)" in err.message
    assert "argument 'items[1].qty': expected an integer, got the string '2'" in err.message


def test_literal_enum_violation():
    err = error_of(order, {"items": [], "price": 1, "mode": "medium"})
    assert err.message == "order(): argument 'mode': expected one of 'fast', 'slow', got 'medium'"


def test_optional_type_violation_lists_both_types():
    err = error_of(order, {"items": [], "price": 1, "note": 5})
    assert err.message == (
        "order(): argument 'note': expected a string or None, got the integer 5 — write '5'"
    )


def test_tuple_length_and_set_uniqueness():
    err = error_of(order, {"items": [], "price": 1, "pair": [1, "a", 2]})
    assert "argument 'pair': expected at most 2 items, got 3" in err.message
    err = error_of(order, {"items": [], "price": 1, "pair": [1]})
    assert "argument 'pair': expected at least 2 items, got 1" in err.message
    err = error_of(order, {"items": [], "price": 1, "tags": ["a", "a"]})
    assert "argument 'tags': items must be unique" in err.message


def test_no_coercion_string_is_not_integer():
    err = error_of(order, {"items": [], "price": 1, "count": "50"})
    assert err.message == (
        "order(): argument 'count': expected an integer, got the string '50' — write 50"
    )


def test_float_is_not_integer_even_when_whole():
    err = error_of(order, {"items": [], "price": 1, "count": 50.0})
    assert "argument 'count': expected an integer, got the float 50.0 — write 50" in err.message


def test_int_accepted_for_number():
    order.validate({"items": [], "price": 3})
    order.validate({"items": [], "price": 3.5})


def test_bool_refused_for_int_and_number():
    err = error_of(order, {"items": [], "price": True, "count": False})
    assert "argument 'price': expected a number, got the boolean True" in err.message
    assert "argument 'count': expected an integer, got the boolean False" in err.message


def test_string_number_refused_for_number():
    err = error_of(order, {"items": [], "price": "9.5"})
    assert "argument 'price': expected a number, got the string '9.5' — write 9.5" in err.message


def test_arguments_not_an_object():
    err = error_of(get_daily_revenue, ["a", "b"])
    assert err.message.startswith("get_daily_revenue(): arguments must be an object")


def test_anyof_reports_the_branch_that_matched_the_shape():
    @tool
    def f(item: Item | None = None) -> None:
        pass

    err = error_of(f, {"item": {"sku": "a"}})
    assert err.message == "f(): missing required field 'item.qty' (an integer)"
    err = error_of(f, {"item": 5})
    assert err.message == "f(): argument 'item': 5 does not match any of: Item, 'null'"


def test_long_values_are_truncated_in_messages():
    err = error_of(get_daily_revenue, {"store_id": "a", "date": ["x" * 50] * 100})
    assert len(err.message) < 200
    assert "got a list of 100 items" in err.message
    err = error_of(get_daily_revenue, {"store_id": "a", "date": 10**100})
    assert len(err.message) < 200
    assert "..." in err.message


def test_problems_method_and_valid_args():
    assert get_daily_revenue.problems({"store_id": "a", "date": "b"}) == []
    assert [p.path for p in get_daily_revenue.problems({})] == ["store_id", "date"]


def test_argument_error_pickles():
    err = error_of(get_daily_revenue, {})
    clone = pickle.loads(pickle.dumps(err))
    assert clone.message == err.message and clone.problems == err.problems


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        ([], "(root)"),
        (["a"], "a"),
        (["items", 2, "qty"], "items[2].qty"),
        (["m", "x y"], "m['x y']"),
    ],
)
def test_render_path(parts, expected):
    assert render_path(parts) == expected


def test_validator_without_fast_path_still_validates():
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"s": {"type": "string", "not": {"const": "xbc"}}},
        "required": ["s"],
        "additionalProperties": False,
    }
    v = ArgsValidator(schema)
    assert v.fast is not None  # the object compiles, the "not" node is "not sure"
    assert v.fast({"s": "abc"}) is False
    assert v.is_valid({"s": "abc"})
    assert not v.is_valid({"s": "xbc"})
    assert v.problems({"s": "xbc"})[0].path == "s"
