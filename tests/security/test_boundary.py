"""The host boundary: what crosses it, what cannot, and a sandbox that lies.

* Arguments that are not JSON data (callables, sets, huge or deep values) are
  refused with a typed error before the host sees them; unknown tools and
  forged tool stubs end at the whitelist.
* The script cannot reach the protocol writer or the approval hook, and the
  sandbox process cannot write stray bytes into the protocol channel.
* The sandbox process inherits nothing from the host environment.
* A compromised sandbox (``evil_sandbox.py``) that sends garbage or forged
  messages gets a typed error and a restarted session; the host never
  raises into the programmer's code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from backend_marks import process_backends
from security_helpers import (
    COMPILE,
    SECURITY_TOOLS,
    Attack,
    Probe,
    limit,
    runtime,
    safe,
    tool_error,
)
from toolscript.runtime.backends.subprocess import SubprocessBackend
from waiting import wait_until

from toolscript import Limits, Runtime

NO_ATTR = runtime("AttributeError")
ARGS = tool_error("invalid_arguments")

ARGUMENTS = [
    Attack("callable_argument", "echo(len)", ARGS),
    Attack("lambda_argument", "echo(lambda: 1)", ARGS),
    Attack("tool_as_argument", "echo(echo)", ARGS),
    Attack("set_argument", "echo({1, 2})", ARGS),
    Attack("nan_argument", "echo(float('nan'))", ARGS),
    Attack("own_object_argument", "class A: pass\necho(A())", ARGS),
    Attack("deep_argument", "x = 1\nfor _ in range(5000):\n    x = [x]\necho(x)",
           limit("tool_error", "recursion_limit")),
    Attack("tuple_becomes_list", "echo((1, 2))", safe([1, 2])),
    Attack("unknown_tool_name", "delete_everything()", runtime("NameError")),
    Attack("forged_stub_unknown",
           "Stub = type(echo)\nfake = Stub('rm_rf', [], True, '', print)\nfake()",
           runtime("TypeError"),
           "type(tool) is a stand-in: no stub can be built with a callback of the script's"),
    Attack("forged_stub_in_parallel",
           "Stub = type(echo)\nfake = Stub('rm_rf', [], True, '', print)\nparallel([(fake, {})])",
           runtime("TypeError"),
           "no forged stub reaches parallel(): the stand-in refuses to build one"),
    Attack("requires_approval_denied", "send_email('a@b.c', 'hi')", tool_error("denied")),
    Attack("stub_private_link", "echo._call_host", NO_ATTR),
    Attack("stub_private_link_getattr", "getattr(echo, '_call_host')", NO_ATTR),
    Attack("parallel_self", "parallel.__self__", COMPILE),
    Attack("parallel_self_getattr", "getattr(parallel, '__self__')", NO_ATTR),
    Attack("parallel_func_walk", "getattr(parallel, '__func__')", NO_ATTR),
    Attack("stub_vars", "vars(echo)", runtime("TypeError")),
    Attack("print_file_descriptor", "print('{\"type\":\"result\"}', file=1)", runtime("TypeError")),
    Attack("stdout_object", "import sys\nsys.stdout.write('x')", NO_ATTR),
    Attack("os_write", "import os\nos.write(1, b'x')", runtime("ModuleNotFoundError")),
]


@pytest.mark.parametrize("attack", ARGUMENTS, ids=[a.id for a in ARGUMENTS])
def test_boundary(attack: Attack, probe: Probe, host_intact: None) -> None:
    result = probe.run(attack.code)
    attack.expect.check(result, attack.code)


def test_denied_and_failed_calls_are_recorded(probe: Probe) -> None:
    result = probe.run("try:\n    send_email('a@b.c', 'x')\nexcept ToolDenied as e:\n"
                       "    denied = e.type\ntry:\n    echo(len)\nexcept ToolError as e:\n"
                       "    bad = e.type\n[denied, bad]")
    assert result.value == ["denied", "invalid_arguments"]
    names = [(c.name, c.approved, c.error.type if c.error else None) for c in result.tool_calls]
    # the callable never reached the host (refused in the sandbox), the denial did
    assert ("send_email", False, "denied") in names


def test_huge_argument_is_refused_with_a_typed_error(probe: Probe, backend_name: str) -> None:
    """A 70 MB argument: process backends refuse the frame (64 MB cap) or run out of
    their memory limit first, inprocess
    passes it (no frame) and the result cap stops the echo."""
    result = probe.run("big = 'x' * 70_000_000\ntry:\n    r = echo(big)\n    out = len(r)\n"
                       "except Exception as e:\n    out = type(e).__name__\nout")
    assert result.ok, result.to_dict()
    if backend_name == "inprocess":
        assert result.value == 70_000_000
    else:
        assert result.value in ("FrameError", "ToolArgumentError", "MemoryError"), result.value


def _sandbox_pid(session: Any, backend_name: str) -> int:
    handle = session.sandbox
    if backend_name == "subprocess":
        return int(handle.process.pid)
    out = subprocess.run(["docker", "inspect", "-f", "{{.State.Pid}}", handle.name],
                         capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


# inprocess runs in the host process: it has the host's environment, and
# scripts have no way to read it (no os, no open, no /proc): test_escapes covers that.
@process_backends
def test_sandbox_inherits_no_environment(backend_name: str, make_runtime: Any,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Checked from the host: /proc/<sandbox pid>/environ has no host variable."""
    monkeypatch.setenv("TOOLSCRIPT_CANARY_API_KEY", "sk-canary-secret")
    runtime: Runtime = make_runtime(SECURITY_TOOLS)
    with runtime.session() as session:
        assert session.run("1").ok
        pid = _sandbox_pid(session, backend_name)
        environ = Path(f"/proc/{pid}/environ").read_bytes()
        assert b"sk-canary-secret" not in environ
        assert b"CANARY" not in environ
        if backend_name == "subprocess":
            # nothing but the string hash seed the backend chose (hashseed.py)
            assert environ == f"PYTHONHASHSEED={runtime.backend.hash_seed}\0".encode(), environ
            # stray writes to fd 1 go to stderr, never into the protocol pipe; fd 0 is /dev/null
            assert os.readlink(f"/proc/{pid}/fd/1") == os.readlink(f"/proc/{pid}/fd/2")
            assert os.readlink(f"/proc/{pid}/fd/0") == "/dev/null"
        else:
            env = subprocess.run(["docker", "inspect", "-f", "{{json .Config.Env}}",
                                  session.sandbox.name], capture_output=True, text=True,
                                 check=True).stdout
            assert "canary" not in env.lower()
            names = {item.split("=", 1)[0] for item in json.loads(env) or []}
            # the interpreter reads PYTHON* variables (no -E, so that it honours the seed)
            assert names <= {"PATH", "LANG", "PYTHONHASHSEED", "HOME", "LC_ALL"}, names


