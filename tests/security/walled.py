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
