"""The host stays bounded whatever a script sends, on every backend.

* ``rt.run()`` returns a result for anything a script does: tool results too
  big to encode, arguments nested too deep to describe, exceptions whose
  ``__str__`` raises, loops or returns a ``str`` subclass - and no script
  object reaches host code;
* argument validation is bounded (sizes, depth, a linear ``uniqueItems``);
* ``parallel()`` batches end at the run's deadline and stop starting calls as
  soon as the run is stopped (``ToolAuthorizationError``, Ctrl-C, an approval
  hook's ``ApprovalRequired``);
* sessions do not share a pool a hanging session can fill, abandoned tool
  threads are capped and counted;
* records keep a bounded amount of argument bytes, and error messages are
  capped and carry no host paths or tracebacks.

Counts, not clocks: queued calls are shown never to have started by counting
the calls that did.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from host_helpers import plain_json
from toolscript.runtime.approval.hooks import ToolCallRequest
from toolscript.runtime.backends.subprocess import SubprocessBackend

import toolscript
from toolscript import Limits, RunResult, Runtime, tool
from toolscript.errors import ApprovalRequired, ToolAuthorizationError

pytestmark = pytest.mark.usefixtures("host_intact")

HOST_DIR = str(Path(toolscript.__file__).resolve().parent.parent)
"""Where the package lives on this host: no message may name it."""


class Gate:
    """Counts the calls that started; holds them until released (never a sleep)."""

    def __init__(self) -> None:
        self.started = 0
        self.lock = threading.Lock()
        self.release = threading.Event()
        self.reached = threading.Event()
        self.target = 0

    def enter(self) -> None:
        with self.lock:
            self.started += 1
            if self.started >= self.target:
                self.reached.set()

    def hold(self) -> None:
        self.enter()
        self.release.wait(60)


@pytest.fixture
def gate() -> Iterator[Gate]:
    made = Gate()
    yield made
    made.release.set()


def _error_type(result: RunResult) -> str | None:
    return result.error.type if result.error else None


# --- 1. rt.run() always returns --------------------------------------------------------


@tool(read_only=True)
def square(x: int) -> int:
    """The square of x."""
    return x * x


@tool(read_only=True)
def count_items(items: list[dict[str, int]]) -> int:
    """How many items."""
    return len(items)


def test_a_result_too_big_to_encode_is_a_tool_error(make_runtime: Callable[..., Runtime]):
    rt = make_runtime([square])
    result = rt.run("try:\n    r = square(10**3000)\nexcept ToolError as e:\n"
                    "    r = [e.type, e.message]\nr")
    assert result.ok, result.error
    assert result.value[0] == "invalid_result"
    assert "4300 digits" in result.value[1]
    assert result.tool_calls[0].value is None  # the record holds no unencodable value
    json.dumps(result.to_dict())  # everything the run returned can be written out


def test_a_deeply_nested_invalid_argument_is_reported(make_runtime: Callable[..., Runtime]):
    rt = make_runtime([count_items])
    code = ("x = 'deep'\nfor i in range(95):\n    x = [x]\n"
            "try:\n    count_items([{'a': x}])\nexcept ToolArgumentError as e:\n"
            "    r = e.message\nr")
    result = rt.run(code)
    assert result.ok, result.error
    assert "count_items()" in result.value and len(result.value) < 2000


HOSTILE_EXCEPTIONS = {
    "str_raises": "class E(Exception):\n    def __str__(self):\n        raise KeyError('k')\n"
                  "raise E()",
    "str_raises_itself": "class E(Exception):\n    def __str__(self):\n        raise self\n"
                         "raise E()",
    "base_exception": "class B(BaseException):\n    def __str__(self):\n        raise B()\n"
                      "raise B()",
    "str_subclass": "class S(str):\n    def __format__(self, spec):\n        return 'F'\n"
                    "    def splitlines(self):\n        while True:\n            pass\n"
                    "class E(Exception):\n    def __str__(self):\n        return S('text')\n"
                    "raise E()",
    "tool_error_fields": "class W:\n    def __str__(self):\n        raise ValueError('no')\n"
                         "e = ToolError(W())\ne.tool = W()\ne.type = W()\nraise e",
    "str_loops": "class E(Exception):\n    def __str__(self):\n        while True:\n"
                 "            pass\nraise E()",
}


@pytest.mark.parametrize("case", sorted(HOSTILE_EXCEPTIONS))
def test_hostile_exceptions_become_typed_errors(make_runtime: Callable[..., Runtime], case: str):
    rt = make_runtime(limits=Limits(wall_time_s=2))
    with rt.session() as session:
        result = session.run(HOSTILE_EXCEPTIONS[case])
        assert not result.ok and result.error is not None
        assert result.error.type in ("script_error", "tool_error", "timeout"), result.error
        assert plain_json(result.error.to_dict()), result.error.details
        assert session.run("1 + 1").value == 2  # the session still works


# --- 2. validation is bounded ---------------------------------------------------------


TAGGED: list[int] = []


@tool
def tag_items(tags: set[str]) -> int:
    """Tag items."""
    TAGGED.append(len(tags))
    return len(tags)


def test_unique_items_check_is_linear(make_runtime: Callable[..., Runtime]):
    """20,000 strings and one int: jsonschema's own check took 24 s here."""
    TAGGED.clear()
    rt = make_runtime([tag_items], limits=Limits(wall_time_s=5))
    code = ("tags = ['t' + str(i) for i in range(20000)] + [7]\n"
            "try:\n    tag_items(tags)\n    r = 'ran'\nexcept ToolArgumentError as e:\n"
            "    r = e.message\nr")
    result = rt.run(code)
    assert result.ok, result.error  # not a timeout: validation finished in the run
    assert "tags[20000]" in result.value
    dupes = rt.run("try:\n    tag_items(['a', 'b', 'a'] + ['x' + str(i) for i in range(5000)])\n"
                   "except ToolArgumentError as e:\n    r = e.message\nr")
    assert dupes.ok and "unique" in dupes.value, dupes
    assert TAGGED == []


