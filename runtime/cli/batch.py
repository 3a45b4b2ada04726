"""``toolscript batch``: run one script per input item, with progress and resume.

::

    toolscript batch report.py --inputs stores.jsonl --tools examples/store_tools.py \\
        --concurrency 4 --out results.jsonl [--resume] [--retry-failed] \\
        [--cluster tcp://HOST:8786]

Exit status: 0 when every item of the batch has a successful result, 1 when
some have an error (in this run, or left from an earlier one), 2 on a usage
or configuration error (nothing ran), 130 when interrupted (run again with
``--resume``).

The first Ctrl-C or SIGTERM stops taking new items and waits for the running
ones to finish and be recorded; a second one abandons them and exits at once
(they run again on ``--resume``).

The Runtime is built like every command's (:func:`~toolscript.runtime.cli.main.build_runtime`):
the whole profile in force, with the options over it. With ``--cluster`` the
workers rebuild it from a :class:`~toolscript.runtime.batch.run.RuntimeSpec`, which
carries tools, backend, approval and limits only: a profile (or option) that
also sets an audit log, context, modules, backend options, an idempotency
store or required isolation is refused there rather than silently dropped.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from toolscript.runtime.batch.items import check_item_variable, check_script_syntax, scan_jsonl
from toolscript.runtime.batch.run import BatchReport, ItemOptions, RuntimeSpec, run_batch
from toolscript.runtime.batch.stop import BatchStop

__all__ = ["add_batch_command", "cmd_batch", "runtime_spec_from_args"]

EXIT_INTERRUPTED = 130


def add_batch_command(subparsers: Any) -> None:
    """Register ``toolscript batch`` (a ``cli._EXTRA_COMMANDS`` hook)."""
    from toolscript.runtime.cli.main import add_common_runtime_options

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "batch",
        help="run a script once per input item (JSONL), with progress and resume",
        description="Run SCRIPT once per line of --inputs, each item in its own sandbox "
        "session with the item bound to a variable (default: item).",
    )
    parser.add_argument("script", help="path of the script")
    parser.add_argument(
        "--inputs",
        required=True,
        metavar="ITEMS.jsonl",
        help="one JSON item per line (- for standard input)",
    )
    add_common_runtime_options(parser)
    parser.add_argument(
        "--concurrency",
        type=int,
        default=4,
        metavar="N",
        help="items running at once (default 4; per worker with --cluster)",
    )
    parser.add_argument(
        "--out",
        metavar="RESULTS.jsonl",
        help="results file (JSONL); enables the checkpoint and --resume. "
        "Without it results go to standard output",
    )
    parser.add_argument(
        "--checkpoint", metavar="PATH", help="checkpoint file (default: OUT.checkpoint)"
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted batch: items finished in OUT are skipped, items "
        "that never finished run",
    )
    parser.add_argument(
        "--retry-failed",
        nargs="?",
        const="all",
        default=None,
        metavar="TYPE,...",
        help="with --resume (implied): also run again the items whose result is an error, "
        "or only those with these error types (e.g. infrastructure,worker_lost)",
    )
    parser.add_argument(
        "--on-bad-line",
        default="report",
        choices=["report", "record"],
        help="an input line that is not an item: report every such line by number and run "
        "nothing (default), or record each as an invalid_item result and run the rest",
    )
    parser.add_argument(
        "--item-var",
        default="item",
        metavar="NAME",
        help="variable the item is bound to (default: item)",
    )
    parser.add_argument(
        "--no-items", action="store_true", help="do not copy each item into its result line"
    )
    parser.add_argument(
        "--full-tool-calls",
        action="store_true",
        help="record every tool call in full in the results",
    )
    parser.add_argument(
        "--progress",
        default="auto",
        choices=["auto", "rich", "plain", "none"],
        help="progress display on standard error (default: auto)",
    )
    parser.add_argument(
        "--summary-json", metavar="PATH", help="also write the summary as JSON to PATH"
    )
    parser.add_argument(
        "--cluster", metavar="tcp://HOST:PORT", help="distribute items over this Dask scheduler"
    )
    parser.set_defaults(handler=cmd_batch)


_NOT_CARRIED = ("audit", "context", "context_env", "modules", "backend_options", "idempotency",
                "require_isolation")


def runtime_spec_from_args(args: argparse.Namespace) -> RuntimeSpec:
    """A :class:`RuntimeSpec` for cluster workers: the profile's tools, backend, approval
    and limits with the options over them (tool files made absolute).

    Raises:
        ConfigurationError: the profile or the options set something a spec
            cannot carry to the workers (audit, context, modules, ...).
    """
    from toolscript.errors import ConfigurationError

    profile = getattr(args, "profile_settings", None)
    tools = list(profile.tool_specs()) if profile is not None else []
    limits: dict[str, Any] = dict(profile.limits) if profile is not None else {}
    dropped = [key for key in _NOT_CARRIED if profile is not None
               and _is_set(key, getattr(profile, key, None))]
    if getattr(args, "audit", None):
        dropped.append("--audit")
    if dropped:
        raise ConfigurationError(
            f"--cluster workers are built from tools, backend, approval and limits only; "
            f"the profile{' or options' if '--audit' in dropped else ''} also set "
            f"{', '.join(dropped)}, which would be dropped: run without --cluster, or use a "
            "profile without them"
        )
    for spec in args.tools:
        path = Path(spec)
        tools.append(str(path.resolve()) if spec.endswith(".py") or path.is_file() else spec)
    if args.timeout is not None:
        limits["wall_time_s"] = args.timeout
    if args.memory_mb is not None:
        limits["memory_mb"] = args.memory_mb
    return RuntimeSpec(
        tools=tuple(tools),
        backend=args.backend,
        approve=args.approve,
        limits=tuple(sorted(limits.items())),
    )


def _is_set(key: str, value: Any) -> bool:
    # an empty modules list is a setting (no modules); an empty table is not
    return value is not None and (key == "modules" or bool(value))


def _retry_failed(value: str | None) -> bool | frozenset[str]:
    if value is None:
        return False
    if value == "all":
        return True
    types = frozenset(t.strip() for t in value.split(",") if t.strip())
    if not types:
        from toolscript.errors import ConfigurationError

        raise ConfigurationError("--retry-failed takes error types separated by commas")
    return types


def cmd_batch(args: argparse.Namespace) -> int:
    """``toolscript batch``."""
    from toolscript.runtime.cli.main import build_runtime

    from toolscript.errors import ConfigurationError

    script = Path(args.script).read_text("utf-8")
    retry = _retry_failed(args.retry_failed)
    if (args.resume or retry) and not args.out:
        raise ConfigurationError("--resume and --retry-failed need --out (the results file "
                                 "to continue)")
    if args.approve == "ask":
        raise ConfigurationError("batch jobs cannot ask at the terminal for each call: use "
                                 "--approve allow, defer, deny or default")
    check_item_variable(args.item_var)
    check_script_syntax(script, args.script)
    spec = runtime_spec_from_args(args) if args.cluster else None
    inputs = scan_jsonl(args.inputs)
    if args.on_bad_line == "report":
        inputs.refuse_bad_lines()
    options = ItemOptions(
        item_var=args.item_var, include_item=not args.no_items, full_tool_calls=args.full_tool_calls
    )
    stop = BatchStop()
    runtime = None
    try:
        if args.cluster:
            executor: Any = _dask_executor(args, spec, script, options)
        else:
            runtime = build_runtime(args)
            executor = None
        # Until here a Ctrl-C simply ends the command (nothing runs yet); from here
        # run_batch turns SIGINT and SIGTERM into stop requests.
        report = run_batch(
            runtime,
            script,
            inputs.items(),
            concurrency=args.concurrency,
            out=args.out,
            checkpoint=args.checkpoint,
            resume=args.resume,
            retry_failed=retry,
            options=options,
            progress=args.progress,
            total=inputs.total,
            executor=executor,
            stop=stop,
            stop_signals=(signal.SIGINT, signal.SIGTERM),
        )
    finally:
        if runtime is not None and not stop.abandoning:
            runtime.close()
    _report(args, report)
    summary = report.summary
    if summary.abandoned or stop.abandoning:
        # Running items are abandoned: exit now rather than wait for their threads.
        sys.stderr.write("toolscript: batch abandoned; run again with --resume\n")
        sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)
    if summary.interrupted:
        return EXIT_INTERRUPTED
    return 0 if summary.all_ok else 1


def _dask_executor(args: argparse.Namespace, spec: RuntimeSpec | None, script: str,
                   options: ItemOptions) -> Any:
    import importlib.util

    from toolscript.errors import ConfigurationError

    if importlib.util.find_spec("distributed") is None:
        raise ConfigurationError("--cluster needs Dask: pip install 'toolscript[dask]'")
    from toolscript.runtime.batch.distributed import DaskExecutor

    assert spec is not None
    return DaskExecutor(args.cluster, spec, script, options, concurrency=args.concurrency)


def _report(args: argparse.Namespace, report: BatchReport) -> None:
    """Results (without --out) to standard output; the summary to standard error."""
    if args.out is None:
        for record in report.results:
            sys.stdout.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        sys.stdout.flush()
    summary = report.summary
    sys.stderr.write(summary.render() + "\n")
    sys.stderr.flush()
    if args.summary_json:
        from toolscript.runtime.cli.main import config_in_force

        data = {**summary.to_dict(), "config": config_in_force(args)}
        Path(args.summary_json).write_text(json.dumps(data, indent=2) + "\n")
