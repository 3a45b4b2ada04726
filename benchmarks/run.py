"""Run the benchmarks and regenerate ``BENCHMARKS.md`` and ``benchmarks/plots``.

    python -m benchmarks                      # everything, full sizes (~12-15 min)
    python -m benchmarks --quick              # tiny sizes, few repeats (~1-2 min)
    python -m benchmarks --engines exec,inprocess --workloads tool_chain,compute
    python -m benchmarks --repeat 7 --output /tmp/bench

Nothing is installed at run time: a peer that is not installed (smolagents,
pydantic-monty) or a Docker engine/image that is not there is reported as
such. Install the peers with ``pip install -e '.[bench]'``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # ``python benchmarks/run.py``
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "benchmarks"

from benchmarks import cluster, correctness, measure, transport
from benchmarks.engines import (
    ENGINE_ORDER,
    Engine,
    docker_unavailable_reason,
    make_engine,
    select_engines,
)
from benchmarks.machine import machine_record
from benchmarks.report import evaluate_targets, write_report
from benchmarks.workloads import TOOLS, WORKLOAD_NAMES, WORKLOADS, Workload

ROOT = Path(__file__).resolve().parents[1]


def log(message: str) -> None:
    """Progress on stderr."""
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Side-by-side benchmarks of toolscript, plain exec and the peers.",
    )
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes and few repeats (smoke test; numbers not meaningful)")
    parser.add_argument("--engines", default="",
                        help="comma-separated engines or substrings (exec is always run): "
                        + ", ".join(ENGINE_ORDER) + "; 'toolscript' = every ts-*")
    parser.add_argument("--workloads", default="",
                        help="comma-separated workloads: " + ", ".join(WORKLOAD_NAMES))
    parser.add_argument("--repeat", type=int, default=None,
                        help="timed runs per engine and workload (default 7, quick 3)")
    parser.add_argument("--budget", type=float, default=None,
                        help="seconds one engine may spend repeating one workload "
                        "(default 20, quick 3); at least one run is always timed")
    parser.add_argument("--output", default=None,
                        help="directory for BENCHMARKS.md, plots/ and results.json "
                        "(default: the repository root and benchmarks/plots)")
    parser.add_argument("--corpus-limit", type=int, default=None,
                        help="run only the first N corpus scripts (default all; quick 8)")
    parser.add_argument("--from-json", default=None, metavar="PATH",
                        help="measure nothing: rewrite the report from a results.json")
    parser.add_argument("--skip", default="",
                        help="comma-separated sections to skip: corpus, transport, startup, "
                        "cluster, tokens, audit, profile, plots")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run everything selected and write the report; 0 on success."""
    args = parse_args(argv)
    quick = args.quick
    repeat = args.repeat or (3 if quick else 7)
    budget = args.budget or (3.0 if quick else 20.0)
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    engine_names = select_engines([e for e in args.engines.split(",") if e.strip()])
    workload_names = [w.strip() for w in args.workloads.split(",") if w.strip()] or list(
        WORKLOAD_NAMES)
    unknown = set(workload_names) - set(WORKLOAD_NAMES)
    if unknown:
        raise SystemExit(f"unknown workload(s) {sorted(unknown)}; choose from "
                         f"{', '.join(WORKLOAD_NAMES)}")
    workloads = [w for w in WORKLOADS if w.name in workload_names]
    if args.output:
        out_dir = Path(args.output)
        report_path, plots_dir, json_path = (out_dir / "BENCHMARKS.md", out_dir / "plots",
                                             out_dir / "results.json")
    else:
        report_path = ROOT / "BENCHMARKS.md"
        plots_dir = ROOT / "benchmarks" / "plots"
        json_path = ROOT / "benchmarks" / "results.json"

    results: dict[str, Any]
    if args.from_json:
        results = json.loads(Path(args.from_json).read_text("utf-8"))
        results["targets"] = evaluate_targets(results)
        write_report(results, report_path, plots_dir, plots="plots" not in skip)
        log(f"rewrote {report_path} from {args.from_json}")
        return 0
    started = time.time()
    results = {
        "mode": "quick" if quick else "full",
        "command": "python -m benchmarks " + " ".join(argv if argv is not None else sys.argv[1:]),
        "repeat": repeat,
        "budget_s": budget,
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "machine": machine_record(),
        "engines": {},
        "workloads": {},
    }
    engines = _build_engines(engine_names, results)
    timer = measure.Timer(repeat, budget)
    try:
        for workload in workloads:
            results["workloads"][workload.name] = _run_workload(workload, engines, timer, quick)
        if "profile" not in skip and "tool_chain" in workload_names:
            results["profile"] = _profile(engines, quick)
    finally:
        for engine in engines.values():
            engine.close()
    results["tool_calls"] = _tool_call_costs(results)
    docker_wanted = any(n.startswith("ts-docker") for n in engine_names)
    if "transport" not in skip:
        results["transport"] = _transport(engine_names, docker_wanted, quick)
    if "startup" not in skip:
        results["startup"] = _startup(engine_names, docker_wanted, quick, repeat)
    if "cluster" not in skip:
        log("cluster: batch over a local Dask cluster, 1 and 2 workers")
        _attempt(results, "cluster", lambda: cluster.measure(quick, repeat=2 if quick else 3))
    if "corpus" not in skip:
        limit = args.corpus_limit if args.corpus_limit is not None else (8 if quick else None)
        # isolation-mode variants run the same interpreter as their base engine
        corpus_names = [n for n in engine_names
                        if not results["engines"][n].get("fresh_sessions_only")]
        log(f"corpus: {', '.join(corpus_names)}")
        results["correctness"] = correctness.run_corpus(
            [n for n in corpus_names if results["engines"][n]["available"]], limit)
        for name in corpus_names:
            if not results["engines"][name]["available"]:
                results["correctness"]["engines"][name] = {
                    "status": "unavailable", "reason": results["engines"][name]["reason"]}
    if "tokens" not in skip:
        results["token_economy"] = _external("token_economy.py",
                                             ["--format", "json", "--provider", "all"], quick)
    if "audit" not in skip:
        results["audit_overhead"] = _external("audit_overhead.py", [], quick)
    results["elapsed_s"] = time.time() - started
    results["machine"]["load_average_end"] = list(os.getloadavg())
    results["targets"] = evaluate_targets(results)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(results, indent=1, default=repr) + "\n", "utf-8")
    write_report(results, report_path, plots_dir, plots="plots" not in skip)
    log(f"wrote {report_path} ({results['elapsed_s']:.0f} s)")
    return 0


