"""A small catalog of namespaced tools for the tool-set tests (some deferred)."""

from __future__ import annotations

from typing import Any

from toolscript.tools import Tool
from toolscript.tools.catalog import Deferred, Namespace

SENT: list[str] = []


def list_prs(repo: str, state: str = "open") -> list[dict[str, Any]]:
    """List the pull requests of a GitHub repository."""
    return [{"repo": repo, "number": 7, "state": state}]


def merge_pr(repo: str, number: int) -> str:
    """Merge a pull request of a GitHub repository."""
    return f"merged {repo}#{number}"


def send_message(channel: str, text: str) -> str:
    """Send a message to a Slack channel."""
    SENT.append(f"{channel}:{text}")
    return "sent"


def list_channels() -> list[str]:
    """List the Slack channels of the workspace."""
    return ["general", "dev"]


def get_weather(city: str) -> str:
    """Current weather of a city."""
    return f"sunny in {city}"


def convert_currency(amount: float, to: str) -> float:
    """Convert an amount of euros into another currency."""
    return amount * 2


def catalog(extra: int = 0) -> list[Any]:
    """The catalog: github and slack namespaces (deferred), weather loaded, a deferred
    tool without namespace, and ``extra`` deferred filler tools."""
    fillers = [Tool(lambda: None, name=f"inventory_item_{i:05d}",
                    description=f"Inventory record {i:05d} of the warehouse.", read_only=True)
               for i in range(extra)]
    return [
        get_weather,
        Namespace("github", [Tool(list_prs, read_only=True), merge_pr],
                  description="GitHub pull requests", deferred=True),
        Namespace("slack", [send_message, Tool(list_channels, read_only=True)],
                  description="Slack messaging", deferred=True),
        Deferred([convert_currency, *fillers]),
    ]
