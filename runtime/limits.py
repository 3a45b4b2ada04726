"""Resource limits of a run, with defaults that fit batch jobs."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from toolscript.sandbox.defaults import (
    DEFAULT_CPU_TIME_S,
    DEFAULT_MAX_OUTPUT_CHARS,
    DEFAULT_MAX_RESULT_BYTES,
    DEFAULT_WALL_TIME_S,
)
from toolscript.sandbox.protocol import (
    MAX_FRAME_BYTES,
    MAX_FRAME_DEPTH,
    MAX_FRAME_ITEMS,
    WireBounds,
)

from toolscript.errors import ConfigurationError


@dataclass(frozen=True)
class Limits:
    """Limits applied to every run of a :class:`~toolscript.Runtime`.

    Each breach ends the run with its own stable ``error.type`` (in
    parentheses) and leaves the runtime usable.

    Attributes:
        wall_time_s: wall-clock time of one run, tool calls included (``timeout``).
        cpu_time_s: CPU time of one run inside the sandbox (``cpu_limit``);
            ``None`` means the same as ``wall_time_s``.
        memory_mb: address space of a sandbox process or container memory
            (``memory_limit``). Not enforced by the inprocess backend.
        max_tool_calls: tool calls attempted in one run (``tool_call_limit``).
        max_output_chars: characters a run may print (``output_limit``).
        max_result_bytes: size of the final value as JSON (``result_limit``).
        tool_timeout_s: default timeout of one tool call (a tool's own
            ``timeout_s`` wins). Calls run inline in the thread serving the
            run, watched by one runtime-wide watchdog thread. A call past its
            timeout is answered ``timeout`` and the run goes on; the tool's
            thread is abandoned (it cannot be stopped, in C code or not) and
            counted (``max_abandoned_threads``). In process the script shares
            that thread, so a call past its timeout ends the run (``timeout``)
            unless the tool is declared ``blocking`` (then it runs on a worker
            thread and the run goes on). ``None``: inline, no timeout, so a
            hanging tool hangs the run.
        max_parallel: tool calls ``parallel()`` runs at once.
        max_pids: processes and threads in a container (docker backend).
        cpus: CPU share of a container (docker backend).
        max_argument_items: values (containers and scalars) in one call's
            arguments that the full schema validator examines; arguments the
            compiled fast check cannot accept at once and that hold more are
            refused (``invalid_arguments``) before validation starts.
        max_argument_depth: nesting depth of one call's arguments examined
            by the full validator (deeper: ``invalid_arguments``).
        max_retained_args_bytes: bytes of tool-call arguments the records of
            one run keep in host memory (about their JSON size); once spent,
            a record keeps the size, SHA-256 and a prefix of its arguments
            instead (``ToolCallRecord.args_omitted``).
        max_abandoned_threads: tool calls of the whole runtime that may go on
            running on a host thread after their timeout (Python cannot stop
            a thread); at the cap, a call that needs a new thread is refused
            (``overloaded``). One run may leave at most ``max_parallel`` such
            calls. ``Runtime.stats()`` reports the current number.
        max_message_bytes: bytes of one protocol message from a sandbox (at most
            the protocol's 64 MiB). A script's call that would be larger is
            refused in the sandbox (``invalid_arguments``), a final value
            (``result_limit``); a process sandbox that sends a larger frame
            anyway has broken the protocol: its run ends ``protocol_error``
            and the sandbox is killed.
        max_message_items: values (containers, keys and scalars) in one such
            message, counted on its bytes before anything is decoded; the same
            rules as ``max_message_bytes``. With the depth bound of the
            protocol (128 levels) these bound the host's memory and time for
            decoding one message (``docs/threat-model.md``, host bounds).
    """

    wall_time_s: float = DEFAULT_WALL_TIME_S
    cpu_time_s: float | None = DEFAULT_CPU_TIME_S
    memory_mb: int = 512
    max_tool_calls: int = 10_000
    max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES
    tool_timeout_s: float | None = 30.0
    max_parallel: int = 16
    max_pids: int = 64
    cpus: float = 1.0
    max_argument_items: int = 100_000
    max_argument_depth: int = 100
    max_retained_args_bytes: int = 4_000_000
    max_abandoned_threads: int = 64
    max_message_bytes: int = MAX_FRAME_BYTES
    max_message_items: int = MAX_FRAME_ITEMS

    def __post_init__(self) -> None:
        positive = {
            "wall_time_s": self.wall_time_s,
            "memory_mb": self.memory_mb,
            "max_tool_calls": self.max_tool_calls,
            "max_output_chars": self.max_output_chars,
            "max_result_bytes": self.max_result_bytes,
            "max_parallel": self.max_parallel,
            "max_pids": self.max_pids,
            "cpus": self.cpus,
            "max_argument_items": self.max_argument_items,
            "max_argument_depth": self.max_argument_depth,
            "max_retained_args_bytes": self.max_retained_args_bytes,
            "max_abandoned_threads": self.max_abandoned_threads,
            "max_message_bytes": self.max_message_bytes,
            "max_message_items": self.max_message_items,
        }
        optional = {"cpu_time_s": self.cpu_time_s, "tool_timeout_s": self.tool_timeout_s}
        for name, value in {**positive, **optional}.items():
            if value is None and name in optional:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ConfigurationError(f"Limits.{name} must be a positive number, got {value!r}")
        if self.max_message_bytes > MAX_FRAME_BYTES:
            raise ConfigurationError(f"Limits.max_message_bytes is at most {MAX_FRAME_BYTES} "
                                     f"(the protocol's frame limit), got {self.max_message_bytes}")
        if self.memory_mb < 64:
            raise ConfigurationError("Limits.memory_mb must be at least 64 (the interpreter "
                                     f"itself needs about 40 MiB), got {self.memory_mb}")

    @property
    def effective_cpu_time_s(self) -> float:
        """CPU limit of one run (``cpu_time_s`` or else ``wall_time_s``)."""
        return self.cpu_time_s if self.cpu_time_s is not None else self.wall_time_s

    def with_changes(self, **changes: Any) -> Limits:
        """A copy with some fields changed."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The limits as a plain dictionary."""
        return asdict(self)

    def wire_bounds(self) -> WireBounds:
        """What the host decodes of one message from a sandbox (bytes, values, depth)."""
        return WireBounds(int(self.max_message_bytes), int(self.max_message_items),
                          MAX_FRAME_DEPTH)

    def run_message(self) -> dict[str, Any]:
        """The per-run limits the sandbox enforces itself."""
        return {
            "wall_s": self.wall_time_s,
            "cpu_s": self.effective_cpu_time_s,
            "max_output_chars": self.max_output_chars,
            "max_result_bytes": self.max_result_bytes,
        }
