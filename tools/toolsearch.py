"""Tool search over a catalog: ``search_tools(query, k=5)`` and ``describe_tool(name)``.

The index is built from each tool's name (split at ``_``, ``.`` and case
changes), namespace, description and parameter names and descriptions, and
ranked with BM25 (``bm25s``: a maintained, numpy-only BM25 library whose
scores are precomputed into a sparse matrix, so a query over 10,000 tools is a
few milliseconds; ``rank-bm25`` scores every document in Python per query and
has had no release since 2022). A :class:`Ranker` given to :class:`ToolSearch`
(for example the embedding ranker of :mod:`toolscript.runtime.toolsearch`)
replaces or joins it. Both functions are ordinary host tools: a script or the
model calls them through the one call path, so approvals, audit and limits
apply to them as to any tool.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from toolscript.errors import ConfigurationError

from .catalog import short_name, wire_name
from .definition import Tool

if TYPE_CHECKING:
    from .registry import ToolRegistry

__all__ = [
    "DESCRIBE_TOOL_NAME",
    "SEARCH_NAMES",
    "SEARCH_TOOLS_NAME",
    "BM25Ranker",
    "FusionRanker",
    "Ranker",
    "ToolSearch",
    "document_text",
    "signature",
    "tokenize",
]

SEARCH_TOOLS_NAME = "search_tools"
DESCRIBE_TOOL_NAME = "describe_tool"
SEARCH_NAMES = frozenset({SEARCH_TOOLS_NAME, DESCRIBE_TOOL_NAME})
MAX_K = 20

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(str.split(
    "a an and are as at be by for from has have i in is it its me my of on or our please "
    "that the their then this to was what when where which who will with you your")
)


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens, ``snake_case`` and ``camelCase`` split, stop words out,
    a plural ``s`` dropped (``emails`` and ``email`` match)."""
    words = _WORD.findall(_CAMEL.sub(" ", text.replace("_", " ")).lower())
    out = []
    for w in words:
        if w in _STOP:
            continue
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.append(w)
    return out


def signature(tool: Tool) -> str:
    """``github.list_prs(repo: str, state: str = 'open')``: a one-line signature."""
    parts = []
    for p in tool.params:
        text = p.name
        kind = p.schema.get("type") if isinstance(getattr(p, "schema", None), dict) else None
        if isinstance(kind, str):
            text += f": {_PY_TYPES.get(kind, kind)}"
        if not p.required:
            text += " = ..."
        parts.append(text)
    return f"{tool.name}({', '.join(parts)})"


_PY_TYPES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool",
             "array": "list", "object": "dict", "null": "None"}


def document_text(tool: Tool) -> str:
    """What the index holds of ``tool``: name, namespace, description, parameters."""
    props = (tool.parameters_schema or {}).get("properties") or {}
    params = " ".join(
        f"{name} {spec.get('description', '')}" if isinstance(spec, dict) else str(name)
        for name, spec in props.items()
    )
    name = tool.name.replace(".", " ")
    return f"{name} {name} {tool.description or ''} {params}"


class Ranker(Protocol):
    """Ranks documents for a query: indices of the best ``k``, best first."""

    def fit(self, documents: Sequence[str]) -> None:
        """Index ``documents`` (called once per catalog)."""
        ...

    def rank(self, query: str, k: int) -> list[int]:
        """The indices of the ``k`` best documents for ``query``, best first."""
        ...


