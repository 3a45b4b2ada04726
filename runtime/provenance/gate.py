"""The dispatcher's provenance gate: refuse a call whose argument depends on
untrusted data where the flow policy does not allow it (before approval), and
label each result with the untrusted sources it depends on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...tools.registry import ToolRegistry
from .config import Provenance, ToolFlow
from .extract import closed

_NO_FLOW = ToolFlow()

PROVENANCE_DENIED = "provenance_denied"
"""The error type of a call refused by the flow policy."""


class ProvenanceGate:
    """Checks and labels one runtime's calls (see :class:`Provenance`)."""

    def __init__(self, config: Provenance, registry: ToolRegistry) -> None:
        self.config = config
        self.registry = registry

    def trusted(self, tool: str) -> bool:
        """Are ``tool``'s own results trusted?"""
        if tool in self.config.trusted:
            return True
        found = self.registry.get(tool)
        options = getattr(found, "options", None)
        return getattr(options, "returns", None) == "trusted"

    def check(self, tool: Any, values: Mapping[str, Any],
              labels: Mapping[str, list[str]] | None) -> dict[str, Any] | None:
        """None if the call may go on to approval; else its error reply."""
        if labels is None:  # a call from the host itself: nothing untrusted chose it
            return None
        flow = self.config.flows.get(tool.name, _NO_FLOW)
        sources = {name: frozenset(found) for name, found in labels.items() if found}
        for name in [p.name for p in tool.params if p.name in sources]:
            if not flow.allows(name, tool.read_only):
                chain = ", ".join(sorted(sources[name]))
                return {"ok": False, "error": {
                    "type": PROVENANCE_DENIED,
                    "message": f"{tool.name}(): argument {name!r} depends on untrusted data "
                    f"from {chain}; untrusted data may not choose it. Use a value from the "
                    "user's request, or ask the user.",
                    "argument": name, "sources": sorted(sources[name]),
                }}
        for check in self.config.checks:
            reason = check(tool.name, values, sources)
            if reason:
                return {"ok": False, "error": {
                    "type": PROVENANCE_DENIED, "message": f"{tool.name}(): {reason}",
                    "sources": sorted(set().union(*sources.values())) if sources else [],
                }}
        return None

    def approval_chain(self, refused: dict[str, Any]) -> dict[str, list[str]]:
        """With ``Provenance(ask=True)``: the chain an approval request shows for a
        refused call (``{argument: sources}``); empty: the refusal stands."""
        if not self.config.ask:
            return {}
        error = refused.get("error") or {}
        return {str(error.get("argument", "*")): list(error.get("sources", []))}

    def label_reply(self, tool: str, reply: dict[str, Any],
                    labels: Mapping[str, list[str]] | None,
                    args: Any = None) -> dict[str, Any]:
        """``reply`` with its ``label``: the tool (unless trusted) and every source of
        its arguments (a tool's output depends on its input) - except ``extract``
        with a closed schema the script chose itself (:func:`.extract.closed`)."""
        if labels is None:
            return reply
        error = reply.get("error")
        if isinstance(error, dict) and error.get("type") == PROVENANCE_DENIED:
            return {**reply, "label": []}  # the gate's own words: readable by the model
        sources: set[str] = set()
        for found in labels.values():
            sources.update(found)
        if (tool == "extract" and self.trusted(tool) and not labels.get("schema")
                and isinstance(args, dict) and isinstance(args.get("schema"), dict)
                and closed(args["schema"])):
            sources = set()
        if not self.trusted(tool):
            sources.add(tool)
        return {**reply, "label": sorted(sources)}
