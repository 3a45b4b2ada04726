"""What the framework adapter tests share: tools, a governed runtime, and the checks.

Each adapter test drives a real framework (its own test model, or the fake
OpenAI server) through a list of scripts, and hands the texts the framework
passed back to its model to the checks here: the same texts toolscript's own
agent would send, the session's variables kept from call to call, and the
runtime's approval, limits, audit and telemetry all in force.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from toolscript.runtime.integrations.telemetry import instrument

from toolscript import AuditLog, Decision, Injected, Limits, Runtime, ToolCallRequest, tool

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/ -> `fakes`

# The scripts every adapter runs, and what its model must read back for each.
PERSIST_SCRIPTS = ["x = add(1, 2)\nx", "x * 10", "1 / 0"]
PERSIST_TEXTS = ["value:\n3", "value:\n30"]
FAILED_PREFIX = "error: script_error: ZeroDivisionError: division by zero"

GOVERNED_SCRIPTS = [
    "delete_order(order_id=7)",
    "[add(i, i) for i in range(5)]",
    "whoami()",
]

APPROVAL_STOP_SCRIPT = "delete_order(order_id=8)"


@tool(read_only=True)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def delete_order(order_id: int) -> str:
    """Delete an order (the approval hook of the tests refuses it)."""
    return f"deleted {order_id}"


@tool(read_only=True)
def whoami(user_id: Injected[str]) -> str:
    """The user this session acts for (filled by the host)."""
    return user_id


TOOLS = [add, delete_order, whoami]


def deny_deletes(request: ToolCallRequest) -> Decision:
    """Approve everything but ``delete_order``."""
    if request.name == "delete_order":
        return Decision(False, "no deletes in tests")
    return Decision(True)


@dataclass
class Governed:
    """A runtime with an approval hook, a tool-call limit, an audit log and tracing."""

    runtime: Runtime
    audit_path: Path
    exporter: InMemorySpanExporter
    hook_requests: list[ToolCallRequest] = field(default_factory=list)

    def audit_lines(self) -> list[dict[str, Any]]:
        """The audit log's records (after the runtime is closed or flushed)."""
        text = self.audit_path.read_text()
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def instrument(self, runtime: Runtime) -> None:
        """Keep ``runtime`` and trace it into :attr:`exporter`."""
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        instrument(runtime, tracer_provider=provider)
        self.runtime = runtime

    def span_names(self) -> list[str]:
        """The names of the finished spans."""
        return [span.name for span in self.exporter.get_finished_spans()]


def governed_options(tmp_path: Path, *, user: str = "ada") -> tuple[dict[str, Any], Governed]:
    """Runtime options for :func:`governed_runtime` (for adapters that build their own
    runtime), and the :class:`Governed` record whose ``runtime`` is still to be set;
    ``instrument`` it once the runtime exists (``Governed.instrument``)."""
    exporter = InMemorySpanExporter()
    audit_path = tmp_path / "audit.jsonl"
    governed = Governed(None, audit_path, exporter)  # type: ignore[arg-type]

    def approve(request: ToolCallRequest) -> Decision:
        governed.hook_requests.append(request)
        return deny_deletes(request)

    options = {
        "limits": Limits(max_tool_calls=3), "approve": approve,
        "audit": AuditLog(audit_path, key=None), "context": {"user_id": user},
    }
    return options, governed


def governed_runtime(
    make_runtime: Callable[..., Runtime], tmp_path: Path, *, user: str = "ada",
) -> Governed:
    """A runtime on the test's backend: ``deny_deletes`` approval, at most 3 tool
    calls per run, an audit log, OpenTelemetry spans in memory, ``user_id`` context."""
    options, governed = governed_options(tmp_path, user=user)
    governed.instrument(make_runtime(TOOLS, **options))
    return governed


def check_persist_texts(texts: list[str]) -> None:
    """The texts of :data:`PERSIST_SCRIPTS`: values from one session, then the error."""
    assert texts[:2] == PERSIST_TEXTS, texts
    assert texts[2].startswith(FAILED_PREFIX), texts[2]
    assert len(texts) == 3


def check_governed(governed: Governed, texts: list[str], *, user: str = "ada") -> None:
    """The texts of :data:`GOVERNED_SCRIPTS`, and the audit log and spans behind them."""
    denied, limited, who = texts
    assert denied.startswith("error: tool_error: ToolDenied: delete_order() was denied: "
                             "no deletes in tests"), denied
    assert limited.startswith("error: tool_call_limit:"), limited
    assert "3 tool calls" in limited
    assert who == f"value:\n{json.dumps(user)}", who
    assert [r.name for r in governed.hook_requests].count("delete_order") == 1
    governed.runtime.close()  # flushes the audit log
    lines = governed.audit_lines()
    by_tool = [(line["tool"], line["outcome"]) for line in lines]
    assert by_tool[0] == ("delete_order", "denied")
    assert by_tool[1:5] == [("add", "ok")] * 3 + [("add", "tool_call_limit")]
    assert by_tool[5:] == [("whoami", "ok")]
    assert len({line["session_id"] for line in lines}) == 1  # one session for all
    names = governed.span_names()
    assert names.count("execute_script") == 3, names
    assert names.count("execute_tool delete_order") == 1, names
    assert names.count("execute_tool add") == 4, names


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and its causes and contexts (frameworks wrap what a tool raises)."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        item = todo.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        todo += [item.__cause__, item.__context__]
        todo += list(getattr(item, "exceptions", ()))


def stop_on_delete(request: ToolCallRequest) -> bool:
    """An approval hook that stops the whole run at ``delete_order``."""
    from toolscript import ApprovalRequired

    if request.name == "delete_order":
        raise ApprovalRequired("delete_order needs a human")
    return True