def _build_engines(names: list[str], results: dict[str, Any]) -> dict[str, Engine]:
    engines: dict[str, Engine] = {}
    for name in names:
        engine = make_engine(name)
        info: dict[str, Any] = {"label": engine.label, "available": engine.available,
                                "reason": engine.reason, "version": "",
                                "fresh_sessions_only": engine.fresh_sessions_only}
        if engine.available:
            try:
                engine.setup(TOOLS)
                info["version"] = engine.version()
                engines[name] = engine
            except Exception as exc:
                info.update(available=False, reason=f"set-up failed: {type(exc).__name__}: {exc}")
                engine.close()
        results["engines"][name] = info
        log(f"engine {name}: " + ("ready" if info["available"] else info["reason"]))
    return engines


def _sizes(workload: Workload, quick: bool) -> int:
    return workload.sizes["quick" if quick else "full"]


def _run_workload(workload: Workload, engines: dict[str, Engine], timer: measure.Timer,
                  quick: bool) -> dict[str, Any]:
    n = _sizes(workload, quick)
    entry: dict[str, Any] = {"title": workload.title, "description": workload.description,
                             "kind": workload.kind, "n": n, "engines": {}, "exec_at": {}}
    groups: dict[int, dict[str, Engine]] = {n: {}}
    notes: dict[str, str] = {}
    for name, engine in engines.items():
        if engine.fresh_sessions_only and not workload.fresh_sessions:
            continue  # an isolation-mode variant: the same interpreter as its base engine
        reason = measure.UNSUPPORTED.get((name, workload.name))
        if reason:
            entry["engines"][name] = {"status": "unsupported", "reason": reason}
            continue
        size = n
        cap = measure.SIZE_CAPS.get((name, workload.name))
        if cap and not quick:
            size, notes[name] = cap
        groups.setdefault(size, {"exec": engines["exec"]})[name] = engine
    groups[n] = {"exec": engines["exec"], **groups[n]}
    for size, members in groups.items():
        log(f"{workload.name} n={size}: {', '.join(members)}")
        measured = measure.measure_group(members, workload, size, timer)
        base = measured["exec"]
        entry["exec_at"][str(size)] = base
        for name, result in measured.items():
            if name == "exec" and size != n:
                continue
            result["n"] = size
            if name in notes:
                result["size_note"] = notes[name]
            if name != "exec" and result["status"] == "ok" and base["status"] == "ok":
                paired = [a / b for a, b in result.pop("paired") if a and b]
                result["ratio"] = (statistics.median(paired) if paired
                                   else result["median_s"] / base["median_s"])
                result["ratio_of_medians"] = result["median_s"] / base["median_s"]
                result["value_matches_exec"] = result["value"] == base["value"]
            else:
                result.pop("paired", None)
            entry["engines"][name] = result
    entry["engines"] = {name: entry["engines"][name] for name in engines
                        if name in entry["engines"]}
    return entry


