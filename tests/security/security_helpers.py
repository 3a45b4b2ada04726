"""Shared pieces of the adversarial suite: expected outcomes, tools, host checks.

Every attack states what must happen to it:

* ``COMPILE`` - refused before anything runs (``error.type == "policy_error"``);
* ``runtime("AttributeError", ...)`` - compiled, then refused by a runtime
  guard: a ``script_error`` whose exception is one of the named types;
* ``tool_error("denied", ...)`` - a tool call refused at the boundary;
* ``limit("timeout", ...)`` - contained by a limit with that error type;
* ``safe(value)`` - runs, and its value proves nothing escaped.

Scripts that escape return ``"PWNED"`` (or a real object that cannot be
JSON), so a run that ends ``ok`` with an unexpected value is a failure too.
"""

from __future__ import annotations

import collections
import collections.abc
import dataclasses
import decimal
import functools
import json
import math
import os
import re
import string
import textwrap
import typing
from dataclasses import dataclass, field
from typing import Any

from toolscript import RunResult, tool


@dataclass(frozen=True)
class Expect:
    """The expected outcome of one attack."""

    kind: str  # "compile" | "runtime" | "limit" | "safe"
    types: tuple[str, ...] = ()
    value: Any = None

    def check(self, result: RunResult, code: str = "") -> None:
        """Assert that ``result`` is this outcome (with a readable message)."""
        where = f"\n--- script ---\n{code}\n--- result ---\n{result.to_dict()}"
        if self.kind == "safe":
            assert result.ok, f"expected a harmless run{where}"
            assert result.value == self.value, f"unexpected value{where}"
            return
        assert not result.ok, f"attack was not refused{where}"
        assert result.error is not None
        if self.kind == "compile":
            assert result.error.type == "policy_error", where
            assert result.error.details.get("retryable") is True, where
        elif self.kind == "runtime":
            assert result.error.type in ("script_error", "tool_error"), where
            if self.types:
                exception = result.error.details.get("exception", "")
                assert exception in self.types, f"expected one of {self.types}{where}"
        elif self.kind == "tool":
            assert result.error.type == "tool_error", where
            assert result.error.details.get("tool_error_type") in self.types, where
        elif self.kind == "limit":
            assert result.error.type in self.types, f"expected one of {self.types}{where}"
        else:  # pragma: no cover - a typo in a case table
            raise AssertionError(f"unknown expectation {self.kind}")


COMPILE = Expect("compile")


def runtime(*exceptions: str) -> Expect:
    """Refused at run time by a guard, with one of these exception types."""
    return Expect("runtime", exceptions)


def tool_error(*error_types: str) -> Expect:
    """A tool call refused with one of these reply error types (``invalid_arguments``...)."""
    return Expect("tool", error_types)


def limit(*error_types: str) -> Expect:
    """Contained by a limit reported as one of these error types."""
    return Expect("limit", error_types)


def safe(value: Any) -> Expect:
    """Runs, and returns exactly ``value`` (nothing escaped)."""
    return Expect("safe", value=value)


@dataclass(frozen=True)
class Attack:
    """One attack script and its expected outcome."""

    id: str
    code: str
    expect: Expect
    note: str = ""


# --- tools the attacks can call ---------------------------------------------------

SHARED_RESULT: dict[str, Any] = {"rows": [1, 2, 3], "owner": "host"}
"""A tool result object the host keeps and returns on every call."""


@tool(read_only=True)
def echo(value: Any = None) -> Any:
    """Return the value unchanged."""
    return value


@tool(read_only=True)
def shared_rows() -> dict[str, Any]:
    """Return the host's own (module-level) dict every time."""
    return SHARED_RESULT


@tool(requires_approval=True)
def send_email(to: str, body: str) -> dict[str, Any]:
    """Pretend to send an email."""
    return {"sent": True, "to": to}


SECURITY_TOOLS = [echo, shared_rows, send_email]


# --- the host must stay intact ------------------------------------------------------


