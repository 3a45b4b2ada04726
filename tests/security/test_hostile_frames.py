"""A hostile server: every frame a sandbox could send, from unrestricted code inside it.

Each sandbox here is walled as in production and started with the test flag;
:func:`walled.arm` then makes its server hostile, so that the code of the
next run is plain Python that writes whatever frames it likes on the protocol
channel (see ``walled.HOSTILE_SERVER``) - what code that escaped the restricted
interpreter could do. On subprocess, docker ``isolation="process"`` and docker
``isolation="container"``, for every malformed, oversized, deeply nested, wide,
duplicated, out-of-order, wrong-run, late and non-finite frame:

* ``session.run()`` returns a :class:`RunResult` with the error type the case
  names (``protocol_error`` for anything that breaks the protocol), within its
  wall-clock limit plus a generous constant; it never raises;
* the sandbox that sent the frame is killed, and the next run of the session
  works in a fresh one;
* no tool ran for a refused frame, and no record was built.

Host memory is measured in a child process (``/proc/self/status``) for the
largest frames the protocol lets through its header check; a property test
generates malformed message shapes for the host's validating decoder, and a
few of them end to end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from backend_marks import BACKENDS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from security_helpers import SECURITY_TOOLS
from toolscript.runtime.backends.subprocess import SubprocessBackend
from toolscript.runtime.session import HARD_KILL_GRACE_S
from toolscript.sandbox.protocol import ProtocolViolation
from toolscript.sandbox.wirecheck import sandbox_message
from walled import arm

from toolscript import Limits, RunResult, Runtime, tool

WALL_S = 4.0
LIMITS = Limits(wall_time_s=WALL_S, memory_mb=256, max_tool_calls=100, tool_timeout_s=5.0,
                max_message_bytes=4 * 1024 * 1024, max_message_items=50_000)
"""Small bounds, so that breaking them costs the test little."""

SLACK_S = 15.0
"""Added to the wall limit (and the hard-kill grace) for a generous bound on a run."""

KINDS = ([pytest.param("subprocess", id="subprocess")] if "subprocess" in BACKENDS else []) + (
    [pytest.param(kind, id=kind, marks=pytest.mark.docker)
     for kind in ("docker-process", "docker-container")] if "docker" in BACKENDS else [])


def _backend(kind: str) -> Any:
    if kind == "subprocess":
        return SubprocessBackend(pool_size=0, test_hooks=True)
    from toolscript.runtime.backends.docker.backend import DockerBackend
    from toolscript.runtime.backends.docker.image import DEFAULT_IMAGE

    image = os.environ.get("TOOLSCRIPT_IMAGE", DEFAULT_IMAGE)
    if kind == "docker-process":
        return DockerBackend(image, isolation="process", pool_size=0, test_hooks=True,
                             sessions_per_container=4)
    return DockerBackend(image, pool_size=0, test_hooks=True)


@pytest.fixture(scope="module", params=KINDS)
def hostile_runtime(request: pytest.FixtureRequest) -> Iterator[Runtime]:
    """A runtime per backend kind whose sandboxes accept the test flag's code."""
    if request.param.startswith("docker"):
        request.getfixturevalue("docker_image_tag")
    backend = _backend(request.param)
    runtime = Runtime(tools=SECURITY_TOOLS, backend=backend, limits=LIMITS)
    yield runtime
    runtime.close()
    backend.shutdown()


@dataclass
class Outcome:
    """What one hostile run did, as the host saw it."""

    result: RunResult
    seconds: float
    sandbox_alive: bool
    after: RunResult | None = None
    extra: list[RunResult] = field(default_factory=list)


def attack(runtime: Runtime, code: str, *, then: tuple[str, ...] = ()) -> Outcome:
    """Run ``code`` in an armed sandbox of a new session; then the ``then`` scripts
    (plain ones, each a run of the same session), then a check that it still works."""
    with runtime.session() as session:
        assert session.run("1").value == 1
        handle = session.sandbox
        assert handle is not None
        arm(handle)
        started = time.monotonic()
        result = session.run(textwrap.dedent(code))
        seconds = time.monotonic() - started
        assert isinstance(result, RunResult)
        extra = [session.run(script) for script in then]
        alive = handle.is_alive()
        after = session.run("6 * 7")
        return Outcome(result, seconds, alive, after, extra)


