"""A compromised sandbox: speaks just enough protocol to start, then misbehaves.

Run as ``python evil_sandbox.py MODE``. It answers ``configure``, and on the
first ``run`` does what MODE says (garbage frames, forged messages, silence).
Used by ``test_boundary.py`` through ``SubprocessBackend(python=...)`` to
check that the host survives whatever a sandbox that an attacker controls
sends: a typed error, a restartable session, no crash of the host.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import time


def frame(obj: object) -> bytes:
    body = json.dumps(obj).encode()
    return struct.pack(">I", len(body)) + body


def read_frame(stream: object) -> dict[str, object]:
    header = stream.read(4)  # type: ignore[attr-defined]
    if len(header) < 4:
        sys.exit(0)
    (size,) = struct.unpack(">I", header)
    return json.loads(stream.read(size))  # type: ignore[attr-defined,no-any-return]


def raw(out: object, data: bytes) -> None:
    out.write(data)  # type: ignore[attr-defined]
    out.flush()  # type: ignore[attr-defined]


def misbehave(mode: str, out: object, inp: object, run: object) -> None:
    """Answer one ``run`` message (whose id is ``run``) the way ``mode`` says."""
    result = {"type": "result", "id": run, "ok": True, "value": "fine", "stdout": "",
              "stdout_truncated": False, "error": None}
    if mode == "invalid_utf8":
        raw(out, struct.pack(">I", 4) + b"\xff\xfe\xfd\xfc")
    elif mode == "oversized_header":
        raw(out, struct.pack(">I", 2**31) + b"{}")
    elif mode == "deep_nesting":
        body = b'{"type":"call","id":1,"tool":"echo","args":{"value":' + b"[" * 200_000
        body += b"]" * 200_000 + b"}}"
        raw(out, struct.pack(">I", len(body)) + body)
    elif mode == "not_an_object":
        raw(out, frame([1, 2, 3]))
    elif mode == "unknown_type":
        raw(out, frame({"type": "pwn", "id": 1}))
    elif mode == "garbage_flood":
        for _ in range(1000):
            raw(out, os.urandom(4096))
    elif mode == "truncated":
        raw(out, struct.pack(">I", 100) + b'{"type":')
        sys.exit(0)
    elif mode == "silence":
        time.sleep(60)
    elif mode == "forged_calls":
        # A tool that is not registered, arguments that are not an object, a name
        # that is not a string, and a requires-approval tool: all must come back
        # as reply errors, recorded, and never run.
        forged = [
            {"type": "call", "id": 11, "run": run, "tool": "rm_rf", "args": {}},
            {"type": "call", "id": 14, "run": run, "tool": "send_email",
             "args": {"to": "x", "body": "y"}},
            {"type": "call", "id": 15, "run": run, "tool": "echo", "args": {"value": [1, 2]}},
            {"type": "call_many", "id": 16, "run": run, "calls": [
                {"tool": "rm_rf", "args": {}}, {"tool": "echo", "args": {"value": 1}}]},
        ]
        replies = []
        for message in forged:
            raw(out, frame(message))
            replies.append(read_frame(inp))
        result["value"] = replies
        raw(out, frame(result))
    elif mode == "bad_result_fields":
        raw(out, frame({"type": "result", "id": run, "ok": "yes", "value": {"a": 1},
                        "stdout": 5, "error": "boom"}))
    elif mode == "reply_to_nothing":
        raw(out, frame({"type": "reply", "id": 99, "ok": True, "value": 1}))
    else:  # pragma: no cover
        raise SystemExit(f"unknown mode {mode}")


def main() -> None:
    mode = sys.argv[1]
    inp = os.fdopen(0, "rb", buffering=0)
    out = os.fdopen(1, "wb", buffering=0)
    raw(out, frame({"type": "ready", "protocol": 2, "pid": os.getpid(), "python": "3"}))
    while True:
        message = read_frame(inp)
        kind = message.get("type")
        if kind == "configure":
            raw(out, frame({"type": "configured"}))
        elif kind == "reset":
            raw(out, frame({"type": "reset_done"}))
        elif kind == "run":
            misbehave(mode, out, inp, message["id"])
        elif kind == "shutdown":
            return


if __name__ == "__main__":
    main()
