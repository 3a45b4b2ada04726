"""Batch jobs as a job runner: stopping on signals, resume, retrying failures, bad input.

The signal tests start the real ``toolscript batch`` command, hold its items
inside a write tool (``gated_write`` logs the write, then waits for a gate
file), send real SIGINT/SIGTERM once the checkpoint shows the items running,
and count the write tool's executions in its log across the stop and the
resumed run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import eco_batch_tools
import pytest
from toolscript.runtime.batch.items import read_jsonl_items, scan_jsonl
from toolscript.runtime.batch.run import BatchStop, ItemOptions, run_batch
from toolscript.runtime.batch.store import BatchStore

from toolscript import Runtime, tool
from toolscript.errors import ConfigurationError

TOOLS_FILE = str(Path(eco_batch_tools.__file__).resolve())
GATED_SCRIPT = "gated_write(str(item['n']))\nitem['n'] * 2\n"
N_ITEMS = 12
CONCURRENCY = 3


# --- helpers -----------------------------------------------------------------------------
def read_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def checkpoint_state(out: Path) -> tuple[set[int], set[int], list[str]]:
    """(running, finished, stop reasons) as the checkpoint shows them."""
    running: set[int] = set()
    finished: set[int] = set()
    stops: list[str] = []
    for entry in read_jsonl(Path(f"{out}.checkpoint"))[1:]:
        if "started" in entry:
            running.add(entry["started"])
        elif "index" in entry:
            running.discard(entry["index"])
            finished.add(entry["index"])
        elif "stopping" in entry:
            stops.append(entry["stopping"])
    return running, finished, stops


def writes(tmp_path: Path) -> Counter[str]:
    log = tmp_path / "writes.log"
    return Counter(log.read_text().split()) if log.exists() else Counter()


def wait_until(condition: Callable[[], bool], proc: subprocess.Popen, what: str) -> None:
    """Poll ``condition`` (a file the batch writes); fail if the batch exits first.
    The deadline only guards against a hang."""
    deadline = time.monotonic() + 120
    while not condition():
        if proc.poll() is not None:
            _, err = proc.communicate()
            pytest.fail(f"the batch exited ({proc.returncode}) before {what}: {err}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.005)


def batch_cmd(tmp_path: Path, backend: str, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "toolscript", "batch", str(tmp_path / "script.py"),
        "--inputs", str(tmp_path / "items.jsonl"), "--tools", TOOLS_FILE,
        "--backend", backend, "--concurrency", str(CONCURRENCY), "--progress", "plain",
        "--out", str(tmp_path / "out.jsonl"), *extra,
    ]  # fmt: skip


def prepare(tmp_path: Path, script: str = GATED_SCRIPT, n: int = N_ITEMS) -> dict[str, str]:
    (tmp_path / "script.py").write_text(script)
    (tmp_path / "items.jsonl").write_text("".join(json.dumps({"n": i}) + "\n" for i in range(n)))
    return {
        **os.environ,
        "TOOLSCRIPT_TEST_WRITE_LOG": str(tmp_path / "writes.log"),
        "TOOLSCRIPT_TEST_GATE": str(tmp_path / "gate"),
        "TOOLSCRIPT_TEST_FAIL_LIST": str(tmp_path / "fail.list"),
    }


def start_batch(tmp_path: Path, backend: str, env: dict[str, str]) -> subprocess.Popen:
    # Its own session, so that a signal to its process group is what Ctrl-C at a
    # terminal does (and does not reach pytest).
    return subprocess.Popen(
        batch_cmd(tmp_path, backend), env=env, cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip


def hold_items_in_write_tool(tmp_path: Path, proc: subprocess.Popen) -> set[int]:
    """Wait until CONCURRENCY items are running and inside their write tool."""
    out = tmp_path / "out.jsonl"

    def held() -> bool:
        running, _, _ = checkpoint_state(out)
        return len(running) == CONCURRENCY and len(writes(tmp_path)) == CONCURRENCY

    wait_until(held, proc, "items were running inside their write tool")
    running, finished, _ = checkpoint_state(out)
    assert not finished and {str(i) for i in running} == set(writes(tmp_path))
    return running


def send(proc: subprocess.Popen, how: str) -> None:
    if how == "SIGINT-group":  # Ctrl-C at a terminal: the whole foreground group
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(getattr(signal, how))


def resume(tmp_path: Path, backend: str, env: dict[str, str], *extra: str):
    return subprocess.run(
        batch_cmd(tmp_path, backend, "--resume", *extra), env=env, cwd=tmp_path,
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


# --- stopping on signals -----------------------------------------------------------------
@pytest.mark.parametrize("how", ["SIGINT-group", "SIGTERM"])
def test_first_signal_lets_running_items_finish_and_resume_runs_only_the_rest(
    tmp_path, backend_name, how
):
    env = prepare(tmp_path)
    out = tmp_path / "out.jsonl"
    proc = start_batch(tmp_path, backend_name, env)
    held = hold_items_in_write_tool(tmp_path, proc)
    send(proc, how)
    # The checkpoint notes the stop; only then may the held items go on.
    wait_until(lambda: bool(checkpoint_state(out)[2]), proc, "the stop was noted")
    (tmp_path / "gate").touch()
    _, stderr = proc.communicate(timeout=300)

    assert proc.returncode == 130, stderr
    reason = "SIGINT" if how == "SIGINT-group" else "SIGTERM"
    assert f"interrupted ({reason})" in stderr and "abandoned" not in stderr
    records = read_jsonl(out)
    # Exactly the items that were running finished, were recorded, and nothing else started.
    assert {r["index"] for r in records} == held and all(r["ok"] for r in records)
    running, finished, stops = checkpoint_state(out)
    assert not running and finished == held and stops == [reason]
    assert writes(tmp_path) == Counter({str(i): 1 for i in held})

    again = resume(tmp_path, backend_name, env)
    assert again.returncode == 0, again.stderr
    assert f"{CONCURRENCY} already done before" in again.stderr
    assert "ran again" not in again.stderr  # nothing was in doubt
    records = read_jsonl(out)
    assert sorted(r["index"] for r in records) == list(range(N_ITEMS))  # each exactly once
    assert all(r["ok"] and r["value"] == 2 * r["index"] and "attempt" not in r for r in records)
    assert writes(tmp_path) == Counter({str(i): 1 for i in range(N_ITEMS)})


def test_second_signal_abandons_running_items_and_resume_reruns_exactly_those(
    tmp_path, backend_name
):
    env = prepare(tmp_path)
    out = tmp_path / "out.jsonl"
    proc = start_batch(tmp_path, backend_name, env)
    held = hold_items_in_write_tool(tmp_path, proc)
    send(proc, "SIGINT-group")
    wait_until(lambda: bool(checkpoint_state(out)[2]), proc, "the stop was noted")
    send(proc, "SIGINT-group")  # the gate stays shut: the items cannot finish
    _, stderr = proc.communicate(timeout=300)

    assert proc.returncode == 130, stderr
    assert f"abandoned {CONCURRENCY} running item(s)" in stderr
    assert read_jsonl(out) == []
    running, _, _ = checkpoint_state(out)
    assert running == held  # the store knows exactly which items may have written

    (tmp_path / "gate").touch()
    again = resume(tmp_path, backend_name, env)
    assert again.returncode == 0, again.stderr
    assert f"ran again {CONCURRENCY} item(s) that an earlier run started" in again.stderr
    records = {r["index"]: r for r in read_jsonl(out)}
    assert sorted(records) == list(range(N_ITEMS))
    assert {i for i, r in records.items() if r.get("attempt") == 2} == held
    # The at-least-once window: only the abandoned items wrote twice.
    assert writes(tmp_path) == Counter({str(i): 2 if i in held else 1 for i in range(N_ITEMS)})


@pytest.mark.parametrize("after", [1, 7, 19, 33])
def test_a_stop_at_any_moment_records_every_item_whose_write_ran(tmp_path, after):
    """Items without a gate: the signal lands wherever the batch is (recording a
    result, starting an item, waiting); every write that ran has its result."""
    env = prepare(tmp_path, "gated_write(str(item['n']))\nitem['n']\n", n=60)
    env.pop("TOOLSCRIPT_TEST_GATE")
    out = tmp_path / "out.jsonl"
    proc = start_batch(tmp_path, "inprocess", env)
    wait_until(lambda: len(read_jsonl(Path(f"{out}.checkpoint"))) > after, proc, "items started")
    send(proc, "SIGINT-group")
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode in (0, 130), stderr  # 0: it had finished anyway
    assert "abandoned" not in stderr
    recorded = {str(r["index"]) for r in read_jsonl(out)}
    assert set(writes(tmp_path)) == recorded
    assert not checkpoint_state(out)[0]  # nothing left running
    again = resume(tmp_path, "inprocess", env)
    assert again.returncode == 0, again.stderr
    assert writes(tmp_path) == Counter({str(i): 1 for i in range(60)})


def test_stop_requested_by_a_tool_finishes_the_running_item(tmp_path, make_runtime):
    stop = BatchStop()

    @tool
    def step(n: int) -> int:
        """Ask the batch to stop when ``n`` is 2.

        Args:
            n: the item.
        """
        if n == 2:
            stop.request("enough")
        return n

    rt = make_runtime([step])
    out = tmp_path / "out.jsonl"
    report = run_batch(rt, "step(item)", range(6), concurrency=1, out=out, stop=stop)
    summary = report.summary
    assert summary.interrupted and summary.stop_reason == "enough"
    assert (summary.ok, summary.abandoned) == (3, [])
    assert "3 item(s) not run yet" in summary.render()
    again = run_batch(rt, "step(item)", range(6), concurrency=1, out=out, resume=True)
    assert (again.summary.skipped, again.summary.ok, again.summary.interrupted) == (3, 3, False)


def test_abandoned_items_are_named_and_in_doubt_on_resume(tmp_path):
    stop = BatchStop()
    release = threading.Event()

    @tool
    def hang(n: int) -> int:
        """Abandon the batch while item 1 runs, and hold that item.

        Args:
            n: the item.
        """
        if n == 1:
            stop.request("first")
            stop.request("second")
            release.wait(60)
        return n

    out = tmp_path / "out.jsonl"
    with Runtime([hang], backend="inprocess") as rt:
        try:
            report = run_batch(rt, "hang(item)", range(4), concurrency=1, out=out, stop=stop)
        finally:
            release.set()
        assert report.summary.abandoned == [1] and report.summary.interrupted
        assert sorted(r["index"] for r in read_jsonl(out)) == [0]
        store = BatchStore(out, script="hang(item)", resume=True)
        store.open()
        store.close()
        assert store.in_doubt == [1] and store.last_stop == "first"
        again = run_batch(rt, "hang(item)", range(4), concurrency=1, out=out, resume=True)
    assert again.summary.rerun_in_doubt == [1] and again.summary.ok == 3
    assert {r["index"]: r.get("attempt", 1) for r in read_jsonl(out)} == {0: 1, 1: 2, 2: 1, 3: 1}


def test_an_item_source_failing_midway_lets_running_items_finish(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLSCRIPT_TEST_WRITE_LOG", str(tmp_path / "writes.log"))
    out = tmp_path / "out.jsonl"

    def items():
        yield from range(5)
        raise OSError("the source went away")

    with Runtime([eco_batch_tools.record_write], backend="inprocess") as rt, pytest.raises(
        OSError, match="went away"
    ):
        run_batch(rt, "record_write(str(item))", items(), concurrency=2, out=out)
    assert sorted(r["index"] for r in read_jsonl(out)) == list(range(5))
    assert writes(tmp_path) == Counter({str(i): 1 for i in range(5)})
    assert not checkpoint_state(out)[0]


# --- failed items: --resume keeps them, --retry-failed runs them again ---------------------
def test_retry_failed_reruns_only_failed_items_and_leaves_one_line_per_item(tmp_path):
    env = prepare(tmp_path, "record_write(str(item['n']))\nfail_if_listed(item['n'])\n", n=8)
    (tmp_path / "fail.list").write_text("3\n5\n")
    out = tmp_path / "out.jsonl"
    first = subprocess.run(batch_cmd(tmp_path, "inprocess"), env=env, capture_output=True,
                           text=True, timeout=300)
    assert first.returncode == 1, first.stderr
    assert "tool_error 2" in first.stderr

    kept = resume(tmp_path, "inprocess", env)  # the failures are results: nothing runs
    assert kept.returncode == 1, kept.stderr
    assert "2 item(s) failed in an earlier run" in kept.stderr and "--retry-failed" in kept.stderr
    assert writes(tmp_path) == Counter({str(i): 1 for i in range(8)})

    (tmp_path / "fail.list").write_text("")  # the cause is fixed
    retried = resume(tmp_path, "inprocess", env, "--retry-failed")
    assert retried.returncode == 0, retried.stderr
    assert "2 ok, 0 failed (2 of them retried), 6 already done before" in retried.stderr
    records = read_jsonl(out)
    assert sorted(r["index"] for r in records) == list(range(8))  # compacted: one line each
    assert all(r["ok"] for r in records)
    assert {r["index"] for r in records if r.get("attempt") == 2} == {3, 5}
    # A retried item runs its write tools again (they had run before the failure).
    assert writes(tmp_path) == Counter({str(i): 2 if i in (3, 5) else 1 for i in range(8)})


def test_retry_failed_by_error_type(tmp_path):
    inputs = tmp_path / "items.jsonl"
    inputs.write_text("1\n2\nnot json\n3\n")
    out = tmp_path / "out.jsonl"
    script = "fail_if_listed(item)"
    fail_list = tmp_path / "fail.list"
    os.environ["TOOLSCRIPT_TEST_FAIL_LIST"] = str(fail_list)
    try:
        fail_list.write_text("2\n")
        with Runtime([eco_batch_tools.fail_if_listed], backend="inprocess") as rt:
            items, total = read_jsonl_items(str(inputs))
            first = run_batch(rt, script, items, total=total, out=out)
            assert first.summary.errors_by_type == Counter({"tool_error": 1, "invalid_item": 1})
            fail_list.write_text("")
            items, total = read_jsonl_items(str(inputs))
            again = run_batch(rt, script, items, total=total, out=out,
                              retry_failed={"tool_error"})
    finally:
        os.environ.pop("TOOLSCRIPT_TEST_FAIL_LIST")
    summary = again.summary
    assert (summary.retried, summary.ok, summary.failed_before, summary.skipped) == (1, 1, 1, 3)
    assert not summary.all_ok  # the invalid line still has an error as its result
    latest = {r["index"]: r["ok"] for r in read_jsonl(out)}
    assert latest == {0: True, 1: True, 2: False, 3: True}


def test_retry_failed_needs_an_out_file():
    with Runtime([eco_batch_tools.slow_square], backend="inprocess") as rt, pytest.raises(
        ConfigurationError, match="out file"
    ):
        run_batch(rt, "item", [1], retry_failed=True)


# --- bad input and bad options are refused before anything runs ---------------------------
BAD_LINES = [
    '{"n": 1}',
    "",
    '{"n": 2',  # line 3: not JSON
    '{"n": 3}',
    '{"n": NaN}',  # line 5: not standard JSON
    '{"n": 4}',
    "[" * 150 + "]" * 150,  # line 7: nested deeper than the sandbox takes
    '{"n": 5}',
]


def write_bad_inputs(tmp_path: Path) -> None:
    data = "\n".join(BAD_LINES).encode() + b"\n\xff\xfe{}\n" + b'{"n": 6}\n'  # line 9: not UTF-8
    (tmp_path / "items.jsonl").write_bytes(data)


def test_bad_lines_are_reported_by_number_and_nothing_runs(tmp_path):
    env = prepare(tmp_path, "record_write(str(item['n']))\n")
    write_bad_inputs(tmp_path)
    proc = subprocess.run(batch_cmd(tmp_path, "inprocess"), env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    for line in (3, 5, 7, 9):
        assert f"line {line}:" in proc.stderr
    assert "4 line(s) are not items" in proc.stderr and "--on-bad-line record" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out.jsonl").exists() and writes(tmp_path) == Counter()


def test_bad_lines_recorded_per_item_on_request(tmp_path):
    env = prepare(tmp_path, "record_write(str(item['n']))\nitem['n']\n")
    write_bad_inputs(tmp_path)
    proc = subprocess.run(batch_cmd(tmp_path, "inprocess", "--on-bad-line", "record"), env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    records = {r["index"]: r for r in read_jsonl(tmp_path / "out.jsonl")}
    bad = {i: r["error"] for i, r in records.items() if not r["ok"]}
    assert {e["type"] for e in bad.values()} == {"invalid_item"}
    assert sorted(e["line"] for e in bad.values()) == [3, 5, 7, 9]
    good = [1, 3, 4, 5, 6]
    assert [records[i]["value"] for i in sorted(records) if records[i]["ok"]] == good
    assert writes(tmp_path) == Counter({str(i): 1 for i in good})


def test_scan_checks_every_line_up_front(tmp_path):
    write_bad_inputs(tmp_path)
    scanned = scan_jsonl(str(tmp_path / "items.jsonl"))
    assert scanned.total == 9
    assert [(b.line, b.index) for b in scanned.bad] == [(3, 1), (5, 3), (7, 5), (9, 7)]
    with pytest.raises(ConfigurationError, match="line 3: not JSON"):
        read_jsonl_items(str(tmp_path / "items.jsonl"), on_bad_line="report")
    deep = "[" * 5000 + "]" * 5000  # deeper than the JSON parser recurses
    (tmp_path / "deep.jsonl").write_text(deep + "\n" + "9" * 5000 + "\n")
    assert [b.line for b in scan_jsonl(str(tmp_path / "deep.jsonl")).bad] == [1, 2]


@pytest.mark.parametrize(
    ("extra", "script", "message"),
    [
        (["--item-var", "1x"], "item", "not a Python identifier"),
        (["--item-var", "_secret_"], "item", "cannot be assigned in the sandbox"),
        (["--item-var", "class"], "item", "cannot be assigned in the sandbox"),
        ([], "item[", "is not valid Python"),
    ],
    ids=["not-identifier", "reserved", "keyword", "syntax-error"],
)
def test_options_that_would_fail_every_item_are_refused_first(tmp_path, extra, script, message):
    env = prepare(tmp_path, script)
    proc = subprocess.run(batch_cmd(tmp_path, "inprocess", *extra), env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "out.jsonl").exists()


def test_library_refuses_a_bad_item_variable_before_running():
    with Runtime([eco_batch_tools.slow_square], backend="inprocess") as rt, pytest.raises(
        ConfigurationError, match="item variable"
    ):
        run_batch(rt, "row", [1], options=ItemOptions(item_var="__row__"))


# --- Dask: a worker that cannot build the runtime refuses the batch ------------------------
def test_dask_workers_that_cannot_load_the_tools_refuse_the_batch():
    from distributed import Client, LocalCluster
    from toolscript.runtime.batch.distributed import DaskExecutor
    from toolscript.runtime.batch.run import RuntimeSpec

    spec = RuntimeSpec(tools=("no_such_tools_module_for_batch",), backend="inprocess")
    with LocalCluster(n_workers=1, processes=False, dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster) as client:
        with pytest.raises(ConfigurationError, match="cannot build the batch's runtime") as err:
            DaskExecutor(client, spec, "item", ItemOptions())
        assert "no_such_tools_module_for_batch" in str(err.value)
        worker = next(iter(client.scheduler_info()["workers"]))
        assert worker in str(err.value)
