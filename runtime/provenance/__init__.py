"""Provenance labels on the host (issue 27): which tool results are untrusted,
the per-tool, per-argument flow policy the dispatcher enforces before approval,
how untrusted output is shown to the planner, and ``extract``."""

from .config import FlowCheck, Provenance, ToolFlow
from .extract import extract_tool
from .gate import ProvenanceGate
from .render import render_result

__all__ = ["FlowCheck", "Provenance", "ProvenanceGate", "ToolFlow", "extract_tool",
           "render_result"]
