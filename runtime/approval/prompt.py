"""The terminal prompt of ``--approve ask``: a person approves each call.

What the person reads must be what runs. :class:`TerminalApproval` shows
the tool and every argument, in the tool's parameter order (the request's
final arguments: defaults filled, values converted), plus the values the
host injects. Nothing is cut off at a length: a long string is elided in its
middle (``"abc…[9,800 more characters]…xyz"``), so an argument written
after a long one is still shown, and every argument name always appears.
Control characters (C0, DEL, C1), bidirectional overrides and isolates,
zero-width and other invisible characters, and line or paragraph separators
are shown escaped (``\\u202e``), so a value cannot rewrite or hide the
prompt.

Answering ``a`` approves every later call of that tool *in the same run*;
the next run asks again.
"""

from __future__ import annotations

import json
import sys
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, TextIO

from toolscript.runtime.approval.hooks import Decision, ToolCallRequest

__all__ = ["TerminalApproval", "format_request", "show_text", "show_value"]

MAX_STRING = 240
"""Longest string shown whole; longer ones keep their head and tail."""
MAX_ITEMS = 60
"""Most list items shown; longer lists keep their head and tail."""
_RUNS_REMEMBERED = 32

_SHOWN_AS_IS = {" "}
_ESCAPED_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"}


def _escape_char(char: str) -> str:
    if char in _SHOWN_AS_IS:
        return char
    if char == "\\":
        return "\\\\"
    if char == '"':
        return '\\"'
    code = ord(char)
    if unicodedata.category(char) in _ESCAPED_CATEGORIES or 0xFE00 <= code <= 0xFE0F \
            or code in (0x034F, 0x115F, 0x1160, 0x3164, 0xFFA0):
        if code <= 0xFF:
            return f"\\x{code:02x}"
        if code <= 0xFFFF:
            return f"\\u{code:04x}"
        return f"\\U{code:08x}"
    return char


def show_text(text: str, limit: int = MAX_STRING) -> str:
    """``text`` quoted, escaped, and elided in the middle if longer than ``limit``."""
    if len(text) > limit:
        head, tail = text[: limit // 2], text[-(limit // 2):]
        hidden = len(text) - len(head) - len(tail)
        body = ("".join(map(_escape_char, head)) + f"…[{hidden:,} more characters]…"
                + "".join(map(_escape_char, tail)))
    else:
        body = "".join(map(_escape_char, text))
    return f'"{body}"'


def show_value(value: Any, depth: int = 0) -> str:
    """One argument's value (JSON data) for a person: escaped, long parts elided."""
    if isinstance(value, str):
        return show_text(value)
    if depth > 30:
        return "…[nested too deeply]…"
    if isinstance(value, Mapping):
        items = [f"{show_text(str(k), 80)}: {show_value(v, depth + 1)}" for k, v in value.items()]
        return "{" + ", ".join(items) + "}"
    if isinstance(value, (list, tuple)):
        values = list(value)
        if len(values) > MAX_ITEMS:
            half = MAX_ITEMS // 2
            shown = ([show_value(v, depth + 1) for v in values[:half]]
                     + [f"…[{len(values) - 2 * half:,} more items]…"]
                     + [show_value(v, depth + 1) for v in values[-half:]])
        else:
            shown = [show_value(v, depth + 1) for v in values]
        return "[" + ", ".join(shown) + "]"
    try:
        return show_text(json.dumps(value), 80)[1:-1]
    except (TypeError, ValueError):
        return show_text(repr(value), 80)


def format_request(request: ToolCallRequest) -> str:
    """The prompt's text for one call (without the question line)."""
    flags = ["read-only" if request.read_only else "writes"]
    if request.requires_approval:
        flags.append("requires approval")
    lines = [f"Approve {request.tool} ({', '.join(flags)})?  "
             f"run {request.run_id}, call {request.call_id}, from {request.source}"]
    args = request.args if isinstance(request.args, Mapping) else {"(arguments)": request.args}
    width = max((len(str(name)) for name in args), default=0)
    if not args:
        lines.append("  (no arguments)")
    for name, value in args.items():
        lines.append(f"  {name!s:<{width}} = {show_value(value)}")
    if request.injected:
        injected = ", ".join(f"{name} = {show_value(value)}"
                             for name, value in request.injected.items())
        lines.append(f"  injected by the host: {injected}")
    return "\n".join(lines)


class TerminalApproval:
    """``--approve ask``: show each call that writes (or requires approval) and wait
    for y/n, or ``a`` = approve every call of this tool for the rest of this run.

    Args:
        stdin: where answers are read (default ``sys.stdin``).
        stderr: where prompts are written (default ``sys.stderr``).
    """

    def __init__(self, stdin: TextIO | None = None, stderr: TextIO | None = None) -> None:
        self.stdin = stdin or sys.stdin
        self.stderr = stderr or sys.stderr
        self._always: OrderedDict[str, set[str]] = OrderedDict()
        self._lock = threading.Lock()

    def approved_for_run(self, run_id: str, tool: str) -> bool:
        """True if ``a`` was answered for ``tool`` in run ``run_id``."""
        with self._lock:
            return tool in self._always.get(run_id, ())

    def _remember(self, run_id: str, tool: str) -> None:
        with self._lock:
            self._always.setdefault(run_id, set()).add(tool)
            self._always.move_to_end(run_id)
            while len(self._always) > _RUNS_REMEMBERED:  # forgetting only asks again
                self._always.popitem(last=False)

    def __call__(self, request: ToolCallRequest) -> Decision:
        if request.read_only and not request.requires_approval:
            return Decision.allow("read-only")
        if self.approved_for_run(request.run_id, request.tool):
            return Decision.allow("approved for all calls of this tool in this run")
        with self._lock:  # one prompt at a time
            self.stderr.write("\n" + format_request(request) + "\n"
                              f"[y]es / [n]o / [a]ll calls of {request.tool} in this run: ")
            self.stderr.flush()
            answer = self.stdin.readline()
        if not answer:
            return Decision.deny("no answer (end of input)")
        answer = answer.strip().lower()
        if answer in ("a", "all"):
            self._remember(request.run_id, request.tool)
            return Decision.allow("approved at the terminal for all calls of this tool")
        if answer in ("y", "yes"):
            return Decision.allow("approved at the terminal")
        return Decision.deny("denied at the terminal")