class BM25Ranker:
    """BM25 (Lucene variant) over :func:`tokenize`\\ d text, with ``bm25s``."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        """BM25 with the usual parameters."""
        self.k1 = k1
        self.b = b
        self._model: Any = None
        self._vocab: dict[str, int] = {}
        self._size = 0

    def fit(self, documents: Sequence[str]) -> None:
        """Index ``documents``.

        Raises:
            ConfigurationError: ``bm25s`` is not installed (``toolscript[search]``).
        """
        try:
            import bm25s  # type: ignore[import-untyped]
        except ImportError as exc:  # pragma: no cover - the extra is part of dev
            raise ConfigurationError(
                "tool search needs the bm25s package: pip install 'toolscript[search]'"
            ) from exc
        corpus = [tokenize(d) or ["_"] for d in documents]
        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(w, len(vocab)) for w in doc] for doc in corpus]
        model = bm25s.BM25(k1=self.k1, b=self.b)
        model.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)
        self._model, self._vocab, self._size = model, vocab, len(documents)

    def rank(self, query: str, k: int) -> list[int]:
        """The best ``k`` documents for ``query`` (ties by index: deterministic)."""
        if self._model is None or self._size == 0:
            return []
        ids = [self._vocab[w] for w in tokenize(query) if w in self._vocab]
        if not ids:
            return []
        scores = self._model.get_scores(ids)
        order = sorted(range(self._size), key=lambda i: (-float(scores[i]), i))
        return [i for i in order[:k] if float(scores[i]) > 0.0]


class FusionRanker:
    """Reciprocal-rank fusion of several rankers (e.g. BM25 and embeddings)."""

    def __init__(self, *rankers: Ranker, depth: int = 50, c: int = 60) -> None:
        """Fuse ``rankers``; each contributes its top ``depth``."""
        self.rankers = rankers
        self.depth = depth
        self.c = c

    def fit(self, documents: Sequence[str]) -> None:
        """Fit every ranker."""
        for ranker in self.rankers:
            ranker.fit(documents)

    def rank(self, query: str, k: int) -> list[int]:
        """Fused ranking: sum of ``1 / (c + rank)`` over the rankers."""
        score: dict[int, float] = {}
        for ranker in self.rankers:
            for pos, index in enumerate(ranker.rank(query, self.depth)):
                score[index] = score.get(index, 0.0) + 1.0 / (self.c + pos + 1)
        return sorted(score, key=lambda i: (-score[i], i))[:k]


class ToolSearch:
    """How a registry searches its deferred tools (pass one among the runtime's tools
    to choose the ranker; a registry with deferred tools makes a BM25 one otherwise).

    Args:
        ranker: a :class:`Ranker`; default :class:`BM25Ranker`.
        scope: ``"deferred"`` (search the deferred tools only) or ``"all"``.
    """

    def __init__(self, ranker: Ranker | None = None, *, scope: str = "all") -> None:
        """See the class docstring."""
        if scope not in ("deferred", "all"):
            raise ConfigurationError(f"ToolSearch scope must be 'deferred' or 'all', not {scope!r}")
        self.ranker: Ranker = ranker if ranker is not None else BM25Ranker()
        self.scope = scope
        self._lock = threading.Lock()
        self._tools: list[Tool] | None = None
        self._registry: ToolRegistry | None = None

    def bind(self, registry: ToolRegistry) -> None:
        """Attach to the registry whose tools are searched (the index is built lazily)."""
        self._registry = registry
        self._tools = None

    def _indexed(self) -> list[Tool]:
        with self._lock:
            if self._tools is None:
                registry = self._registry
                if registry is None:
                    raise ConfigurationError("ToolSearch is not attached to a registry")
                tools = [t for t in registry if t.name not in SEARCH_NAMES
                         and (self.scope == "all" or registry.is_deferred(t.name))]
                self.ranker.fit([document_text(t) for t in tools])
                self._tools = tools
            return self._tools

    def search(self, query: str, k: int = 5) -> list[dict[str, Any]]:
        """The ``k`` best tools for ``query``: name, one-line description, signature
        (and ``function``, the name a model calls, when it differs)."""
        k = max(1, min(int(k), MAX_K))
        tools = self._indexed()
        found = []
        for index in self.ranker.rank(str(query), k):
            t = tools[index]
            entry: dict[str, Any] = {
                "name": t.name,
                "description": (t.description or "").strip().split("\n", 1)[0][:200],
                "signature": signature(t),
            }
            if wire_name(t.name) != t.name:
                entry["function"] = wire_name(t.name)
            found.append(entry)
        return found

    def describe(self, name: str) -> str:
        """The full Python stub of tool ``name`` (as a namespaced tool shows it)."""
        registry = self._registry
        if registry is None:
            raise ConfigurationError("ToolSearch is not attached to a registry")
        tool = registry.get(name) or registry.by_wire_name(name)
        if tool is None:
            raise LookupError(registry.unknown_tool_message(name))
        from .stubs import render_stub

        stub = render_stub(tool, name=short_name(tool.name))
        if "." in tool.name:
            namespace = tool.name.rsplit(".", 1)[0]
            stub = f"# call as {tool.name}(...) (namespace {namespace})\n{stub}"
        return stub

    def tools(self, namespaces_text: str) -> list[Tool]:
        """The two host tools, ``search_tools`` and ``describe_tool``."""

        def search_tools(query: str, k: int = 5) -> list[dict[str, Any]]:
            return self.search(query, k)

        def describe_tool(name: str) -> str:
            return self.describe(name)

        search_doc = (
            "Search the tool catalog by what you want to do; returns up to k (at most "
            f"{MAX_K}) matches, best first, each with name, description and signature. "
            "A tool found here can be called at once by its name."
            + (f"\n\n{namespaces_text}" if namespaces_text else "")
            + "\n\nArgs:\n    query: words describing the task, e.g. 'send a message to a "
            "channel'.\n    k: how many tools to return."
        )
        describe_doc = (
            "The full stub of one tool (parameters, types, what it returns).\n\nArgs:\n"
            "    name: the tool's name as search_tools gave it, e.g. 'github.list_prs'."
        )
        return [
            Tool(search_tools, name=SEARCH_TOOLS_NAME, description=search_doc, read_only=True),
            Tool(describe_tool, name=DESCRIBE_TOOL_NAME, description=describe_doc,
                 read_only=True),
        ]