def test_arguments_over_the_size_bounds_are_refused_before_validation(
    make_runtime: Callable[..., Runtime],
):
    rt = make_runtime([count_items], limits=Limits(max_argument_items=1000,
                                                  max_argument_depth=10))
    many = rt.run("try:\n    count_items([{'a': i} for i in range(2000)] + ['bad'])\n"
                  "except ToolArgumentError as e:\n    r = e.message\nr")
    assert many.ok and "more than 1000 values" in many.value, many
    deep = rt.run("x = 'bad'\nfor i in range(20):\n    x = [x]\n"
                  "try:\n    count_items([{'a': x}])\nexcept ToolArgumentError as e:\n"
                  "    r = e.message\nr")
    assert deep.ok and "nested more than 10 levels" in deep.value, deep
    fine = rt.run("count_items([{'a': i} for i in range(200)])")
    assert fine.value == 200


def test_validation_stops_at_the_deadline():
    import time

    from toolscript.tools.validation import (
        ArgsValidator,
        ValidationBounds,
        ValidationTimeout,
        swap_bounds,
    )

    validator = ArgsValidator({"type": "object", "properties": {
        "a": {"type": "array", "items": {"not": {"type": "integer"}}}}})
    previous = swap_bounds(ValidationBounds(deadline=time.monotonic() - 1))
    try:
        with pytest.raises(ValidationTimeout):
            validator.check("t", {"a": [1, 2, 3]})
    finally:
        swap_bounds(previous)
    assert validator.problems({"a": [1]})  # without a deadline it decides


