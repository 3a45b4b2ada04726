"""Which functions the model is offered, per mode, and who may call each tool.

A tool says who may call it with an ``allowed_callers`` attribute (named after
the field of Anthropic's hosted feature): a collection of ``"direct"`` (the
model calls it as a function) and ``"script"`` (scripts call it). Tools without
the attribute allow both.

Modes:

* ``"programmatic"`` — ``run_script`` (stubs of the script-callable tools)
  plus, as functions, the tools that only allow direct calls;
* ``"classic"`` — every direct-callable tool as a function, no ``run_script``;
* ``"mixed"`` — ``run_script`` plus every direct-callable tool as a function.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from toolscript.errors import ConfigurationError

from .. import prompts
from ..providers.base import ToolSpec

__all__ = [
    "CALLERS_ATTRIBUTE",
    "DIRECT",
    "MODES",
    "SCRIPT",
    "Mode",
    "Offer",
    "allowed_callers",
    "build_offer",
]

log = logging.getLogger("toolscript.agent")

Mode = Literal["programmatic", "classic", "mixed"]
MODES: tuple[str, ...] = ("programmatic", "classic", "mixed")

CALLERS_ATTRIBUTE = "allowed_callers"
DIRECT = "direct"
SCRIPT = "script"
_BOTH = frozenset({DIRECT, SCRIPT})


def allowed_callers(tool: Any) -> frozenset[str]:
    """``{"direct", "script"}`` or a subset, from the tool's ``allowed_callers``."""
    value = getattr(tool, CALLERS_ATTRIBUTE, None)
    if value is None:
        return _BOTH
    callers = frozenset([value] if isinstance(value, str) else value)
    unknown = callers - _BOTH
    if unknown:
        raise ConfigurationError(
            f"tool {tool.name!r}: unknown allowed_callers {sorted(unknown)}; "
            f"use {sorted(_BOTH)}"
        )
    return callers


@dataclass
class Offer:
    """What one agent offers the model.

    Attributes:
        specs: the functions sent in each request, in a stable order.
        direct: direct-callable tools by name.
        script_tools: names of the tools callable from scripts.
        run_script: whether ``run_script`` is offered.
    """

    specs: list[ToolSpec]
    direct: dict[str, Any] = field(default_factory=dict)
    script_tools: list[str] = field(default_factory=list)
    run_script: bool = False
    deferred: dict[str, Any] = field(default_factory=dict)
    """Direct-callable deferred tools by function name: offered from the turn after
    ``search_tools`` (or ``describe_tool``) found them."""


def build_offer(
    registry: Any,
    mode: str,
    *,
    max_result_chars: int,
    modules: tuple[str, ...] | list[str] = prompts.DEFAULT_MODULES,
) -> Offer:
    """The :class:`Offer` for ``mode`` over every tool in ``registry``."""
    if mode not in MODES:
        raise ConfigurationError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    is_deferred = getattr(registry, "is_deferred", None)
    every = list(registry)
    tools = [t for t in every if not (is_deferred and is_deferred(t.name))]
    deferred = [t for t in every if is_deferred and is_deferred(t.name)]
    callers = {t.name: allowed_callers(t) for t in tools}
    callers.update({t.name: allowed_callers(t) for t in deferred})
    script_tools = [t for t in tools if SCRIPT in callers[t.name]]
    if mode == "classic":
        direct = [t for t in tools if DIRECT in callers[t.name]]
        skipped = [t.name for t in tools if DIRECT not in callers[t.name]]
        if skipped:
            log.warning("classic mode cannot reach script-only tools: %s", ", ".join(skipped))
    elif mode == "programmatic":
        direct = [t for t in tools if callers[t.name] == {DIRECT}]
    else:
        direct = [t for t in tools if DIRECT in callers[t.name]]
    specs: list[ToolSpec] = []
    with_script = mode != "classic"
    if with_script:
        if any(t.name == prompts.RUN_SCRIPT_NAME for t in tools):
            raise ConfigurationError(
                f"a tool is named {prompts.RUN_SCRIPT_NAME!r}, the name of the script tool; "
                "rename it"
            )
        stubs = render_script_stubs(registry, script_tools)
        specs.append(
            ToolSpec(
                name=prompts.RUN_SCRIPT_NAME,
                description=prompts.run_script_description(
                    stubs, modules=modules, max_chars=max_result_chars
                ),
                parameters=prompts.run_script_parameters(),
            )
        )
    specs.extend(tool_spec(t) for t in direct)
    on_demand = [t for t in deferred if DIRECT in callers[t.name] and (
        mode != "programmatic" or callers[t.name] == {DIRECT})]
    namespaces = [n.name for n in getattr(registry, "namespaces", list)()]
    return Offer(
        specs=specs,
        direct={function_name(t.name): t for t in direct},
        script_tools=[t.name for t in script_tools]
        + [t.name for t in deferred if SCRIPT in callers[t.name]] + namespaces,
        run_script=with_script,
        deferred={function_name(t.name): t for t in on_demand},
    )


def function_name(name: str) -> str:
    """The function name a model calls for tool ``name`` (``github.list_prs`` ->
    ``github__list_prs``: providers allow no dots)."""
    return name.replace(".", "__")


def tool_spec(t: Any) -> ToolSpec:
    """The :class:`ToolSpec` of one directly callable tool."""
    return ToolSpec(name=function_name(t.name), description=t.description or t.name,
                    parameters=t.parameters_schema,
                    examples=tuple(getattr(t, "examples", ()) or ()))


def found_tools(record: Any) -> list[str]:
    """The tool names a ``search_tools`` / ``describe_tool`` call record found (classic
    mode loads them for the next turn)."""
    if not getattr(record, "ok", False):
        return []
    tool = getattr(record, "tool_name", None) or getattr(record, "name", None)
    value = getattr(record, "value", None)
    if tool == "search_tools" and isinstance(value, list):
        return [str(v["name"]) for v in value if isinstance(v, dict) and "name" in v]
    if tool == "describe_tool":
        args = getattr(record, "args", None)
        if isinstance(args, dict) and isinstance(args.get("name"), str):
            return [args["name"]]
    return []


def render_script_stubs(registry: Any, tools: Iterable[Any]) -> str:
    """Python stubs of ``tools`` (the script-callable subset of ``registry``)."""
    wanted = list(tools)
    loaded = getattr(registry, "loaded", None)
    if len(wanted) == len(list(loaded() if loaded else registry)):
        return str(registry.render_stubs())
    from toolscript.tools.stubs import render_stubs

    return str(render_stubs(wanted))
