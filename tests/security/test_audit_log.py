"""The keyed audit log, attacked: forged chains, truncation, reordering, a missing key,
several writer processes, values that cannot be written, and what a line must say
(replays, the plan a commit carried out, injected values, whether the tool acted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Annotated, Any

import pytest
from toolscript.runtime.audit.chain import GENESIS, KEY_ENV, canonical, digest
from toolscript.runtime.audit.log import (
    REDACTED,
    UNLOGGABLE,
    AuditLog,
    verify,
)
from toolscript.runtime.cli.audit import EXIT_BROKEN, EXIT_OK, EXIT_UNREADABLE, EXIT_UNVERIFIED
from toolscript.runtime.cli.main import main as cli_main
from toolscript.runtime.events import ToolCallEvent
from toolscript.runtime.results import RunError, ToolCallRecord
from toolscript.tools import IdempotencyKey, Inject, Injected, tool, two_phase

import toolscript
from toolscript import Decision, Limits
from toolscript.errors import ConfigurationError

KEY = "k" * 8 + "0123456789abcdef0123456789abcdef"
OTHER_KEY = "attacker-guess-0123456789abcdef"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _no_key_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_log(path: Path, count: int = 4, key: str | None = KEY) -> list[str]:
    """A log of ``count`` refunds; returns its lines."""
    with AuditLog(path, key=key) as log:
        for i in range(count):
            log.append({"tool": "refund", "args": {"amount": 10 * i}})
    return path.read_text().splitlines()


def seal_plain(record: dict[str, Any]) -> str:
    """What an attacker without the key can compute: the unkeyed line."""
    record.pop("hash", None)
    body = canonical(record)
    return body[:-1] + ',"hash":"' + digest(body) + '"}'


def reseal_all(text: list[str], edit: Any, key: bytes | None = None) -> list[str]:
    """Edit records and recompute the whole chain (as someone who can write the file)."""
    import hashlib
    import hmac

    out, prev = [], GENESIS
    for number, line in enumerate(text):
        record = json.loads(line)
        record.pop("hash")
        edit(number, record)
        record["prev"] = prev
        body = canonical(record)
        seal = (hmac.new(key, body.encode(), hashlib.sha256).hexdigest() if key
                else digest(body))
        out.append(body[:-1] + ',"hash":"' + seal + '"}')
        prev = seal
    return out


# --- keyed chain ------------------------------------------------------------------------


def test_a_keyed_log_verifies_only_with_its_key(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path)
    records = lines(path)
    assert {r["alg"] for r in records} == {"hmac-sha256"}
    assert len({r["key_id"] for r in records}) == 1
    report = verify(path, key=KEY)
    assert report.ok and report.status == "intact" and report.keyed and report.records == 4
    assert report.head == records[-1]["hash"]
    assert verify(path, key=OTHER_KEY).status == "broken"
    # the key id says which key, not the key
    assert KEY not in path.read_text()


def test_rewriting_a_record_and_recomputing_an_unkeyed_chain_fails_with_the_key(
        tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    text = write_log(path)

    def edit(number: int, record: dict[str, Any]) -> None:
        record.pop("key_id")
        record["alg"] = "sha256"
        if number == 1:
            record["args"]["amount"] = 99_999

    forged = reseal_all(text, edit)
    path.write_text("\n".join(forged) + "\n")
    assert verify(path, key=None).ok  # a consistent unkeyed chain...
    report = verify(path, key=KEY)  # ...is no keyed log
    assert not report.ok and report.broken_line == 1
    assert "not keyed, but a key was given" in report.reason


@pytest.mark.parametrize("forgery", ["plain_sha_keep_alg", "guessed_key", "guessed_key_and_id"])
def test_forged_seals_on_keyed_lines_fail(tmp_path: Path, forgery: str) -> None:
    path = tmp_path / "audit.jsonl"
    text = write_log(path)
    guessed = OTHER_KEY.encode()

    def edit(number: int, record: dict[str, Any]) -> None:
        if number == 2:
            record["args"]["amount"] = -5
        if forgery == "guessed_key_and_id":
            import hashlib
            import hmac

            record["key_id"] = hmac.new(guessed, b"toolscript audit key id",
                                        hashlib.sha256).hexdigest()[:16]

    if forgery == "plain_sha_keep_alg":
        forged = reseal_all(text, edit)
    else:
        forged = reseal_all(text, edit, key=guessed)
    path.write_text("\n".join(forged) + "\n")
    report = verify(path, key=KEY)
    assert not report.ok and report.status == "broken"
    assert report.broken_line == 1
    assert ("HMAC" in report.reason) or ("another key" in report.reason)


def test_one_edited_line_without_rechaining_is_found(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    text = write_log(path)
    text[2] = text[2].replace('"amount":20', '"amount":21')
    path.write_text("\n".join(text) + "\n")
    report = verify(path, key=KEY)
    assert (report.broken_line, report.status) == (3, "broken")
    assert "edited" in report.reason


@pytest.mark.parametrize("tamper", ["swap", "delete", "duplicate", "move_last_first"])
def test_reordering_deleting_or_duplicating_lines_breaks_the_chain(tmp_path: Path,
                                                                   tamper: str) -> None:
    path = tmp_path / "audit.jsonl"
    text = write_log(path, count=5)
    if tamper == "swap":
        text[1], text[2] = text[2], text[1]
    elif tamper == "delete":
        del text[2]
    elif tamper == "duplicate":
        text.insert(3, text[2])
    else:
        text.insert(0, text.pop())
    path.write_text("\n".join(text) + "\n")
    report = verify(path, key=KEY)
    assert not report.ok and report.broken_line is not None


def test_a_line_spliced_from_another_log_with_the_same_key_is_found(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a = write_log(first)
    with AuditLog(second, key=KEY) as log:
        for i in range(4):
            log.append({"tool": "refund", "args": {"amount": 1000 + i}})
    b = second.read_text().splitlines()
    a[2] = b[2]  # a genuine HMAC under the same key, but from another chain
    first.write_text("\n".join(a) + "\n")
    assert verify(first, key=KEY).broken_line in (3, 4)


def test_truncation_is_found_with_head(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path, key=KEY) as log:
        for i in range(5):
            log.append({"tool": "refund", "i": i})
        head = log.head
    monkeypatch.setenv(KEY_ENV, KEY)
    assert cli_main(["audit", "verify", str(path), "--head", head]) == EXIT_OK
    assert "the given --head is in the log" in capsys.readouterr().out
    text = path.read_text().splitlines()
    path.write_text("\n".join(text[:3]) + "\n")
    assert verify(path).ok  # the file alone cannot show a cut at its end...
    assert cli_main(["audit", "verify", str(path), "--head", head]) == EXIT_BROKEN  # ...head can
    out = capsys.readouterr().out
    assert "BROKEN (truncated)" in out and head in out
    # a log that grew after head was taken still contains it
    with AuditLog(path, key=KEY) as log:
        log.append({"tool": "later"})
    assert verify(path, head=lines(path)[1]["hash"]).ok


def test_head_pins_the_prefix_even_of_an_unkeyed_log(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    text = write_log(path, key=None)
    head = json.loads(text[-1])["hash"]

    def edit(number: int, record: dict[str, Any]) -> None:
        if number == 0:
            record["args"]["amount"] = 7

    path.write_text("\n".join(reseal_all(text, edit)) + "\n")
    assert verify(path, key=None).ok
    report = verify(path, key=None, head=head)
    assert not report.ok and report.head_found is False


def test_without_the_key_a_keyed_log_is_never_called_valid(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path)
    report = verify(path)  # TOOLSCRIPT_AUDIT_KEY unset
    assert not report.ok and report.status == "unverified" and report.keyed
    assert cli_main(["audit", "verify", str(path)]) == EXIT_UNVERIFIED
    out = capsys.readouterr().out
    assert out.startswith("NOT VERIFIED") and KEY_ENV in out
    assert cli_main(["audit", "verify", "--no-key", str(path)]) == EXIT_UNVERIFIED
    capsys.readouterr()
    # the links are still checked without the key: a reorder is "broken", not "unverified"
    text = path.read_text().splitlines()
    text[1], text[2] = text[2], text[1]
    path.write_text("\n".join(text) + "\n")
    assert cli_main(["audit", "verify", str(path)]) == EXIT_BROKEN


def test_an_unkeyed_line_appended_to_a_keyed_log_is_found(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    text = write_log(path)
    last = json.loads(text[-1])
    forged = {k: v for k, v in last.items() if k not in ("hash", "key_id")}
    forged.update(alg="sha256", seq=last["seq"] + 1, prev=last["hash"], tool="extra")
    path.write_text("\n".join([*text, seal_plain(forged)]) + "\n")
    report = verify(path, key=None)  # even without the key
    assert report.broken_line == 5 and "unkeyed line in a keyed log" in report.reason


def test_cli_verify_reads_the_key_from_the_environment(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "audit.jsonl"
    monkeypatch.setenv(KEY_ENV, KEY)
    with AuditLog(path) as log:  # the writer reads it too
        log.append({"tool": "t"})
        assert log.keyed
    assert cli_main(["audit", "verify", str(path)]) == EXIT_OK
    out = capsys.readouterr().out
    assert "keyed (HMAC-SHA256, key id" in out
    assert cli_main(["audit", "verify", "--json", str(path)]) == EXIT_OK
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] and data["status"] == "intact" and data["keyed"]
    monkeypatch.setenv(KEY_ENV, "short")
    assert cli_main(["audit", "verify", str(path)]) == EXIT_UNREADABLE
    assert "at least 16" in capsys.readouterr().err


def test_old_unkeyed_logs_still_verify_and_say_so(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "old.jsonl"
    prev, text = GENESIS, []
    for seq in (1, 2):  # the first format: no "alg", plain SHA-256
        line = seal_plain({"v": 1, "seq": seq, "prev": prev, "tool": "x", "args": {}})
        prev = json.loads(line)["hash"]
        text.append(line)
    path.write_text("\n".join(text) + "\n")
    assert cli_main(["audit", "verify", str(path)]) == EXIT_OK
    out = capsys.readouterr().out
    assert "unkeyed" in out and "2 record(s)" in out
    monkeypatch.setenv(KEY_ENV, KEY)
    assert cli_main(["audit", "verify", str(path)]) == EXIT_BROKEN  # with a key: not keyed
    capsys.readouterr()
    assert cli_main(["audit", "verify", "--no-key", str(path)]) == EXIT_OK
    assert "unkeyed" in capsys.readouterr().out


def test_a_file_stays_one_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    keyed, plain = tmp_path / "keyed.jsonl", tmp_path / "plain.jsonl"
    write_log(keyed, count=1)
    write_log(plain, count=1, key=None)
    with pytest.raises(ConfigurationError, match="is a keyed audit log"):
        AuditLog(keyed, key=None)
    with pytest.raises(ConfigurationError, match="another audit key"):
        AuditLog(keyed, key=OTHER_KEY)
    with pytest.raises(ConfigurationError, match="unkeyed audit log"):
        AuditLog(plain, key=KEY)
    with pytest.raises(ConfigurationError, match="at least 16"):
        AuditLog(tmp_path / "new.jsonl", key="short")
    monkeypatch.setenv(KEY_ENV, "")
    with pytest.raises(ConfigurationError, match=KEY_ENV):
        AuditLog(tmp_path / "new.jsonl")  # set but empty is a mistake, not "no key"
    assert verify(keyed, key=KEY).ok and verify(plain, key=None).ok


def test_audit_log_is_exported_from_the_package() -> None:
    assert toolscript.AuditLog is AuditLog
    assert "AuditLog" in toolscript.__all__


# --- several writer processes ----------------------------------------------------------

WRITER = """
import sys
from toolscript.runtime.audit.log import AuditLog
from toolscript.runtime.events import ToolCallEvent
from toolscript.runtime.results import ToolCallRecord

path, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
log = AuditLog(path)
sys.stdout.write("ready\\n")
sys.stdout.flush()
sys.stdin.readline()  # the parent says go to every writer at once
for i in range(count):
    record = ToolCallRecord(f"c{i}", "write_" + name, {"i": i, "pad": "x" * (i % 97)},
                            approved=True, ok=True, value=i)
    log(record, ToolCallEvent(record, "session-" + name, "run-" + name, None))
log.close()
"""


def test_three_writer_processes_on_one_file_stay_one_verifiable_chain(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path, count=2)  # the writers continue an existing keyed log
    env = {**os.environ, KEY_ENV: KEY}
    count = 400
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), name, str(count)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
               for name in ("a", "b", "c")]
    for writer in writers:
        assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    for writer in writers:
        assert writer.wait(120) == 0
    report = verify(path, key=KEY)
    assert report.ok, report
    assert report.records == 2 + 3 * count
    records = lines(path)
    assert [r["seq"] for r in records] == list(range(1, 3 * count + 3))
    for name in ("a", "b", "c"):  # each writer's own lines keep their order
        mine = [r["args"]["i"] for r in records if r["tool"] == f"write_{name}"]
        assert mine == list(range(count))


def test_the_cli_writes_one_chain_from_concurrent_runs(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    tools = tmp_path / "tools.py"
    tools.write_text("from toolscript.tools import tool\n\n@tool(read_only=True)\n"
                     "def square(x: int) -> int:\n    \"\"\"x squared.\"\"\"\n    return x * x\n")
    script = tmp_path / "s.py"
    script.write_text("[square(i) for i in range(60)][-1]\n")
    env = {**os.environ, KEY_ENV: KEY}
    runs = [subprocess.Popen([sys.executable, "-m", "toolscript", "run", str(script),
                              "--tools", str(tools), "--backend", "inprocess",
                              "--audit", str(path)],
                             cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
            for _ in range(3)]
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        assert out.strip() == "3481"
    report = verify(path, key=KEY)
    assert report.ok and report.records == 180


@pytest.mark.parametrize("background", [False, True])
def test_a_forked_child_and_its_parent_share_one_log_object(tmp_path: Path,
                                                            background: bool) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path, key=KEY, background=background)
    _call(log, ToolCallRecord("c0", "before_fork", {}, approved=True, ok=True))
    log.flush()
    go_read, go_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: same AuditLog object, inherited file descriptor
        code = 1
        try:
            os.read(go_read, 1)
            for i in range(300):
                _call(log, ToolCallRecord(f"k{i}", "child", {"i": i}, approved=True, ok=True))
            log.close()
            code = 0
        finally:
            os._exit(code)
    os.write(go_write, b"g")
    for i in range(300):
        _call(log, ToolCallRecord(f"p{i}", "parent", {"i": i}, approved=True, ok=True))
    log.close()
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    report = verify(path, key=KEY)
    assert report.ok, report
    assert report.records == 601


# --- every attempted call gets a line --------------------------------------------------


class Unprintable:
    """An object whose repr and str both raise."""

    def __repr__(self) -> str:
        raise RuntimeError("no repr")

    __str__ = __repr__


def _call(log: AuditLog, record: ToolCallRecord) -> None:
    """Log ``record`` as the dispatcher does, with its call's event."""
    log(record, ToolCallEvent(record, "session-1", "run-1", None))


