"""Batch jobs: one approved script, run once per input item.

- :mod:`~toolscript.runtime.batch.run`: :func:`run_batch`, :class:`ItemOptions`,
  :class:`RuntimeSpec` and the local executor;
- :mod:`~toolscript.runtime.batch.items`: reading and checking JSONL items;
- :mod:`~toolscript.runtime.batch.store`: the results file and its checkpoint;
- :mod:`~toolscript.runtime.batch.progress`, :mod:`~toolscript.runtime.batch.summary`,
  :mod:`~toolscript.runtime.batch.stop`: progress display, the final report,
  stop requests;
- :mod:`~toolscript.runtime.batch.distributed`: a Dask executor (optional extra).

The names of :mod:`~toolscript.runtime.batch.run` are importable from here, as
``toolscript.runtime.batch``.
"""

from toolscript.runtime.batch.run import (
    INFRASTRUCTURE_ERRORS,
    BatchReport,
    BatchStop,
    BatchSummary,
    InvalidItem,
    ItemExecutor,
    ItemOptions,
    LocalExecutor,
    RuntimeSpec,
    bind_source,
    read_jsonl_items,
    run_batch,
    run_item,
)

__all__ = [
    "INFRASTRUCTURE_ERRORS",
    "BatchReport",
    "BatchStop",
    "BatchSummary",
    "InvalidItem",
    "ItemExecutor",
    "ItemOptions",
    "LocalExecutor",
    "RuntimeSpec",
    "bind_source",
    "read_jsonl_items",
    "run_batch",
    "run_item",
]
