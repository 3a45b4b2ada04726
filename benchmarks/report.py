"""``BENCHMARKS.md`` and the PNG plots, from the results dictionary of a run."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from benchmarks.markdown import md_table as _table
from benchmarks.results_report import hand_written_notes, results_sections

TARGETS = {
    "compute_ratio": 1.3,
    "compute_ratio_aim": 1.2,
    "inprocess_call_us": 10.0,
    "subprocess_call_us": 80.0,
    "docker_call_us": 100.0,
    "call_aim_over_raw_us": 10.0,
    "fresh_runs_subprocess": 200.0,
    "fresh_runs_docker": 100.0,
    "batch_subprocess": 150.0,
    "batch_docker": 75.0,
    "cluster_scaling": 1.8,
    "warm_trivial_s": 0.002,
    "parallel_s": 0.5,
    "pool_first_run_s": 0.050,
    "process_first_run_s": 0.010,
    "corpus_share": 0.98,
    "token_reduction": 0.90,
}

BACKENDS = ("inprocess", "subprocess", "docker")

# ------------------------------------------------------------------ formatting


def fmt_s(seconds: float | None) -> str:
    """A duration with a unit that keeps three significant digits."""
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "–"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


def fmt_us(us: float | None) -> str:
    """Microseconds."""
    if us is None:
        return "–"
    return f"{us:.3g} µs" if us < 1000 else f"{us / 1000:.3g} ms"


def fmt_ratio(ratio: float | None) -> str:
    """A ratio such as ``1.07×``."""
    if ratio is None:
        return "–"
    return f"{ratio:.2f}×" if ratio < 10 else f"{ratio:.0f}×" if ratio < 1000 else f"{ratio:.2g}×"


def _label(results: dict[str, Any], name: str) -> str:
    return str(results["engines"].get(name, {}).get("label", name))


def _miss(measured: float, target: float, lower_is_better: bool = True) -> str:
    if lower_is_better:
        if measured <= target:
            return "met"
        return f"**missed** by {fmt_ratio(measured / target)}"
    if measured >= target:
        return "met"
    return f"**missed** by {fmt_pct(target - measured)} points"


def _miss_rate(measured: float, target: float) -> str:
    """Verdict of a throughput (higher is better) against its target."""
    if measured >= target:
        return "met"
    return f"**missed** by {fmt_ratio(target / measured)}" if measured > 0 else "**missed**"


def fmt_pct(value: float) -> str:
    """A share as a percentage."""
    return f"{value * 100:.1f} %"


# --------------------------------------------------------------------- targets


def _ok(entry: dict[str, Any] | None) -> bool:
    return bool(entry) and entry.get("status") == "ok"  # type: ignore[union-attr]


def evaluate_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Every docs/design.md target that this run measured: measured value, met or missed."""
    rows: list[dict[str, Any]] = []
    workloads = results.get("workloads", {})

    def add(target: str, engine: str, measured: str, verdict: str, note: str = "") -> None:
        rows.append({"target": target, "engine": engine, "measured": measured,
                     "verdict": verdict, "note": note})

    def best_note(verdict: str, best: float | None, target: float, text: str) -> str:
        """When the median misses but the best run meets the target, say so."""
        if verdict.startswith("**missed") and best is not None and best <= target:
            return f"best run {text} meets it: the median carries machine load"
        return ""

    for wl_name, title in (("compute", "compute ≤ 1.3× exec (aim 1.2×)"),
                           ("string_json", "string/JSON compute ≤ 1.3× exec")):
        wl = workloads.get(wl_name)
        if not wl:
            continue
        for name, entry in wl["engines"].items():
            if not name.startswith("ts-") or not _ok(entry) or "ratio" not in entry:
                continue
            ratio = entry["ratio"]
            verdict = _miss(ratio, TARGETS["compute_ratio"])
            if verdict == "met" and ratio > TARGETS["compute_ratio_aim"]:
                verdict = "met (above the 1.2× aim)"
            add(title, name, fmt_ratio(ratio), verdict)

    calls = results.get("tool_calls", {}).get("engines", {})
    transport = results.get("transport", {})
    raw = {
        "subprocess": transport.get("pipe", {}).get("us"),
        "docker": _docker_raw(transport),
    }
    for name, entry in calls.items():
        if not name.startswith("ts-") or name.endswith("-inline"):
            continue  # the targets are for the default limits (per-call timeout on)
        backend = name.split("-")[1]
        us = entry["us_per_call"]
        best = entry.get("us_per_call_best")
        target = TARGETS[f"{backend}_call_us"]
        verdict = _miss(us, target)
        measured = fmt_us(us)
        if backend == "inprocess" and entry.get("us_over_exec") is not None:
            measured += f" ({fmt_us(entry['us_over_exec'])} over exec)"
        base = raw.get(backend)
        if base:
            aim = base + TARGETS["call_aim_over_raw_us"]
            measured += f"; raw round trip {fmt_us(base)}"
            if verdict == "met" and us > aim:
                verdict = f"met (above the aim, raw + 10 µs = {fmt_us(aim)})"
        add(f"tool call ≤ {target:g} µs with the default limits", name, measured, verdict,
            best_note(verdict, best, target, fmt_us(best)))

    for wl_name, key, title, unit in (
        ("sessions", "fresh_runs", "fresh runs ≥ {t:g}/s on {b} (2-call script, {c} threads)",
         "runs/s"),
        ("batch", "batch", "batch ≥ {t:g} items/s on {b} (2-call item, concurrency {c})",
         "items/s"),
    ):
        wl = workloads.get(wl_name)
        if not wl:
            continue
        for name, entry in wl["engines"].items():
            backend = name.split("-")[1] if name.startswith("ts-") else ""
            if backend not in ("subprocess", "docker") or name.endswith("-inline"):
                continue
            if not _ok(entry):
                continue
            target = TARGETS[f"{key}_{backend}"]
            rate, best = entry["runs_per_s"], entry.get("best_runs_per_s")
            verdict = _miss_rate(rate, target)
            note = ""
            if verdict.startswith("**missed") and best is not None and best >= target:
                note = f"best run {best:.0f} {unit} meets it: the median carries machine load"
            if entry.get("size_note"):
                note = "; ".join(filter(None, [note, f"n={entry['n']}, not {wl['n']}"]))
            add(title.format(t=target, b=backend, c=entry.get("threads", 4)), name,
                f"{rate:.0f} {unit}", verdict, note)

    remote = results.get("cluster", {}).get("scenarios", {}).get("remote")
    if remote:
        add(f"batch over Dask near-linear in workers: 2 workers ≥ "
            f"{TARGETS['cluster_scaling']:g}× one (remote-API items)", "ts-subprocess",
            f"{remote['scaling']:.2f}×", _miss_rate(remote["scaling"], TARGETS["cluster_scaling"]))

    for name, entry in workloads.get("trivial_warm", {}).get("engines", {}).items():
        if name.startswith("ts-") and _ok(entry):
            verdict = _miss(entry["median_s"], TARGETS["warm_trivial_s"])
            add("warm-session trivial script ≤ 2 ms", name, fmt_s(entry["median_s"]), verdict,
                best_note(verdict, entry["min_s"], TARGETS["warm_trivial_s"],
                          fmt_s(entry["min_s"])))

    par = workloads.get("parallel")
    if par:
        for name, entry in par["engines"].items():
            if name.startswith("ts-") and _ok(entry):
                note = "" if par["n"] == 100 else f"n={par['n']} (quick), not the target size"
                add("parallel() 100 × 50 ms ≤ 0.5 s", name, fmt_s(entry["median_s"]),
                    _miss(entry["median_s"], TARGETS["parallel_s"]), note)

    pool = results.get("startup", {}).get("docker_warm_pool", {})
    if "first_run_s" in pool:
        add("first script of a new session with a warm pool ≤ 50 ms", "ts-docker",
            fmt_s(pool["first_run_s"]), _miss(pool["first_run_s"], TARGETS["pool_first_run_s"]))
        add("warm-pool acquire ≤ 50 ms", "ts-docker", fmt_s(pool["acquire_s"]),
            _miss(pool["acquire_s"], TARGETS["pool_first_run_s"]))

    fresh = workloads.get("trivial_fresh", {}).get("engines", {}).get("ts-docker-process")
    if _ok(fresh):
        assert fresh is not None
        verdict = _miss(fresh["median_s"], TARGETS["process_first_run_s"])
        add("first script of a new process-isolated session ≤ 10 ms (fresh trivial run)",
            "ts-docker-process", fmt_s(fresh["median_s"]), verdict,
            best_note(verdict, fresh["min_s"], TARGETS["process_first_run_s"],
                      fmt_s(fresh["min_s"])))

    corpus = results.get("correctness", {})
    for name, entry in corpus.get("engines", {}).items():
        if name.startswith("ts-") and entry.get("status") == "ok":
            add("corpus ≥ 98 % identical to CPython", name,
                f"{entry['identical']}/{corpus['scripts']} ({fmt_pct(entry['share'])})",
                _miss(entry["share"], TARGETS["corpus_share"], lower_is_better=False))

    tokens = results.get("token_economy", {}).get("data")
    if isinstance(tokens, dict):
        for row in tokens.get("rows", []):
            if row.get("data_heavy"):
                reduction = float(row.get("input_reduction", 0.0))
                add("programmatic ≥ 90 % fewer input tokens (data-heavy)",
                    f"{row.get('task')} / {row.get('provider')}", fmt_pct(reduction),
                    _miss(reduction, TARGETS["token_reduction"], lower_is_better=False))
    return rows


