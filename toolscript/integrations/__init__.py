"""toolscript as the code tool of other agent frameworks.

Each module adapts a toolscript session to one framework and imports that
framework only when it is used (install it with the matching extra, e.g.
``pip install 'toolscript[pydantic-ai]'``; without it, importing the module
raises :class:`~toolscript.ConfigurationError` with that hint):

* :mod:`toolscript.integrations.pydantic_ai` — ``ToolscriptToolset``, a toolset;
* :mod:`toolscript.integrations.openai_agents` — ``run_script_tool``, a ``FunctionTool``;
* :mod:`toolscript.integrations.langchain` — ``RunScriptTool``, a ``BaseTool``;
* :mod:`toolscript.integrations.smolagents` — ``ToolscriptExecutor``, a ``PythonExecutor``.

What they share is here too (from :mod:`.common`): :func:`script_tool_spec`
(the ``run_script`` description and stubs of a runtime's tools),
:func:`render_result` (a ``RunResult`` as the model reads it) and
:class:`ScriptSession` (the session behind a code tool).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .common import (
        RenderedResult,
        ScriptSession,
        ScriptToolSpec,
        render_result,
        script_tool_spec,
    )

__all__ = ["RenderedResult", "ScriptSession", "ScriptToolSpec", "render_result",
           "script_tool_spec"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.common"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