def _error(result: RunResult) -> str | None:
    return result.error.type if result.error else None


def assert_refused(outcome: Outcome, error_type: str = "protocol_error") -> None:
    """The run failed with ``error_type`` in time, its sandbox was killed, and the
    session goes on in a fresh one; no call was recorded."""
    result = outcome.result
    assert not result.ok and _error(result) == error_type, result.to_dict()
    assert result.session_restarted
    assert outcome.seconds < WALL_S + HARD_KILL_GRACE_S + SLACK_S
    assert not outcome.sandbox_alive
    assert outcome.after is not None and outcome.after.value == 42, outcome.after
    assert outcome.after.ok
    json.dumps(result.to_dict())  # what came back is plain data
    assert len(result.error.message) <= LIMITS.max_output_chars  # type: ignore[union-attr]


def _result(value: str) -> str:
    """Code that sends a raw ``result`` frame for this run with ``value`` (JSON text)."""
    return ('send_raw(frame(b\'{"type":"result","id":"%s","ok":true,"value":' + value
            + ',"stdout":"","stdout_truncated":false,"error":null}\' % run.encode()))\nhold()')


def _call(args: str) -> str:
    """Code that sends a raw ``call`` of ``echo`` with ``args`` (JSON text), then waits."""
    return ('send_raw(frame(b\'{"type":"call","id":1,"run":"%s","tool":"echo","args":' + args
            + '}\' % run.encode()))\nhold()')


