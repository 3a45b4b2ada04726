"""Batch items over a Dask cluster (the ``dask`` extra: ``dask[distributed]``).

``toolscript batch ... --cluster tcp://SCHEDULER:8786`` (or
``run_batch(..., executor=DaskExecutor(...))``) sends each item to a Dask
worker as one task. Every worker process builds its own Runtime, once, from
the :class:`~toolscript.runtime.batch.run.RuntimeSpec` (tool modules or files,
backend, approval policy, limits), so tools run next to the worker's
sandboxes and nothing but JSON items and result records crosses the
network. The client side keeps what :func:`run_batch` always does: the
results file, the checkpoint, progress and the summary.

Workers need toolscript and the tool modules importable (or the tool files at
the same absolute paths), plus whatever the backend needs (a Docker engine
for ``--backend docker``; see docs/scaling.md). A worker runs as many items
at once as it has threads (``dask worker --nthreads N``).

Before the first item, every worker connected at that moment builds its
Runtime once (a probe task per worker): a tool module missing on a worker, or
a backend it cannot start, refuses the batch with the worker's address and
the error instead of failing every item. A worker that joins later and cannot
build its Runtime fails its items with ``infrastructure`` errors, which
``--retry-failed`` runs again once the worker is fixed.

Stopping: a graceful stop (the first Ctrl-C) waits for every item already
handed to the cluster (at most the window) and records it. Abandoning (the
second) cancels them; Dask cannot interrupt a task that already runs, so
such an item may still finish its write tools on the worker with nobody
recording it, and it runs again on resume.

At-least-once: if a worker dies while running an item, Dask runs the task
again elsewhere, so that item's write tools may run twice, just like an item
interrupted by a crash of the client (see :mod:`~toolscript.runtime.batch.store`).
"""

from __future__ import annotations

import atexit
import threading
import uuid
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from toolscript.runtime.batch.run import ItemOptions, RuntimeSpec, run_item

from toolscript.errors import ConfigurationError

if TYPE_CHECKING:
    from toolscript.runtime.runtime import Runtime

__all__ = ["DaskExecutor", "probe_worker", "run_item_on_worker"]

_RUNTIMES: dict[RuntimeSpec, Runtime] = {}
_RUNTIMES_LOCK = threading.Lock()


def _runtime_for(spec: RuntimeSpec) -> Runtime:
    """This process's Runtime for ``spec`` (built on first use, closed at exit)."""
    with _RUNTIMES_LOCK:
        runtime = _RUNTIMES.get(spec)
        if runtime is None:
            if not _RUNTIMES:
                atexit.register(_close_runtimes)
            runtime = _RUNTIMES[spec] = spec.build()
        return runtime


def _close_runtimes() -> None:
    with _RUNTIMES_LOCK:
        runtimes = list(_RUNTIMES.values())
        _RUNTIMES.clear()
    for runtime in runtimes:
        runtime.close()


def probe_worker(spec: RuntimeSpec) -> str | None:
    """The Dask task that checks one worker: build its Runtime for ``spec`` (kept
    for the items); return why it cannot, or None."""
    try:
        _runtime_for(spec)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def run_item_on_worker(
    spec: RuntimeSpec, script: str, index: int, item: Any, options: ItemOptions
) -> dict[str, Any]:
    """The Dask task of one item: :func:`~toolscript.runtime.batch.run.run_item` on
    this worker's Runtime; the record names the worker."""
    try:
        runtime = _runtime_for(spec)
    except Exception as exc:
        return {
            "index": index,
            "ok": False,
            "value": None,
            "stdout": "",
            "tool_calls": 0,
            "tool_call_errors": 0,
            "error": {
                "type": "infrastructure",
                "message": f"the worker cannot build its runtime: {type(exc).__name__}: {exc}",
                "exception": type(exc).__name__,
            },
        }
    record = run_item(runtime, script, index, item, options)
    try:
        from distributed import get_worker

        record["worker"] = get_worker().address
    except (ImportError, ValueError):
        pass
    return record


