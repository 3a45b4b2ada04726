"""Approval integrity, attacked: what a hook, a policy or a person approves is what runs.

The rule under attack: the approver sees the final arguments (after
binding, defaults and conversion), and nothing runs that it did not see.
Each test is written as the attack that would break it, with variants, on
every backend (``make_runtime``) unless the attack only exists in one place
(a compromised sandbox process; the CLI's terminal).
"""

from __future__ import annotations

import dataclasses
import enum
import io
import json
import os
import pty
import select
import subprocess
import sys
import threading
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, ConfigDict, field_validator
from toolscript.runtime.approval.hooks import deny_all, named_policy
from toolscript.runtime.approval.policies import Policy
from toolscript.runtime.approval.prompt import TerminalApproval, format_request, show_value
from toolscript.runtime.backends.subprocess import SubprocessBackend
from toolscript.runtime.cli.main import approval_from_name
from toolscript.runtime.runtime import Runtime

from toolscript import (
    ConfigurationError,
    Decision,
    Field,
    Inject,
    Limits,
    ToolCallRequest,
    tool,
)

LIMITS = Limits(tool_timeout_s=5.0, wall_time_s=10.0)
RECEIVED: list[tuple[str, Any]] = []
"""What the tools below were really called with (tool name, arguments)."""


def _ran(name: str) -> list[Any]:
    return [args for tool_name, args in RECEIVED if tool_name == name]


@pytest.fixture(autouse=True)
def _clear() -> None:
    RECEIVED.clear()


# --- tools an attacker would aim at ------------------------------------------------


@tool
def delete_path(path: str, recursive: bool = True) -> str:
    """Delete a path (recursively unless told otherwise)."""
    RECEIVED.append(("delete_path", {"path": path, "recursive": recursive}))
    return "deleted"


class DeleteOptions(BaseModel):
    """Nested options with a dangerous default."""

    recursive: bool = True
    force: bool = False


@tool
def purge(path: str, options: DeleteOptions) -> str:
    """Purge a path with options."""
    RECEIVED.append(("purge", {"path": path, "options": options.model_dump()}))
    return "purged"


class Recipient(BaseModel):
    """A recipient, normalised by pydantic (strip + lower) and tagged by a validator
    that must run exactly once (a second conversion would tag twice)."""

    model_config = ConfigDict(str_strip_whitespace=True, str_to_lower=True)
    address: str
    cc_boss: bool = True

    @field_validator("address")
    @classmethod
    def tag(cls, value: str) -> str:
        return value + "#v"


@tool
def mail(to: Recipient, body: str = "") -> str:
    """Send a mail to a recipient."""
    RECEIVED.append(("mail", {"to": to.model_dump(), "body": body}))
    return "sent"


class Mode(enum.Enum):
    """How a transfer runs."""

    NORMAL = "normal"
    EXPRESS = "express"


@dataclasses.dataclass
class Fees:
    """Fees of a transfer (a dataclass with a default)."""

    waive: bool = False
    cents: int = 30


@tool
def transfer(amount: Annotated[float, Field(ge=0, le=1000)], fees: Fees,
             mode: Mode = Mode.EXPRESS) -> str:
    """Transfer an amount."""
    RECEIVED.append(("transfer", {"amount": amount, "fees": dataclasses.asdict(fees),
                                  "mode": mode.value}))
    return "moved"


@tool
def refund(order: str, amount: Annotated[float, Field(ge=0, le=1000)]) -> float:
    """Refund an order."""
    RECEIVED.append(("refund", {"order": order, "amount": amount}))
    return amount


@tool
def store(key: str, value: Any, meta: dict[str, Any] | None = None) -> str:
    """Store any JSON value."""
    RECEIVED.append(("store", {"key": key, "value": value, "meta": meta}))
    return "stored"


@tool
def whoami(note: str, user: Annotated[str, Inject("user_id")],
           token: Annotated[str, Inject("api_token", redact=True)]) -> str:
    """Act as the current user."""
    RECEIVED.append(("whoami", {"note": note, "user": user, "token": token}))
    return user


TOOLS = [delete_path, purge, mail, transfer, refund, store, whoami]
CONTEXT = {"user_id": "u-42", "api_token": "s3cret-token"}


