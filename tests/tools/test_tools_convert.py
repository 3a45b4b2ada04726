"""Results -> JSON data."""

import datetime as dt
import enum
import json
import uuid
from dataclasses import dataclass

import pytest
from toolscript.tools import json_default, to_jsonable


class Color(enum.Enum):
    RED = "red"


@dataclass
class Row:
    store: str
    color: Color
    when: dt.date
    pair: tuple[int, int]


def test_to_jsonable_converts_records():
    row = Row("ST1", Color.RED, dt.date(2026, 8, 24), (1, 2))
    assert to_jsonable({"rows": [row], 1: {"a", "b"} and ["x"]}) == {
        "rows": [{"store": "ST1", "color": "red", "when": "2026-08-24", "pair": [1, 2]}],
        "1": ["x"],
    }


def test_json_default_hook():
    row = Row("ST1", Color.RED, dt.date(2026, 8, 24), (1, 2))
    text = json.dumps({"r": row, "s": {3, 1}, "u": uuid.UUID(int=1)}, default=json_default)
    assert json.loads(text) == {
        "r": {"store": "ST1", "color": "red", "when": "2026-08-24", "pair": [1, 2]},
        "s": [1, 3],
        "u": "00000000-0000-0000-0000-000000000001",
    }


def test_non_json_result_names_the_place():
    with pytest.raises(TypeError, match=r"result\['rows'\]\[1\]: object is not JSON data"):
        to_jsonable({"rows": [1, object()]})
    with pytest.raises(TypeError, match="not JSON data"):
        json.dumps(object(), default=json_default)
