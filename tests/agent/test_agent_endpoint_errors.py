"""Errors of the model endpoint: retried (5xx/429/timeouts) or raised (400/401)."""

from __future__ import annotations

import pytest
from agent_helpers import DIALECTS
from fakes.model_server import say
from toolscript.runtime.providers import (
    ModelAuthError,
    ModelRequestError,
    ModelUnavailableError,
    RetryPolicy,
)


@pytest.mark.parametrize("provider", DIALECTS)
def test_429_honours_retry_after(server, make_agent, sleeps, provider):
    server.fail(429, headers={"retry-after": "2"})
    server.script(say("ok"))
    result = make_agent(provider).run("go")
    assert result.answer == "ok"
    assert sleeps == [2.0]
    assert [r.status for r in server.requests] == [429, 200]


def test_retry_after_ms_is_preferred(server, make_agent, sleeps):
    server.fail(429, headers={"retry-after-ms": "250", "retry-after": "9"})
    server.script(say("ok"))
    make_agent("openai").run("go")
    assert sleeps == [0.25]


@pytest.mark.parametrize(("provider", "status"), [("openai", 500), ("openai", 503),
                                                  ("anthropic", 529), ("openai-responses", 502)])
def test_server_errors_retried_with_backoff(server, make_agent, sleeps, provider, status):
    server.fail(status, times=2)
    server.script(say("ok"))
    assert make_agent(provider).run("go").answer == "ok"
    assert len(sleeps) == 2
    assert 0.5 <= sleeps[0] <= 0.5 * 1.25 and 1.0 <= sleeps[1] <= 1.0 * 1.25


def test_retries_are_bounded(server, make_agent, sleeps):
    server.fail(500, times=10)
    with pytest.raises(ModelUnavailableError, match=r"HTTP 500.*gave up after 3 attempts"):
        make_agent("openai", model_settings={"retry": RetryPolicy(max_retries=2,
                                                                  sleep=sleeps.append)}).run("go")
    assert len(server.requests) == 3


def test_retry_after_beyond_the_limit_fails_fast(server, make_agent, sleeps):
    server.fail(429, headers={"retry-after": "3600"})
    with pytest.raises(ModelUnavailableError, match="Retry-After 3600 s exceeds"):
        make_agent("anthropic").run("go")
    assert sleeps == [] and len(server.requests) == 1


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_timeouts_are_retried(server, make_agent, sleeps, provider):
    server.delay(1.5)
    server.script(say("ok"))
    result = make_agent(provider, model_settings={"timeout_s": 0.3}).run("go")
    assert result.answer == "ok"
    assert len(sleeps) == 1


@pytest.mark.parametrize("provider", DIALECTS)
def test_400_raises_a_clear_error_without_retry(server, make_agent, sleeps, provider):
    server.fail(400, message="messages.1: tool_use ids must be unique")
    with pytest.raises(ModelRequestError, match=r"HTTP 400: messages\.1: tool_use ids") as info:
        make_agent(provider).run("go")
    assert info.value.status == 400 and info.value.provider == provider
    assert sleeps == [] and len(server.requests) == 1


@pytest.mark.parametrize("provider", DIALECTS)
def test_401_raises_auth_error(server, make_agent, sleeps, provider):
    server.fail(401, message="invalid x-api-key")
    with pytest.raises(ModelAuthError, match="check the API key"):
        make_agent(provider).run("go")
    assert sleeps == []


def test_unreachable_endpoint_is_retried_then_raised(make_agent, sleeps):
    import openai
    from agent_helpers import make_runtime
    from toolscript.runtime.agent import Agent, Endpoint

    client = openai.OpenAI(api_key="k", base_url="http://127.0.0.1:9/v1")
    agent = Agent(make_runtime(), provider="openai", model="m", endpoint=Endpoint(client=client),
                  model_settings={"retry": RetryPolicy(max_retries=1, sleep=sleeps.append)})
    with pytest.raises(ModelUnavailableError, match="unreachable"):
        agent.run("go")
    assert len(sleeps) == 1


def test_unreachable_gemini_endpoint_is_retried_then_raised(make_agent, sleeps):
    from agent_helpers import make_runtime
    from google import genai
    from google.genai import types
    from toolscript.runtime.agent import Agent, Endpoint

    client = genai.Client(api_key="k", http_options=types.HttpOptions(
        base_url="http://127.0.0.1:9"))
    agent = Agent(make_runtime(), provider="gemini", model="m", endpoint=Endpoint(client=client),
                  model_settings={"retry": RetryPolicy(max_retries=1, sleep=sleeps.append)})
    with pytest.raises(ModelUnavailableError, match="unreachable"):
        agent.run("go")
    assert len(sleeps) == 1