def test_compromised_sandbox_deep_arguments(tmp_path: Path):
    """A sandbox an attacker controls sends arguments 110 levels deep (deeper frames
    are refused before decoding: test_hostile_frames.py)."""
    deep = "[" * 110 + '"x"' + "]" * 110
    evil = tmp_path / "evil.py"
    evil.write_text(EVIL_DEEP.replace("DEEP", deep))
    exe = tmp_path / "python"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} {evil}\n")
    exe.chmod(0o755)
    with Runtime([count_items], backend=SubprocessBackend(python=str(exe)),
                 limits=Limits(wall_time_s=5)) as rt:
        result = rt.run("anything")
    assert result.ok, result.error
    reply = result.value
    assert reply["ok"] is False and reply["error"]["type"] == "invalid_arguments"
    assert "nested more than 100 levels" in reply["error"]["message"]


EVIL_DEEP = '''
import json, os, struct, sys
inp = os.fdopen(0, "rb", buffering=0)
out = os.fdopen(1, "wb", buffering=0)
def send(obj):
    body = json.dumps(obj).encode()
    out.write(struct.pack(">I", len(body)) + body)
def recv():
    (size,) = struct.unpack(">I", inp.read(4))
    data = b""
    while len(data) < size:
        data += inp.read(size - len(data))
    return json.loads(data)
send({"type": "ready", "protocol": 2, "pid": os.getpid(), "python": "3"})
while True:
    message = recv()
    if message["type"] == "configure":
        send({"type": "configured"})
    elif message["type"] == "run":
        body = (b'{"type":"call","id":1,"run":"%s","tool":"count_items",'
                b'"args":{"items":[{"a":DEEP}]}}' % message["id"].encode())
        out.write(struct.pack(">I", len(body)) + body)
        reply = recv()
        send({"type": "result", "id": message["id"], "ok": True, "value": reply, "stdout": "",
              "stdout_truncated": False, "error": None})
    elif message["type"] == "shutdown":
        break
'''


# --- 2. parallel() batches end at the deadline ------------------------------------------


def _gated_tool(gate: Gate, read_only: bool = True, timeout_s: float | None = None) -> Any:
    @tool(read_only=read_only, timeout_s=timeout_s, blocking=True)
    def wait_for(i: int) -> int:
        """Hold until the test releases it."""
        gate.hold()
        return i

    return wait_for


def test_a_batch_ends_at_the_wall_limit_and_queued_calls_never_start(
    make_runtime: Callable[..., Runtime], gate: Gate,
):
    rt = make_runtime([_gated_tool(gate)], limits=Limits(wall_time_s=1.5, max_parallel=4,
                                                          tool_timeout_s=30))
    result = rt.run("parallel(wait_for, list(range(640)))")
    assert _error_type(result) in ("timeout", "tool_error"), result.error
    assert gate.started <= 4  # only the first slots ever started
    records = result.tool_calls
    assert len(records) == 640 if records else True
    if records:
        not_started = [r for r in records if r.error and "not started" in r.error.message]
        assert len(not_started) >= 636


def test_a_returned_result_never_changes_when_a_held_call_ends_later(
    make_runtime: Callable[..., Runtime], gate: Gate,
):
    """A ``tool_call`` hook that holds the serving thread past the wall limit:
    the run is given up on and returns; when the hook lets go, the call's
    record must not appear in the result already handed to the programmer
    (its list was the run's own, still being filled)."""
    held = threading.Event()
    left = threading.Event()

    def hold_once(event: Any) -> None:
        if not held.is_set():
            held.set()
            try:  # in process the wall limit may interrupt the wait
                gate.release.wait(60)
            finally:
                left.set()

    @tool(read_only=True)
    def quick(i: int) -> int:
        """Answer at once."""
        return i

    rt = make_runtime([quick], limits=Limits(wall_time_s=1, tool_timeout_s=30),
                      event_hooks={"tool_call": [hold_once]})
    result = rt.run("quick(1)\nparallel(quick, list(range(50)))")
    assert held.is_set()
    assert _error_type(result) == "timeout", result.error
    seen = [record.name for record in result.tool_calls]
    gate.release.set()
    assert left.wait(30)
    rt.run("quick(2)")  # the host is past the held call's bookkeeping
    assert [record.name for record in result.tool_calls] == seen


