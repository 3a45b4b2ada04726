"""Async: ``async def`` tools, ``Runtime.run_async``, async sessions, ``Agent.run_async``,
and streamed runs, with the real async SDK clients against the fake server."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
import sample_tools
from agent_helpers import DIALECTS, make_runtime
from fakes.model_server import Call, Turn, say, script
from toolscript.runtime.agent import (
    ModelResponded,
    RunFinished,
    ScriptFinished,
    ScriptStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from toolscript.runtime.limits import Limits
from toolscript.runtime.providers import RetryPolicy
from toolscript.tools import tool

LOOPS: list[asyncio.AbstractEventLoop] = []


@tool(read_only=True)
async def fetch_rate(currency: str) -> dict[str, Any]:
    """The exchange rate of a currency to CNY.

    Args:
        currency: ISO code, e.g. "USD".
    """
    await asyncio.sleep(0)
    LOOPS.append(asyncio.get_running_loop())
    rates = {"USD": 7.1, "EUR": 7.8}
    if currency not in rates:
        raise ValueError(f"no rate for {currency}")
    return {"currency": currency, "rate": rates[currency]}


@tool(requires_approval=True)
async def wire_money(to: str, amount: float) -> str:
    """Send money (needs approval).

    Args:
        to: Recipient.
        amount: Amount in CNY.
    """
    return "sent"


ASYNC_TOOLS = [fetch_rate, wire_money, *sample_tools.TOOLS]


@pytest.fixture(autouse=True)
def _clear_loops() -> None:
    LOOPS.clear()


# ------------------------------------------------------------------ runtime and sessions
def test_async_tools_run_on_the_host_loop_with_validation_and_approval(backend):
    runtime = make_runtime(backend, tools=ASYNC_TOOLS)

    async def main() -> Any:
        ok = await runtime.run_async("fetch_rate('USD')['rate']")
        bad = await runtime.run_async("fetch_rate(3)")
        missing = await runtime.run_async("fetch_rate('JPY')")
        denied = await runtime.run_async("wire_money('x', 1.0)")
        return asyncio.get_running_loop(), ok, bad, missing, denied

    loop, ok, bad, missing, denied = asyncio.run(main())
    assert ok.ok and ok.value == 7.1
    assert [loop, loop] == LOOPS  # the host's loop; the invalid call never ran
    assert bad.tool_calls[0].error.type == "invalid_arguments"
    assert not missing.ok and "no rate for JPY" in missing.error.message
    assert denied.tool_calls[0].error.type == "denied"
    assert [r.approved for r in denied.tool_calls] == [False]
    assert [r.name for r in ok.tool_calls] == ["fetch_rate"] and ok.tool_calls[0].ok


def test_async_session_keeps_variables_and_async_calls_run_concurrently(backend):
    barrier_size = 3

    @tool(read_only=True)
    async def meet(n: int) -> int:
        """Wait until every call of the batch has arrived (they must run together)."""
        await barrier.wait()
        return n

    runtime = make_runtime(backend, tools=[meet, fetch_rate],
                           limits=Limits(tool_timeout_s=20))

    async def main() -> Any:
        global barrier
        barrier = asyncio.Barrier(barrier_size)
        async with runtime.session() as session:
            first = await session.run_async("got = parallel(meet, [(1,), (2,), (3,)])")
            second = await session.run_async("sum(got)")
            direct = await session.call_tool_async("fetch_rate", {"currency": "EUR"})
            return first, second, direct, session

    first, second, direct, session = asyncio.run(main())
    assert first.ok, first.error
    assert second.value == 6  # the variable survived between runs
    assert direct.ok and direct.value == {"currency": "EUR", "rate": 7.8}
    assert session.closed


def test_async_tool_timeout_is_an_error_result(backend):
    @tool(timeout_s=0.2)
    async def hang() -> str:
        """Wait for an event nobody sets."""
        await never.wait()
        return "never"

    runtime = make_runtime(backend, tools=[hang])

    async def main() -> Any:
        global never
        never = asyncio.Event()
        result = await runtime.run_async("hang()")
        never.set()  # let the abandoned coroutine finish
        return result

    result = asyncio.run(main())
    assert not result.ok and "ToolTimeout" in result.error.message
    assert [r.error.type for r in result.tool_calls] == ["timeout"]


def test_async_tools_in_sync_runs_share_one_private_loop(backend):
    runtime = make_runtime(backend, tools=ASYNC_TOOLS)
    first = runtime.run("fetch_rate('USD')")
    second = runtime.run("fetch_rate('EUR')")
    assert first.ok and second.ok
    assert len(LOOPS) == 2 and LOOPS[0] is LOOPS[1] and LOOPS[0].is_running()


def test_a_sync_run_inside_a_coroutine_runs_async_tools_off_the_blocked_loop(backend):
    """Sync ``run`` called from a coroutine blocks that coroutine's loop, even while
    an async run registered it as the host: the tools' coroutines then run on the
    private loop instead of waiting for the blocked one until their timeout."""
    runtime = make_runtime(backend, tools=ASYNC_TOOLS)

    async def main() -> Any:
        from toolscript.tools.asynctools import hosting

        with hosting():  # as an async run in flight on this loop would have it
            result = runtime.run("fetch_rate('USD')['rate']")
        return asyncio.get_running_loop(), result

    blocked, result = asyncio.run(main())
    assert result.ok and result.value == 7.1, result.error
    assert len(LOOPS) == 1 and LOOPS[0] is not blocked


# ------------------------------------------------------------------ agents
@pytest.mark.parametrize("provider", DIALECTS)
def test_run_async_matches_run_for_every_dialect(server, make_agent, provider):
    turns = [script("rates = [fetch_rate(c)['rate'] for c in ('USD', 'EUR')]\nsum(rates)"),
             say("14.9 in total")]
    server.script(*turns)
    sync = make_agent(provider, runtime=make_runtime(tools=ASYNC_TOOLS)).run("sum the rates")
    server.script(*turns)
    agent = make_agent(provider, runtime=make_runtime(tools=ASYNC_TOOLS))

    async def main() -> Any:
        return asyncio.get_running_loop(), await agent.run_async("sum the rates")

    loop, result = asyncio.run(main())
    assert result.answer == sync.answer == "14.9 in total"
    assert [s.output for s in result.steps] == [s.output for s in sync.steps]
    assert LOOPS[2:] == [loop, loop]
    bodies = server.bodies()
    assert _without_ids(bodies[2:]) == _without_ids(bodies[:2])  # the same requests


@pytest.mark.parametrize("provider", DIALECTS)
def test_classic_run_async_with_an_async_tool(server, make_agent, provider):
    server.script(Turn(tool_calls=[Call("fetch_rate", {"currency": "USD"}),
                                   Call("list_stores", {})]), say("7.1"))
    agent = make_agent(provider, mode="classic", runtime=make_runtime(tools=ASYNC_TOOLS))
    result = asyncio.run(agent.run_async("rate?"))
    assert result.answer == "7.1"
    assert [(r.name, r.ok) for r in result.tool_calls] == [("fetch_rate", True),
                                                           ("list_stores", True)]


def test_async_retries_wait_per_policy(server, make_agent, sleeps):
    server.fail(429, headers={"retry-after": "3"})
    server.script(say("ok"))
    agent = make_agent("anthropic", model_settings={"retry": RetryPolicy(sleep=sleeps.append)})
    assert asyncio.run(agent.run_async("go")).answer == "ok"
    assert sleeps == [3.0]


# ------------------------------------------------------------------ streaming
def _kinds(events: list[Any]) -> list[str]:
    names = [type(e).__name__ for e in events]
    return [n for i, n in enumerate(names) if n != "TextDelta" or names[i - 1] != "TextDelta"]


@pytest.mark.parametrize("provider", DIALECTS)
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_streamed_runs_report_text_scripts_and_calls(server, make_agent, provider, asynchronous):
    server.script(
        Turn(text="Let me look it up.",
             tool_calls=[Call("run_script", {"code": "len(list_stores())"})]),
        Turn(tool_calls=[Call("get_daily_revenue", {"store_id": "ST001", "date": "d"})]),
        say("There are five stores, and ST001 made 1001 yuan."),
    )
    agent = make_agent(provider, mode="mixed")
    if asynchronous:
        async def collect() -> list[Any]:
            return [event async for event in agent.stream_async("stores?")]

        events = asyncio.run(collect())
    else:
        events = list(agent.stream("stores?"))
    assert _kinds(events) == [
        "TextDelta", "ModelResponded", "ScriptStarted", "ScriptFinished",
        "ModelResponded", "ToolCallStarted", "ToolCallFinished",
        "TextDelta", "ModelResponded", "RunFinished",
    ]
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 3  # the dialect's stream, piece by piece
    assert "".join(deltas) == "Let me look it up.There are five stores, and ST001 made 1001 yuan."
    assert all(server.requests[i].streamed for i in range(3))
    started = next(e for e in events if isinstance(e, ScriptStarted))
    finished = next(e for e in events if isinstance(e, ScriptFinished))
    assert started.code == "len(list_stores())" and finished.output == "value:\n5"
    assert [r.name for r in finished.tool_calls] == ["list_stores"]
    call = next(e for e in events if isinstance(e, ToolCallStarted))
    done = next(e for e in events if isinstance(e, ToolCallFinished))
    assert (call.name, done.name, done.ok) == ("get_daily_revenue",) * 2 + (True,)
    responded = [e for e in events if isinstance(e, ModelResponded)]
    assert [len(e.tool_calls) for e in responded] == [1, 1, 0]
    assert all(e.usage.output_tokens > 0 for e in responded)  # usage arrives in streams too
    result = events[-1].result
    assert isinstance(events[-1], RunFinished)
    assert result.answer == "There are five stores, and ST001 made 1001 yuan."
    assert result.turns == 3 and result.usage.input_tokens > 0
    # the streamed answer went back into the conversation as the model sent it
    assert "Let me look it up." in str(server.bodies()[1])


def test_leaving_a_stream_early_closes_its_session(server, make_agent):
    runtime = make_runtime()
    opened: list[Any] = []
    make_session = runtime.session

    def session(*args: Any, **kwargs: Any) -> Any:
        opened.append(make_session(*args, **kwargs))
        return opened[-1]

    runtime.session = session  # type: ignore[method-assign]
    server.script(script("1"), say("one"))
    events = make_agent("openai", runtime=runtime).stream("go")
    with contextlib.closing(events):
        for event in events:
            if isinstance(event, ScriptFinished):
                break
    assert opened and opened[0].closed


def _without_ids(bodies: list[dict[str, Any]]) -> str:
    import re

    return re.sub(r"(call|toolu|fc|msg|resp)[_-][0-9a-z]+", "ID", str(bodies))


GATHER = 12
BARRIERS: list[asyncio.Barrier] = []


@tool(read_only=True)
async def gather_at(n: int) -> int:
    """Return once ``GATHER`` runs are in flight at once.

    Args:
        n: echoed back.
    """
    async with asyncio.timeout(60):  # a failing test fails instead of hanging
        await BARRIERS[-1].wait()
    return n


def test_many_async_runs_are_in_flight_at_once():
    """Each ``run_async`` holds a thread while its script runs: twelve runs (more
    than the loop's default executor would run at once on a small machine) meet
    at one barrier in their tools, so none waits for another to finish."""
    runtime = make_runtime("inprocess", tools=[gather_at])

    async def main() -> list[Any]:
        BARRIERS.append(asyncio.Barrier(GATHER))
        sessions = [runtime.session() for _ in range(GATHER)]
        try:
            return await asyncio.gather(*(s.run_async(f"gather_at({i})")
                                          for i, s in enumerate(sessions)))
        finally:
            for s in sessions:
                s.close()

    results = asyncio.run(main())
    assert [r.value for r in results] == list(range(GATHER)), [r.error for r in results]
