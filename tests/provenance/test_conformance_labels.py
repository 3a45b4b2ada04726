"""The conformance corpus (tests/corpus/scripts) with provenance labels on and every
tool untrusted, so labelled values flow through every script: each gives CPython's
value and output, or is refused because it uses ``async`` (which the labels pass
refuses, naming a substitute)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
sys.path.insert(0, str(CORPUS))

import corpus_tools  # noqa: E402
import reference  # noqa: E402
from toolscript.runtime.provenance import Provenance, ToolFlow  # noqa: E402

from toolscript import Limits, Runtime  # noqa: E402

SCRIPTS = sorted((CORPUS / "scripts").glob("*.py"))
REFUSED = ("async code is not available", "await is not available",
           "async with is not available", "async for is not available")


def test_corpus_with_labels_flowing_matches_cpython_or_is_refused() -> None:
    names = [getattr(t, "name", getattr(t, "__name__", "")) for t in corpus_tools.ALL_TOOLS]
    policy = Provenance(flows={name: ToolFlow.of(accepts_untrusted=["*"]) for name in names},
                        show_untrusted=True)

    def approve(request: Any) -> bool:
        return True

    runtime = Runtime(tools=corpus_tools.ALL_TOOLS, backend="inprocess", approve=approve,
                      limits=Limits(wall_time_s=60, max_output_chars=1_000_000),
                      provenance=policy)
    mismatches, refused = [], []
    try:
        for path in SCRIPTS:
            corpus_tools.reset_outbox()
            want = reference.run_file(path)
            corpus_tools.reset_outbox()
            result = runtime.run(path.read_text("utf-8"))
            if result.error is not None and result.error.type == "policy_error" and any(
                    text in result.error.message for text in REFUSED):
                refused.append(path.name)
            elif not result.ok or (result.value, result.stdout) != want:
                mismatches.append(f"{path.name}: {result.error or 'value/stdout differ'}")
    finally:
        runtime.close()
    assert not mismatches, "\n".join(mismatches)
    uses_async = sorted(path.name for path in SCRIPTS
                        if any(word in path.read_text("utf-8") for word in ("async ", "await ")))
    assert refused == uses_async, (refused, uses_async)  # only the async scripts, each of them