class Recorder:
    """A hook that records what it was shown and answers with ``decide``."""

    def __init__(self, decide: Any = True) -> None:
        self.seen: list[ToolCallRequest] = []
        self.decide = decide

    def __call__(self, request: ToolCallRequest) -> Any:
        self.seen.append(request)
        return self.decide(request) if callable(self.decide) else self.decide


def runtime_for(make_runtime: Any, approve: Any) -> Any:
    return make_runtime(TOOLS, approve=approve, limits=LIMITS, context=CONTEXT)


# --- 1. defaults and conversions come before approval -------------------------------


DENY_RECURSIVE = Policy([{"tool": "delete_path", "action": "deny", "when": {"recursive": True}},
                         {"tool": "purge", "action": "deny",
                          "when": {"options.recursive": True}}], default="allow")


@pytest.mark.parametrize("call, denied", [
    ("delete_path('/data')", True),                       # the default is True: left out
    ("delete_path('/data', True)", True),
    ("delete_path(path='/data', recursive=True)", True),
    ("delete_path('/data', recursive=False)", False),
    ("purge('/data', {})", True),                         # nested pydantic default
    ("purge('/data', {'force': True})", True),
    ("purge('/data', {'recursive': False})", False),
])
def test_a_deny_rule_sees_defaults_left_out(make_runtime: Any, call: str, denied: bool) -> None:
    runtime = runtime_for(make_runtime, DENY_RECURSIVE)
    result = runtime.run(f"try:\n    r = {call}\nexcept ToolDenied as e:\n    r = 'denied'\nr")
    assert result.ok, result.to_dict()
    assert (result.value == "denied") is denied
    ran = RECEIVED
    if denied:
        assert ran == []  # nothing ran that the policy refused
    else:
        assert len(ran) == 1


@pytest.mark.parametrize("address", [
    "  CEO@Corp.Example ", "ceo@corp.example", "CEO@CORP.EXAMPLE", "\tceo@corp.example\n",
])
def test_normalisation_happens_before_the_exact_rule(make_runtime: Any, address: str) -> None:
    """pydantic strips and lowers: the exact rule sees what the tool would get."""
    policy = Policy([{"tool": "mail", "action": "deny", "compare": "exact",
                      "when": {"to.address": "ceo@corp.example#v"}}], default="allow")
    runtime = runtime_for(make_runtime, policy)
    result = runtime.run(f"try:\n    r = mail({{'address': {address!r}}})\n"
                         "except ToolDenied:\n    r = 'denied'\nr")
    assert result.ok and result.value == "denied", result.to_dict()
    assert _ran("mail") == []


def test_the_hook_the_record_and_the_tool_see_one_value(make_runtime: Any) -> None:
    hook = Recorder()
    runtime = runtime_for(make_runtime, hook)
    result = runtime.run("[mail({'address': '  Ann@Corp.Example '}),"
                         " transfer(12.5, {'cents': 0}),"
                         " delete_path('/tmp/x')]")
    assert result.ok, result.to_dict()
    shown = [dict(r.args) for r in hook.seen]
    assert shown == [
        {"to": {"address": "ann@corp.example#v", "cc_boss": True}, "body": ""},
        {"amount": 12.5, "fees": {"waive": False, "cents": 0}, "mode": "express"},
        {"path": "/tmp/x", "recursive": True},
    ]
    # the validator ran once: no second conversion between approval and the call
    assert [args for _, args in RECEIVED] == shown
    assert [record.args for record in result.tool_calls] == shown


def test_changing_the_hooks_copy_changes_nothing(make_runtime: Any) -> None:
    def meddle(request: ToolCallRequest) -> bool:
        request.args["path"] = "/"
        request.args["recursive"] = False
        return True

    runtime = runtime_for(make_runtime, meddle)
    result = runtime.run("delete_path('/tmp/x', recursive=True)")
    assert result.ok
    assert _ran("delete_path") == [{"path": "/tmp/x", "recursive": True}]
    assert result.tool_calls[0].args == {"path": "/tmp/x", "recursive": True}