def _tool_call_costs(results: dict[str, Any]) -> dict[str, Any]:
    """µs per tool call: (tool chain - trivial warm run) / calls, per engine."""
    chain = results["workloads"].get("tool_chain")
    trivial = results["workloads"].get("trivial_warm")
    if not chain:
        return {}
    out: dict[str, Any] = {"calls": chain["n"], "engines": {}}
    exec_chain = chain["engines"].get("exec", {})
    for name, entry in chain["engines"].items():
        if entry.get("status") != "ok":
            continue
        base = 0.0
        if trivial and trivial["engines"].get(name, {}).get("status") == "ok":
            base = trivial["engines"][name]["median_s"]
        per_call = (entry["median_s"] - base) / chain["n"] * 1e6
        base_best = 0.0
        if trivial and trivial["engines"].get(name, {}).get("status") == "ok":
            base_best = trivial["engines"][name]["min_s"]
        best = (entry["min_s"] - base_best) / chain["n"] * 1e6
        over_exec = None
        if exec_chain.get("status") == "ok":
            over_exec = (entry["median_s"] - exec_chain["median_s"]) / chain["n"] * 1e6
        out["engines"][name] = {"us_per_call": per_call, "us_over_exec": over_exec,
                                "us_per_call_best": best}
    return out


def _profile(engines: dict[str, Engine], quick: bool) -> dict[str, Any]:
    from benchmarks.workloads import get

    code = get("tool_chain").code(50 if quick else 1000)
    profiles: dict[str, Any] = {}
    for name in ("ts-inprocess", "ts-inprocess-inline"):
        if name in engines:
            log(f"profile: {name}")
            try:
                profiles[name] = measure.profile_chain(engines[name], code)
            except Exception as exc:
                profiles[name] = {"error": f"{type(exc).__name__}: {exc}"}
    return profiles


def _attempt(results: dict[str, Any], key: str, fn: Any) -> None:
    log(f"measuring {key}")
    try:
        results[key] = fn()
    except Exception as exc:
        results[key] = {"error": f"{type(exc).__name__}: {str(exc)[:400]}"}


def _transport(engine_names: list[str], docker_wanted: bool, quick: bool) -> dict[str, Any]:
    count = 300 if quick else 3000
    batches = 3 if quick else 7
    out: dict[str, Any] = {}
    _attempt(out, "pipe", lambda: transport.pipe_round_trip(count, batches))
    _attempt(out, "unix_socket", lambda: transport.unix_socket_round_trip(count, batches))
    _attempt(out, "framed_echo", lambda: transport.framed_echo(count, batches))
    if any(n.startswith("ts-subprocess") for n in engine_names):
        _attempt(out, "subprocess_ping",
                 lambda: transport.subprocess_ping(count // 2, batches))
    if docker_wanted:
        reason = docker_unavailable_reason()
        if reason:
            out["docker"] = {"error": reason}
        else:
            _attempt(out, "docker_attach_echo",
                     lambda: transport.docker_attach_echo(count // 4, batches))
            _attempt(out, "docker_ping_socket",
                     lambda: transport.docker_ping("socket", count // 4, batches))
            _attempt(out, "docker_ping_attach",
                     lambda: transport.docker_ping("attach", count // 4, batches))
    return out


def _startup(engine_names: list[str], docker_wanted: bool, quick: bool,
             repeat: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    reps = 2 if quick else max(repeat, 5)
    if any(n.startswith("ts-subprocess") for n in engine_names):
        _attempt(out, "subprocess_start", lambda: transport.subprocess_start(reps))
    if docker_wanted:
        reason = docker_unavailable_reason()
        if reason:
            out["docker"] = {"error": reason}
        else:
            _attempt(out, "docker_cold_start", lambda: transport.docker_cold_start(reps))
            _attempt(out, "docker_cli_run", lambda: transport.docker_cli_run(min(reps, 3)))
            _attempt(out, "docker_warm_pool", lambda: transport.docker_warm_pool(reps))
    return out


def _external(script: str, args: list[str], quick: bool) -> dict[str, Any]:
    """Run a peer-owned benchmark script if it exists; keep its JSON (or its text)."""
    path = ROOT / "benchmarks" / script
    if not path.exists():
        return {"status": "absent", "path": f"benchmarks/{script}"}
    log(f"running benchmarks/{script}")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    try:
        proc = subprocess.run([sys.executable, str(path), *args], capture_output=True,
                              text=True, timeout=600 if not quick else 300, cwd=ROOT, env=env)
    except subprocess.TimeoutExpired:
        return {"status": "error", "path": f"benchmarks/{script}", "reason": "timed out"}
    entry: dict[str, Any] = {"path": f"benchmarks/{script}", "exit_code": proc.returncode,
                             "command": f"python benchmarks/{script} {' '.join(args)}".strip()}
    text = proc.stdout.strip()
    data = _leading_json(text)
    if data is not None:
        entry.update(status="ok", data=data)
    elif text:
        entry.update(status="ok", text=text[-6000:])
    else:
        entry.update(status="error", reason=proc.stderr.strip()[-1500:] or "no output")
    return entry


def _leading_json(text: str) -> Any:
    """The JSON document at the start of ``text`` (scripts may print a table after it)."""
    if not text.startswith(("{", "[")):
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(text)
    except ValueError:
        return None
    return value


if __name__ == "__main__":
    sys.exit(main())
