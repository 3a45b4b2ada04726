"""Sanity of the conformance corpus and of its plain-CPython reference runner.

Every script must run under :mod:`reference` without error, produce a JSON-able
value, be deterministic (twice in one process, and across processes with
different hash seeds, which catches set-iteration-order leaks), stay inside the
sandbox's language policy (checked statically here), and the corpus as a whole
must cover the constructs the issue lists.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import corpus_tools  # noqa: E402
import reference  # noqa: E402
from reference import CorpusUsageError, ToolError, run_script, script_paths  # noqa: E402

SCRIPTS = script_paths()
IDS = [p.stem for p in SCRIPTS]

ALLOWED_MODULES = {
    "asyncio",
    "math",
    "statistics",
    "json",
    "re",
    "datetime",
    "collections",
    "itertools",
    "functools",
    "dataclasses",
    "typing",
    "string",
    "decimal",
    "fractions",
    "random",
    "operator",
    "textwrap",
    "time",
    "enum",
    "heapq",
    "bisect",
    "copy",
    "unicodedata",
    "hashlib",
    "base64",
    "csv",
    "io",
    "uuid",
    "zoneinfo",
    "queue",
    "sys",
    "pathlib",
    "__future__",
}
# Special methods a corpus script may define (the sandbox must allow defining these).
ALLOWED_DUNDER_DEFS = {
    "__init__", "__repr__", "__str__", "__eq__", "__lt__", "__post_init__",
    # the numeric protocol, also bound by assignment in a class body (__radd__ = __add__)
    "__add__", "__radd__", "__iadd__", "__isub__", "__itruediv__", "__ifloordiv__",
    "__imod__", "__mul__", "__pow__", "__divmod__", "__invert__", "__lshift__", "__rshift__",
}
# ... and call through super(), e.g. super().__init__(...).
# Single-underscore attributes a script may use (namedtuple API).
ALLOWED_UNDERSCORE_ATTRS = {"_replace", "_asdict"}
FORBIDDEN_CALLS = {
    "open",
    "exec",
    "eval",
    "compile",
    "globals",
    "locals",
    "vars",
    "__import__",
    "input",
    "breakpoint",
    "id",
    "hash",
    "dir",
    "help",
    "exit",
    "quit",
    "setattr",
    "delattr",
    "memoryview",
    "type",
    "object",
}


# ---------------------------------------------------------------------------
# the corpus itself


def test_corpus_size_and_names() -> None:
    assert len(SCRIPTS) >= 110
    numbers = [p.name[:3] for p in SCRIPTS]
    assert len(numbers) == len(set(numbers)), "duplicate script numbers"
    for p in SCRIPTS:
        assert re.fullmatch(r"\d{3}_[a-z0-9_]+\.py", p.name), p.name


@pytest.mark.parametrize("path", SCRIPTS, ids=IDS)
def test_script_runs_deterministically(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    n_lines = len(source.splitlines())
    assert 10 <= n_lines <= 60, f"{path.name} has {n_lines} lines"
    calls: list[dict] = []
    first = run_script(source, filename=str(path), calls=calls)
    second = run_script(source, filename=str(path))
    assert first == second
    value, stdout = first
    assert value is not None, "a corpus script must end with a bare expression"
    json.dumps(value, allow_nan=False)
    assert isinstance(stdout, str)
    assert calls, "every corpus script calls at least one tool"
    assert len(calls) <= 2000, "stay well inside the default tool-call budget"


def _optional_imports(tree: ast.AST) -> set[int]:
    """Imports that may name a missing module, as in CPython: inside a ``try`` that
    catches ``ImportError``/``ModuleNotFoundError``, or under ``if TYPE_CHECKING:``."""
    found: set[int] = set()
    for node in ast.walk(tree):
        guarded_try = isinstance(node, ast.Try) and any(
            isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError")
            for h in node.handlers)
        type_checking = isinstance(node, ast.If) and isinstance(node.test, ast.Name) and (
            node.test.id == "TYPE_CHECKING")
        body: list[ast.stmt] = node.body if guarded_try or type_checking else []  # type: ignore[attr-defined]
        for statement in body:
            found.update(id(n) for n in ast.walk(statement)
                         if isinstance(n, (ast.Import, ast.ImportFrom)))
    return found


def _policy_violations(tree: ast.AST) -> list[str]:
    problems: list[str] = []

    def bad(node: ast.AST, msg: str) -> None:
        problems.append(f"line {getattr(node, 'lineno', '?')}: {msg}")

    optional = _optional_imports(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] not in ALLOWED_MODULES and id(node) not in optional:
                    bad(node, f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            if ((node.module or "").split(".")[0] not in ALLOWED_MODULES or node.level) and (
                    id(node) not in optional):
                bad(node, f"from {node.module} import")
            for alias in node.names:
                if alias.name == "*" or alias.name.startswith("_"):
                    bad(node, f"from {node.module} import {alias.name}")
        elif isinstance(node, ast.Attribute):
            via_super = (
                node.attr in ALLOWED_DUNDER_DEFS
                and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name)
                and node.value.func.id == "super"
            )
            if (
                node.attr.startswith("_")
                and node.attr not in ALLOWED_UNDERSCORE_ATTRS
                and not via_super
            ):
                bad(node, f"attribute {node.attr}")
        elif isinstance(node, ast.Name):
            if node.id.startswith("_") and node.id != "_" and node.id not in ALLOWED_DUNDER_DEFS:
                bad(node, f"name {node.id}")
        elif isinstance(node, ast.arg):
            if node.arg.startswith("_"):
                bad(node, f"argument {node.arg}")
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            if node.name.startswith("_") and node.name not in ALLOWED_DUNDER_DEFS:
                bad(node, f"definition {node.name}")
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
                bad(node, f"call to {node.func.id}()")
            if (
                isinstance(node.func, ast.Name)
                and node.func.id == "print"
                and any(k.arg == "file" for k in node.keywords)
            ):
                bad(node, "print(file=...)")
        elif isinstance(node, ast.With):
            bad(node, "with statements are outside the corpus")
    return problems


@pytest.mark.parametrize("path", SCRIPTS, ids=IDS)
def test_script_stays_inside_policy(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert _policy_violations(tree) == []
    assert isinstance(tree.body[-1], ast.Expr)


_SUBPROCESS_DUMP = """
import json, sys
sys.path.insert(0, {here!r})
import reference
out = {{}}
for p in reference.script_paths():
    out[p.name] = list(reference.run_file(p))