def test_arguments_are_shown_in_parameter_order(make_runtime: Any) -> None:
    hook = Recorder()
    runtime = runtime_for(make_runtime, hook)
    result = runtime.run("transfer(mode='normal', fees={}, amount=1)")
    assert result.ok, result.to_dict()
    assert list(hook.seen[0].args) == ["amount", "fees", "mode"]


def test_direct_calls_bind_before_approval_too(make_runtime: Any) -> None:
    runtime = runtime_for(make_runtime, DENY_RECURSIVE)
    with runtime.session() as session:
        left_out = session.call_tool("delete_path", '{"path": "/data"}')
        nested = session.call_tool("purge", {"path": "/data", "options": {}})
        fine = session.call_tool("delete_path", {"path": "/data", "recursive": False})
    assert left_out.approved is False and left_out.args == {"path": "/data", "recursive": True}
    assert nested.approved is False
    assert nested.args["options"] == {"recursive": True, "force": False}
    assert fine.ok and _ran("delete_path") == [{"path": "/data", "recursive": False}]


def test_injected_values_are_shown_to_the_hook_redacted_on_request(make_runtime: Any) -> None:
    hook = Recorder()
    runtime = runtime_for(make_runtime, hook)
    result = runtime.run("whoami('hi')")
    assert result.ok and result.value == "u-42", result.to_dict()
    assert dict(hook.seen[0].injected) == {"user": "u-42", "token": "[redacted]"}
    assert dict(hook.seen[0].args) == {"note": "hi"}  # the script cannot set them
    assert _ran("whoami") == [{"note": "hi", "user": "u-42", "token": "s3cret-token"}]
    with pytest.raises(TypeError):
        hook.seen[0].injected["user"] = "someone-else"  # type: ignore[index]


def test_a_converter_that_raises_refuses_the_call_before_approval(make_runtime: Any) -> None:
    hook = Recorder()
    runtime = runtime_for(make_runtime, hook)
    result = runtime.run("try:\n    mail({'address': 5})\nexcept ToolArgumentError as e:\n"
                         "    r = e.message\nr")
    assert result.ok and "to.address" in result.value, result.to_dict()
    assert hook.seen == [] and _ran("mail") == []


# --- 2. NaN and infinities are invalid arguments everywhere --------------------------


@pytest.mark.parametrize("args", [
    '{"order": "A", "amount": NaN}',
    '{"order": "A", "amount": Infinity}',
    '{"order": "A", "amount": -Infinity}',
    {"order": "A", "amount": float("nan")},
    {"order": "A", "amount": float("inf")},
])
def test_direct_calls_with_non_finite_numbers_are_invalid(make_runtime: Any, args: Any) -> None:
    """A model's classic call: NaN passed Field(ge=0, le=1000) and 'deny amount ge 100'."""
    policy = Policy([{"tool": "refund", "action": "deny", "when": {"amount": {"ge": 100}}}],
                    default="allow")
    runtime = runtime_for(make_runtime, policy)
    with runtime.session() as session:
        record = session.call_tool("refund", args)
    assert not record.ok and record.error is not None
    assert record.error.type == "invalid_arguments", record.error
    assert "finite" in record.error.message and record.approved is None
    assert _ran("refund") == []


@pytest.mark.parametrize("args", [
    {"key": "k", "value": float("nan")},
    {"key": "k", "value": [1, 2, float("-inf")]},
    {"key": "k", "value": {"deep": {"er": [float("nan")]}}},
    {"key": "k", "value": 1, "meta": {"score": float("inf")}},
    '{"key": "k", "value": {"a": [NaN]}}',
])
def test_non_finite_numbers_are_refused_in_untyped_places(make_runtime: Any, args: Any) -> None:
    runtime = runtime_for(make_runtime, None)
    with runtime.session() as session:
        records = session.call_tools([("store", args), ("store", {"key": "ok", "value": 1.5})])
    bad, good = records
    assert bad.error is not None and bad.error.type == "invalid_arguments"
    assert "finite" in bad.error.message
    assert good.ok and _ran("store") == [{"key": "ok", "value": 1.5, "meta": None}]


