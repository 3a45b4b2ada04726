"""The compiled fast path: fast_valid(x) must imply jsonschema_valid(x)."""

import enum
import math
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolscript.tools import tool
from toolscript.tools.fastpath import compile_fast_check
from toolscript.tools.validation import ArgsValidator, make_jsonschema_validator


class Unit(enum.Enum):
    PIECE = "piece"
    BOX = "box"


@dataclass
class Item:
    sku: str
    qty: int
    unit: Unit = Unit.PIECE


@dataclass
class Tree:
    name: str
    children: "list[Tree]" = field(default_factory=list)


class Filters(TypedDict, total=False):
    city: str
    min_revenue: float


@tool
def revenue(store_id: str, date: str) -> dict:
    return {}


@tool
def order(
    items: list[Item],
    price: float,
    count: int = 1,
    note: str | None = None,
    mode: Literal["fast", "slow"] = "fast",
    pair: tuple[int, str] = (0, ""),
    tags: set[str] = frozenset(),
    ids: frozenset[int] = frozenset(),
    weights: dict[str, float] = {},  # noqa: B006
    filters: Filters | None = None,
    flag: bool = False,
    anything: Any = None,
    tree: Tree | None = None,
    mixed: Literal[1, True, "1", None] = None,
    num_or_list: float | list[int] = 0,
) -> None:
    return None


HAND_WRITTEN: list[dict[str, Any]] = [
    # required key missing from properties + additionalProperties false: never valid
    {"type": "object", "required": ["a"], "additionalProperties": False},
    # properties + additionalProperties schema
    {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "additionalProperties": {"type": "string"},
    },
    # enum mixing 1, 1.0, True, nan-free floats
    {"enum": [1, 2.5, True, "x", None]},
    {"const": 1.0},
    {"type": "array", "items": {"type": "number"}, "uniqueItems": True},
    {"type": "array", "items": {"type": "integer"}, "uniqueItems": True, "maxItems": 3},
    {"anyOf": [{"type": "string", "pattern": "^a"}, {"type": "integer"}]},
    {"allOf": [{"type": ["integer", "string"]}, {"enum": [1, "a", 2.0]}]},
    {"type": "object", "properties": {"a": {"type": "string"}}},  # extras allowed
    {"oneOf": [{"type": "integer"}, {"type": "number"}]},  # outside the subset
]

SCHEMAS = [revenue.parameters_schema, order.parameters_schema, *HAND_WRITTEN]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=3),
    st.integers(),
    st.sampled_from([0.0, 1.0, 2.5, -1.5, math.nan, math.inf]),
    st.floats(allow_nan=True),
    st.sampled_from(["", "a", "x", "1", "piece", "box", "fast", "slow", "abc"]),
    st.text(max_size=5),
)


def any_values() -> st.SearchStrategy[Any]:
    keys = st.sampled_from(
        [
            "a",
            "b",
            "sku",
            "qty",
            "unit",
            "name",
            "children",
            "city",
            "min_revenue",
            "store_id",
            "date",
            "items",
            "price",
            "x",
        ]
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.tuples(inner, inner),
            st.dictionaries(keys, inner, max_size=4),
        ),
        max_leaves=12,
    )