@pytest.mark.parametrize("background", [True, False])
def test_values_that_cannot_be_written_still_leave_a_line(tmp_path: Path,
                                                          background: bool) -> None:
    path = tmp_path / "audit.jsonl"
    deep: Any = 1
    for _ in range(5000):
        deep = [deep]

    def failing_redaction(args: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("the rule expected another argument")

    log = AuditLog(path, key=KEY, background=background,
                   redact={"secret_tool": failing_redaction})
    calls = [
        ToolCallRecord("c1", "huge_result", {}, approved=True, ok=True, value=10 ** 5000),
        ToolCallRecord("c2", "huge_arg", {"n": 10 ** 5000}, approved=True, ok=True, value=1),
        ToolCallRecord("c3", "deep", {"x": deep}, approved=True, ok=True, value=None),
        ToolCallRecord("c4", "odd", {"x": Unprintable()}, approved=False,
                       reason=Unprintable(),  # type: ignore[arg-type]
                       error=RunError("denied", "no")),
        ToolCallRecord("c5", "secret_tool", {"password": "hunter2-secret"}, approved=True,
                       ok=True, value="ok"),
        ToolCallRecord("c6", "weird_error", {}, approved=True,
                       error=RunError(Unprintable(), Unprintable())),  # type: ignore[arg-type]
    ]
    for record in calls:
        _call(log, record)
    log.close()
    records = lines(path)
    assert [r["call_id"] for r in records] == ["c1", "c2", "c3", "c4", "c5", "c6"]
    assert verify(path, key=KEY).ok
    assert records[0]["result_bytes"] > 4000 and records[0]["outcome"] == "ok"
    assert UNLOGGABLE in records[1]["args"]["n"]  # only the value that failed
    assert UNLOGGABLE in json.dumps(records[2]["args"])
    assert records[3]["outcome"] == "denied"
    assert records[4]["args"] == {UNLOGGABLE: records[4]["args"][UNLOGGABLE]}
    assert "hunter2-secret" not in path.read_text()  # a failed redaction never logs the value
    assert records[5]["tool"] == "weird_error"


def test_a_tool_returning_a_huge_integer_is_logged(tmp_path: Path) -> None:
    @tool(read_only=True)
    def big() -> int:
        """A number too long for str()."""
        return 10 ** 5000

    path = tmp_path / "audit.jsonl"
    with AuditLog(path, key=KEY) as log, \
            toolscript.Runtime([big], backend="inprocess", audit=log) as rt:
        rt.run("x = big()\n1")
    assert [r["tool"] for r in lines(path)] == ["big"]
    assert verify(path, key=KEY).ok


def test_a_late_call_after_close_is_still_written(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path, key=KEY)
    _call(log, ToolCallRecord("c1", "a", {}, approved=True, ok=True))
    log.close()
    _call(log, ToolCallRecord("c2", "b", {}, approved=True, ok=True))  # e.g. a shared log
    log.close()
    assert [r["tool"] for r in lines(path)] == ["a", "b"] and verify(path, key=KEY).ok


def test_buffered_lines_are_sealed_when_flushed(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path, key=KEY, sync="buffer")
    for i in range(10):
        _call(log, ToolCallRecord(f"c{i}", "t", {"i": i}, approved=True, ok=True))
    assert path.read_text() == ""
    other = AuditLog(path, key=KEY)  # another writer appends meanwhile
    other.append({"tool": "other"})
    other.close()
    log.close()
    assert verify(path, key=KEY).records == 11


# --- what a line says ------------------------------------------------------------------

ACTED: list[Any] = []
RELEASE = threading.Event()


@tool(idempotent=True)
def place_order(sku: str, key: IdempotencyKey) -> dict[str, Any]:
    """Place an order (acts once per key)."""
    ACTED.append(sku)
    return {"order": len(ACTED)}


@tool(read_only=True)
def whoami(user_id: Injected[str], api_token: Injected[str],
           session_secret: Annotated[str, Inject("secret", redact=True)]) -> str:
    """The current user."""
    return user_id


@tool(timeout_s=0.3, blocking=True)
def hang() -> None:
    """Blocks until the test releases it (so it times out)."""
    RELEASE.wait(30)


@tool
def explode() -> None:
    """Fails part way."""
    raise RuntimeError("half done")


@tool
def not_json() -> object:
    """Acts, then returns something that is not JSON data."""
    ACTED.append("not_json")
    return object()


@tool(requires_approval=True)
def wire(amount: int) -> str:
    """Needs approval."""
    return "sent"


def refund(order: str, cents: int, card: str) -> dict[str, Any]:
    """Plan a refund."""
    return {"order": order, "cents": cents, "card": card}


def execute_refund(plan: dict[str, Any]) -> str:
    """Carry out a refund plan."""
    ACTED.append(plan)
    return "refunded"


REFUND = two_phase(refund, execute_refund)


@pytest.fixture(autouse=True)
def _reset() -> Any:
    ACTED.clear()
    RELEASE.clear()
    yield
    RELEASE.set()


def test_a_replay_is_told_apart_from_a_second_execution(make_runtime: Any,
                                                        tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path, key=KEY)
    rt = make_runtime([place_order], audit=log)
    result = rt.run("a = place_order('X1', idempotency_key='k1')\n"
                    "b = place_order('X1', idempotency_key='k1')\n"
                    "c = place_order('X2', idempotency_key='k2')\n[a, b, c]")
    assert result.ok, result.error
    rt.close()
    records = lines(path)
    assert [(r["replayed"], r["acted"]) for r in records] == [
        (False, "yes"), (True, "no"), (False, "yes")]
    assert len(ACTED) == 2


def test_a_commit_line_holds_the_plan_that_was_approved(make_runtime: Any,
                                                        tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path, key=KEY, redact={"commit_refund": ["plan.card"]})
    rt = make_runtime([*REFUND], audit=log, approve=lambda request: Decision.allow("ok"))
    result = rt.run("p = prepare_refund('A1', 500, '4111-1111')\n"
                    "commit_refund(p['plan_id'])")
    assert result.ok, result.error
    rt.close()
    prepare, commit = lines(path)
    assert commit["tool"] == "commit_refund"
    assert commit["args"]["plan_id"].startswith("plan_")
    assert commit["plan"] == {"order": "A1", "cents": 500, "card": REDACTED}
    assert ACTED == [{"order": "A1", "cents": 500, "card": "4111-1111"}]
    assert prepare["acted"] == commit["acted"] == "yes"


def test_injected_values_are_logged_and_redactable(make_runtime: Any, tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path, key=KEY, redact={"*": ["api_token"]})
    rt = make_runtime([whoami], audit=log,
                      context={"user_id": "u-42", "api_token": "tok-very-secret",
                               "secret": "sess-very-secret"})
    result = rt.run("whoami()")
    assert result.ok and result.value == "u-42"
    rt.close()
    (record,) = lines(path)
    assert record["args"] == {}
    # an AuditLog rule, or the tool's own Inject(redact=True), hides a value
    assert record["injected"] == {"user_id": "u-42", "api_token": REDACTED,
                                  "session_secret": REDACTED}
    assert "tok-very-secret" not in path.read_text()
    assert "sess-very-secret" not in path.read_text()
    # the programmer's result keeps host-only values out of to_dict()
    assert "injected" not in result.tool_calls[0].to_dict()
    assert "tok-very-secret" not in json.dumps(result.to_dict())


def test_outcomes_say_whether_the_tool_may_have_acted(make_runtime: Any,
                                                      tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path, key=KEY)
    rt = make_runtime([hang, explode, not_json, wire], audit=log,
                      limits=Limits(tool_timeout_s=5))
    script = "\n".join(
        f"try:\n    {call}\nexcept ToolError:\n    pass"
        for call in ("hang()", "explode()", "not_json()", "wire(5)", "wire('five')")
    )
    result = rt.run(script + "\n1")
    RELEASE.set()
    assert result.ok, result.error
    with rt.session() as session:  # a classic call of a tool that does not exist
        assert not session.call_tool("nosuch", {}).ok
    rt.close()
    outcome = {r["tool"] + ":" + r["outcome"]: r["acted"] for r in lines(path)}
    assert outcome == {
        "hang:timeout": "maybe",
        "explode:tool_exception": "maybe",
        "not_json:invalid_result": "yes",
        "wire:denied": "no",
        "wire:invalid_arguments": "no",
        "nosuch:unknown_tool": "no",
    }
    assert ACTED == ["not_json"]


# --- the key stays on the host ---------------------------------------------------------

ATTEMPTS = [
    "import os\nos.environ.get('TOOLSCRIPT_AUDIT_KEY')",
    "open('/proc/self/environ').read()",
    "import sys\nstr(sys.modules['os'].environ)",
    "str(echo.__globals__)",
    "type(echo).__init__.__globals__['os'].environ['TOOLSCRIPT_AUDIT_KEY']",
]


def test_a_script_cannot_read_the_audit_key_or_the_log(make_runtime: Any, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from security_helpers import SECURITY_TOOLS

    monkeypatch.setenv(KEY_ENV, KEY)
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path)
    rt = make_runtime(SECURITY_TOOLS, audit=log)
    for code in [*ATTEMPTS, f"open({str(path)!r}).read()",
                 f"echo(open({str(path)!r}, 'a'))", "echo({'x': 1})"]:
        result = rt.run(code)
        assert KEY not in json.dumps(result.to_dict(), default=str), code
    rt.close()
    assert verify(path, key=KEY).ok and verify(path, key=KEY).records >= 1
    assert (path.stat().st_mode & 0o777) == 0o600  # the log is the owner's alone
