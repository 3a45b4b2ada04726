"""Default per-run limits: one table for the sandbox and the host.

The sandbox enforces wall-clock time, CPU time, printed output and the size of
the final value itself; the host's :class:`~toolscript.runtime.limits.Limits`
sends them with every run. Both take their defaults from here, so a sandbox
started without a ``limits`` message behaves like a default runtime. The
sandbox may not import the host, so the table lives here and the host imports
it from ``toolscript.sandbox.defaults``.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "DEFAULT_CPU_TIME_S",
    "DEFAULT_MAX_OUTPUT_CHARS",
    "DEFAULT_MAX_RESULT_BYTES",
    "DEFAULT_WALL_TIME_S",
    "RUN_LIMIT_DEFAULTS",
]

DEFAULT_WALL_TIME_S: Final = 30.0
"""Wall-clock seconds of one run (``Limits.wall_time_s``)."""

DEFAULT_CPU_TIME_S: Final[float | None] = None
"""``Limits.cpu_time_s``: ``None`` means the same as the wall-clock limit, so the
sandbox's own default CPU limit (``RUN_LIMIT_DEFAULTS["cpu_s"]``) is that limit."""

DEFAULT_MAX_OUTPUT_CHARS: Final = 100_000
"""Characters one run may print (``Limits.max_output_chars``)."""

DEFAULT_MAX_RESULT_BYTES: Final = 1_000_000
"""Size of the final value as JSON (``Limits.max_result_bytes``)."""

RUN_LIMIT_DEFAULTS: Final[dict[str, float | int | None]] = {
    "wall_s": DEFAULT_WALL_TIME_S,
    "cpu_s": DEFAULT_WALL_TIME_S,
    "max_output_chars": DEFAULT_MAX_OUTPUT_CHARS,
    "max_result_bytes": DEFAULT_MAX_RESULT_BYTES,
}
"""The defaults under the keys of the protocol's ``run`` message ``limits``:
what ``Limits().run_message()`` sends and what a sandbox uses without one."""