@pytest.mark.parametrize("script", ["note(1)", "parallel(note, [1, 2])"])
def test_the_wall_limit_never_lands_in_the_hosts_bookkeeping(
    make_runtime: Callable[..., Runtime], script: str,
):
    """In process the wall-limit abort is raised in the script's thread, which also
    runs the host's bookkeeping of its calls. A ``tool_call`` hook still busy when
    the limit passes must finish (the abort waits), and the abort must not be
    taken for a failing audit and raised to the programmer."""
    finished: list[int] = []
    limit = 1.0

    def slow_hook(event: Any) -> None:
        end = time.monotonic() + limit + 0.3
        while time.monotonic() < end:  # pure Python: an abort would land here
            pass
        finished.append(event.record.args["i"])

    @tool
    def note(i: int) -> int:
        """A write: in a batch it runs, and is recorded, on the script's thread."""
        return i

    rt = make_runtime([note], limits=Limits(wall_time_s=limit),
                      event_hooks={"tool_call": [slow_hook]})
    result = rt.run(script)
    assert _error_type(result) == "timeout", result.error
    assert finished[:1] == [1]
    assert [record.name for record in result.tool_calls][:1] == ["note"]


@pytest.mark.parametrize("where", ["approval_hook", "tool"])
def test_the_wall_limit_never_interrupts_host_code_of_a_call(
    make_runtime: Callable[..., Runtime], where: str,
):
    """The approval hook and the tool are host code too; in process they run on
    the script's thread. A pure-Python loop in them that outlasts the wall limit
    must run to its end (its ``finally`` included) and see no abort: the run
    ends ``timeout`` all the same, and the abort lands in the script."""
    limit = 1.0
    finished: list[str] = []
    interrupted: list[str] = []

    def busy(name: str) -> None:
        try:
            end = time.monotonic() + limit + 0.3
            while time.monotonic() < end:  # pure Python: an abort would land here
                pass
        except BaseException as exc:
            interrupted.append(type(exc).__name__)
            raise
        finally:
            finished.append(name)

    def hook(request: ToolCallRequest) -> bool:
        if where == "approval_hook":
            busy("hook")
        return True

    @tool
    def note(i: int) -> int:
        """A write: its approval is asked of the hook."""
        if where == "tool":
            busy("tool")
        return i

    rt = make_runtime([note], limits=Limits(wall_time_s=limit), approve=hook)
    result = rt.run("note(1)\nwhile True:\n    pass")
    assert _error_type(result) == "timeout", result.error
    deadline = time.monotonic() + 10  # a tool past the limit may still be running
    while not finished and time.monotonic() < deadline:
        time.sleep(0.02)
    assert finished == ["hook" if where == "approval_hook" else "tool"]
    assert interrupted == []


def test_a_hanging_session_does_not_starve_another(
    make_runtime: Callable[..., Runtime], gate: Gate,
):
    @tool(read_only=True)
    def quick(i: int) -> int:
        """Answer at once."""
        return i

    gate.target = 64
    rt = make_runtime([_gated_tool(gate), quick],
                      limits=Limits(wall_time_s=20, max_parallel=64, tool_timeout_s=20))
    outcome: list[RunResult] = []
    hog = threading.Thread(target=lambda: outcome.append(
        rt.run("parallel(wait_for, list(range(200)))")))
    hog.start()
    try:
        assert gate.reached.wait(30), "the first session's calls never started"
        other = rt.run("parallel(quick, list(range(32)))")
        assert other.ok, other.error
        assert other.value == list(range(32))
    finally:
        gate.release.set()
        hog.join(60)
    assert outcome and outcome[0].ok