def test_scripts_cannot_send_non_finite_numbers(make_runtime: Any) -> None:
    runtime = runtime_for(make_runtime, None)
    result = runtime.run(
        "out = []\n"
        "for x in [float('nan'), float('inf'), -float('inf'), 1e308 * 10]:\n"
        "    try:\n"
        "        refund('A', x)\n"
        "        out.append('ran')\n"
        "    except Exception as e:\n"
        "        out.append(type(e).__name__)\n"
        "out")
    assert result.ok, result.to_dict()
    assert "ran" not in result.value
    assert _ran("refund") == []


NAN_SANDBOX = r'''
import json, os, struct, sys
inp = os.fdopen(0, "rb", buffering=0)
out = os.fdopen(1, "wb", buffering=0)
def send(text):
    body = text.encode()
    out.write(struct.pack(">I", len(body)) + body)
    out.flush()
def read():
    size, = struct.unpack(">I", inp.read(4))
    return json.loads(inp.read(size))
send(json.dumps({"type": "ready", "protocol": 2, "pid": os.getpid(), "python": "3"}))
while True:
    message = read()
    kind = message.get("type")
    if kind == "configure":
        send(json.dumps({"type": "configured"}))
    elif kind == "run":
        replies = []
        for number in ("NaN", "Infinity", "-Infinity"):
            send('{"type": "call", "id": 7, "run": "%s", "tool": "refund", '
                 '"args": {"order": "A", "amount": %s}}' % (message["id"], number))
            replies.append(read())
        send(json.dumps({"type": "result", "id": message["id"], "ok": True, "value": replies,
                         "stdout": "", "stdout_truncated": False, "error": None}))
    elif kind == "shutdown":
        break
'''


def test_a_compromised_sandbox_cannot_send_nan(tmp_path: Path) -> None:
    """The wire refuses NaN and infinities: the frame is a protocol error and the tool
    never runs. (A sandbox process that speaks the protocol itself: the same host path
    serves every process backend.)"""
    (tmp_path / "evil.py").write_text(NAN_SANDBOX)
    exe = tmp_path / "python"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} {tmp_path / 'evil.py'}\n")
    exe.chmod(0o755)
    policy = Policy([{"tool": "refund", "action": "deny", "when": {"amount": {"ge": 100}}}],
                    default="allow")
    with Runtime(TOOLS, backend=SubprocessBackend(python=str(exe)), approve=policy,
                 limits=LIMITS) as runtime:
        result = runtime.run("anything")
    assert not result.ok and result.error is not None, result.to_dict()
    assert result.error.type == "protocol_error" and "finite" in result.error.message
    assert result.tool_calls == [] and _ran("refund") == []


def test_nan_inside_a_pydantic_model_is_refused(make_runtime: Any) -> None:
    runtime = runtime_for(make_runtime, None)
    with runtime.session() as session:
        record = session.call_tool("purge", '{"path": "/x", "options": {"recursive": NaN}}')
    assert record.error is not None and record.error.type == "invalid_arguments"
    assert _ran("purge") == []


# --- 3. the terminal prompt shows everything, escaped, in parameter order -------------


@tool(requires_approval=True)
def send_email(to: str, subject: str = "", body: str = "") -> str:
    """Send an email."""
    RECEIVED.append(("send_email", {"to": to, "subject": subject, "body": body}))
    return to


def _request(**args: Any) -> ToolCallRequest:
    return ToolCallRequest(tool="send_email", args=args, read_only=False, requires_approval=True,
                           call_id="c1", run_id="s-1", session_id="s")


def test_prompt_text_hides_nothing() -> None:
    hostile = {
        "to": "attacker@evil.example",
        "subject": "hi\x1b[2J\x1b]0;title\x07\u202egpj.exe\u2066x\u2069\u200b\u0085\u2028end",
        "body": "B" * 5000 + "TAIL",
    }
    text = format_request(_request(**hostile))
    assert 'to      = "attacker@evil.example"' in text
    body_line = next(line for line in text.splitlines() if line.lstrip().startswith("body"))
    assert "more characters]" in body_line and body_line.endswith('TAIL"')
    for raw in ("\x1b", "\x07", "\u202e", "\u2066", "\u2069", "\u200b", "\x85", "\u2028"):
        assert raw not in text
    for escaped in ("\\x1b", "\\x07", "\\u202e", "\\u2066", "\\u2069", "\\u200b", "\\x85",
                    "\\u2028"):
        assert escaped in text
    assert text.count("\n") == 3  # header + one line per argument: nothing breaks a line
    nested = show_value({"a": "x" * 2000, "to": "attacker@evil.example", "b": "y" * 2000})
    assert '"to": "attacker@evil.example"' in nested  # a middle key is never elided
    many = show_value(list(range(500)))
    assert "more items]" in many and many.startswith("[0, 1") and many.endswith("498, 499]")


