"""The embedding ranker of tool search: a provider's embeddings endpoint.

:class:`EmbeddingRanker` is a :class:`~toolscript.tools.toolsearch.Ranker`
that embeds every tool document once (in batches) and each query, through an
OpenAI-compatible ``/v1/embeddings`` endpoint (the ``openai`` SDK client you
pass), and ranks by cosine similarity. Give it to ``ToolSearch(ranker=...)``,
alone or fused with BM25 (``FusionRanker(BM25Ranker(), EmbeddingRanker(...))``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["EmbeddingRanker"]


class EmbeddingRanker:
    """Cosine ranking over embeddings from ``client.embeddings.create(model=, input=)``."""

    def __init__(self, client: Any, model: str, *, batch: int = 256) -> None:
        """``client``: an ``openai.OpenAI`` (or compatible) client; ``model``: the
        embedding model's name."""
        self.client = client
        self.model = model
        self.batch = batch
        self._vectors: list[list[float]] = []

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch):
            reply = self.client.embeddings.create(model=self.model,
                                                  input=list(texts[start:start + self.batch]))
            out.extend(_unit(list(item.embedding)) for item in reply.data)
        return out

    def fit(self, documents: Sequence[str]) -> None:
        """Embed every document (once per catalog)."""
        self._vectors = self._embed([d[:2000] for d in documents])

    def rank(self, query: str, k: int) -> list[int]:
        """The ``k`` documents closest to ``query`` (ties by index)."""
        if not self._vectors:
            return []
        [q] = self._embed([query])
        scores = [sum(a * b for a, b in zip(q, v, strict=False)) for v in self._vectors]
        return sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]
