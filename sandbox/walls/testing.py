"""Tests only: a server that also runs *unrestricted* code, to show the walls from inside.

The sandbox server loads this module only when started with ``--test-hooks``
(a command-line flag the host passes only for ``SubprocessBackend(
test_hooks=True)``, which nothing but the test suite sets). A script can
never reach it: scripts cannot choose their process's command line, and
without the flag the server refuses the ``test_exec`` message like any
unknown one. The process is walled exactly as in production (same startup,
same :func:`~toolscript.sandbox.walls.apply`); only the audit hook, a
separate layer, is left out so that the OS walls are seen on their own.

``{"type": "test_exec", "code": str}`` runs ``code`` with the real ``exec``
in a fresh namespace and answers ``{"type": "test_result", "ok": bool,
"value": <the namespace's "result">, "error": str | None}``.
"""

from __future__ import annotations

import json
import signal  # noqa: F401 - loaded before the walls, as an escaped script would find it
import socket  # noqa: F401
import subprocess  # noqa: F401
import traceback
from typing import Any

from ..server import SandboxServer


class TestHookServer(SandboxServer):
    """:class:`SandboxServer` plus the ``test_exec`` message."""

    def handle(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """Handle ``test_exec`` here, everything else as production does."""
        if message.get("type") != "test_exec":
            return super().handle(message)
        namespace: dict[str, Any] = {"__name__": "__test__"}
        try:
            exec(compile(str(message.get("code", "")), "<test_exec>", "exec"), namespace)
        except BaseException as exc:  # reported to the test, never raised
            return {"type": "test_result", "ok": False, "value": None,
                    "error": f"{type(exc).__name__}: {exc}",
                    "traceback": traceback.format_exc(limit=5)}
        value = json.loads(json.dumps(namespace.get("result"), default=repr))
        return {"type": "test_result", "ok": True, "value": value, "error": None}
