"""Error text the host hands to a script or a model: bounded, without host details.

A tool's exception text, a crashed sandbox's stderr or a host error can be
megabytes long and can name the host's files (``/home/app/venv/lib/...``) or
carry a whole traceback. :func:`clean_message` cuts such text to a limit
(``Limits.max_output_chars``), drops traceback lines, and replaces absolute
paths that lead into this host's file system with ``.../basename``. A path
whose first directory does not exist here (``/v1/users``, ``/data/q1.csv``
from the model's own arguments) is left alone.
"""

from __future__ import annotations

import functools
import os
import re

from toolscript.sandbox.toolcalls import CATCHABLE_BUILTIN_EXCEPTIONS

__all__ = ["cap_text", "clean_message", "crash_detail", "safe_str"]

_TRACEBACK_LINE = re.compile(
    r"^(Traceback \(most recent call last\):"
    r"|\s+File \".*\", line \d+.*"
    r"|\s*[~^]+\s*"
    r"|During handling of the above exception, another exception occurred:"
    r"|The above exception was the direct cause of the following exception:)$"
)
_POSIX_PATH = re.compile(r"(?<![\w:/.~-])/([^\s/'\"<>|:;,()\[\]{}]+)(?:/[^\s/'\"<>|:;,()\[\]{}]*)+")
_WINDOWS_PATH = re.compile(r"(?<![\w])[A-Za-z]:\\(?:[^\s\\'\"<>|:;,()\[\]{}]+\\)+"
                           r"([^\s\\'\"<>|:;,()\[\]{}]*)")


def cap_text(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    marker = f"... [{len(text) - limit} more characters cut]"
    keep = max(limit - len(marker), 0)
    return (text[:keep] + marker)[:limit] if limit > len(marker) else text[:limit]


@functools.lru_cache(maxsize=1)
def _host_roots() -> frozenset[str]:
    try:
        return frozenset(os.listdir("/"))
    except OSError:  # pragma: no cover - a host without a readable root
        return frozenset()


def _scrub_posix(match: re.Match[str]) -> str:
    if match.group(1) not in _host_roots():
        return match.group(0)
    base = match.group(0).rstrip("/").rsplit("/", 1)[-1]
    return f".../{base}"


def _strip_tracebacks(text: str) -> str:
    if "Traceback" not in text and 'File "' not in text:
        return text
    lines = text.splitlines()
    kept: list[str] = []
    skip_source = False
    for line in lines:
        if _TRACEBACK_LINE.match(line):
            skip_source = line.lstrip().startswith("File ")
            continue
        if skip_source and line.startswith("    "):
            skip_source = False
            continue  # the source line printed under a "File ..." line
        skip_source = False
        kept.append(line)
    return "\n".join(kept).strip()


def clean_message(text: str, limit: int, *, paths: bool = True) -> str:
    """``text`` without traceback lines, with host paths reduced to their last
    part (unless ``paths`` is False), and cut to ``limit`` characters."""
    if len(text) > 4 * limit + 4096:
        text = text[: 4 * limit + 4096]  # never scan megabytes to keep a few thousand
    text = _strip_tracebacks(text)
    if paths and ("/" in text or "\\" in text):
        text = _POSIX_PATH.sub(_scrub_posix, text)
        text = _WINDOWS_PATH.sub(lambda m: f"...\\{m.group(1)}", text)
    return cap_text(text, limit)


def safe_str(value: object) -> str:
    """``str(value)``, or a placeholder naming its type when that fails."""
    try:
        return str(value)
    except Exception:
        return f"<unprintable {type(value).__name__}>"


def crash_detail(detail: str) -> str:
    """A backend's death detail for the model: the reason and the last line of
    the sandbox's stderr (normally ``ExceptionType: message``), no traceback."""
    head, sep, stderr = detail.partition("; stderr:")
    if not sep:
        return head
    last = [line.strip() for line in _strip_tracebacks(stderr).splitlines() if line.strip()]
    return f"{head}; last error line: {last[-1]}" if last else head


def builtin_exception_of(exc: BaseException) -> str | None:
    """The name of the most specific class in :data:`CATCHABLE_BUILTIN_EXCEPTIONS`
    that ``exc`` is an instance of (a tool's own ``class NotFound(KeyError)``
    gives ``"KeyError"``), or ``None``."""
    for kind in type(exc).__mro__:
        if kind in CATCHABLE_BUILTIN_EXCEPTIONS:
            return kind.__name__
    return None
