"""What a deployment says about provenance: trusted tools, the flow policy, display."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

FlowCheck = Callable[[str, Mapping[str, Any], Mapping[str, frozenset[str]]], "str | None"]
"""A policy callable: ``(tool, args, labels) -> reason or None``; ``labels`` maps each
argument to the untrusted sources it depends on. A reason refuses the call."""


@dataclass(frozen=True)
class ToolFlow:
    """Where untrusted data may flow into one tool's arguments.

    ``accepts_untrusted``: arguments that may depend on untrusted data (``"*"``:
    all). ``requires_trusted``: arguments that never may (wins over
    ``accepts_untrusted``). Without a ``ToolFlow`` a read-only tool accepts
    untrusted data everywhere and any other tool nowhere.
    """

    accepts_untrusted: frozenset[str] = frozenset()
    requires_trusted: frozenset[str] = frozenset()

    @classmethod
    def of(cls, accepts_untrusted: Iterable[str] = (),
           requires_trusted: Iterable[str] = ()) -> ToolFlow:
        """A ``ToolFlow`` from any iterables of argument names."""
        return cls(frozenset(accepts_untrusted), frozenset(requires_trusted))

    def allows(self, argument: str, read_only: bool) -> bool:
        """May ``argument`` depend on untrusted data?"""
        if argument in self.requires_trusted or "*" in self.requires_trusted:
            return False
        if argument in self.accepts_untrusted or "*" in self.accepts_untrusted:
            return True
        return read_only and not self.requires_trusted


@dataclass(frozen=True)
class Provenance:
    """Provenance labels for a :class:`~toolscript.Runtime` (``Runtime(provenance=...)``).

    * ``trusted``: names of tools whose results are trusted (as well as tools
      declared ``@tool(returns="trusted")``); every other tool's results are
      untrusted (``returns="untrusted"`` says so explicitly).
    * ``flows``: per tool, a :class:`ToolFlow` (or a dict with the keys
      ``accepts_untrusted``/``requires_trusted``); ``checks``: callables run on
      every call after the declarative rules (:data:`FlowCheck`).
    * ``show_untrusted``: the planner sees untrusted output as text (default:
      as references, ``<untrusted str, 812 chars, from read_inbox>``).
    * ``ask``: a call the flow policy refuses goes to the runtime's approval
      hook instead, its :class:`~toolscript.runtime.approval.hooks.ToolCallRequest`
      naming the chain in ``untrusted`` (``{argument: [tool, ...]}``); the hook
      may approve, deny or defer it. Without a hook the refusal stands.
    """

    trusted: frozenset[str] = frozenset()
    flows: Mapping[str, ToolFlow] = field(default_factory=dict)
    checks: tuple[FlowCheck, ...] = ()
    show_untrusted: bool = False
    ask: bool = False

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Provenance:
        """Read a policy from plain data (a TOML/JSON/YAML file's content)::

            {"trusted": ["get_balance"],
             "tools": {"send_email": {"accepts_untrusted": ["body", "subject"]}},
             "show_untrusted": false}
        """
        unknown = set(data) - {"trusted", "tools", "show_untrusted", "ask"}
        if unknown:
            raise ValueError(f"unknown provenance keys: {sorted(unknown)}")
        flows = {}
        for name, rule in dict(data.get("tools", {})).items():
            extra = set(rule) - {"accepts_untrusted", "requires_trusted"}
            if extra:
                raise ValueError(f"tools.{name}: unknown keys {sorted(extra)}")
            flows[name] = ToolFlow.of(rule.get("accepts_untrusted", ()),
                                      rule.get("requires_trusted", ()))
        return cls(trusted=frozenset(data.get("trusted", ())), flows=flows,
                   show_untrusted=bool(data.get("show_untrusted", False)),
                   ask=bool(data.get("ask", False)))
