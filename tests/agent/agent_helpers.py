"""Helpers shared by the agent tests (a uniquely named module: ``conftest`` is ambiguous)."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import sample_tools
from backend_marks import backend_options
from fakes.model_server import FakeModelServer

from toolscript import Runtime

__all__ = ["DIALECTS", "OPEN_RUNTIMES", "Runtime", "client_for", "make_runtime"]

#: Runtimes made by :func:`make_runtime`; closed after each test by conftest.
OPEN_RUNTIMES: list[Any] = []


def make_runtime(backend: str = "inprocess", tools: Any = None, **kwargs: Any) -> Runtime:
    """A real Runtime (over the sample tools by default), closed after the test.

    On docker it runs the image under test with one warm container.
    """
    kwargs.setdefault("backend_options", backend_options(backend))
    runtime = Runtime(
        tools=sample_tools.TOOLS if tools is None else tools, backend=backend, **kwargs
    )
    OPEN_RUNTIMES.append(runtime)
    return runtime


#: Every built-in dialect (the OpenAI-compatible profiles speak Chat Completions).
DIALECTS = ("openai", "openai-responses", "anthropic", "gemini")


def client_for(provider: str, server: FakeModelServer) -> Any:
    """A real SDK client pointed at the fake server."""
    if provider == "anthropic":
        return anthropic.Anthropic(api_key="test-key", base_url=server.base_url)
    if provider == "gemini":
        return server.gemini_client()
    return openai.OpenAI(api_key="test-key", base_url=server.openai_base_url)