REFUSED: dict[str, str] = {
    # --- frames that are not JSON objects ------------------------------------------------
    "oversized_header": "send_raw(struct.pack('>I', 2**31) + b'{}')\nhold()",
    "header_over_max_bytes": "send_raw(struct.pack('>I', 5 * 1024 * 1024))\nhold()",
    "body_over_max_bytes": "send(dict(result, value='x' * 5_000_000))\nhold()",
    "invalid_utf8": "send_raw(struct.pack('>I', 4) + b'\\xff\\xfe\\xfd\\xfc')\nhold()",
    "not_json": "send_raw(frame(b'{\"type\": \"result\", '))\nhold()",
    "not_an_object": "send([1, 2, 3])\nhold()",
    "type_not_a_string": "send({'type': 5, 'id': run})\nhold()",
    "no_type": "send({'id': run})\nhold()",
    "garbage_flood": "for _ in range(64):\n    send_raw(os.urandom(4096))\nhold()",
    # --- wide and deep ------------------------------------------------------------------
    "wide_lists": "send(dict(result, value=[[]] * 200_000))\nhold()",
    "wide_strings": "send(dict(result, value=['ab'] * 100_000))\nhold()",
    "wide_object": "send(dict(result, value={'k%d' % i: 0 for i in range(60_000)}))\nhold()",
    "wide_call_args": "send({'type': 'call', 'id': 1, 'run': run, 'tool': 'echo', "
                      "'args': {'value': [0] * 100_000}})\nhold()",
    "deep_200k": _result("[" * 200_000 + "]" * 200_000),
    "deep_129": _result("[" * 129 + "]" * 129),
    "deep_call_args": _call('{"value":' + "[" * 200 + "]" * 200 + "}"),
    # --- numbers that are not finite floats ------------------------------------------------
    "nan_result": _result("NaN"),
    "infinity_result": _result("Infinity"),
    "negative_infinity_call": _call('{"value":-Infinity}'),
    "overflowing_float_call": _call('{"value":1e999}'),
    "overflowing_long_float": _result("1" * 400 + ".5"),
    "huge_integer": _result("9" * 5000),
    # --- messages of the wrong type or shape ----------------------------------------------
    "unknown_type": "send({'type': 'pwn', 'id': run})\nhold()",
    "reply_from_the_sandbox": "send({'type': 'reply', 'id': 1, 'ok': True, 'value': 1})\nhold()",
    "ready_mid_run": "send({'type': 'ready', 'protocol': 2, 'pid': 1, 'python': '3'})\nhold()",
    "configured_mid_run": "send({'type': 'configured'})\nhold()",
    "call_args_a_list": "send({'type': 'call', 'id': 1, 'run': run, 'tool': 'echo', "
                        "'args': [1, 2]})\nhold()",
    "call_args_a_string": "send({'type': 'call', 'id': 1, 'run': run, 'tool': 'echo', "
                          "'args': '{not json'})\nhold()",
    "call_tool_an_object": "send({'type': 'call', 'id': 1, 'run': run, 'tool': {'name': 'echo'},"
                           " 'args': {}})\nhold()",
    "call_id_a_string": "send({'type': 'call', 'id': '1', 'run': run, 'tool': 'echo', "
                        "'args': {}})\nhold()",
    "call_id_a_bool": "send({'type': 'call', 'id': True, 'run': run, 'tool': 'echo', "
                      "'args': {}})\nhold()",
    "call_without_run": "send({'type': 'call', 'id': 1, 'tool': 'echo', 'args': {}})\nhold()",
    "call_extra_field": "send({'type': 'call', 'id': 1, 'run': run, 'tool': 'echo', "
                        "'args': {}, 'approved': True})\nhold()",
    "call_many_calls_a_number": "send({'type': 'call_many', 'id': 1, 'run': run, "
                                "'calls': 5})\nhold()",
    "call_many_junk_calls": "send({'type': 'call_many', 'id': 1, 'run': run, "
                            "'calls': [{'tool': 'echo', 'args': {}}, 'junk', 5]})\nhold()",
    "call_many_call_without_args": "send({'type': 'call_many', 'id': 1, 'run': run, "
                                   "'calls': [{'tool': 'echo'}]})\nhold()",
    "result_ok_a_string": "send(dict(result, ok='yes'))\nhold()",
    "result_stdout_a_number": "send(dict(result, stdout=5))\nhold()",
    "result_error_a_string": "send(dict(result, ok=False, error='boom'))\nhold()",
    "result_error_type_a_number": "send(dict(result, ok=False, "
                                  "error={'type': 5, 'message': 'x'}))\nhold()",
    "result_ok_with_an_error": "send(dict(result, error={'type': 'x', 'message': 'y'}))\nhold()",
    "result_extra_field": "send(dict(result, session_restarted=False))\nhold()",
    "result_missing_field": "r = dict(result)\ndel r['stdout']\nsend(r)\nhold()",
    # --- frames of another run ----------------------------------------------------------
    "result_of_run_1": "send(dict(result, id=1))\nhold()",
    "result_of_another_run": "send(dict(result, id=run + '0'))\nhold()",
    "call_of_another_run": "send({'type': 'call', 'id': 1, 'run': 'f' * 16, 'tool': 'echo', "
                           "'args': {}})\nhold()",
    "call_many_of_another_run": "send({'type': 'call_many', 'id': 1, 'run': 1, "
                                "'calls': []})\nhold()",
}
"""Frames that break the protocol: each ends its run ``protocol_error``."""


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_frame_that_breaks_the_protocol_ends_the_run(hostile_runtime: Runtime,
                                                       case: str) -> None:
    outcome = attack(hostile_runtime, REFUSED[case])
    assert_refused(outcome)
    assert outcome.result.tool_calls == []


ENDED = {
    "silence": ("hold()", "timeout"),
    "trickle": ("send_raw(struct.pack('>I', 1000))\nfor _ in range(600):\n"
                "    send_raw(b' ')\n    time.sleep(0.05)\nhold()", "timeout"),
    "truncated_then_exit": ("send_raw(struct.pack('>I', 100) + b'{\"type\":')\nos._exit(0)",
                            "sandbox_crashed"),
    "exit_mid_run": ("os._exit(3)", "sandbox_crashed"),
    "exit_after_a_call": ("send({'type': 'call', 'id': 1, 'run': run, 'tool': 'echo', "
                          "'args': {'value': 1}})\nos._exit(0)", "sandbox_crashed"),
}
"""Sandboxes that stop answering, slowly or at once."""


