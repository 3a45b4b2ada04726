"""Tampered, expired, replayed-twice and foreign continuations are refused clearly."""

from __future__ import annotations

import base64
import json
import time

import pytest
from conftest import KEY, Counter

from toolscript import ContinuationError, Decision, RunResult, tool

SCRIPT = 'a = read(1)\nsend("bob")\na'


@pytest.fixture
def paused(durable_runtime) -> tuple[Counter, RunResult]:
    counter = Counter()
    with durable_runtime(counter.tools()) as runtime:
        result = runtime.run(SCRIPT)
    assert result.status == "paused"
    return counter, result


def _allow(result: RunResult) -> dict[str, Decision]:
    return {result.pending[0].id: Decision.allow()}


def _refused(excinfo: pytest.ExceptionInfo[ContinuationError], reason: str, text: str) -> None:
    assert excinfo.value.reason == reason
    assert text in str(excinfo.value)


def test_tampered_payload_is_refused(durable_runtime, paused) -> None:
    counter, result = paused
    prefix, payload, mac = result.continuation.split(".")
    data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    data["script"] = 'send("mallory")'
    forged = base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()
    with pytest.raises(ContinuationError) as excinfo:
        durable_runtime(counter.tools()).resume(f"{prefix}.{forged}.{mac}", _allow(result))
    _refused(excinfo, "tampered", "signature does not match")
    assert counter.count("send") == 0


def test_garbage_and_other_key_are_refused(durable_runtime, paused) -> None:
    counter, result = paused
    with pytest.raises(ContinuationError) as excinfo:
        durable_runtime(counter.tools()).resume("not a continuation", _allow(result))
    _refused(excinfo, "tampered", "not a toolscript continuation")
    other = durable_runtime(counter.tools(), continuation_key="another-key-0123456789abcdef")
    with pytest.raises(ContinuationError) as excinfo:
        other.resume(result.continuation, _allow(result))
    _refused(excinfo, "tampered", "another continuation key")


def test_expired_is_refused(durable_runtime) -> None:
    counter = Counter()
    with durable_runtime(counter.tools(), continuation_ttl_s=0.05) as runtime:
        result = runtime.run(SCRIPT)
    time.sleep(0.2)
    with pytest.raises(ContinuationError) as excinfo:
        durable_runtime(counter.tools()).resume(result.continuation, _allow(result))
    _refused(excinfo, "expired", "expired")


def test_second_resume_is_refused(durable_runtime, paused) -> None:
    counter, result = paused
    assert durable_runtime(counter.tools()).resume(result.continuation, _allow(result)).ok
    with pytest.raises(ContinuationError) as excinfo:
        durable_runtime(counter.tools()).resume(result.continuation, _allow(result))
    _refused(excinfo, "resumed", "already resumed")
    assert counter.count("send") == 1


def test_foreign_session_is_refused(durable_runtime, paused) -> None:
    counter, result = paused
    runtime = durable_runtime(counter.tools())
    with runtime.session() as other, pytest.raises(ContinuationError) as excinfo:
        runtime.resume(result.continuation, _allow(result), session=other)
    _refused(excinfo, "session", "belongs to session")


def test_other_catalog_approval_or_identity_is_refused(durable_runtime, paused) -> None:
    counter, result = paused

    @tool
    def extra() -> int:
        """Another tool."""
        return 1

    with pytest.raises(ContinuationError) as excinfo:
        durable_runtime([*counter.tools(), extra]).resume(result.continuation, _allow(result))
    _refused(excinfo, "catalog", "tool catalog differs")
    with pytest.raises(ContinuationError) as excinfo:
        durable_runtime(counter.tools(), approve=lambda request: True).resume(
            result.continuation, _allow(result))
    _refused(excinfo, "approval", "approval configuration differs")
    with pytest.raises(ContinuationError) as excinfo:
        durable_runtime(counter.tools(), context={"user_id": "mallory"}).resume(
            result.continuation, _allow(result))
    _refused(excinfo, "identity", "injected identity")
    assert counter.count("send") == 0


def test_missing_decision_is_refused(durable_runtime, paused) -> None:
    counter, result = paused
    with pytest.raises(ContinuationError) as excinfo:
        durable_runtime(counter.tools()).resume(result.continuation, {})
    _refused(excinfo, "decision", "no decision for pending call")
    with pytest.raises(ContinuationError):
        durable_runtime(counter.tools()).resume(result.continuation,
                                                {result.pending[0].id: True})  # type: ignore[dict-item]


def test_key_from_the_environment(durable_runtime, monkeypatch, paused) -> None:
    counter, result = paused
    monkeypatch.setenv("TOOLSCRIPT_CONTINUATION_KEY", KEY)
    runtime = durable_runtime(counter.tools(), continuation_key=None)
    assert runtime.resume(result.continuation, _allow(result)).ok