def _docker_raw(transport: dict[str, Any]) -> float | None:
    """The raw round trip of the docker backend's transport in use: a unix socket
    between two processes for the socket transport, the attach echo otherwise."""
    socket_ping = transport.get("docker_ping_socket", {})
    if socket_ping.get("transport") == "socket":
        value = transport.get("unix_socket", {}).get("us")
    else:
        value = transport.get("docker_attach_echo", {}).get("us")
    return float(value) if value else None


# ------------------------------------------------------------------------ plots


def make_plots(results: dict[str, Any], plots_dir: Path) -> dict[str, str]:
    """Write the PNG plots; return {name: file name} of those written."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return {}
    plots_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, str] = {}
    for name, fn in (("ratio_to_exec", _plot_ratios), ("tool_call_us", _plot_calls),
                     ("startup", _plot_startup), ("throughput", _plot_throughput),
                     ("correctness", _plot_correctness),
                     ("token_economy", _plot_tokens)):
        fig = fn(results, plt)
        if fig is None:
            continue
        path = plots_dir / f"{name}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written[name] = path.name
    return written


def _engine_names(results: dict[str, Any]) -> list[str]:
    return [n for n in results["engines"]]


def _plot_ratios(results: dict[str, Any], plt: Any) -> Any:
    workloads = [(k, v) for k, v in results["workloads"].items()]
    engines = [n for n in _engine_names(results) if n != "exec"]
    if not workloads or not engines:
        return None
    fig, ax = plt.subplots(figsize=(11, 5))
    width = 0.8 / max(len(engines), 1)
    for i, name in enumerate(engines):
        xs, ys = [], []
        for j, (_, wl) in enumerate(workloads):
            entry = wl["engines"].get(name, {})
            if _ok(entry) and entry.get("ratio"):
                xs.append(j + (i - (len(engines) - 1) / 2) * width)
                ys.append(entry["ratio"])
        ax.bar(xs, ys, width, label=_label(results, name))
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axhline(TARGETS["compute_ratio"], color="red", linestyle="--", linewidth=0.8,
               label="1.3× target (compute)")
    ax.set_yscale("log")
    ax.set_xticks(range(len(workloads)))
    ax.set_xticklabels([wl["title"] for _, wl in workloads], rotation=15, fontsize=8)
    ax.set_ylabel("time / plain exec (log)")
    ax.set_title("Ratio to plain CPython exec, same run (lower is better)")
    ax.legend(fontsize=7, ncol=3)
    return fig


def _plot_calls(results: dict[str, Any], plt: Any) -> Any:
    calls = results.get("tool_calls", {}).get("engines", {})
    if not calls:
        return None
    transport = results.get("transport", {})
    labels, values, colors = [], [], []
    for name, entry in calls.items():
        labels.append(_label(results, name))
        values.append(max(entry["us_per_call"], 0.01))
        colors.append("tab:blue" if name.startswith("ts-") else "tab:gray")
    for key, title in (("pipe", "raw pipe round trip (2 processes)"),
                       ("unix_socket", "raw unix-socket round trip (2 processes)"),
                       ("framed_echo", "framed JSON echo in Python (floor)"),
                       ("subprocess_ping", "protocol ping, subprocess"),
                       ("docker_attach_echo", "raw docker attach echo"),
                       ("docker_ping_socket", "protocol ping, docker (socket)"),
                       ("docker_ping_attach", "protocol ping, docker (attach)")):
        if "us" in transport.get(key, {}):
            labels.append(title)
            values.append(transport[key]["us"])
            colors.append("tab:orange")
    fig, ax = plt.subplots(figsize=(10, 0.35 * len(labels) + 1.5))
    ax.barh(range(len(labels)), values, color=colors)
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    for i, v in enumerate(values):
        ax.text(v, i, f" {fmt_us(v)}", va="center", fontsize=7)
    ax.set_xlabel("µs per tool call (blue/gray) or per round trip (orange), log")
    ax.set_title("Cost of one tool call vs the raw transport round trip")
    return fig


def _plot_startup(results: dict[str, Any], plt: Any) -> Any:
    items: list[tuple[str, float]] = []
    fresh = results["workloads"].get("trivial_fresh", {}).get("engines", {})
    for name, entry in fresh.items():
        if _ok(entry):
            items.append((f"fresh run: {_label(results, name)}", entry["median_s"]))
    startup = results.get("startup", {})
    for key, field, title in (("subprocess_start", "s", "subprocess sandbox start"),
                              ("docker_cold_start", "s", "docker: cold container start"),
                              ("docker_cli_run", "s", "docker run --rm (CLI reference)"),
                              ("docker_warm_pool", "acquire_s", "docker: warm-pool acquire"),
                              ("docker_warm_pool", "first_run_s",
                               "docker: first script, warm pool")):
        if field in startup.get(key, {}):
            items.append((title, startup[key][field]))
    if not items:
        return None
    fig, ax = plt.subplots(figsize=(10, 0.35 * len(items) + 1.5))
    ax.barh(range(len(items)), [max(v, 1e-6) * 1e3 for _, v in items], color="tab:green")
    ax.set_yticks(range(len(items)))
    ax.set_yticklabels([t for t, _ in items], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(50, color="red", linestyle="--", linewidth=0.8, label="50 ms target (warm pool)")
    for i, (_, v) in enumerate(items):
        ax.text(max(v, 1e-6) * 1e3, i, f" {fmt_s(v)}", va="center", fontsize=7)
    ax.set_xlabel("milliseconds (log)")
    ax.set_title("Start-up and warm-pool latencies")
    ax.legend(fontsize=7)
    return fig


def _plot_throughput(results: dict[str, Any], plt: Any) -> Any:
    panels = [(results["workloads"].get(key), title) for key, title in
              (("sessions", "fresh runs/s (2-call script, 4 threads)"),
               ("batch", "batch items/s (2-call item, concurrency 4)"))]
    panels = [(wl, title) for wl, title in panels if wl]
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.5), squeeze=False)
    for ax, (wl, title) in zip(axes[0], panels, strict=True):
        items = [(_label(results, n), e["runs_per_s"]) for n, e in wl["engines"].items()
                 if _ok(e)]
        ax.barh(range(len(items)), [v for _, v in items], color="tab:cyan")
        ax.set_yticks(range(len(items)))
        ax.set_yticklabels([t for t, _ in items], fontsize=7)
        ax.invert_yaxis()
        ax.set_xscale("log")
        for i, (_, v) in enumerate(items):
            ax.text(v, i, f" {v:,.0f}", va="center", fontsize=7)
        key = "fresh_runs" if wl is results["workloads"].get("sessions") else "batch"
        for backend, color in (("subprocess", "red"), ("docker", "purple")):
            target = TARGETS[f"{key}_{backend}"]
            ax.axvline(target, color=color, linestyle="--", linewidth=0.8,
                       label=f"{target:g}/s target ({backend})")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
    fig.suptitle("Throughput of fresh sessions and batch items (higher is better, log)")
    return fig


def _plot_correctness(results: dict[str, Any], plt: Any) -> Any:
    engines = results.get("correctness", {}).get("engines", {})
    items = [(n, e["share"]) for n, e in engines.items() if e.get("status") == "ok"]
    if not items:
        return None
    fig, ax = plt.subplots(figsize=(9, 0.35 * len(items) + 1.5))
    ax.barh(range(len(items)), [v * 100 for _, v in items], color="tab:purple")
    ax.set_yticks(range(len(items)))
    ax.set_yticklabels([_label(results, n) for n, _ in items], fontsize=8)
    ax.invert_yaxis()
    ax.axvline(98, color="red", linestyle="--", linewidth=0.8, label="98 % target")
    for i, (_, v) in enumerate(items):
        ax.text(v * 100, i, f" {v * 100:.1f} %", va="center", fontsize=7)
    ax.set_xlim(0, 110)
    ax.set_xlabel("% of corpus scripts with CPython-identical value and output")
    ax.set_title("Correctness: the conformance corpus")
    ax.legend(fontsize=7, loc="lower left")
    return fig


def _plot_tokens(results: dict[str, Any], plt: Any) -> Any:
    data = results.get("token_economy", {}).get("data")
    if not isinstance(data, dict) or not data.get("rows"):
        return None
    rows = data["rows"]
    providers = sorted({r.get("provider", "") for r in rows})
    provider = "openai" if "openai" in providers else providers[0]
    rows = [r for r in rows if r.get("provider") == provider]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    xs = range(len(rows))
    classic = [r["classic"]["input_tokens"] for r in rows]
    prog = [r["programmatic"]["input_tokens"] for r in rows]
    ax.bar([x - 0.2 for x in xs], classic, 0.4, label="classic (one call per turn)")
    ax.bar([x + 0.2 for x in xs], prog, 0.4, label="programmatic (one script)")
    for x, r in zip(xs, rows, strict=True):
        ax.text(x, max(r["classic"]["input_tokens"], r["programmatic"]["input_tokens"]),
                f"-{r['input_reduction'] * 100:.0f} %\nturns {r['classic']['turns']}/"
                f"{r['programmatic']['turns']}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(list(xs))
    ax.set_xticklabels([r["task"] + (" *" if r.get("data_heavy") else "") for r in rows],
                       rotation=10, fontsize=8)
    ax.set_ylabel("input tokens sent (all turns)")
    ax.set_title(f"Token economy ({provider}; * = data-heavy, target ≥ 90 % fewer)")
    ax.legend(fontsize=8)
    return fig


# ------------------------------------------------------------------------ report


def write_report(results: dict[str, Any], path: Path, plots_dir: Path, plots: bool = True
                 ) -> None:
    """Write ``BENCHMARKS.md`` (and the plots next to it)."""
    written = make_plots(results, plots_dir) if plots else {}
    try:
        rel = plots_dir.relative_to(path.parent).as_posix()
    except ValueError:
        rel = plots_dir.as_posix()
    results.setdefault("targets", evaluate_targets(results))
    parts = [_header(results), _targets(results), _workloads(results, written, rel),
             _tool_calls(results, written, rel), _startup(results, written, rel),
             _throughput(results, written, rel), _cluster(results),
             _correctness(results, written, rel),
             _tokens(results, written, rel), _audit(results), _profile(results),
             _method(results), results_sections(), hand_written_notes()]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n\n".join(p for p in parts if p).rstrip() + "\n", "utf-8")


def _img(written: dict[str, str], rel: str, name: str, alt: str) -> str:
    return f"![{alt}]({rel}/{written[name]})" if name in written else ""


def _header(results: dict[str, Any]) -> str:
    m = results["machine"]
    pk = m["packages"]
    quick = results["mode"] == "quick"
    lines = [
        "# Benchmarks",
        "",
        "Generated by `python -m benchmarks` — do not edit by hand; rerun it to refresh "
        "(`--help` for options; the peers come from `pip install -e '.[bench]'`).",
        "",
    ]
    if quick:
        lines += ["> **Quick mode**: tiny sizes and few repeats; the numbers only show that "
                  "the harness works. Run without `--quick` for real figures.", ""]
    engines = ", ".join(
        f"{info['label']}" + ("" if info["available"] else f" (**{info['reason']}**)")
        for info in results["engines"].values())
    lines += [
        f"Run {results['started']} · `{results['command'].strip()}` · "
        f"{results['repeat']} timed runs per cell (median; fewer where a cell would exceed "
        f"{results['budget_s']:g} s) · total {results['elapsed_s'] / 60:.1f} min",
        "",
        _table(["machine", ""], [
            ["CPU", f"{m['cpu']} — {m['cores']} cores ({m['usable_cores']} usable)"],
            ["memory / OS", f"{m['memory_gib']} GiB · {m['os']}"],
            ["Python", m["python"]],
            ["packages", ", ".join(f"{k} {v}" for k, v in pk.items())],
            ["Docker engine", m["docker_engine"]],
            ["load average (1/5/15 min)", "start " + _load(m.get("load_average_start"))
             + " · end " + _load(m.get("load_average_end"))],
        ], "ll"),
        "",
        f"Engines: {engines}.",
    ]
    loads = [*(m.get("load_average_start") or [])[:1], *(m.get("load_average_end") or [])[:1]]
    if loads and max(loads) > (m.get("cores") or 1):
        lines += ["", f"> **Shared, loaded machine**: the 1-minute load average was "
                  f"{' → '.join(f'{v:.1f}' for v in loads)} on {m['cores']} cores (other jobs "
                  "ran alongside). A process that blocks and wakes (a tool call across a "
                  "thread or process boundary) then waits for a CPU, often for milliseconds: "
                  "medians of short runs carry that delay. The ratios pair each engine with "
                  "exec round by round; the *best run* columns show the cost without it."]
    return "\n".join(lines)


def _load(values: list[float] | None) -> str:
    return "/".join(f"{v:.1f}" for v in values) if values else "?"


def _targets(results: dict[str, Any]) -> str:
    rows = results.get("targets") or []
    if not rows:
        return ""
    table = _table(["target (docs/design.md)", "engine", "measured", "verdict"],
                   [[r["target"], r["engine"], r["measured"],
                     r["verdict"] + (f" ({r['note']})" if r["note"] else "")] for r in rows],
                   "llrl")
    missed = sum(1 for r in rows if r["verdict"].startswith("**missed"))
    return (f"## Targets\n\n{len(rows) - missed} of {len(rows)} measured targets met"
            f"{'' if not missed else f', {missed} missed'}.\n\n{table}")


def _cell(entry: dict[str, Any] | None) -> str:
    if not entry:
        return "–"
    status = entry.get("status")
    if status == "ok":
        text = fmt_s(entry["median_s"])
        if "ratio" in entry:
            text += f" ({fmt_ratio(entry['ratio'])})"
        if entry.get("value_matches_exec") is False:
            text += " ≠"
        if entry.get("size_note"):
            text += " †"
        return text
    if status == "unsupported":
        return "unsupported"
    if status == "unavailable":
        return "not available"
    return f"**{status}**"


def _workloads(results: dict[str, Any], written: dict[str, str], rel: str) -> str:
    wls = results.get("workloads", {})
    if not wls:
        return ""
    names = list(results["engines"])
    header = ["engine"] + [f"{wl['title']} (n={wl['n']:,})" for wl in wls.values()]
    rows = []
    for name in names:
        info = results["engines"][name]
        if not info["available"]:
            rows.append([info["label"]] + [f"not available: {info['reason']}"]
                        + [""] * (len(wls) - 1))
            continue
        rows.append([info["label"]] + [_cell(wl["engines"].get(name)) for wl in wls.values()])
    notes = []
    for wl in wls.values():
        for name, entry in wl["engines"].items():
            label = _label(results, name)
            if entry.get("size_note"):
                base = wl["exec_at"].get(str(entry["n"]), {}).get("median_s")
                notes.append(f"- † {label}, {wl['title']}: {entry['size_note']}; the ratio is "
                             f"to exec at the same size ({fmt_s(base)}).")
            if entry.get("status") in ("failed", "error", "unsupported"):
                notes.append(f"- {label}, {wl['title']}: {entry.get('status')}: "
                             f"{entry.get('reason')}")
            if entry.get("value_matches_exec") is False:
                notes.append(f"- ≠ {label}, {wl['title']}: the value differs from exec's: "
                             f"{entry.get('value')!r:.200}")
            if entry.get("note"):
                notes.append(f"- {label}, {wl['title']}: {entry['note']}.")
    described = "\n".join(f"- **{wl['title']}**: {wl['description']} "
                          f"({'open session' if wl['kind'] == 'warm' else wl['kind']})."
                          for wl in wls.values())
    text = [
        "## Workloads: median time and ratio to plain exec",
        "",
        "Each cell: median wall time of one run seen from the host, and in parentheses "
        "its ratio to plain CPython `exec` of the same script text measured in the same run. "
        "Workloads marked *open session* run in a session that is already started (sandbox "
        "start-up is measured separately); every engine's value is checked against exec's "
        "(≠ marks a difference). Compute ratios somewhat below 1 on the process backends "
        "mean no measurable overhead: the script runs in a small, fresh process while exec "
        "runs in the long-lived harness process, and the machine's load adds noise.",
        "",
        described,
        "",
        _table(header, rows, "l" + "r" * len(wls)),
    ]
    if notes:
        text += ["", *notes]
    img = _img(written, rel, "ratio_to_exec", "ratio to exec per workload and engine")
    if img:
        text += ["", img]
    return "\n".join(text)


def _tool_calls(results: dict[str, Any], written: dict[str, str], rel: str) -> str:
    calls = results.get("tool_calls", {})
    transport = results.get("transport", {})
    if not calls and not transport:
        return ""
    text = ["## Tool calls and transport round trips", ""]
    if calls.get("engines"):
        text += [
            f"µs per call = (tool-chain run − trivial run in the same warm session) / "
            f"{calls['calls']:,} calls: the whole cost of one call from the script — binding, "
            "crossing, validation, approval, audit record, the tool itself and the loop "
            "around it. \"over exec\" subtracts plain exec's cost of the same loop.",
            "",
            _table(["engine", "µs per call (median)", "µs over exec", "µs per call (best run)"],
                   [[_label(results, n), fmt_us(e["us_per_call"]), fmt_us(e["us_over_exec"]),
                     fmt_us(e.get("us_per_call_best"))]
                    for n, e in calls["engines"].items()]),
        ]
    rows = []
    for key, title in (
        ("pipe", "raw: 64-byte echo over two pipes, two host processes (subprocess backend's "
                 "transport)"),
        ("unix_socket", "raw: 64-byte echo over a unix socketpair, two host processes (docker "
                        "socket transport, kernel-wise)"),
        ("framed_echo", "floor in Python: minimal frame (length + JSON) echo over pipes, no "
                        "server, no dispatch"),
        ("subprocess_ping", "protocol ping → pong, subprocess sandbox (frames + JSON)"),
        ("docker_attach_echo", "raw: 64-byte echo in a sandbox-image container over attached "
                               "stdio (dockerd + shim)"),
        ("docker_ping_socket", "protocol ping → pong, docker sandbox, socket transport"),
        ("docker_ping_attach", "protocol ping → pong, docker sandbox, attach transport"),
    ):
        entry = transport.get(key)
        if entry is None:
            continue
        value = fmt_us(entry["us"]) if "us" in entry else f"error: {entry.get('error')}"
        rows.append([title, value])
    if "docker" in transport:
        rows.append(["docker", f"not available: {transport['docker'].get('error')}"])
    if rows:
        text += ["", "Round trips (median of batches):", "", _table(["transport", "µs"], rows)]
    img = _img(written, rel, "tool_call_us", "µs per tool call next to raw round trips")
    if img:
        text += ["", img]
    return "\n".join(text)


def _startup(results: dict[str, Any], written: dict[str, str], rel: str) -> str:
    startup = results.get("startup", {})
    fresh = results.get("workloads", {}).get("trivial_fresh", {}).get("engines", {})
    warm = results.get("workloads", {}).get("trivial_warm", {}).get("engines", {})
    if not startup and not fresh:
        return ""
    rows = []
    for name in results["engines"]:
        if _ok(fresh.get(name)) or _ok(warm.get(name)):
            rows.append([_label(results, name),
                         fmt_s(fresh[name]["median_s"]) if _ok(fresh.get(name)) else "–",
                         fmt_s(fresh[name]["min_s"]) if _ok(fresh.get(name)) else "–",
                         fmt_s(warm[name]["median_s"]) if _ok(warm.get(name)) else "–",
                         fmt_s(warm[name]["min_s"]) if _ok(warm.get(name)) else "–"])
    text = ["## Start-up, fixed cost per run, warm pool", ""]
    if rows:
        text += ["Trivial script (`x = 6 * 7; x`): a fresh `runtime.run` (new interpreter / "
                 "process / container from the pool) and a run in an open session.", "",
                 _table(["engine", "fresh run (median)", "fresh (best)",
                         "warm session run (median)", "warm (best)"], rows), ""]
    srows = []
    for key, field, title in (
        ("subprocess_start", "s", "subprocess: start a sandbox process until `ready`"),
        ("docker_cold_start", "s", "docker: cold container start until `ready` (no pool)"),
        ("docker_cli_run", "s", "docker: `docker run --rm` of `python -c pass` (CLI reference)"),
        ("docker_warm_pool", "acquire_s", "docker: warm-pool acquire"),
        ("docker_warm_pool", "first_run_s",
         "docker: first script of a new session, warm pool (acquire + configure + run)"),
        ("docker_warm_pool", "refill_s", "docker: pool refill after one acquire (background)"),
    ):
        entry = startup.get(key)
        if entry is None:
            continue
        srows.append([title, fmt_s(entry[field]) if field in entry
                      else f"error: {entry.get('error')}"])
    if "docker" in startup:
        srows.append(["docker", f"not available: {startup['docker'].get('error')}"])
    if srows:
        text += [_table(["latency (median)", ""], srows)]
    img = _img(written, rel, "startup", "start-up and warm-pool latencies")
    if img:
        text += ["", img]
    return "\n".join(text)


def _rate_cells(wl: dict[str, Any] | None, name: str) -> list[str]:
    """runs/s (median and best) and the time ratio to exec of one engine, or why not."""
    entry = (wl or {}).get("engines", {}).get(name)
    if not entry:
        return ["–", "", ""]
    if not _ok(entry):
        return [_cell(entry), "", ""]
    rate = f"{entry['runs_per_s']:,.0f}"
    if entry.get("size_note"):
        rate += f" (n={entry['n']}) †"
    best = entry.get("best_runs_per_s")
    return [rate, f"{best:,.0f}" if best else "–", fmt_ratio(entry.get("ratio"))]


def _throughput(results: dict[str, Any], written: dict[str, str], rel: str) -> str:
    workloads = results.get("workloads", {})
    sessions, batch = workloads.get("sessions"), workloads.get("batch")
    if not sessions and not batch:
        return ""
    names = [n for n in results["engines"]
             if any(n in (wl or {}).get("engines", {}) for wl in (sessions, batch))]
    rows = [[_label(results, n), *_rate_cells(sessions, n), *_rate_cells(batch, n)]
            for n in names]
    text = ["## Many short sessions: fresh-session and batch throughput", ""]
    if sessions:
        text.append(f"- **Fresh sessions**: {sessions['n']:,} runs of a 2-tool-call script on "
                    f"{sessions['engines'].get('exec', {}).get('threads', 4)} threads, each a "
                    "new session (`runtime.run`: its sandbox, two calls, close).")
    if batch:
        text.append(f"- **Batch**: {batch['n']:,} items of a 2-tool-call item script, "
                    f"{batch['engines'].get('exec', {}).get('threads', 4)} at a time. toolscript "
                    "runs them through its batch runner (`run_batch`, what `toolscript batch "
                    "--out` calls: a session per item, a JSONL results file and checkpoint "
                    "written with an fsync per record); the others run the same items (bound "
                    "as `item = {...}`) as fresh runs on a 4-thread pool.")
    text += [
        "- Isolation modes: the subprocess backend forks each sandbox from a zygote by "
        "default, *direct start* starts a new interpreter per sandbox (`zygote=False`); "
        "docker gives each session a container of its own (*container per session*, "
        "`isolation=\"container\"`) or a forked, walled process in a shared warm container "
        "(*process isolation*, `isolation=\"process\"`). Docker pools are refilled before "
        "each sample.",
        "- \"× exec\" is the time ratio to plain exec doing the same runs in the same round "
        "(paired median). † a smaller size (see the workload notes; exec is measured at that "
        "size too).",
        "",
        _table(["engine", "fresh runs/s", "best", "× exec", "batch items/s", "best", "× exec"],
               rows),
    ]
    img = _img(written, rel, "throughput", "fresh-session and batch throughput")
    if img:
        text += ["", img]
    return "\n".join(text)


def _cluster(results: dict[str, Any]) -> str:
    data = results.get("cluster")
    if not data:
        return ""
    text = ["## Batch over a Dask cluster: items/s as workers are added", ""]
    if data.get("status") != "ok":
        return "\n".join([*text, f"Not measured: {data.get('error', 'unknown error')}"])
    text += [
        "`toolscript batch --cluster` on a `distributed.LocalCluster` of this machine "
        f"(subprocess backend; {data['repeat']} timed batches per row, median): each worker "
        "process builds its Runtime once and runs items in its own sandboxes; the client "
        "keeps the results file and checkpoint (an fsync per record). Each worker runs as "
        "many items at once as it has threads and has twice that many in flight. "
        "*Locally* is the same batch through the local runner with as many items running "
        "at once: the cost of going through Dask.",
        "",
        "- **Remote-API items** wait on a 50 ms tool call, as most real batch items wait on "
        "an API: the two cores are not the limit, so the second worker stands for a second "
        "machine, and near-linear scaling is the target.",
        "- **CPU-bound items** (the batch workload's two fast calls): one worker already "
        "keeps most of the two cores busy, so a second worker on the same machine adds "
        "little; shown for the cost of the cluster path, without a target.",
        "",
    ]
    for scenario in data["scenarios"].values():
        rows = []
        for row in scenario["rows"]:
            on, local = row["cluster"], row["local"]
            rows.append([str(row["workers"]), str(row["in_flight"]),
                         f"{on['items_per_s']:,.0f}", f"{on['best_items_per_s']:,.0f}",
                         f"{local['items_per_s']:,.0f}",
                         f"{on['items_per_s'] / local['items_per_s']:.2f}"])
        title = scenario["title"][:1].upper() + scenario["title"][1:]
        text += [f"**{title}**, {scenario['n']:,} items, "
                 f"{scenario['threads_per_worker']} threads per worker: "
                 f"{data['workers_to']} workers give {scenario['scaling']:.2f}× the items/s "
                 f"of {data['workers_from']}.", "",
                 _table(["workers", "items running", "items/s", "best", "locally",
                         "cluster ÷ local"], rows), ""]
    return "\n".join(text).rstrip()


def _correctness(results: dict[str, Any], written: dict[str, str], rel: str) -> str:
    corpus = results.get("correctness")
    if not corpus:
        return ""
    rows, details = [], []
    for name, entry in corpus["engines"].items():
        label = _label(results, name)
        if entry.get("status") != "ok":
            rows.append([label, entry.get("status", "?"), entry.get("reason", "")])
            continue
        reasons = "; ".join(f"{k} ×{v}" for k, v in entry["reasons"].items()) or "—"
        rows.append([label, f"{entry['identical']}/{corpus['scripts']} "
                     f"({fmt_pct(entry['share'])})", reasons])
        if entry["failures"]:
            details.append(f"<details><summary>{label}: {len(entry['failures'])} "
                           "scripts differ</summary>\n")
            details += [f"- `{script}`: {error.splitlines()[0][:220] if error else ''}"
                        for script, error in sorted(entry["failures"].items())]
            details.append("\n</details>")
    text = [
        "## Correctness: the conformance corpus side by side",
        "",
        f"{corpus['scripts']} model-style scripts from `tests/corpus/scripts`; identical = same "
        "final value and same printed output as plain CPython running the reference semantics "
        "(`tests/corpus/reference.py`). The peers get the reference's own tool stubs, so only "
        "the interpreter differs. Monty cannot raise a host-defined exception class inside "
        "its sandbox, so each Monty session first runs `ToolError = Exception`.",
        "",
        _table(["engine", "identical", "what fails (category × scripts)"], rows, "lrl"),
    ]
    if details:
        text += ["", *details]
    img = _img(written, rel, "correctness", "corpus share per engine")
    if img:
        text += ["", img]
    return "\n".join(text)


def _tokens(results: dict[str, Any], written: dict[str, str], rel: str) -> str:
    entry = results.get("token_economy")
    if not entry:
        return ""
    text = ["## Token economy (benchmarks/token_economy.py)", ""]
    if entry.get("status") == "absent":
        return "\n".join([*text, "`benchmarks/token_economy.py` is not in this checkout."])
    if entry.get("status") != "ok":
        return "\n".join([*text, f"Failed: {entry.get('reason')}"])
    data = entry.get("data")
    text += [f"Output of `{entry['command']}` (exit code {entry['exit_code']}): input "
             "tokens of every request body actually sent, classic mode (one tool call per "
             "turn) vs programmatic mode (one script).", ""]
    if isinstance(data, dict) and isinstance(data.get("rows"), list):
        rows = []
        for r in data["rows"]:
            try:
                c, p = r["classic"], r["programmatic"]
                target = {True: "met", False: "**missed**", None: "n/a (control)"}.get(
                    r.get("meets_target"), str(r.get("meets_target")))
                rows.append([str(r["task"]), str(r.get("provider", "")),
                             f"{c['input_tokens']:,}", f"{p['input_tokens']:,}",
                             fmt_pct(float(r["input_reduction"])),
                             f"{c['turns']}/{p['turns']}",
                             "yes" if c.get("correct") and p.get("correct") else "NO", target])
            except (KeyError, TypeError, ValueError):
                rows.append([str(r)[:200], "", "", "", "", "", "", ""])
        text += [_table(["task", "provider", "classic input", "programmatic input",
                         "input saved", "turns c/p", "correct", "≥ 90 % target"], rows,
                        "llrrrrll")]
        text += ["", f"Tokenizer: tiktoken `{data.get('encoding')}`; backend "
                 f"`{data.get('backend')}`."]
    elif data is not None:
        text += ["```json", str(data)[:4000], "```"]
    else:
        text += ["```", entry.get("text", ""), "```"]
    img = _img(written, rel, "token_economy", "token economy")
    if img:
        text += ["", img]
    return "\n".join(text)


def _audit(results: dict[str, Any]) -> str:
    entry = results.get("audit_overhead")
    if not entry:
        return ""
    text = ["## Audit overhead (benchmarks/audit_overhead.py)", ""]
    if entry.get("status") == "absent":
        return "\n".join([*text, "`benchmarks/audit_overhead.py` is not in this checkout yet."])
    if entry.get("status") != "ok":
        return "\n".join([*text, f"Failed: {entry.get('reason')}"])
    text.append(f"Output of `{entry['command']}` (exit code {entry['exit_code']}):")
    text.append("")
    if entry.get("data") is not None:
        import json

        text += ["```json", json.dumps(entry["data"], indent=1)[:5000], "```"]
    else:
        text += ["```", entry.get("text", ""), "```"]
    return "\n".join(text)


def _profile(results: dict[str, Any]) -> str:
    profiles = results.get("profile")
    if not profiles:
        return ""
    text = ["## Where the time of a tool call goes (cProfile, in-process tool chain)", "",
            "Own time (tottime) of the top functions over one tool-chain run in a warm "
            "session; the profiler inflates small functions, so read shares, not absolutes."]
    for name, rows in profiles.items():
        text += ["", f"**{_label(results, name)}**", ""]
        if isinstance(rows, dict):
            text.append(f"error: {rows.get('error')}")
            continue
        text.append(_table(["function", "calls", "own time", "share"],
                           [[f"`{r['function']}`", f"{r['calls']:,}", fmt_s(r["tottime_s"]),
                             fmt_pct(r["share"])] for r in rows], "lrrr"))
    return "\n".join(text)


def _method(results: dict[str, Any]) -> str:
    return "\n".join([
        "## Method",
        "",
        "- One process runs every engine, one workload at a time, one engine after another; "
        "each cell is the median of the timed runs after one warm-up run (a warm-up slower "
        "than the time budget is used as the only sample). Ratios divide by plain `exec` "
        "measured in the same invocation.",
        "- **plain exec**: `compile` + `exec` of the script in a dict namespace holding the "
        "tool functions themselves (no validation, no copy, no boundary) and a 16-thread "
        "`parallel`: the floor, not a sandbox.",
        "- **smolagents**: `LocalPythonExecutor(additional_authorized_imports=<toolscript's "
        "module whitelist>)`, tools via `send_tools` (static tools), default limits; a fresh "
        "run is a new executor.",
        "- **Monty**: `pydantic_monty.Monty()` worker pool, one `checkout()` per session, "
        "tools as `external_lookup` functions, `max_suspensions` raised (default 1,000 "
        "external calls per feed); a fresh run is a new checkout. `parallel` is the same "
        "host helper (Monty passes a tool given as a value to the host as its name).",
        "- **toolscript**: `Runtime(tools=[tool(read_only=True)(f) ...], backend=...)` with "
        "default `Limits()` (a per-call timeout on every tool call) and with "
        "`Limits(tool_timeout_s=None)` (\"inline tools\": no timeout). Subprocess forks "
        "sandboxes from its zygote (*direct start*: `zygote=False`, a new interpreter per "
        "sandbox); docker runs a container per session by default (*process isolation*: "
        "`isolation=\"process\"`, a forked sandbox in a shared warm container). The "
        "isolation-mode variants run only the fresh-session workloads (trivial fresh run, "
        "fresh sessions, batch): elsewhere they run the same interpreter as their default "
        "mode. Docker uses the default warm pool and waits for it to be full before each "
        "measured sample.",
        "- Raw round trips: a 64-byte message echoed by a child `python -I` over pipes / a "
        "unix socketpair / attached stdio of a container; protocol pings go through the "
        "real sandbox server (`{\"type\": \"ping\"}` → `pong`).",
        "- Raw data: `benchmarks/results.json` (every sample); "
        "`python -m benchmarks --from-json benchmarks/results.json` rewrites this report "
        "from it.",
        "- Hot spots found while profiling, with proposed fixes: `benchmarks/HOTSPOTS.md`.",
    ])