@pytest.mark.parametrize("case", sorted(ENDED))
def test_a_sandbox_that_stops_answering_ends_the_run(hostile_runtime: Runtime,
                                                     case: str) -> None:
    code, error_type = ENDED[case]
    assert_refused(attack(hostile_runtime, code), error_type)


def test_a_result_sent_after_the_run_is_refused_by_the_next_run(
        hostile_runtime: Runtime) -> None:
    """Late frames: a second result, and a call, written after the run's own result.
    The run itself ends normally; the next run finds a frame of another run first."""
    for late in ("after(frame(result))",
                 "after(frame({'type': 'call', 'id': 9, 'run': run, 'tool': 'echo', "
                 "'args': {'value': 'late'}}))"):
        outcome = attack(hostile_runtime, late, then=("'second'",))
        assert outcome.result.ok and outcome.result.value == "fine", outcome.result.to_dict()
        second = outcome.extra[0]
        assert _error(second) == "protocol_error", second.to_dict()
        assert "another run" in second.error.message  # type: ignore[union-attr]
        assert second.session_restarted and second.tool_calls == []
        assert not outcome.sandbox_alive
        assert outcome.after is not None and outcome.after.value == 42


def test_duplicated_frames_are_answered_one_by_one(hostile_runtime: Runtime) -> None:
    """The same call twice before reading a reply: the host serves both in order (each
    counts against the budget); a duplicated key keeps its last value, as for every
    JSON reader of the host, so what is checked is what is used."""
    code = """
    call = frame({'type': 'call', 'id': 1, 'run': run, 'tool': 'echo', 'args': {'value': 7}})
    send_raw(call + call)
    replies = [recv(), recv()]
    send_raw(frame(b'{"type":"pwn","type":"result","id":"%s","ok":true,"value":"last",'
                   b'"stdout":"","stdout_truncated":false,"error":null}' % run.encode()))
    result = SKIP
    """
    outcome = attack(hostile_runtime, code)
    assert outcome.result.ok and outcome.result.value == "last", outcome.result.to_dict()
    assert [(c.name, c.ok, c.value) for c in outcome.result.tool_calls] == [
        ("echo", True, 7), ("echo", True, 7)]


def test_a_batch_over_the_budget_is_refused_whole(hostile_runtime: Runtime) -> None:
    """5,000 calls against a budget of 100: one error, no call, no record."""
    code = """
    send({'type': 'call_many', 'id': 1, 'run': run,
          'calls': [{'tool': 'echo', 'args': {'value': i}} for i in range(5_000)]})
    reply = recv()
    send({'type': 'call', 'id': 2, 'run': run, 'tool': 'echo', 'args': {'value': 1}})
    result = dict(result, value=[reply, recv()])
    """
    outcome = attack(hostile_runtime, code)
    result = outcome.result
    assert result.ok, result.to_dict()
    batch, single = result.value
    assert "results" not in batch and batch["ok"] is False
    assert batch["error"]["type"] == "tool_call_limit"
    assert "batch of 5000 calls" in batch["error"]["message"]
    assert single["error"]["type"] == "tool_call_limit"  # the budget is spent
    assert [c.error.type for c in result.tool_calls if c.error] == ["tool_call_limit"]
    assert len(result.tool_calls) == 1


# --- host memory: measured in a child process --------------------------------------------

