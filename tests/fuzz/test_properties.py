"""Property-based tests (hypothesis) of the wire protocol, the policy compiler
and interpreter, and schema validation: no crash, no hang, no escape.

The same targets drive the coverage-guided atheris harnesses in ``fuzz/``
(see ``fuzz/README.md``); ``test_atheris_bounded.py`` runs them briefly.
"""

from __future__ import annotations

import json
import os
import string
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "fuzz"))

import targets
from toolscript.sandbox.guards import AbortState, Guards
from toolscript.sandbox.policy import (
    PLAIN_DUNDER_READS,
    PolicyViolation,
    compile_script,
)
from toolscript.sandbox.protocol import (
    FrameDecoder,
    FrameError,
    decode_body,
    encode_frame,
)

pytestmark = pytest.mark.slow  # excluded by the fast loop: -m 'not slow'

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=5)
    | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=30,
)
messages = st.dictionaries(st.text(max_size=8), json_values, max_size=5).map(
    lambda d: {**d, "type": "call"})


@SETTINGS
@given(messages, st.lists(st.integers(min_value=0, max_value=10_000), max_size=6))
def test_frames_round_trip_in_any_chunking(message: dict[str, Any], cuts: list[int]) -> None:
    data = encode_frame(message) * 2
    decoder = FrameDecoder()
    received: list[dict[str, Any]] = []
    start = 0
    for cut in [*sorted(c % (len(data) + 1) for c in cuts), len(data)]:
        received += decoder.feed(data[start:cut])
        start = cut
    assert received == [json.loads(json.dumps(message))] * 2
    assert decoder.pending == 0


@SETTINGS
@given(st.binary(max_size=2000))
def test_decoder_never_crashes(data: bytes) -> None:
    targets.protocol(data)
    try:
        message = decode_body(data)
    except FrameError:
        return
    assert isinstance(message, dict) and isinstance(message["type"], str)


def test_decoder_refuses_deep_nesting() -> None:
    body = b'{"type":"x","a":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with pytest.raises(FrameError):
        decode_body(body)


hidden_dunders = st.sampled_from([
    "__globals__", "__builtins__", "__dict__", "__mro__", "__subclasses__", "__bases__",
    "__base__", "__code__", "__closure__", "__self__", "__func__", "__reduce__",
    "__reduce_ex__", "__getattribute__", "__traceback__", "__context__", "__cause__",
    "__wrapped__", "__defaults__", "__kwdefaults__", "__module__", "__dir__",
]) | st.from_regex(r"__[a-z]{1,10}__", fullmatch=True).filter(
    lambda n: n not in PLAIN_DUNDER_READS and n != "__class__")


@SETTINGS
@given(hidden_dunders, st.sampled_from(["x", "f", "(1)", "''", "math", "len", "type(x)"]))
def test_hidden_dunders_are_refused_statically_and_dynamically(name: str, base: str) -> None:
    with pytest.raises(PolicyViolation):
        compile_script(f"{base}.{name}", frozenset({"math"}))
    guards = Guards({}, AbortState())
    with pytest.raises(AttributeError):
        guards.dynamic_getattr(len, name)
    with pytest.raises(AttributeError):
        guards.getattr("{0." + name + "}", "format")(len)  # a script's '{0.x}'.format(len)


TOKENS = [
    "x", "y", "f", "g", "len", "type", "getattr", "str", "object", "super", "print", "echo",
    "math", "json", "re", "typing", "functools", "'{0.__class__}'", "'{0.x}'", "1", "0", "[]",
    "()", "{}", "'a'", ".", ",", "(", ")", "[", "]", ":", "=", "+", "*", "**", " ", "\n",
    "    ", "lambda", "for", "in", "if", "else", "while", "try", "except", "finally",
    "import", "from", "as", "def", "class", "return", "yield", "with", "format", "__class__",
    "__init__", "_x", "register", "update_wrapper", "dataclass", "Optional", "Counter",
]


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=30).map("".join))
def test_policy_and_interpreter_on_token_soup(source: str) -> None:
    """Compile-time refusal, or a run that ends with a known result shape and
    leaves shared state untouched."""
    targets.policy(source.encode())


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(alphabet=string.printable, max_size=200))
def test_policy_on_random_text(source: str) -> None:
    targets.policy(source.encode())


@SETTINGS
@given(json_values)
def test_validator_only_raises_argument_errors(value: Any) -> None:
    targets.schema(json.dumps(value).encode())
    targets.schema(json.dumps({"order_id": "A", "amount": 1, "items": [value],
                               "address": {"city": value, "zip": "z"}}).encode())


@SETTINGS
@given(st.fixed_dictionaries({
    "order_id": st.text(max_size=10),
    "amount": st.floats(allow_nan=False, allow_infinity=False) | st.integers(),
    "items": st.lists(st.fixed_dictionaries({"sku": st.text(max_size=5)},
                                            optional={"qty": st.integers()}), max_size=3),
    "address": st.fixed_dictionaries({"city": st.text(max_size=5), "zip": st.text(max_size=5)}),
}, optional={"mode": st.sampled_from(["a", "b"]), "note": st.none() | st.text(max_size=5),
             "tags": st.dictionaries(st.text(max_size=4), st.integers(), max_size=3)}))
def test_valid_arguments_pass(args: dict[str, Any]) -> None:
    targets._TOOL.validate(args)