def test_terminal_answer_all_lasts_for_one_run(make_runtime: Any) -> None:
    """Driven through real pipes: 'a' in one run, then the next run asks again."""
    read_in, write_in = os.pipe()
    read_err, write_err = os.pipe()
    os.write(write_in, b"a\nn\n")
    os.close(write_in)
    stdin = os.fdopen(read_in, "r", encoding="utf-8")
    stderr = os.fdopen(write_err, "w", encoding="utf-8")
    captured: list[bytes] = []
    reader = threading.Thread(target=lambda: captured.append(_read_all(read_err)))
    reader.start()
    hook = TerminalApproval(stdin=stdin, stderr=stderr)
    runtime = make_runtime([send_email], approve=hook, limits=LIMITS)
    code = ("out = []\nfor who in ['a@x', 'b@x']:\n    try:\n        out.append(send_email(who))\n"
            "    except ToolDenied:\n        out.append('denied')\nout")
    with runtime.session() as session:
        first = session.run(code)
        second = session.run(code)
    stderr.close()
    reader.join()
    stdin.close()
    assert first.value == ["a@x", "b@x"], first.to_dict()
    assert second.value == ["denied", "denied"], second.to_dict()  # asked again: 'n', then EOF
    prompts = captured[0].decode()
    assert prompts.count("Approve send_email (") == 3


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            os.close(fd)
            return b"".join(chunks)
        chunks.append(chunk)


TERMINAL_TOOLS = '''
from toolscript import tool

@tool(requires_approval=True)
def send_email(to: str, subject: str = "", body: str = "") -> str:
    """Send an email."""
    return to
'''

TERMINAL_SCRIPT = '''
first = send_email(body="B" * 5000, subject="hi\\x1b[2J\\u202eevil", to="attacker@evil.example")
second = send_email(body="again", to="other@evil.example")
[first, second]
'''


def _pty_read_until(master: int, marker: bytes, sink: bytearray) -> None:
    while marker not in sink:
        ready, _, _ = select.select([master], [], [], 60.0)
        assert ready, f"no prompt; got {bytes(sink)[-400:]!r}"
        try:
            chunk = os.read(master, 65536)
        except OSError:
            chunk = b""
        assert chunk, f"the command ended before {marker!r}: {bytes(sink)[-400:]!r}"
        sink.extend(chunk)


def test_terminal_prompt_in_a_real_pseudo_terminal(tmp_path: Path) -> None:
    """``toolscript run --approve ask`` in a pty: the long body written first does not
    hide ``to``, escapes reach the screen as text, and ``a`` covers the run."""
    (tmp_path / "tools.py").write_text(TERMINAL_TOOLS)
    (tmp_path / "script.py").write_text(TERMINAL_SCRIPT)
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "toolscript", "run", str(tmp_path / "script.py"), "--tools",
         str(tmp_path / "tools.py"), "--approve", "ask", "--backend", "inprocess", "--json"],
        stdin=slave, stdout=slave, stderr=slave, cwd=tmp_path, close_fds=True)
    os.close(slave)
    seen = bytearray()
    try:
        _pty_read_until(master, b"in this run: ", seen)
        os.write(master, b"a\n")
        _pty_read_until(master, b'"tool_calls"', seen)
        _pty_read_until(master, b"\n}", seen)
    finally:
        process.wait(timeout=60)
        os.close(master)
    screen = seen.decode("utf-8", "replace")
    prompt = screen[screen.index("Approve send_email"):screen.index("in this run: ")]
    lines = prompt.splitlines()
    assert [line.split("=")[0].strip() for line in lines[1:4]] == ["to", "subject", "body"]
    assert '"attacker@evil.example"' in lines[1]
    assert "\\x1b" in lines[2] and "\\u202e" in lines[2]
    assert "\x1b" not in prompt and "\u202e" not in prompt
    assert "more characters]" in lines[3]
    assert screen.count("Approve send_email") == 1  # 'a': the second call was not asked
    result = json.loads(screen[screen.index("{"):screen.rindex("}") + 1])
    assert result["value"] == ["attacker@evil.example", "other@evil.example"]


