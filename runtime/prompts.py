"""The text the model reads in programmatic mode.

Everything here is deterministic for a given tool set and limits, so the
``run_script`` description and the system text are byte-identical on every
turn and prompt caches hit.
"""

from __future__ import annotations

from typing import Any

from toolscript.sandbox.modules import DEFAULT_MODULES

__all__ = [
    "DEFAULT_MODULES",
    "FINAL_ANSWER_DESCRIPTION",
    "FINAL_ANSWER_NAME",
    "FINAL_ANSWER_REQUEST",
    "FINAL_OUTPUT_REQUEST",
    "OUTPUT_REQUEST",
    "OUTPUT_SYSTEM",
    "PROGRAMMATIC_SYSTEM",
    "RUN_SCRIPT_NAME",
    "run_script_description",
    "run_script_parameters",
    "session_notice",
]

RUN_SCRIPT_NAME = "run_script"

PROGRAMMATIC_SYSTEM = (
    "Solve the task by writing Python scripts for the run_script tool. One script can "
    "call many tools, loop, filter and aggregate; do that work inside the script and "
    "return only the small result you need. Variables persist between scripts, so build "
    "on earlier results instead of fetching data again. If a script fails, read the "
    "error, fix the script and run it again. When you have the answer, reply with it as "
    "plain text without calling a tool."
)

FINAL_ANSWER_REQUEST = (
    "You have reached the limit of tool use for this task. Do not call any more tools: "
    "answer now from the results you already have, and say what is missing if the "
    "answer is incomplete."
)

FINAL_ANSWER_NAME = "final_answer"

FINAL_ANSWER_DESCRIPTION = (
    "Give your final answer. Call this once, when you have it: its arguments are the "
    "answer itself, in the required structure. If the answer is rejected, the error "
    "says what to fix; call it again with a corrected answer."
)

OUTPUT_SYSTEM = (
    "Your final answer must be structured: give it by calling final_answer with the "
    "answer as its arguments, not as plain text."
)

OUTPUT_REQUEST = (
    "Give your final answer by calling final_answer with the answer as its arguments; "
    "a plain-text reply is not accepted."
)


FINAL_OUTPUT_REQUEST = (
    "You have reached the limit of tool use for this task. Call final_answer now with "
    "the best answer the results you already have support."
)


def session_notice(kept: list[str], gone: list[str]) -> str:
    """What the model is told, when a conversation continues, about the variables
    its earlier scripts defined: which the sandbox session still holds, which are gone."""
    parts = []
    if kept:
        parts.append("the sandbox session still holds these variables from earlier scripts: "
                     + ", ".join(kept))
    if gone:
        parts.append("these variables of earlier scripts no longer exist (new session), "
                     "so recompute what you need: " + ", ".join(gone))
    return "[Sandbox state: " + "; ".join(parts) + ".]" if parts else ""


_RULES = """\
Run a Python 3 script in a sandbox. The tools listed below are ordinary Python \
functions inside the script: call them with keyword or positional arguments; they run \
on the host and return JSON-like data (dicts, lists, str, int, float, bool, None).

What comes back to you: the value of the script's final bare expression (as in a \
notebook cell) and anything it printed, at most {max_chars} characters in total; \
longer output is cut with a notice. So aggregate, filter and sort inside the script \
and end with a small result, e.g. a dict of totals, not the raw records.

Rules of the sandbox:
- Variables, functions and classes persist between run_script calls of this \
conversation: reuse them instead of calling tools again.
- Imports allowed: {modules}. No files, network, subprocesses, environment \
variables, dunder attributes (__class__, __dict__ ...) or eval/exec. async/await works \
(await a tool, asyncio.gather); plain calls are simpler.
- {parallel}
- A tool that fails raises ToolError (subclasses: ToolArgumentError, ToolDenied, \
ToolNotFound, ToolTimeout; attributes .type and .message), which the script can catch; \
an uncaught error ends the script and is reported to you with its type, message and line.
- Calls may be denied by the host's approval policy; a denial raises ToolDenied.
- Limits apply to time, memory, number of tool calls and output size; a breached \
limit ends the script with an error naming the limit.

Tools available inside the script:
```python
{stubs}
```"""

_PARALLEL = (
    "To run many read-only calls concurrently, use parallel: "
    "parallel(tool, [args, ...]) with one dict (or tuple) of arguments per call, or "
    "parallel([(tool, args), ...]); it returns the results in call order "
    "(return_exceptions=True puts a failed call's ToolError in its place instead of "
    "raising). Write tools always run one at a time, in order."
)


def run_script_description(
    stubs: str,
    *,
    modules: tuple[str, ...] | list[str] = DEFAULT_MODULES,
    max_chars: int = 20_000,
    parallel_help: str | None = None,
) -> str:
    """The ``run_script`` tool description: the sandbox rules plus the tool stubs."""
    return _RULES.format(
        max_chars=f"{max_chars:,}",
        modules=", ".join(sorted(modules)),
        parallel=parallel_help or _PARALLEL,
        stubs=stubs.strip() or "# (no tools are callable from scripts)",
    )


def run_script_parameters() -> dict[str, Any]:
    """The JSON Schema of ``run_script``'s arguments (strict-mode ready)."""
    return {
        "type": "object",
        "properties": {
            "code": {
                "type": "string",
                "description": "The Python script. Its final bare expression is its result.",
            }
        },
        "required": ["code"],
        "additionalProperties": False,
    }