class DaskExecutor:
    """An :class:`~toolscript.runtime.batch.run.ItemExecutor` over a Dask cluster.

    Args:
        cluster: a scheduler address (``tcp://host:8786``) or a ready
            ``distributed.Client``.
        spec: how each worker builds its Runtime.
        script: the batch script.
        options: how items are bound and recorded.
        concurrency: items in flight per worker (the window is this times the
            number of workers when the batch starts).
        probe: first have every connected worker build its Runtime, and refuse
            the batch if one cannot.

    Raises:
        ConfigurationError: a worker cannot build its Runtime (the probe).
    """

    def __init__(
        self,
        cluster: Any,
        spec: RuntimeSpec,
        script: str,
        options: ItemOptions,
        *,
        concurrency: int = 4,
        probe: bool = True,
    ) -> None:
        from distributed import Client

        self._own_client = isinstance(cluster, str)
        if isinstance(cluster, str):
            cluster = Client(cluster)  # type: ignore[no-untyped-call]
        self.client = cluster
        self.spec = spec
        self.script = script
        self.options = options
        workers = len(self.client.scheduler_info().get("workers", {})) or 1
        self.window = max(1, concurrency) * workers
        self._batch = uuid.uuid4().hex[:8]
        self._pending: set[Any] = set()
        if probe:
            try:
                self._probe(list(self.client.scheduler_info().get("workers", {})))
            except BaseException:
                self.close()
                raise

    def _probe(self, workers: list[str]) -> None:
        """Build the Runtime on each of ``workers``; refuse the batch if one cannot."""
        futures = {
            address: self.client.submit(
                probe_worker,
                self.spec,
                key=f"toolscript-{self._batch}-probe-{n}",
                workers=[address],
                allow_other_workers=False,
                pure=False,
            )
            for n, address in enumerate(workers)
        }
        problems = []
        for address, future in futures.items():
            try:
                problem = future.result()
            except Exception as exc:
                problem = f"the probe task failed: {type(exc).__name__}: {exc}"
            if problem is not None:
                problems.append(f"{address}: {problem}")
        if problems:
            raise ConfigurationError(
                f"{len(problems)} of {len(workers)} Dask worker(s) cannot build the batch's "
                f"runtime, so no item was run: {'; '.join(problems)} (install the tools and "
                "toolscript on every worker, or pass tool files at paths the workers have)"
            )

    def submit(self, index: int, item: Any) -> Any:
        """Send one item to the cluster."""
        future = self.client.submit(
            run_item_on_worker,
            self.spec,
            self.script,
            index,
            item,
            self.options,
            key=f"toolscript-{self._batch}-{index}",
            pure=False,
        )
        self._pending.add(future)
        return future

    def wait(self, handles: Collection[Any], timeout: float) -> list[tuple[Any, dict[str, Any]]]:
        """Finished tasks with their records; a task that failed as a whole (e.g. its
        worker kept dying) becomes a ``worker_lost`` record."""
        from distributed import wait

        try:
            done, _ = wait(
                list(handles),
                timeout=timeout,  # type: ignore[no-untyped-call]
                return_when="FIRST_COMPLETED",
            )
        except TimeoutError:
            return []
        out = []
        for future in done:
            self._pending.discard(future)
            if future.status == "finished":
                out.append((future, future.result()))
            else:
                exc = future.exception() if future.status == "error" else None
                message = f"{type(exc).__name__}: {exc}" if exc else f"task {future.status}"
                out.append(
                    (
                        future,
                        {
                            "ok": False,
                            "value": None,
                            "stdout": "",
                            "tool_calls": 0,
                            "tool_call_errors": 0,
                            "error": {"type": "worker_lost", "message": message},
                        },
                    )
                )
        return out

    def close(self) -> None:
        """Cancel unfinished tasks (after an abandon); close the client if this
        executor opened it."""
        if self._pending:
            self.client.cancel(list(self._pending))
            self._pending.clear()
        if self._own_client:
            self.client.close()