def from_schema(node: Any, defs: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Mostly-valid values for ``node``, mixed with arbitrary values."""
    if depth > 8 or node is True or not isinstance(node, dict):
        return any_values()
    options: list[st.SearchStrategy[Any]] = []
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        options.append(st.deferred(lambda: from_schema(target, defs, depth + 1)))
    if "enum" in node:
        options.append(st.sampled_from(node["enum"]))
    if "const" in node:
        options.append(st.just(node["const"]))
    for branch in node.get("anyOf", []) + node.get("allOf", []) + node.get("oneOf", []):
        options.append(from_schema(branch, defs, depth + 1))
    types = None if "enum" in node or "const" in node else node.get("type")
    for t in [types] if isinstance(types, str) else types or []:
        if t == "string":
            options.append(st.sampled_from(["a", "abc", "fast", "piece"]) | st.text(max_size=4))
        elif t == "integer":
            options.append(st.integers(-5, 5))
        elif t == "number":
            options.append(st.integers(-5, 5) | st.floats(allow_nan=False, width=32))
        elif t == "boolean":
            options.append(st.booleans())
        elif t == "null":
            options.append(st.none())
        elif t == "array":
            prefix = node.get("prefixItems")
            if prefix:
                options.append(
                    st.tuples(*[from_schema(p, defs, depth + 1) for p in prefix]).map(list)
                )
            items = node.get("items", True)
            if items is False:
                continue
            item_strategy = (
                from_schema(items, defs, depth + 1) if isinstance(items, dict) else any_values()
            )
            options.append(st.lists(item_strategy, max_size=4))
        elif t == "object":
            props = node.get("properties", {})
            required = node.get("required", [])
            optional = [k for k in props if k not in required]
            additional = node.get("additionalProperties", True)

            @st.composite
            def objects(
                draw, props=props, required=required, optional=optional, additional=additional
            ):
                out = {
                    k: draw(from_schema(props[k], defs, depth + 1)) for k in required if k in props
                }
                for k in optional:
                    if draw(st.booleans()):
                        out[k] = draw(from_schema(props[k], defs, depth + 1))
                if draw(st.integers(0, 15)) == 0:
                    out[draw(st.sampled_from(["zzz", "a", "qty"]))] = draw(scalars)
                if isinstance(additional, dict) and draw(st.booleans()):
                    out[draw(st.text(max_size=3))] = draw(from_schema(additional, defs, depth + 1))
                if required and draw(st.integers(0, 15)) == 0:
                    out.pop(draw(st.sampled_from(required)), None)
                return out

            options.append(objects())
    if not options:
        return any_values()
    valid = st.one_of(options)
    # Mostly shaped by the schema, sometimes anything at all.
    return st.integers(0, 40).flatmap(lambda i: any_values() if i == 0 else valid)


@pytest.mark.slow  # a property run (hypothesis)
@pytest.mark.parametrize("index", range(len(SCHEMAS)))
def test_fast_valid_implies_jsonschema_valid(index):
    schema = SCHEMAS[index]
    fast = compile_fast_check(schema)
    slow = make_jsonschema_validator(schema)
    strategy = from_schema(schema, schema.get("$defs", {}))
    counts = {"fast_true": 0, "total": 0}

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(value=strategy)
    def check(value):
        counts["total"] += 1
        if fast is not None and fast(value):
            counts["fast_true"] += 1
            assert slow.is_valid(value), (schema, value)

    check()
    if index < 2:  # the tool schemas: the generator must reach the fast "valid" answer
        assert counts["fast_true"] >= counts["total"] // 20, counts


def _fast_check(t: Any) -> Any:
    """The fast path a tool validates with: compiled from its parameters schema."""
    fast = compile_fast_check(t.parameters_schema)
    assert fast is not None, t.name
    return fast


def test_fast_path_accepts_common_valid_calls():
    """The fast path must actually answer the common cases (not just say 'not sure')."""
    assert _fast_check(revenue)({"store_id": "ST001", "date": "2026-08-24"}) is True
    full = {
        "items": [{"sku": "a", "qty": 2, "unit": "box"}, {"sku": "b", "qty": 1}],
        "price": 3,
        "count": 2,
        "note": None,
        "mode": "slow",
        "pair": [1, "x"],
        "tags": ["a", "b"],
        "ids": [1, 2],
        "weights": {"a": 1.5, "b": 2},
        "filters": {"city": "x"},
        "flag": True,
        "anything": [{"x": object}],
        "tree": {"name": "r", "children": [{"name": "c", "children": []}]},
        "mixed": True,
        "num_or_list": [1, 2],
    }
    fast = _fast_check(order)
    assert fast(full) is True
    assert fast({"items": [], "price": 1.5}) is True


@pytest.mark.parametrize(
    "args",
    [
        {"store_id": "a"},
        {"store_id": "a", "date": "b", "extra": 1},
        {"store_id": 1, "date": "b"},
        {"store_id": True, "date": "b"},
        ["a", "b"],
        None,
    ],
)
def test_fast_path_is_not_sure_about_invalid_calls(args):
    assert _fast_check(revenue)(args) is False


def test_fast_path_edge_cases_fall_back():
    fast = _fast_check(order)
    base = {"items": [], "price": 1}
    assert fast({**base, "count": 1.0}) is False
    assert fast({**base, "price": True}) is False
    assert fast({**base, "tags": ["a", "a"]}) is False
    assert fast({**base, "ids": [1, True]}) is False
    assert fast({**base, "mixed": 1.0}) is False
    assert fast({**base, "pair": [1, "a", 3]}) is False
    assert fast({**base, "items": ({"sku": "a", "qty": 1},)}) is False  # tuple, not list


def test_unsupported_root_compiles_to_none():
    assert compile_fast_check({"type": "string", "format": "date"}) is None
    assert compile_fast_check({"not": {"type": "string"}}) is None
    assert compile_fast_check({"$ref": "https://example.com/x"}) is None


def test_valid_arguments_never_reach_jsonschema(monkeypatch):
    """The fast path answers valid calls by itself (its speed is measured in
    benchmarks/, never asserted here): jsonschema runs only for failures."""
    args = {"store_id": "ST001", "date": "2026-08-24"}
    assert _fast_check(revenue)(args) is True

    def refuse(*a, **k):
        raise AssertionError("jsonschema was consulted for valid arguments")

    for method in ("check", "problems", "is_valid"):  # every way into jsonschema
        monkeypatch.setattr(ArgsValidator, method, refuse)
    revenue.validate(args)
    with pytest.raises(AssertionError, match="consulted"):  # invalid ones do reach it
        revenue.validate({"store_id": 1, "date": "2026-08-24"})
