"""The compile cache (``sandbox/policy.py``, ``CompileCache``) tried as an attacker
would: a script run again skips the policy pass, so the cache must never hand
one run what another run's settings or another script earned.

In process every session of the host shares the cache; each sandbox process
has its own. What it keeps is immutable and follows from its key alone.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from toolscript.sandbox import policy
from toolscript.sandbox.policy import CompileCache, PolicyViolation, compile_script

from toolscript import Runtime

MODULES = frozenset({"json", "math"})


def test_a_refused_script_is_refused_every_time() -> None:
    """Refusals are never kept: the same refused text is checked again."""
    source = "().__class__.__bases__[0].__subclasses__()"
    for _ in range(3):
        with pytest.raises(PolicyViolation):
            compile_script(source, MODULES)


def test_the_allowed_modules_are_part_of_the_key() -> None:
    """An import compiles to the import where the module is allowed and to its
    refusal where it is not: the two never share an entry."""
    source = "import json\njson.dumps([1])"
    allowed = compile_script(source, MODULES)
    refused = compile_script(source, frozenset({"math"}))
    assert allowed is compile_script(source, MODULES)
    assert refused is not allowed and refused.body.co_code != allowed.body.co_code


def test_the_provenance_pass_is_part_of_the_key() -> None:
    """With labels on, the same text compiles to other code (the labels pass)."""
    source = "x = [1, 2]\ny = x[0] + 1\nlen(x) + y"
    plain = compile_script(source, MODULES)
    labelled = compile_script(source, MODULES, labels=True)
    assert plain is compile_script(source, MODULES)  # kept
    assert labelled is not plain and labelled.body.co_code != plain.body.co_code


def test_a_session_cannot_change_what_another_runs(make_runtime: Callable[..., Runtime]) -> None:
    """Two runtimes of one host (in process they share one cache) run the same text; what the
    first one's script did to its objects does not reach the second's."""
    script = ("def f(seen=[]):\n    seen.append(1)\n    return len(seen)\n"
              "f()\nf()\nf()")
    first = make_runtime([])
    second = make_runtime([], modules=["math"])
    assert first.run(script).value == 3
    assert second.run(script).value == 3
    assert first.run(script).value == 3
    refused = first.run("(lambda: 0).__code__")  # the code object stays out of reach
    assert refused.error is not None and refused.error.type == "policy_error"
    assert first.run("import json\njson.dumps(1)").value == "1"
    denied = second.run("import json\njson.dumps(1)")  # same text, json not allowed there
    assert denied.error is not None, denied.value


def test_the_cache_is_bounded_in_entries_and_characters() -> None:
    cache = CompileCache(max_entries=2, max_chars=100, max_source_chars=60)
    one = compile_script("1", MODULES)

    def key(text: str) -> tuple[str, frozenset[str], str, bool]:
        return (text, MODULES, "<script>", False)

    for text in ("a", "b", "c"):
        cache.put(key(text), one)
    assert len(cache) == 2 and cache.get(key("a")) is None  # least recently used out
    cache.put(key("x" * 61), one)  # a source over the size kept is not kept
    assert cache.get(key("x" * 61)) is None
    cache.put(key("y" * 55), one)
    cache.put(key("z" * 55), one)  # 110 characters: the older goes
    assert cache.get(key("y" * 55)) is None and cache.get(key("z" * 55)) is one
    cache.clear()
    assert len(cache) == 0


def test_the_process_cache_has_a_bound() -> None:
    assert policy.COMPILED.max_entries <= 1024
    assert policy.COMPILED.max_chars <= 16_000_000
