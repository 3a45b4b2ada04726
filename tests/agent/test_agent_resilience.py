"""Production executor behaviour of tools: retries, 429s, sliding window, auth failures."""

from __future__ import annotations

import pytest
from agent_helpers import make_runtime
from fakes.model_server import Call, Turn, say, script
from toolscript.tools import tool
from toolscript.tools.resilience import (
    SlidingWindow,
    ToolAuthorizationError,
    ToolRateLimited,
    ToolRetry,
    TransientToolError,
    resilient,
)


class Flaky:
    """A price feed that fails ``failures`` times with ``error`` before answering."""

    def __init__(self, failures: int, error: Exception) -> None:
        self.failures = failures
        self.error = error
        self.calls = 0

    def make(self):  # type: ignore[no-untyped-def]
        @tool(read_only=True)
        def get_price(sku: str) -> float:
            """Price of a SKU.

            Args:
                sku: The SKU.
            """
            self.calls += 1
            if self.calls <= self.failures:
                raise self.error
            return 9.5

        return get_price


def _replies(body):  # type: ignore[no-untyped-def]
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_transient_errors_are_retried_in_classic_calls(server, make_agent):
    delays: list[float] = []
    flaky = Flaky(2, ConnectionError("reset by peer"))
    price = resilient(flaky.make(), retry=ToolRetry(sleep=delays.append))
    assert price.description == "Price of a SKU."
    assert price.parameters_schema["properties"]["sku"]["description"] == "The SKU."
    server.script(Turn(tool_calls=[Call("get_price", {"sku": "A"})]), say("9.5"))
    result = make_agent("openai", mode="classic", runtime=make_runtime(tools=[price])).run("p?")
    assert _replies(server.bodies()[1]) == ["9.5"]
    assert flaky.calls == 3 and delays == [0.2, 0.4]
    assert result.tool_calls[0].ok


def test_transient_errors_are_retried_in_script_calls(server, make_agent):
    delays: list[float] = []
    flaky = Flaky(1, TransientToolError("503 from upstream"))
    price = resilient(flaky.make(), retry=ToolRetry(sleep=delays.append))
    server.script(script("get_price('A') * 2"), say("19"))
    make_agent("openai", runtime=make_runtime(tools=[price])).run("p?")
    assert _replies(server.bodies()[1]) == ["value:\n19.0"]
    assert delays == [0.2]


def test_retries_are_bounded_and_the_error_reaches_the_model(server, make_agent):
    flaky = Flaky(10, TransientToolError("still down"))
    price = resilient(flaky.make(), retry=ToolRetry(max_retries=2, sleep=lambda s: None))
    server.script(Turn(tool_calls=[Call("get_price", {"sku": "A"})]), say("down"))
    make_agent("openai", mode="classic", runtime=make_runtime(tools=[price])).run("p?")
    reply = _replies(server.bodies()[1])[0]
    assert reply.startswith("error: tool_exception:") and "still down" in reply
    assert flaky.calls == 3


def test_rate_limited_tool_honours_retry_after_up_to_a_bound():
    delays: list[float] = []
    ok = resilient(Flaky(1, ToolRateLimited("429", retry_after_s=1.5)).make(),
                   retry=ToolRetry(sleep=delays.append))
    assert ok.invoke({"sku": "A"}) == 9.5 and delays == [1.5]
    too_long = resilient(Flaky(1, ToolRateLimited("429", retry_after_s=600)).make(),
                         retry=ToolRetry(sleep=delays.append))
    with pytest.raises(ToolRateLimited):
        too_long.invoke({"sku": "A"})
    assert delays == [1.5]


def test_sliding_window_waits_for_a_free_slot():
    now = [0.0]
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    window = SlidingWindow(2, 1.0, clock=lambda: now[0], sleep=sleep)
    assert window.acquire() == 0 and window.acquire() == 0
    now[0] = 0.25
    assert window.acquire() == pytest.approx(0.75)
    assert waits == [pytest.approx(0.75)]


def test_rate_limit_applies_to_every_call_of_the_tool(server, make_agent):
    window = SlidingWindow(1, 10.0, clock=lambda: 0.0, sleep=lambda s: None)
    calls: list[float] = []
    window.acquire = lambda: calls.append(1) or 0.0  # type: ignore[method-assign]
    price = resilient(Flaky(0, ValueError()).make(), rate_limit=window)
    server.script(script("[get_price('A') for _ in range(4)]"), say("k"))
    make_agent("openai", runtime=make_runtime(tools=[price])).run("p?")
    assert len(calls) == 4


def test_authorization_failure_is_raised_to_the_programmer(server, make_agent):
    price = resilient(Flaky(5, ToolAuthorizationError("API key revoked")).make())
    server.script(Turn(tool_calls=[Call("get_price", {"sku": "A"})]))
    with pytest.raises(ToolAuthorizationError, match="revoked"):
        make_agent("anthropic", mode="classic", runtime=make_runtime(tools=[price])).run("p?")
    server.script(script("get_price('A')"))
    with pytest.raises(ToolAuthorizationError):
        make_agent("openai", runtime=make_runtime(tools=[price])).run("p?")
    assert server.remaining_turns == 0 and len(server.requests) == 2
