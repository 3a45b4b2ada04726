"""How the planner sees a run's output when provenance is on: untrusted parts
as references (type, size, source), never as text."""

from __future__ import annotations

import json
from typing import Any


def reference(value: Any, sources: list[str]) -> str:
    """``<untrusted str, 812 chars, from read_inbox>``."""
    kind = type(value).__name__
    if isinstance(value, str):
        size = f"{len(value)} chars"
    elif isinstance(value, (list, dict)):
        size = f"{len(value)} items"
    else:
        size = f"{len(json.dumps(value))} chars as JSON"
    return f"<untrusted {kind}, {size}, from {', '.join(sources)}>"


def render_stdout(stdout: str, spans: list[list[Any]]) -> str:
    """``stdout`` with each untrusted span replaced by a reference."""
    if not spans:
        return stdout
    parts = []
    at = 0
    for start, end, sources in sorted(spans, key=lambda span: span[0]):
        start, end = max(start, at), min(end, len(stdout))
        if end <= start:
            continue
        parts.append(stdout[at:start])
        text = stdout[start:end]
        tail = "\n" if text.endswith("\n") else ""
        parts.append(reference(text.removesuffix("\n"), sources) + tail)
        at = end
    parts.append(stdout[at:])
    return "".join(parts)


def render_result(message: dict[str, Any], show_untrusted: bool) -> dict[str, Any]:
    """A sandbox ``result`` message as the planner may see it."""
    labels = message.get("labels")
    if show_untrusted or not labels:
        return message
    shown = dict(message)
    shown["stdout"] = render_stdout(message["stdout"], labels["stdout"])
    sources = labels["value"]
    if sources:
        if message.get("ok") and message.get("value") is not None:
            shown["value"] = reference(message["value"], sources)
        error = message.get("error")
        if error:
            shown["error"] = {**error, "message": reference(error.get("message", ""), sources)
                              + f" ({error.get('type')}: the message depends on untrusted data)"}
    return shown