def test_abandoned_threads_are_capped_and_counted(make_runtime: Callable[..., Runtime],
                                                  gate: Gate):
    rt = make_runtime([_gated_tool(gate, timeout_s=0.2)],
                      limits=Limits(max_abandoned_threads=3, max_parallel=16))
    code = ("out = []\nfor i in range(8):\n    try:\n        wait_for(i)\n"
            "    except ToolError as e:\n        out.append(e.type)\nout")
    result = rt.run(code)
    assert result.ok, result.error
    assert result.value == ["timeout"] * 3 + ["overloaded"] * 5
    assert gate.started == 3
    stats = rt.stats()
    assert stats["abandoned_threads"] == 3 and stats["max_abandoned_threads"] == 3
    gate.release.set()
    for _ in range(500):  # the abandoned calls return once released
        if rt.stats()["abandoned_threads"] == 0:
            break
        threading.Event().wait(0.01)
    assert rt.stats()["abandoned_threads"] == 0
    assert rt.stats()["abandoned_total"] == 3


def test_one_run_cannot_take_every_abandoned_thread(make_runtime: Callable[..., Runtime],
                                                    gate: Gate):
    rt = make_runtime([_gated_tool(gate, timeout_s=0.2)],
                      limits=Limits(max_abandoned_threads=10, max_parallel=2))
    code = ("out = []\nfor i in range(4):\n    try:\n        wait_for(i)\n"
            "    except ToolError as e:\n        out.append(e.type)\nout")
    first = rt.run(code)
    second = rt.run(code)
    assert first.value == ["timeout", "timeout", "overloaded", "overloaded"]
    assert second.value == first.value  # another run has its own share
    assert rt.stats()["abandoned_threads"] == 4


# --- 4. a stopped run starts no further call of its batch ----------------------------------


def test_tool_authorization_error_stops_the_batch(make_runtime: Callable[..., Runtime]):
    ran: list[int] = []

    @tool
    def charge(i: int) -> int:
        """Charge (a write)."""
        ran.append(i)
        if i == 1:
            raise ToolAuthorizationError("payment credentials were refused")
        return i

    rt = make_runtime([charge])
    with pytest.raises(ToolAuthorizationError):
        rt.run("parallel(charge, list(range(10)))")
    assert ran == [0, 1]


def test_approval_required_stops_the_batch_before_anything_runs(
    make_runtime: Callable[..., Runtime],
):
    ran: list[int] = []

    @tool
    def send(i: int) -> int:
        """Send (a write)."""
        ran.append(i)
        return i

    def hook(request: ToolCallRequest) -> bool:
        if request.args.get("i") == 3:
            raise ApprovalRequired("a person must look at message 3")
        return True

    rt = make_runtime([send], approve=hook)
    with pytest.raises(ApprovalRequired):
        rt.run("parallel(send, list(range(8)))")
    assert ran == []


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signals reach the main thread only")
@pytest.mark.parametrize("read_only", [True, False], ids=["reads", "writes"])
def test_ctrl_c_stops_the_batch_at_once(make_runtime: Callable[..., Runtime], gate: Gate,
                                        read_only: bool):
    @tool(read_only=read_only, timeout_s=30)
    def step(i: int) -> int:
        """Step i; the first one is interrupted by Ctrl-C."""
        gate.enter()
        if i == 0:
            os.kill(os.getpid(), signal.SIGINT)
        gate.release.wait(60)
        return i

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        rt = make_runtime([step], limits=Limits(max_parallel=2))
        with pytest.raises(KeyboardInterrupt):
            rt.run("parallel(step, list(range(20)))")
    finally:
        signal.signal(signal.SIGINT, previous)
        gate.release.set()
    assert gate.started <= (2 if read_only else 1)


# --- 2. retained arguments and error messages ---------------------------------------------


@tool(requires_approval=True)
def upload(blob: str) -> int:
    """Upload (always denied here: no approval hook)."""
    return len(blob)


