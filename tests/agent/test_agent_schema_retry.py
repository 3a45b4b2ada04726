"""Pure parts: strict-mode and $defs schema transforms, retry classification and delays."""

from __future__ import annotations

import email.utils
import time

import httpx2
import openai
import pytest
from toolscript.runtime.providers import ModelUnavailableError, RetryPolicy
from toolscript.runtime.providers.retry import call_with_retry, retry_after_seconds
from toolscript.runtime.providers.schema import (
    StrictSchemaUnsupported,
    drop_nulls_for_optional,
    inline_defs,
    strict_schema,
)

NESTED = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "limit": {"type": "integer", "default": 10, "description": "Max rows."},
        "filters": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"field": {"type": "string"}, "op": {"enum": ["eq", "lt"]}},
                "required": ["field"],
            },
        },
        "when": {"$ref": "#/$defs/Range"},
        "tag": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    },
    "required": ["name"],
    "$defs": {
        "Range": {
            "type": "object",
            "properties": {"start": {"type": "string"}, "end": {"type": "string"}},
            "required": ["start"],
        }
    },
}


def test_strict_schema_requires_everything_and_makes_optionals_nullable():
    strict = strict_schema(NESTED)
    assert strict["required"] == ["name", "limit", "filters", "when", "tag"]
    assert strict["additionalProperties"] is False
    props = strict["properties"]
    assert props["name"] == {"type": "string"}
    assert props["limit"] == {"type": ["integer", "null"], "description": "Max rows. (default: 10)"}
    assert props["filters"]["type"] == ["array", "null"]
    item = props["filters"]["items"]
    assert item["required"] == ["field", "op"] and item["additionalProperties"] is False
    assert item["properties"]["op"] == {"anyOf": [{"enum": ["eq", "lt"]}, {"type": "null"}]}
    assert props["when"] == {"anyOf": [{"$ref": "#/$defs/Range"}, {"type": "null"}]}
    assert props["tag"]["anyOf"][-1] == {"type": "null"}
    definition = strict["$defs"]["Range"]
    assert definition["required"] == ["start", "end"]
    assert definition["properties"]["end"]["type"] == ["string", "null"]
    assert NESTED["required"] == ["name"]  # input untouched


def test_strict_schema_refuses_free_form_objects():
    schema = {"type": "object", "properties": {
        "m": {"type": "object", "additionalProperties": {"type": "number"}}}}
    with pytest.raises(StrictSchemaUnsupported, match=r"\$\.m"):
        strict_schema(schema)


def test_inline_defs_replaces_refs_and_drops_defs():
    inlined = inline_defs(NESTED)
    assert "$defs" not in inlined
    assert inlined["properties"]["when"]["properties"]["start"] == {"type": "string"}


def test_inline_defs_refuses_recursion():
    schema = {"$ref": "#/$defs/Node", "$defs": {"Node": {
        "type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}}}
    with pytest.raises(ValueError, match="recursive"):
        inline_defs(schema)


def test_drop_nulls_only_for_optional_parameters_that_reject_null():
    schema = {"type": "object", "properties": {
        "a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": ["string", "null"]}},
        "required": ["a"]}
    assert drop_nulls_for_optional({"a": None, "b": None, "c": None}, schema) == {
        "a": None, "c": None}


def _status_error(status: int, headers: dict[str, str]) -> openai.APIStatusError:
    request = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx2.Response(status, headers=headers, request=request)
    cls = openai.RateLimitError if status == 429 else openai.InternalServerError
    return cls("boom", response=response, body=None)


def test_retry_after_http_date():
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    delay = retry_after_seconds(_status_error(429, {"retry-after": when}))
    assert delay is not None and 25 <= delay <= 31


def test_foreign_exceptions_are_not_swallowed():
    def boom() -> None:
        raise KeyError("mine")

    with pytest.raises(KeyError):
        call_with_retry(boom, RetryPolicy(sleep=lambda s: None), "openai")


def test_backoff_grows_and_is_capped():
    policy = RetryPolicy(base_delay_s=1, max_delay_s=3)
    delays = [policy.backoff(n) for n in range(1, 6)]
    assert 1 <= delays[0] <= 1.25 and 2 <= delays[1] <= 2.5
    assert all(d <= 3 * 1.25 for d in delays)


def test_exhausted_retries_chain_the_sdk_error():
    attempts = []

    def failing() -> None:
        attempts.append(1)
        raise _status_error(503, {})

    with pytest.raises(ModelUnavailableError) as info:
        call_with_retry(failing, RetryPolicy(max_retries=1, sleep=lambda s: None), "openai")
    assert len(attempts) == 2
    assert isinstance(info.value.__cause__, openai.InternalServerError)