def test_script_cannot_read_environment(probe: Probe) -> None:
    for code in ("open('/proc/self/environ').read()", "import os\nos.environ",
                 "getattr(print, '__self__').open('/proc/self/environ')"):
        result = probe.run(code)
        assert not result.ok
        assert "canary" not in json.dumps(result.to_dict(), default=str).lower()


# --- a compromised sandbox ------------------------------------------------------------

EVIL = Path(__file__).with_name("evil_sandbox.py")


def evil_runtime(mode: str, tmp: Path) -> Runtime:
    """A runtime whose "python" starts ``evil_sandbox.py MODE`` (env is empty: absolute paths)."""
    exe = tmp / "python"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} {EVIL} {mode}\n")
    exe.chmod(0o755)
    return Runtime(SECURITY_TOOLS, backend=SubprocessBackend(python=str(exe)),
                   limits=Limits(wall_time_s=1.0))


@pytest.mark.parametrize("mode, error_type", [
    ("invalid_utf8", "protocol_error"),
    ("oversized_header", "protocol_error"),
    ("deep_nesting", "protocol_error"),
    ("not_an_object", "protocol_error"),
    ("unknown_type", "protocol_error"),
    ("reply_to_nothing", "protocol_error"),
    ("garbage_flood", "protocol_error"),
    ("truncated", "sandbox_crashed"),
    ("silence", "timeout"),
    ("bad_result_fields", "protocol_error"),
])
def test_compromised_sandbox_gets_a_typed_error(mode: str, error_type: str) -> None:
    """Host-side robustness (subprocess transport; docker uses the same decoder)."""
    with tempfile.TemporaryDirectory() as tmp, evil_runtime(mode, Path(tmp)) as runtime, \
            runtime.session() as session:
        result = session.run("1")
    assert not result.ok
    assert result.error is not None and result.error.type == error_type, result.to_dict()
    if mode != "bad_result_fields":
        assert result.session_restarted
    assert not result.tool_calls


def test_a_sandbox_that_hangs_in_its_first_run_does_not_hold_up_shutdown() -> None:
    """The pool's start is stuck in the sandbox's first run (it never answers): shutting
    the backend down kills that sandbox and ends the refill thread, instead of waiting
    for the start's own timeout with a live process left behind."""
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "python"
        exe.write_text(f"#!/bin/sh\nexec {sys.executable} {EVIL} silence\n")
        exe.chmod(0o755)
        backend = SubprocessBackend(python=str(exe))
        try:
            wait_until(lambda: backend._priming)
            (stuck,) = backend._priming
        finally:
            backend.shutdown()
        assert stuck.process.poll() is not None, "the stuck sandbox outlived shutdown"
        assert backend._pool is not None and not backend._pool._thread.is_alive()


def test_compromised_sandbox_forged_calls_stop_at_the_whitelist() -> None:
    with tempfile.TemporaryDirectory() as tmp, evil_runtime("forged_calls", Path(tmp)) as runtime:
        result = runtime.run("1")
    assert result.ok, result.to_dict()
    # (Calls whose fields have the wrong types are protocol errors: test_hostile_frames.py.)
    errors = [reply.get("error", {}).get("type") for reply in result.value[:3]]
    assert errors == ["unknown_tool", "denied", None]
    records = [(c.name, c.ok, c.approved) for c in result.tool_calls]
    assert ("send_email", False, False) in records  # recorded, denied, never ran
    assert records[-1] == ("echo", True, True)  # the one valid call in call_many
    assert all(not ok for name, ok, _ in records if name != "echo")