RSS_CHILD = r'''
import json, sys, textwrap, time
sys.path.insert(0, sys.argv[1])
from walled import arm
from toolscript import Limits, Runtime
from toolscript.runtime.backends.subprocess import SubprocessBackend

def status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024

def sending(head, item, count, tail):
    return textwrap.dedent(f"""
        head = {head!r} % run.encode()
        size = len(head) + {len(item)} * {count} - 1 + {len(tail)}
        send_raw(struct.pack('>I', size) + head)
        send_raw({item!r} * ({count} - 1) + {item[:-1]!r} + {tail!r})
        hold()
    """)

CASES = {
    "wide_60MiB": sending(b'{"type":"result","id":"%s","ok":true,"value":[', b'[],',
                          20_000_000, b'],"stdout":"","stdout_truncated":false,"error":null}'),
    "call_many_1M": sending(b'{"type":"call_many","id":1,"run":"%s","calls":[',
                            b'{"tool":"echo","args":{}},', 1_000_000, b']}'),
    "strings_60MiB": sending(b'{"type":"call","id":1,"run":"%s","tool":"echo","args":{"value":[',
                             b'"ab",', 12_000_000, b']}}'),
}
runtime = Runtime(backend=SubprocessBackend(pool_size=0, test_hooks=True),
                  limits=Limits(wall_time_s=8.0))
with runtime.session() as session:
    session.run("1")
base = status("VmRSS")
report = {"base": base}
for name, code in CASES.items():
    with runtime.session() as session:
        session.run("1")
        arm(session.sandbox)
        started = time.monotonic()
        result = session.run(code)
        report[name] = {"error": result.error.type if result.error else None,
                        "seconds": time.monotonic() - started,
                        "calls": len(result.tool_calls)}
report["peak"] = status("VmHWM")
runtime.close()
print(json.dumps(report))
'''

HOST_BOUND_BYTES = 3 * 64 * 1024 * 1024 + 128 * 1024 * 1024
"""Host memory one frame may cost above the host's own (``docs/threat-model.md``):
three times the largest frame (the read buffer, one copy to count or decode it, the
decoded text) plus about 100 bytes per value of the value bound."""


@pytest.mark.skipif("subprocess" not in BACKENDS, reason="subprocess not under test")
def test_the_largest_frames_leave_host_memory_bounded() -> None:
    """60 MiB of ``[[],[],...]`` took 1.7 GB and 19.7 s; a million calls in one batch
    1.4 GB and 330,000 records. Now each is refused before it is decoded."""
    here = os.path.dirname(__file__)
    child = subprocess.run([sys.executable, "-c", RSS_CHILD, here], capture_output=True,
                           text=True, timeout=300)
    assert child.returncode == 0, child.stderr[-3000:]
    report = json.loads(child.stdout.strip().splitlines()[-1])
    for name in ("wide_60MiB", "call_many_1M", "strings_60MiB"):
        assert report[name]["error"] == "protocol_error", report
        assert report[name]["calls"] == 0, report
        assert report[name]["seconds"] < 8.0 + HARD_KILL_GRACE_S + SLACK_S, report
    assert report["peak"] - report["base"] < HOST_BOUND_BYTES, report


# --- property: malformed shapes -----------------------------------------------------------

RUN = "0123456789abcdef"
VALID = [
    {"type": "call", "id": 3, "run": RUN, "tool": "echo", "args": {"value": 1}},
    {"type": "call_many", "id": 4, "run": RUN, "calls": [{"tool": "echo", "args": {}}]},
    {"type": "result", "id": RUN, "ok": True, "value": [1], "stdout": "", "stdout_truncated": False,
     "error": None},
    {"type": "result", "id": RUN, "ok": False, "value": None, "stdout": "x",
     "stdout_truncated": True, "error": {"type": "script_error", "message": "m", "line": 2}},
]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                               max_size=3),
    max_leaves=8)


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    """A valid message with one field dropped, added or replaced by any JSON value."""
    message = json.loads(json.dumps(draw(st.sampled_from(VALID))))
    action = draw(st.sampled_from(["drop", "add", "replace", "replace_nested"]))
    key = draw(st.sampled_from(sorted(message)))
    if action == "drop":
        del message[key]
    elif action == "add":
        message[draw(st.text(min_size=1, max_size=8))] = draw(json_values)
    elif action == "replace":
        message[key] = draw(json_values)
    else:
        inner = message.get("calls") or message.get("args") or message.get("error")
        if isinstance(inner, list) and inner:
            inner[0] = draw(json_values)
        elif isinstance(inner, dict):
            inner[draw(st.sampled_from(sorted(inner) or ["x"]))] = draw(json_values)
        else:
            message[key] = draw(json_values)
    return message