print(json.dumps(out))
"""


def test_results_do_not_depend_on_hash_seed() -> None:
    """Set iteration order of strings changes with PYTHONHASHSEED; results must not."""
    expected = {p.name: list(reference.run_file(p)) for p in SCRIPTS}
    code = _SUBPROCESS_DUMP.format(here=str(HERE))
    for seed in ("0", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        proc = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=240
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        got = json.loads(proc.stdout)
        diff = [name for name in expected if got.get(name) != expected[name]]
        assert diff == [], f"hash seed {seed} changes: {diff}"


def test_corpus_covers_the_issue_list() -> None:
    trees = {p.name: ast.parse(p.read_text(encoding="utf-8")) for p in SCRIPTS}
    text = "\n".join(p.read_text(encoding="utf-8") for p in SCRIPTS)
    nodes = [n for t in trees.values() for n in ast.walk(t)]

    def has(kind: type) -> bool:
        return any(isinstance(n, kind) for n in nodes)

    for kind in (
        ast.Match,
        ast.MatchSequence,
        ast.MatchMapping,
        ast.MatchClass,
        ast.MatchOr,
        ast.NamedExpr,
        ast.Nonlocal,
        ast.Global,
        ast.YieldFrom,
        ast.Yield,
        ast.Lambda,
        ast.GeneratorExp,
        ast.ListComp,
        ast.DictComp,
        ast.SetComp,
        ast.Starred,
        ast.JoinedStr,
        ast.Assert,
        ast.AugAssign,
    ):
        assert has(kind), kind.__name__
    assert any(isinstance(n, ast.Try) and n.orelse and n.finalbody for n in nodes)
    assert any(isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Subscript) for n in nodes)
    assert any(isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Attribute) for n in nodes)
    assert any(
        isinstance(n, ast.Assign)
        and any(isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Slice) for t in n.targets)
        for n in nodes
    )
    assert any(
        isinstance(n, ast.ClassDef)
        and any(isinstance(b, ast.Name) and b.id == "Exception" for b in n.bases)
        for n in nodes
    )
    for needle in (
        "super().",
        "@property",
        "@classmethod",
        "@staticmethod",
        "def __repr__",
        "def __eq__",
        "def __lt__",
        "@dataclass",
        "default_factory",
        "order=True",
        "frozen=True",
        "namedtuple",
        "._replace(",
        "._asdict(",
        "Counter(",
        "defaultdict(",
        "OrderedDict(",
        "deque(",
        "functools.wraps",
        "lru_cache",
        "groupby",
        "chain",
        "islice",
        "product(",
        "accumulate",
        "reduce(",
        "partial(",
        "statistics",
        "math.",
        "json.dumps",
        "json.loads",
        "re.",
        "timedelta",
        "date.fromisoformat",
        "Decimal(",
        "Fraction(",
        "string.",
        "textwrap.",
        "itemgetter",
        "random.Random(",
        "sorted(",
        "reverse=True",
        "zip(",
        "enumerate(",
        "min(",
        "max(",
        "key=",
        "sum(",
        "any(",
        "all(",
        "map(",
        "filter(",
        "isinstance(",
        "sep=",
        "end=",
        "parallel(",
        "return_exceptions=True",
        "except ToolError",
        "except Exception",
        "send_email(",
        "create_ticket(",
        ":,.2f}",
        ":>",
        ":.1%}",
        '" % (',
        ".format(",
        "**kwargs",
        "*args",
        "raise ",
        " from ",
        "nonlocal",
        "global ",
        "List[",
        "Optional[",
        "-> ",
    ):
        assert needle in text, needle
    # every tool is exercised somewhere
    for fn in corpus_tools.ALL_TOOLS:
        assert f"{fn.__name__}" in text, fn.__name__


# ---------------------------------------------------------------------------
# the reference runner


def test_last_expression_is_evaluated_once() -> None:
    value, _ = run_script("n = []\ndef f():\n    n.append(1)\n    return len(n)\nf()\n")
    assert value == 1
    value, _ = run_script("x = 1\nx += 1\n")
    assert value is None


def test_print_capture_and_json_normalisation() -> None:
    value, out = run_script("print('a', 1, sep='-', end='!')\nprint()\n(1, {2: (3,)})")
    assert out == "a-1!\n"
    assert value == [1, {"2": [3]}]


def test_tool_error_message_format() -> None:
    src = "try:\n    get_customer('C013')\nexcept ToolError as e:\n    r = [e.message, str(e)]\nr"
    value, _ = run_script(src)
    assert value == ["get_customer: KeyError: 'customer C013 was deleted'",
                     "'customer C013 was deleted'"]
    value, _ = run_script("try:\n    get_customer('C013')\nexcept KeyError as e:\n"
                          "    r = [type(e).__name__, isinstance(e, ToolError)]\nr")
    assert value == ["KeyError", True]
    value, _ = run_script(
        "try:\n    get_weather('Paris', '2026-01-01')\nexcept Exception as e:\n    m = e.message\nm"
    )
    assert value == "get_weather: ValueError: unknown city 'Paris'"
    assert issubclass(ToolError, Exception)


def test_tool_arguments_and_results_cross_as_json() -> None:
    value, _ = run_script("r = get_inventory('SKU-1001')\nisinstance(r['warehouses'], dict)")
    assert value is True
    with pytest.raises(CorpusUsageError):
        run_script("get_daily_revenue('ST001', 20260801)")
    with pytest.raises(CorpusUsageError):
        run_script("get_store_info()")
    value, _ = run_script("convert_currency(10, 'USD', 'CNY')")
    assert value == 72.0


def test_parallel_semantics() -> None:
    src = """