def host_fingerprint() -> dict[str, Any]:
    """Process-wide state a script could try to change (it matters on inprocess,
    where the sandbox shares the host's interpreter)."""
    return {
        "Counter": sorted(vars(collections.Counter).items(), key=lambda kv: kv[0]),
        "Mapping": sorted(vars(collections.abc.Mapping)),
        "Sequence": sorted(vars(collections.abc.Sequence)),
        "dict_is_sequence": isinstance({}, collections.abc.Sequence),
        "list_is_mapping": isinstance([], collections.abc.Mapping),
        "Optional": repr(typing.Optional[int]),  # noqa: UP045 - the object under test
        "List": (typing.List.__origin__, repr(typing.List[int])),  # noqa: UP006
        "Counter_alias": repr(typing.Counter[str]),
        "DefaultContext": (
            decimal.DefaultContext.prec, decimal.DefaultContext.rounding,
            sorted((k.__name__, v) for k, v in decimal.DefaultContext.traps.items()),
        ),
        "thread_decimal": decimal.getcontext().prec,
        "textwrap": dict(textwrap.TextWrapper.unicode_whitespace_trans),
        "json": (json.dumps({"a": [1, 2]}), sorted(vars(json.JSONEncoder))),
        "math_pi": math.pi,
        "functools": (functools.WRAPPER_ASSIGNMENTS, sorted(vars(functools.partial))),
        "dataclasses_missing": sorted(vars(dataclasses.MISSING)),
        "string": (string.ascii_letters, sorted(vars(string.Template))),
        "re_flags": sorted(vars(re.I)) if hasattr(re.I, "__dict__") else None,
        "UserString": sorted(vars(collections.UserString)),
        "environ_keys": sorted(os.environ),
        "shared_result": json.dumps(SHARED_RESULT, sort_keys=True),
    }


@dataclass
class Probe:
    """Runs attacks in one long-lived session per backend, reset before each.

    A fresh session per attack would spend most of the suite starting
    containers; a reset clears everything a script defined. A run that kills
    the sandbox makes the session start a new one on the next run.
    """

    runtime: Any
    session: Any = None
    runs: int = field(default=0)

    def run(self, code: str) -> RunResult:
        if self.session is None or self.session.closed:
            self.session = self.runtime.session()
        else:
            self.session.reset()
        self.runs += 1
        result: RunResult = self.session.run(code)
        return result

    def close(self) -> None:
        if self.session is not None:
            self.session.close()


def sandbox_children() -> list[tuple[int, str]]:
    """Live descendants of this process that run the sandbox: sandbox servers,
    the subprocess backend's fork servers (zygotes) and the sandboxes forked
    from them (children of a zygote, not of this process)."""
    parents: dict[int, int] = {}
    commands: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read().decode("utf-8", "replace")
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                commands[int(entry)] = fh.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except (OSError, ValueError, IndexError):
            continue
    mine = {os.getpid()}
    grew = True
    while grew:
        grew = False
        for pid, ppid in parents.items():
            if ppid in mine and pid not in mine:
                mine.add(pid)
                grew = True
    return sorted((pid, commands[pid].strip()) for pid in mine
                  if pid in commands and "toolscript.sandbox" in commands[pid])


def new_sandbox_children(before: set[int]) -> list[tuple[int, str]]:
    """Sandbox children that were not running when ``before`` was taken (other
    tests keep long-lived sessions)."""
    return [(pid, cmd) for pid, cmd in sandbox_children() if pid not in before]


def my_containers() -> list[str]:
    """Names of sandbox containers created by this process that still exist."""
    try:
        from toolscript.runtime.backends.docker.backend import flush_removals
        from toolscript.runtime.backends.docker.image import docker_client
    except ImportError:  # pragma: no cover - docker SDK missing
        return []
    try:
        client = docker_client()
    except Exception:
        return []
    flush_removals(30.0)
    mine = client.api.containers(
        all=True,
        filters={"label": ["org.toolscript.managed=1", f"org.toolscript.owner-pid={os.getpid()}"]},
    )
    return [c["Names"][0] for c in mine]
