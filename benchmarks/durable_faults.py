"""Fault-injection harness of durable runs (issue 30).

Run as ``python -m benchmarks.durable_faults [OUT.json] [--scripts N] [--backends a,b] [--seed S]``
in a fresh process (the driver; the default is the full sweep: 200 scripts on every
backend, written to ``benchmarks/results/durable_faults.json``; the suite runs a
smaller sweep per backend through this same driver, ``tests/durable/test_fault_injection.py``):
it imports toolscript, then for every generated script forks real child host
processes, each building its own
Runtime, and SIGKILLs a child at one crash point:

* ``approval_wait``: right after the run paused (the host dies while a person decides);
* ``before_call``: in a tool, before its side effect;
* ``after_effect``: in a tool, after its side effect, before its journal record;
* ``after_record``: in the ``tool_call`` event hook, after the journal record;
* ``during_resume``: while a resume replays the journal (on a replayed answer's audit record).

The crash points after the first pause are hit during a resume; a new child
then resumes the same continuation (the dead holder's claim is taken over),
and so on until the run ends. Side effects are appended to a file outside the
host processes, one line per execution, so the driver counts them: a call
answered from the journal must never run twice, nor an idempotent tool's
call (it dedupes by the key it receives); a plain write in flight at the crash
may run twice (at-least-once), and those are counted and reported.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

from toolscript import Decision, IdempotencyKey, Runtime, tool

DEFAULT_OUT = Path(__file__).with_name("results") / "durable_faults.json"
KEY = "fault-harness-key-0123456789abcdef"
KINDS = ("approval_wait", "before_call", "after_effect", "after_record", "during_resume")


def _script(rng: random.Random, index: int) -> tuple[str, list[tuple[str, str]]]:
    """A script of 3-8 calls with one or two gated calls; the calls in order."""
    calls: list[tuple[str, str]] = []
    lines = ["out = []"]
    gates = 0
    count = rng.randint(3, 8)
    first_gate = rng.randint(1, count - 1)  # journaled calls before the first pause
    for k in range(count):
        kind = rng.choice(("plain", "idem", "read", "plain", "idem"))
        if k == first_gate or (k > first_gate and gates < 2 and rng.random() < 0.2):
            kind = "gate"
            gates += 1
        tag = f"s{index}k{k}"
        lines.append(f"out.append({kind}({tag!r}))")
        calls.append((kind, tag))
    if rng.random() < 0.3:  # a loop over a set of strings
        lines.append("for t in sorted({'x', 'y'}):\n    out.append(read(t))")
        calls += [("read", "x"), ("read", "y")]
    lines.append("out")
    return "\n".join(lines) + "\n", calls


def _child(job: dict[str, Any], effects: str, journal: str, backend: str) -> None:
    """One host process: run or resume, crashing where the job says."""
    crash = job.get("crash")

    def effect(line: str) -> None:
        fd = os.open(effects, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (line + "\n").encode())
        finally:
            os.close(fd)

    def maybe_crash(point: str, tag: str) -> None:
        if crash == [point, tag]:
            os.kill(os.getpid(), signal.SIGKILL)

    def acting(kind: str, tag: str, key: str | None = None) -> str:
        maybe_crash("before_call", tag)
        if key is not None:
            seen = Path(effects).read_text().splitlines() if Path(effects).exists() else []
            if f"key {key}" in seen:
                return f"{kind}:{tag}"
            effect(f"key {key}")
        effect(f"{kind} {tag}")
        maybe_crash("after_effect", tag)
        return f"{kind}:{tag}"

    @tool(read_only=True)
    def read(tag: str) -> str:
        """Read."""
        return f"read:{tag}"

    @tool
    def plain(tag: str) -> str:
        """A write that is neither journaled-aware nor idempotent."""
        return acting("plain", tag)

    @tool(idempotent=True)
    def idem(tag: str, key: IdempotencyKey) -> str:
        """An idempotent write: dedupes by its key."""
        return acting("idem", tag, key)

    @tool(requires_approval=True)
    def gate(tag: str) -> str:
        """A write that needs a person."""
        return acting("gate", tag)

    def hook(request: Any) -> Any:
        return Decision.defer("a person decides") if request.tool == "gate" else True

    class Audit:
        def __call__(self, record: Any, event: Any = None) -> None:
            if crash is not None and crash[0] == "after_record" and record.args.get(
                    "tag") == crash[1] and not record.replayed:
                os.kill(os.getpid(), signal.SIGKILL)

        def append(self, fields: dict[str, Any]) -> str:
            if crash == ["during_resume", fields.get("seq")] and (
                    fields.get("event") == "durable_replayed"):
                os.kill(os.getpid(), signal.SIGKILL)
            return ""

    with Runtime([read, plain, idem, gate], backend=backend, approve=hook, journal=journal,
                 continuation_key=KEY, audit=Audit()) as runtime:
        if job["continuation"] is None:
            result = runtime.run(job["script"])
        else:
            result = runtime.resume(job["continuation"],
                                    {pid: Decision.allow() for pid in job["pending"]})
    out = {"status": result.status, "value": result.value,
           "error": result.error.to_dict() if result.error else None,
           "continuation": result.continuation, "pending": [p.id for p in result.pending]}
    Path(job["out"]).write_text(json.dumps(out))
    if crash == ["approval_wait", None] and result.status == "paused":
        os.kill(os.getpid(), signal.SIGKILL)


def _fork(job: dict[str, Any], effects: str, journal: str, backend: str) -> dict[str, Any]:
    """Run a job in a forked child; its outcome, or ``{"killed": True}``."""
    out = Path(job["out"])
    out.unlink(missing_ok=True)
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            _child(job, effects, journal, backend)
        except BaseException as exc:  # reported by the driver
            out.write_text(json.dumps({"status": "host_error", "error": repr(exc)}))
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    result = json.loads(out.read_text()) if out.exists() else {}
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
        result["killed"] = True
    return result


def run(scripts: int, backend: str, seed: int, work: Path) -> dict[str, Any]:
    """The whole sweep; the report as a dict."""
    rng = random.Random(seed)
    effects = str(work / "effects.log")
    journal = f"sqlite:///{work}/journal.sqlite3"
    report: dict[str, Any] = {"scripts": scripts, "backend": backend, "seed": seed,
                              "kills": {k: 0 for k in KINDS}, "completed": 0, "failures": [],
                              "duplicates_journaled": 0, "duplicates_idempotent": 0,
                              "at_least_once_plain": 0, "processes": 0}
    in_flight: set[str] = set()
    for index in range(scripts):
        script, calls = _script(rng, index)
        kind = KINDS[index % len(KINDS)]
        writes = [tag for k, tag in calls if k in ("plain", "idem", "gate")]
        first = next(i for i, (k, _) in enumerate(calls) if k == "gate")
        after_gate = [tag for k, tag in calls[first:] if k in ("plain", "idem", "gate")]
        job: dict[str, Any] = {"script": script, "continuation": None, "pending": [],
                               "out": str(work / "out.json"), "crash": None}
        if kind == "approval_wait":
            job["crash"] = ["approval_wait", None]
        planned = kind
        outcome = _fork(job, effects, journal, backend)
        report["processes"] += 1
        crash_target: list[Any] | None = None
        if kind in ("before_call", "after_effect", "after_record"):
            targets = after_gate or writes
            crash_target = [kind, rng.choice(targets)]
        elif kind == "during_resume":
            crash_target = ["during_resume", 1]
        steps = 0
        while outcome.get("status") == "paused" and steps < 10:
            steps += 1
            if outcome.get("killed"):
                report["kills"]["approval_wait"] += 1
            job = {**job, "continuation": outcome["continuation"],
                   "pending": outcome["pending"], "crash": crash_target}
            outcome = _fork(job, effects, journal, backend)
            report["processes"] += 1
            if outcome.get("killed") and crash_target is not None:
                report["kills"][crash_target[0]] += 1
                if crash_target[0] == "after_effect":
                    in_flight.add(crash_target[1])
                crash_target = None
                outcome = _fork({**job, "crash": None}, effects, journal, backend)
                report["processes"] += 1
        expected = [f"{k}:{tag}" if k != "read" else f"read:{tag}" for k, tag in calls]
        if outcome.get("status") != "ok" or outcome.get("value") != expected:
            report["failures"].append({"script": index, "planned": planned,
                                       "outcome": outcome})
        else:
            report["completed"] += 1
    lines = Path(effects).read_text().splitlines() if Path(effects).exists() else []
    counts: dict[str, int] = {}
    for line in lines:
        if not line.startswith("key "):
            counts[line] = counts.get(line, 0) + 1
    for line, count in counts.items():
        if count < 2:
            continue
        tool_kind, tag = line.split()
        if tool_kind == "idem":
            report["duplicates_idempotent"] += count - 1
        elif tag in in_flight and count == 2:  # in flight at the crash: at least once
            report["at_least_once_plain"] += 1
        else:  # a call answered from the journal ran again
            report["duplicates_journaled"] += count - 1
    report["in_flight_crashes"] = len(in_flight)
    return report


def main(argv: list[str] | None = None) -> int:
    """Command line of the driver."""
    parser = argparse.ArgumentParser()
    parser.add_argument("out", nargs="?", default=str(DEFAULT_OUT))
    parser.add_argument("--scripts", type=int, default=200)
    parser.add_argument("--backends", default="inprocess,subprocess,docker",
                        help="comma-separated backend names")
    parser.add_argument("--seed", type=int, default=30)
    args = parser.parse_args(argv)
    reports: dict[str, Any] = {}
    for backend in args.backends.split(","):
        with tempfile.TemporaryDirectory(prefix="toolscript-faults-") as work:
            reports[backend] = run(args.scripts, backend, args.seed, Path(work))
        print(backend, json.dumps({k: v for k, v in reports[backend].items()
                                   if k != "failures"}), flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(reports, indent=1))
    return 0 if all(not r["failures"] for r in reports.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
