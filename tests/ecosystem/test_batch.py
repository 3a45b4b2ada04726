"""Batch jobs: per-item results and errors, checkpoint and resume, the CLI.

The interrupted-batch tests start the real ``toolscript batch`` command on the
subprocess backend, kill it mid-run with a signal, and resume it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import eco_batch_tools
import pytest
from backend_marks import BACKENDS, backend_options
from toolscript.runtime.batch.progress import PlainProgress
from toolscript.runtime.batch.run import ItemOptions, read_jsonl_items, run_batch
from waiting import wait_until

from toolscript import Runtime
from toolscript.errors import ConfigurationError

TOOLS_FILE = str(Path(eco_batch_tools.__file__).resolve())
TOOLS = [eco_batch_tools.slow_square, eco_batch_tools.record_write, eco_batch_tools.fail_on]


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module", params=BACKENDS)
def batch_runtime(request):
    """One runtime per backend under test, shared by the module's tests."""
    if request.param == "docker":
        request.getfixturevalue("docker_image_tag")
    options = backend_options(request.param)
    with Runtime(TOOLS, backend=request.param, backend_options=options) as rt:
        yield rt


def test_items_run_in_their_own_sessions_with_typed_errors(batch_runtime):
    items = [{"n": n} for n in range(6)] + [{"n": "x"}]
    script = (
        "try:\n    previous = seen\nexcept NameError:\n    previous = None\n"
        "seen = item['n']\n"
        "[previous, fail_on(slow_square(item['n']), 9)]\n"
    )
    report = run_batch(batch_runtime, script, items, concurrency=3)
    by_index = {r["index"]: r for r in report.results}
    assert sorted(by_index) == list(range(7))
    assert by_index[0]["value"] == [None, 0] and by_index[5]["value"] == [None, 25]
    assert all(r["value"][0] is None for r in report.results if r["ok"])  # no shared namespace
    assert by_index[3]["ok"] is False  # 3*3 == 9 -> tool error, uncaught by the script
    assert by_index[3]["error"]["type"] == "tool_error"
    assert "9 is bad" in by_index[3]["error"]["message"]
    assert by_index[6]["ok"] is False  # invalid arguments
    assert by_index[3]["tool_call_errors"] == 1
    summary = report.summary
    assert (summary.ok, summary.failed, summary.total) == (5, 2, 7)
    assert summary.errors_by_type == Counter({"tool_error": 2})
    assert summary.tool_calls == 13  # 7 slow_square + 6 fail_on
    assert "5 ok, 2 failed" in summary.render()


def test_item_variable_and_record_options():
    with Runtime(TOOLS, backend="inprocess") as rt:
        report = run_batch(
            rt,
            "print(row['n']); slow_square(row['n'])",
            [{"n": 2}],
            options=ItemOptions(item_var="row", include_item=False, full_tool_calls=True),
        )
    (record,) = report.results
    assert record["value"] == 4 and record["stdout"] == "2\n"
    assert "item" not in record
    assert record["calls"][0]["name"] == "slow_square"
    assert record["calls"][0]["args"] == {"n": 2, "delay_s": 0.0}  # final arguments


def test_non_json_items_fail_alone(tmp_path):
    inputs = tmp_path / "items.jsonl"
    inputs.write_text('{"n": 1}\nnot json\n\n{"n": 2}\n')
    items, total = read_jsonl_items(str(inputs))
    assert total == 3
    with Runtime(TOOLS, backend="inprocess") as rt:
        report = run_batch(rt, "slow_square(item['n'])", items, total=total)
    by_index = {r["index"]: r for r in report.results}
    assert by_index[0]["value"] == 1 and by_index[2]["value"] == 4
    assert by_index[1]["error"]["type"] == "invalid_item"
    assert "line 2" in by_index[1]["error"]["message"]
    with Runtime(TOOLS, backend="inprocess") as rt:
        report = run_batch(rt, "item", [float("nan"), {1, 2}, [1, "a"], {1: 2}, (3,)])
    results = sorted(report.results, key=lambda r: r["index"])
    assert [r["ok"] for r in results] == [False, False, True, True, True]
    assert results[0]["error"]["type"] == results[1]["error"]["type"] == "invalid_item"
    assert [r["value"] for r in results[2:]] == [[1, "a"], {"1": 2}, [3]]  # as JSON would


def test_checkpoint_resume_skips_finished_items(tmp_path, monkeypatch):
    log = tmp_path / "writes.log"
    monkeypatch.setenv("TOOLSCRIPT_TEST_WRITE_LOG", str(log))
    out = tmp_path / "out.jsonl"
    script = "record_write(str(item)); item * 2"
    with Runtime(TOOLS, backend="inprocess") as rt:
        first = run_batch(rt, script, range(5), out=out)
        assert first.summary.ok == 5 and first.results == []
        with pytest.raises(ConfigurationError, match="already exists"):
            run_batch(rt, script, range(5), out=out)
        with pytest.raises(ConfigurationError, match="different script"):
            run_batch(rt, script + " ", range(5), out=out, resume=True)
        with pytest.raises(ConfigurationError, match="inputs"):
            run_batch(rt, script, [9, 9, 9], out=out, resume=True)
        again = run_batch(rt, script, range(8), out=out, resume=True)
    assert again.summary.skipped == 5 and again.summary.ok == 3
    records = read_jsonl(out)
    assert sorted(r["index"] for r in records) == list(range(8))
    assert sorted(log.read_text().split()) == [str(n) for n in range(8)]