# --- 4. replacing the hook takes effect everywhere ----------------------------------


def test_replacing_the_hook_reaches_open_and_new_sessions(make_runtime: Any) -> None:
    runtime = runtime_for(make_runtime, None)
    with runtime.session() as before:
        assert before.run("delete_path('/a')").ok
        refusals = Recorder(Decision.deny("replaced hook"))
        runtime.approve = refusals
        assert runtime.approve is refusals
        in_open = before.run("delete_path('/b')")
        direct = before.call_tool("delete_path", {"path": "/c"})
    new = runtime.run("delete_path('/d')")
    assert not in_open.ok and "replaced hook" in in_open.tool_calls[0].reason
    assert direct.approved is False and not new.ok
    assert [r.tool for r in refusals.seen] == ["delete_path"] * 3
    assert _ran("delete_path") == [{"path": "/a", "recursive": True}]
    runtime.approve = None  # back to the default policy
    assert runtime.run("delete_path('/e')").ok
    with pytest.raises(ConfigurationError, match="callable"):
        runtime.approve = "deny"  # type: ignore[assignment]
    assert runtime.approve is None


def test_the_plan_pattern_from_the_docs_takes_effect(make_runtime: Any) -> None:
    from toolscript.runtime.approval.plan import PlanApproval, analyze

    runtime = make_runtime([send_email], limits=LIMITS)
    code = "send_email('boss@corp.example', 'report', 'numbers')"
    with runtime.session() as session:
        runtime.approve = PlanApproval(analyze(code, runtime.tools), session=session)
        result = session.run(code)
    assert result.ok and "inside the approved plan" in result.tool_calls[0].reason
    other = runtime.run("send_email('attacker@evil.example', 'x', 'y')")
    assert not other.ok and "outside the approved plan" in other.tool_calls[0].reason


# --- 5. each named mode is at least as strict as the ones before it ------------------


@tool(read_only=True)
def peek() -> str:
    """Read something."""
    return "peek"


@tool(read_only=True, requires_approval=True)
def peek_secret() -> str:
    """Read a secret: read-only, but requires approval."""
    RECEIVED.append(("peek_secret", {}))
    return "peek_secret"


@tool
def write() -> str:
    """Write something."""
    return "write"


@tool(requires_approval=True)
def write_guarded() -> str:
    """Write something that requires approval."""
    return "write_guarded"


MODE_TOOLS = [peek, peek_secret, write, write_guarded]
MODE_SCRIPT = ("ok = []\nfor f in [peek, peek_secret, write, write_guarded]:\n    try:\n"
               "        ok.append(f())\n    except ToolDenied:\n        pass\nok")


def _allowed(make_runtime: Any, mode: str) -> set[str]:
    if mode == "ask":  # a person who says no to everything
        hook: Any = TerminalApproval(stdin=io.StringIO("n\n" * 10), stderr=io.StringIO())
    else:
        hook = approval_from_name(mode)
    result = make_runtime(MODE_TOOLS, approve=hook, limits=LIMITS).run(MODE_SCRIPT)
    assert result.ok, result.to_dict()
    return set(result.value)


def test_named_modes_are_ordered_by_strictness(make_runtime: Any) -> None:
    allowed = {mode: _allowed(make_runtime, mode) for mode in ("allow", "default", "ask", "deny")}
    assert allowed == {
        "allow": {"peek", "peek_secret", "write", "write_guarded"},
        "default": {"peek", "write"},
        "ask": {"peek"},
        "deny": {"peek"},
    }
    assert allowed["deny"] <= allowed["ask"] <= allowed["default"] <= allowed["allow"]
    assert _ran("peek_secret") == [{}]  # only under allow
    assert named_policy("deny") is deny_all