def test_records_keep_a_bounded_amount_of_arguments(make_runtime: Callable[..., Runtime]):
    seen: list[int] = []
    rt = make_runtime([upload], limits=Limits(max_retained_args_bytes=1_000_000),
                      audit=lambda record, ctx: seen.append(len(json.dumps(record.args))))
    code = ("big = 'x' * 2_000_000\nfor i in range(10):\n    try:\n        upload(big)\n"
            "    except ToolDenied:\n        pass\nupload('small')")
    result = rt.run(code)
    assert result.error is not None and result.error.details.get("tool_error_type") == "denied"
    big, small = result.tool_calls[:10], result.tool_calls[10]
    assert all(record.args_omitted for record in big)
    expected = json.dumps({"blob": "x" * 2_000_000}, separators=(",", ":"))
    summary = big[0].args
    assert summary["bytes"] == len(expected)
    assert summary["sha256"] == hashlib.sha256(expected.encode()).hexdigest()
    assert summary["prefix"] == expected[:200]
    assert small.args == {"blob": "small"} and not small.args_omitted
    assert min(seen[:10]) > 2_000_000  # the audit hook saw them whole
    assert len(json.dumps(result.to_dict())) < 100_000


@tool
def explode(size: int) -> str:
    """Fail with a very long message."""
    raise ValueError("x" * size)


def test_error_messages_are_capped(make_runtime: Callable[..., Runtime]):
    rt = make_runtime([explode], limits=Limits(max_output_chars=1000))
    caught = rt.run("try:\n    explode(5_000_000)\nexcept ToolError as e:\n"
                    "    r = len(e.message)\nr")
    assert caught.ok and caught.value <= 1000, caught
    uncaught = rt.run("explode(5_000_000)")
    assert uncaught.error is not None and len(uncaught.error.message) <= 1000
    assert len(uncaught.tool_calls[0].error.message) <= 1000  # type: ignore[union-attr]
    own = rt.run("raise ValueError('y' * 5_000_000)")
    assert own.error is not None and len(own.error.message) <= 1000


@tool
def read_config(name: str) -> str:
    """Read a host file (fails the way host code fails)."""
    path = Path(HOST_DIR) / "no-such-dir" / name
    try:
        return path.read_text()
    except OSError as exc:
        raise RuntimeError(f"{exc}\n{traceback.format_exc()}") from exc


def test_messages_carry_no_host_paths_or_tracebacks(make_runtime: Callable[..., Runtime]):
    rt = make_runtime([read_config])
    result = rt.run("read_config('settings.toml')")
    assert result.error is not None
    for text in (result.error.message, result.tool_calls[0].error.message):  # type: ignore[union-attr]
        assert HOST_DIR not in text and "Traceback" not in text and 'File "' not in text
        assert "settings.toml" in text  # the name the script gave is kept


def test_clean_message_rules():
    from toolscript.runtime.calls.messages import clean_message, crash_detail

    text = (f"failed: [Errno 2] No such file: '{HOST_DIR}/x/secret.txt'\n"
            "Traceback (most recent call last):\n"
            f'  File "{HOST_DIR}/runtime/dispatch.py", line 1, in f\n    f()\n'
            "    ^^^\nValueError: boom")
    cleaned = clean_message(text, 1000)
    assert HOST_DIR not in cleaned and "Traceback" not in cleaned
    assert ".../secret.txt" in cleaned and "ValueError: boom" in cleaned
    assert clean_message("GET /v1/users failed", 100) == "GET /v1/users failed"
    assert clean_message("see https://api.example.com/a/b", 100) == (
        "see https://api.example.com/a/b")
    assert len(clean_message("z" * 10_000, 100)) == 100
    assert crash_detail(f"exited with code 1; stderr: x\n  File \"{HOST_DIR}/a.py\", line 3,"
                        " in g\n    g()\nKeyError: 'k'") == (
        "exited with code 1; last error line: KeyError: 'k'")