def test_resume_adopts_results_written_before_their_checkpoint_line(tmp_path, monkeypatch):
    """A crash between the result line and its checkpoint line: the result is
    durable, so the item counts as done; a torn last line is cut off."""
    log = tmp_path / "writes.log"
    monkeypatch.setenv("TOOLSCRIPT_TEST_WRITE_LOG", str(log))
    out = tmp_path / "out.jsonl"
    checkpoint = Path(f"{out}.checkpoint")
    script = "record_write(str(item)); item"
    with Runtime(TOOLS, backend="inprocess") as rt:
        run_batch(rt, script, range(3), out=out)
        lines = checkpoint.read_text().splitlines()
        checkpoint.write_text("\n".join(lines[:-1]) + "\n" + '{"index": 2, "ite')  # torn
        report = run_batch(rt, script, range(4), out=out, resume=True)
    assert report.summary.skipped == 3 and report.summary.ok == 1
    assert sorted(log.read_text().split()) == ["0", "1", "2", "3"]
    assert all(json.loads(line) for line in checkpoint.read_text().splitlines())


def test_plain_progress_reports_rate_and_eta():
    class Stream:
        def __init__(self):
            self.text = ""

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    stream = Stream()
    progress = PlainProgress(stream, interval_s=0)
    progress.start(10, 2)
    progress.update({"ok": True})
    progress.update({"ok": False})
    progress.close()
    last = stream.text.strip().splitlines()[-1]
    assert last.startswith("4/10 items, 1 errors,") and "items/s" in last and "ETA" in last
    assert "resuming: 2 item(s) already done" in stream.text


# --- the CLI, interrupted ----------------------------------------------------------------
SCRIPT = "v = slow_square(item['n'], 0.25)\nrecord_write(str(item['n']))\nv\n"
N_ITEMS = 24


def _cli(tmp_path: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "toolscript",
        "batch",
        str(tmp_path / "script.py"),
        "--inputs",
        str(tmp_path / "items.jsonl"),
        "--tools",
        TOOLS_FILE,
        "--backend",
        "subprocess",
        "--concurrency",
        "2",
        "--progress",
        "plain",
        "--out",
        str(tmp_path / "out.jsonl"),
        *extra,
    ]


def _prepare(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "script.py").write_text(SCRIPT)
    (tmp_path / "items.jsonl").write_text(
        "".join(json.dumps({"n": n}) + "\n" for n in range(N_ITEMS))
    )
    return {**os.environ, "TOOLSCRIPT_TEST_WRITE_LOG": str(tmp_path / "writes.log")}


def _interrupt_when_some_done(tmp_path: Path, env: dict[str, str], sig: int) -> tuple[int, str]:
    proc = subprocess.Popen(
        _cli(tmp_path),
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out = tmp_path / "out.jsonl"
    wait_until(lambda: out.exists() and len(out.read_text().splitlines()) >= 4, 60,
               what="four items done")
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=60)
    return proc.returncode, stderr


def _writes(tmp_path: Path) -> Counter[str]:
    return Counter((tmp_path / "writes.log").read_text().split())


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_interrupted_cli_batch_resumes_without_rerunning_finished_items(tmp_path, sig):
    env = _prepare(tmp_path)
    code, stderr = _interrupt_when_some_done(tmp_path, env, sig)
    out = tmp_path / "out.jsonl"
    finished_first = {r["index"] for r in read_jsonl(out)}
    assert 4 <= len(finished_first) < N_ITEMS, stderr
    if sig == signal.SIGTERM:
        # Graceful: running items finish and are recorded, the rest wait for --resume.
        assert code == 130, stderr
        assert "run again with --resume" in stderr
        assert set(_writes(tmp_path)) == {str(i) for i in finished_first}
    else:
        assert code == -signal.SIGKILL

    resumed = subprocess.run(
        _cli(tmp_path, "--resume", "--summary-json", str(tmp_path / "summary.json")),
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(finished_first)} already done before" in resumed.stderr
    records = read_jsonl(out)
    assert sorted(r["index"] for r in records) == list(range(N_ITEMS))  # each exactly once
    assert all(r["ok"] and r["value"] == r["index"] ** 2 for r in records)
    writes = _writes(tmp_path)
    # A finished item's write tool never runs again.
    assert all(writes[str(i)] == 1 for i in finished_first)
    # Only items running at the moment of a SIGKILL may have written twice.
    assert set(writes) == {str(n) for n in range(N_ITEMS)}
    repeated = {int(k) for k, n in writes.items() if n > 1}
    assert len(repeated) <= (2 if sig == signal.SIGKILL else 0)
    # ... and the resumed run names every item it ran again for that reason.
    in_doubt = json.loads((tmp_path / "summary.json").read_text())["rerun_in_doubt"]
    assert repeated <= set(in_doubt) <= set(range(N_ITEMS)) - finished_first
    assert {r["index"] for r in records if r.get("attempt") == 2} == set(in_doubt)


def test_rich_progress_renders_rate_and_errors():
    import io

    from toolscript.runtime.batch.progress import RichProgress, make_progress

    stream = io.StringIO()
    progress = RichProgress(stream)
    progress.start(3, 1)
    progress.update({"ok": False})
    progress.update({"ok": True})
    progress.close()
    text = stream.getvalue()
    assert "resuming: 1 item(s) already done" in text
    assert "3/3" in text and "1 errors" in text and "items/s" in text
    assert isinstance(make_progress("auto", io.StringIO()), PlainProgress)  # not a terminal