def _conforms(message: dict[str, Any]) -> bool:
    """The schema, written out a second time, independently of ``wirecheck``."""
    def error_ok(error: Any) -> bool:
        return error is None or (type(error) is dict and type(error.get("type")) is str
                                 and type(error.get("message")) is str)
    kind = message.get("type")
    if kind == "call":
        return (set(message) == {"type", "id", "run", "tool", "args"}
                and type(message["id"]) is int and message["run"] == RUN
                and type(message["tool"]) is str and type(message["args"]) is dict)
    if kind == "call_many":
        return (set(message) == {"type", "id", "run", "calls"} and type(message["id"]) is int
                and message["run"] == RUN and type(message["calls"]) is list
                and all(type(c) is dict and set(c) == {"tool", "args"}
                        and type(c["tool"]) is str and type(c["args"]) is dict
                        for c in message["calls"]))
    if kind == "result":
        return (set(message) == {"type", "id", "ok", "value", "stdout", "stdout_truncated",
                                 "error"}
                and message["id"] == RUN and type(message["ok"]) is bool
                and type(message["stdout"]) is str and type(message["stdout_truncated"]) is bool
                and error_ok(message["error"]) and not (message["ok"] and message["error"]))
    return False


@settings(max_examples=400, deadline=None)
@given(mutated())
def test_the_host_decoder_accepts_exactly_the_schema(message: dict[str, Any]) -> None:
    try:
        checked = sandbox_message(message, RUN)
    except ProtocolViolation as exc:
        assert not _conforms(message), message
        assert len(str(exc)) <= 400
        return
    assert _conforms(message), message
    assert checked is message


@pytest.fixture(scope="module")
def walled_runtime() -> Iterator[Runtime]:
    """One subprocess runtime whose sandboxes accept the test flag's code."""
    with Runtime(tools=SECURITY_TOOLS, backend=SubprocessBackend(pool_size=0, test_hooks=True),
                 limits=LIMITS) as runtime:
        yield runtime


SEND_ONE = """
m = json.loads(TEXT)
for key in ("run", "id"):
    if m.get(key) == "RUN":
        m[key] = run
send(m)
if m.get("type") in ("call", "call_many"):
    result = dict(result, value=recv())
else:
    result = SKIP
"""


@pytest.mark.slow
@pytest.mark.skipif("subprocess" not in BACKENDS, reason="subprocess not under test")
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(message=mutated())
def test_malformed_messages_end_to_end(walled_runtime: Runtime, message: dict[str, Any]) -> None:
    """Generated shapes, sent by a real walled sandbox: a result every time, and a
    protocol error for each that does not fit the schema."""
    placeheld = {key: "RUN" if key in ("run", "id") and value == RUN else value
                 for key, value in message.items()}
    outcome = attack(walled_runtime, SEND_ONE.replace("TEXT", repr(json.dumps(placeheld))))
    assert isinstance(outcome.result, RunResult)
    if _conforms(message):
        return  # still fits the schema: served as usual
    assert_refused(outcome)


# --- the host never sends what it refuses -------------------------------------------------


@tool(read_only=True)
def not_finite(kind: str) -> float:
    """float('nan') or an infinity."""
    return float(kind)


@pytest.mark.parametrize("kind", ["nan", "inf", "-inf"])
def test_a_tool_returning_a_non_finite_float_is_a_clear_error(make_runtime: Any,
                                                              kind: str) -> None:
    runtime = make_runtime([not_finite])
    result = runtime.run(f"try:\n    not_finite({kind!r})\nexcept ToolError as e:\n"
                         "    r = [e.type, e.message]\nr")
    assert result.ok, result.to_dict()
    assert result.value[0] == "invalid_result"
    assert "not a finite number" in result.value[1]