a = parallel([(get_store_info, {'store_id': 'ST001'}), (get_budget, {'department': 'HR'})])
b = parallel(get_store_info, [{'store_id': 'ST002'}, {'store_id': 'ST003'}])
c = parallel(get_store_info, [{'store_id': 'ST404'}, {'store_id': 'ST001'}],
             return_exceptions=True)
try:
    parallel(get_store_info, [{'store_id': 'ST001'}, {'store_id': 'ST405'}, {'store_id': 'ST406'}])
except ToolError as e:
    first = e.message
[a[0]['store_id'], a[1]['department'], [x['store_id'] for x in b],
 isinstance(c[0], ToolError), str(c[0]), c[1]['store_id'], first, parallel([])]
"""
    value, _ = run_script(src)
    assert value == [
        "ST001",
        "HR",
        ["ST002", "ST003"],
        True,
        "'unknown store ST404'",
        "ST001",
        "get_store_info: KeyError: 'unknown store ST405'",
        [],
    ]
    with pytest.raises(CorpusUsageError):
        run_script("parallel([(send_email, {'to': 'a@b.c', 'subject': 's', 'body': 'b'})])")
    with pytest.raises(CorpusUsageError):
        run_script("def f():\n    return 1\nparallel([(f, {})])")


def test_outbox_is_reset_per_run_and_ids_are_stable() -> None:
    src = "send_email('a@example.com', 'Hi', 'Body')['message_id']"
    v1, _ = run_script(src)
    assert len(corpus_tools.OUTBOX) == 1
    v2, _ = run_script(src)
    assert v1 == v2 and len(corpus_tools.OUTBOX) == 1


def test_scripts_cannot_see_future_annotations_of_the_runner() -> None:
    # reference.py uses `from __future__ import annotations`; scripts must not inherit it
    src = (
        "from dataclasses import dataclass\n@dataclass\nclass P:\n    x: int\n"
        "from dataclasses import fields\nfields(P)[0].type is int"
    )
    value, _ = run_script(src)
    assert value is True
