"""The embedding ranker of tool search against a real ``/v1/embeddings`` endpoint
(the fake server's, through the real ``openai`` client): batching, ranking, fusion
with BM25, a script's search on every backend, and an endpoint that fails."""

from __future__ import annotations

from typing import Any

import catalog_tools
import openai
from toolscript.runtime.toolsearch import EmbeddingRanker
from toolscript.tools.toolsearch import BM25Ranker, FusionRanker, ToolSearch

from toolscript import Runtime

DOCUMENTS = [
    "list the pull requests of a github repository",
    "send a message to a slack channel",
    "the weather forecast of a city",
    "convert an amount of money to another currency",
    "merge a pull request",
]


def _client(server: Any) -> openai.OpenAI:
    return openai.OpenAI(api_key="test", base_url=server.openai_base_url, max_retries=0)


def test_documents_are_embedded_in_batches_and_ranked_by_cosine(server):
    ranker = EmbeddingRanker(_client(server), "fake-embed", batch=2)
    ranker.fit(DOCUMENTS)
    bodies = server.bodies("embeddings")
    assert [b["input"] for b in bodies] == [DOCUMENTS[0:2], DOCUMENTS[2:4], DOCUMENTS[4:]]
    assert {b["model"] for b in bodies} == {"fake-embed"}
    assert ranker.rank("slack channel message", 2)[0] == 1
    assert ranker.rank("currency money", 1) == [3]
    assert len(server.bodies("embeddings")) == 5  # one request per query


def test_an_unfitted_ranker_ranks_nothing_and_calls_nobody(server):
    assert EmbeddingRanker(_client(server), "fake-embed").rank("anything", 3) == []
    assert server.bodies("embeddings") == []


def test_fusion_with_bm25_keeps_what_both_agree_on_first(server):
    ranker = FusionRanker(BM25Ranker(), EmbeddingRanker(_client(server), "fake-embed"))
    ranker.fit(DOCUMENTS)
    assert ranker.rank("merge the pull request", 2)[0] == 4
    assert set(ranker.rank("pull request", 2)) == {0, 4}


def test_a_script_searches_deferred_tools_through_embeddings(server, backend_name):
    search = ToolSearch(EmbeddingRanker(_client(server), "fake-embed"))
    code = ("hits = search_tools('send a message to a slack channel', k=2)\n"
            "[h['name'] for h in hits]")
    with Runtime(tools=[*catalog_tools.catalog(20), search], backend=backend_name,
                 approve=lambda request: True) as runtime:
        first = runtime.run(code)
        second = runtime.run(code)
    assert first.ok, first.error
    assert first.value[0] == "slack.send_message"
    assert second.value == first.value
    # The catalog is embedded once (one batch), then one request per query.
    assert len(server.bodies("embeddings")) == 3


def test_an_embeddings_endpoint_that_fails_gives_the_script_a_tool_error(server):
    search = ToolSearch(EmbeddingRanker(_client(server), "fake-embed"))
    server.fail(500, message="embeddings are down")
    with Runtime(tools=[*catalog_tools.catalog(), search], backend="inprocess",
                 approve=lambda request: True) as runtime:
        down = runtime.run("search_tools('weather', k=1)")
        again = runtime.run("[h['name'] for h in search_tools('weather in a city', k=1)]")
    assert not down.ok
    assert down.error.type == "tool_error", down.error
    assert down.error.details["tool_error_type"] == "tool_exception"
    assert "embeddings are down" in down.error.message
    assert again.ok, again.error  # the index is built on the next search
    assert again.value == ["get_weather"]
