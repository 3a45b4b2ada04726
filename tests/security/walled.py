"""A sandbox walled as in production that also runs unrestricted test code.

``SubprocessBackend(test_hooks=True)`` starts sandboxes with the server's
test flag: the same start-up and OS walls as production, no audit hook, and
the ``test_exec`` message (see ``toolscript.sandbox.walls.testing``), which
runs plain Python inside the sandbox, as code that escaped the restricted
interpreter would.
"""

from __future__ import annotations

import contextlib
import textwrap
from collections.abc import Iterator
from typing import Any

from toolscript.runtime.backends.subprocess import SubprocessBackend

from toolscript import Runtime

ATTEMPT = '''
import ctypes, errno, os
_libc = ctypes.CDLL(None, use_errno=True)

def attempt(fn):
    """'refused: ERRNO' if fn raised OSError, else what it returned (an escape)."""
    try:
        value = fn()
    except OSError as exc:
        return "refused: " + errno.errorcode.get(exc.errno or 0, str(exc))
    return "ALLOWED: " + repr(value)[:100]

def raw(name, *args):
    """A system call by name, past Python and the C library's wrappers."""
    from toolscript.sandbox.walls.seccomp import library
    number = library().resolve(name.encode())
    assert number >= 0, name
    result = _libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in args])
    if result < 0:
        raise OSError(ctypes.get_errno(), name)
    return result
'''


FILL_THREADS = '''
import ctypes, threading
# The smallest stacks, and one malloc arena (each thread's own would reserve 64 MiB of
# the address-space limit): the task budget, not memory, is what runs out.
threading.stack_size(32768)
ctypes.CDLL(None).mallopt(-8, 1)  # M_ARENA_MAX
forever = threading.Event()
held, error, stopped_by = [], "", None
while len(held) < FILL_LIMIT:
    try:
        thread = threading.Thread(target=forever.wait, daemon=True)
        thread.start()
    except BaseException as exc:
        error, stopped_by = str(exc), type(exc).__name__
        break
    held.append(thread)
'''
"""Unrestricted code that starts threads that wait forever until one cannot start (or
``FILL_LIMIT``, to be defined first, are running): ``held`` (the threads), ``forever``
(their event), ``error`` and ``stopped_by`` (what stopped it, "" and None if nothing).
The one thread-exhaustion loop of these tests."""


def fill_threads(limit: int) -> str:
    """:data:`FILL_THREADS` with ``FILL_LIMIT`` = ``limit``."""
    return f"FILL_LIMIT = {limit}\n" + FILL_THREADS


HOSTILE_SERVER = r'''
import gc, json, os, struct, time
import toolscript.sandbox.server as _server_module
from toolscript.sandbox.server import SandboxServer

_server = next(o for o in gc.get_objects() if isinstance(o, SandboxServer))
_link = _server.link
_handle = _server.handle
_send_reply = _server_module.send_reply
_after = []

def frame(obj):
    """A frame of ``obj`` (bytes are sent as the body as they are; NaN allowed)."""
    body = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return struct.pack(">I", len(body)) + body

def send_raw(data):
    _link.writer.write(data)
    _link.writer.flush()

def send(obj):
    send_raw(frame(obj))

def recv():
    def exactly(size):
        data = b""
        while len(data) < size:
            chunk = _link.reader.read(size - len(data))
            if not chunk:
                raise EOFError("host closed the channel")
            data += chunk
        return data
    (size,) = struct.unpack(">I", exactly(4))
    return json.loads(exactly(size))

def hold():
    time.sleep(3600)

SKIP = {"type": "skip"}

_ran = []

def _late_send_reply(writer, reply, bounds):
    if reply is not SKIP:
        _send_reply(writer, reply, bounds)
    if not _ran:  # the reply to this very test_exec
        return
    while _after:
        send_raw(_after.pop(0))
    _server_module.send_reply = _send_reply  # hostile for one run only

def _hostile_handle(message):
    if message.get("type") != "run":
        return _handle(message)
    del _server.handle  # hostile for one run only: the next is served as usual
    _ran.append(True)
    run = message["id"]
    namespace = {
        "run": run, "frame": frame, "send": send, "send_raw": send_raw, "recv": recv,
        "hold": hold, "after": _after.append, "json": json, "os": os, "struct": struct,
        "time": time, "SKIP": SKIP,
        "result": {"type": "result", "id": run, "ok": True, "value": "fine", "stdout": "",
                   "stdout_truncated": False, "error": None},
    }
    exec(message["code"], namespace)
    return namespace["result"]

_server.handle = _hostile_handle
_server_module.send_reply = _late_send_reply
result = "armed"
'''
"""Unrestricted code that turns the sandbox server into a hostile one for one run:
the code of the next ``run`` message runs as plain Python with ``run`` (the run's
id), ``send(obj)``, ``send_raw(bytes)``, ``frame(obj)``, ``recv()``, ``hold()``
and ``after(bytes)`` (written after the run's result), and the server answers
with its ``result`` variable (the ordinary result of run ``run`` by default;
``SKIP``: nothing). Later runs are served as usual."""


def arm(handle: Any) -> None:
    """Make the sandbox behind ``handle`` (any backend's, started with its test
    flag) a hostile server (:data:`HOSTILE_SERVER`)."""
    handle.send({"type": "test_exec", "code": HOSTILE_SERVER})
    reply = handle.recv(30.0)
    assert reply["type"] == "test_result" and reply["ok"], reply
    assert reply["value"] == "armed", reply


class Walled:
    """A production-walled sandbox process that also runs unrestricted test code."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.session = runtime.session()
        assert self.session.run("1").value == 1  # started and configured as in production
        handle = self.session.sandbox
        assert handle is not None
        self.handle = handle

    @property
    def pid(self) -> int:
        """The sandbox's pid, as the host sees it."""
        return int(self.handle.ready_info["pid"])

    @property
    def walls(self) -> dict[str, Any]:
        """The wall report the sandbox sent in its ``ready`` message."""
        report: dict[str, Any] = self.handle.ready_info["walls"]
        return report

    def exec(self, code: str, *, helpers: bool = True) -> Any:
        """Run ``code`` unrestricted in the sandbox; return its ``result`` variable.

        ``helpers``: define ``attempt`` and ``raw`` (:data:`ATTEMPT`) first.
        """
        source = (ATTEMPT if helpers else "") + textwrap.dedent(code)
        self.handle.send({"type": "test_exec", "code": source})
        reply = self.handle.recv(30.0)
        assert reply["type"] == "test_result", reply
        assert reply["ok"], f"{reply['error']}\n{reply.get('traceback', '')}"
        return reply["value"]

    def close(self) -> None:
        """Close the session (the sandbox's process group is killed) and the runtime."""
        self.session.close()
        self.runtime.close()


@contextlib.contextmanager
def walled(**walls: Any) -> Iterator[Walled]:
    """A walled sandbox with ``walls`` settings (every wall by default)."""
    backend = SubprocessBackend(pool_size=0, walls=walls, test_hooks=True)
    sandbox = Walled(Runtime(backend=backend))
    try:
        yield sandbox
    finally:
        sandbox.close()
