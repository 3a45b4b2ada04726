"""The bounds of one frame (``WireBounds``) and the sandbox's own refusals.

The decoder counts values on the bytes before ``json`` builds anything; the
count must be exact for valid JSON whatever its strings and whitespace hold,
or frames would be refused (or let through) wrongly. The attack side is
``tests/security/test_hostile_frames.py``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from toolscript.sandbox.protocol import (
    FrameDecoder,
    FrameError,
    WireBounds,
    count_items,
    decode_body,
    encode_frame,
    nests_deeper,
)

from toolscript import Limits, Runtime, tool
from toolscript.errors import ConfigurationError


def values_in(value: Any) -> int:
    """Containers, keys and scalars of decoded JSON data, counted the slow way."""
    if isinstance(value, dict):
        return 1 + sum(1 + values_in(item) for item in value.values())
    if isinstance(value, list):
        return 1 + sum(values_in(item) for item in value)
    return 1


tricky_text = st.text(alphabet='ab,:[]{}"\\ \n\t\u00e9\u2603', max_size=8)
json_data = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | tricky_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(tricky_text, inner, max_size=4),
    max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(json_data, st.sampled_from([None, 0, 2]), st.booleans())
def test_the_count_of_values_is_exact(value: Any, indent: int | None, ascii_only: bool) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    assert count_items(text.encode()) == values_in(value)


def depth_of(value: Any) -> int:
    """Nesting of containers, the slow way (a scalar: 0)."""
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    return 0


def brackets_in_strings(value: Any) -> bool:
    if isinstance(value, str):
        return any(c in value for c in "[]{}")
    if isinstance(value, dict):
        return any(brackets_in_strings(k) or brackets_in_strings(v) for k, v in value.items())
    if isinstance(value, list):
        return any(map(brackets_in_strings, value))
    return False


@settings(max_examples=300, deadline=None)
@given(json_data, st.integers(0, 6), st.booleans())
def test_the_depth_told_from_the_bytes_is_exact_or_deferred(value: Any, limit: int,
                                                            ascii_only: bool) -> None:
    """From the bytes, the depth check is exact, or says it cannot tell (a string
    holds a bracket): then the decoded value is walked instead."""
    told = nests_deeper(json.dumps(value, ensure_ascii=ascii_only).encode(), limit)
    if told is None:
        assert brackets_in_strings(value)
    else:
        assert told == (depth_of(value) > limit)


def _body(value: Any) -> bytes:
    return json.dumps({"type": "x", "v": value}).encode()


def test_a_frame_at_the_value_bound_passes_and_one_more_is_refused() -> None:
    body = _body([0] * 996)  # the object, 2 keys, "x", the list and 996 zeros: 1001 values
    assert count_items(body) == 1001
    assert decode_body(body, WireBounds(max_items=1001))["v"] == [0] * 996
    with pytest.raises(FrameError, match="values"):
        decode_body(body, WireBounds(max_items=1000))
    # Punctuation inside strings is not a value: a long CSV line is one.
    csv = _body("a,b:[c]{" * 10_000)
    assert decode_body(csv, WireBounds(max_items=10))["v"].startswith("a,b")


def test_depth_at_the_bound_passes_and_one_more_is_refused() -> None:
    at = _body(json.loads("[" * 127 + "]" * 127))  # 127 lists under the message object
    assert decode_body(at)["type"] == "x"
    with pytest.raises(FrameError, match="nested more than 128"):
        decode_body(_body(json.loads("[" * 128 + "]" * 128)))
    with pytest.raises(FrameError, match="nested"):  # told from the bytes, never decoded
        decode_body(b'{"type":"x","v":' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    # Brackets inside strings do not nest.
    assert decode_body(_body("[" * 500))["v"] == "[" * 500


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1e400",
                                     b"1" * 400 + b".0", b"9" * 5000])
def test_numbers_that_are_not_finite_floats_are_refused(literal: bytes) -> None:
    with pytest.raises(FrameError):
        decode_body(b'{"type":"x","v":[' + literal + b"]}")
    assert decode_body(b'{"type":"x","v":1e308}')["v"] == 1e308


def test_the_header_is_refused_before_the_body_is_buffered() -> None:
    decoder = FrameDecoder(bounds=WireBounds(max_bytes=100))
    with pytest.raises(FrameError, match="exceeds"):
        decoder.feed(b"\x00\x00\x01\x00")
    assert decoder.pending == 4  # nothing of a body was waited for
    fine = FrameDecoder(bounds=WireBounds(max_items=3))
    frame = encode_frame({"type": "x"})
    assert fine.feed(frame[:3]) == [] and fine.feed(frame[3:]) == [{"type": "x"}]


def test_limits_size_the_bounds() -> None:
    bounds = Limits(max_message_bytes=1 << 20, max_message_items=500).wire_bounds()
    assert (bounds.max_bytes, bounds.max_items, bounds.max_depth) == (1 << 20, 500, 128)
    with pytest.raises(ConfigurationError):
        Limits(max_message_bytes=65 * 1024 * 1024)
    with pytest.raises(ConfigurationError):
        Limits(max_message_items=0)


@tool(read_only=True)
def size_of(items: list[int]) -> int:
    """How many items."""
    return len(items)


@pytest.mark.parametrize("backend_name", ["subprocess"], indirect=True)
def test_the_sandbox_refuses_what_the_host_would_refuse(make_runtime: Any) -> None:
    """A well-behaved sandbox never breaks the host's bounds: a call or a result
    past them is refused in the sandbox, as an error the script or the caller sees,
    and the sandbox lives on."""
    runtime: Runtime = make_runtime([size_of], limits=Limits(max_message_items=1000,
                                                             max_result_bytes=10_000_000))
    with runtime.session() as session:
        call = session.run("try:\n    size_of(list(range(2000)))\nexcept ToolArgumentError as e:\n"
                           "    r = e.message\nr")
        assert call.ok and "too large to send" in call.value, call.to_dict()
        assert call.tool_calls == []
        many = session.run("try:\n    parallel(size_of, [{'items': [1] * 600}, {'items': [2]}])\n"
                           "except ToolArgumentError as e:\n    r = e.message\nr")
        assert many.ok and "too large to send" in many.value, many.to_dict()
        big = session.run("list(range(2000))")
        assert not big.ok and big.error is not None and big.error.type == "result_limit"
        assert not big.session_restarted
        assert session.run("size_of(list(range(900)))").value == 900
