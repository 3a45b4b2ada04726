"""The benchmark workloads: model-style scripts and the host tools they call.

Every workload is one script text, identical for every engine; sizes are
substituted into the text before the run (``{n}``), so a ``--quick`` run and a
full run execute the same code on fewer records. Records are generated inside
the script for every engine, so the generation is part of what is measured.

The tools are plain Python functions (what a user registers); each engine
adapter wraps them the way that engine expects (toolscript: ``@tool`` with
``read_only=True``; smolagents: static tools; Monty: external functions).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# --------------------------------------------------------------------- tools


def get_price(sku: str) -> dict[str, Any]:
    """Price and stock of one product.

    Args:
        sku: product id such as "SKU00042".
    """
    n = int(sku[3:])
    return {"sku": sku, "price": (n * 37 % 1000) / 10, "in_stock": n % 3 != 0}


def slow_lookup(key: str) -> dict[str, Any]:
    """A slow read-only lookup (50 ms, like a remote API).

    Args:
        key: what to look up.
    """
    time.sleep(0.05)
    return {"key": key, "value": len(key)}


@dataclass(frozen=True)
class ToolSpec:
    """A host tool as the harness registers it with every engine."""

    func: Callable[..., Any]
    read_only: bool = True

    @property
    def name(self) -> str:
        """The tool's name (the function's name)."""
        return self.func.__name__


TOOLS: tuple[ToolSpec, ...] = (ToolSpec(get_price), ToolSpec(slow_lookup))
"""Every tool the workloads use; all read-only."""

# ------------------------------------------------------------------ scripts

TOOL_CHAIN = """\
total = 0.0
in_stock = 0
for i in range({n}):
    item = get_price(sku=f"SKU{{i:05d}}")
    total += item["price"]
    if item["in_stock"]:
        in_stock += 1
{{"calls": {n}, "total": round(total, 2), "in_stock": in_stock}}
"""

COMPUTE = """\
REGIONS = ["north", "south", "east", "west", "central"]
CATEGORIES = ["books", "games", "garden", "tools", "toys", "food", "music"]
seed = 12345
records = []
for i in range({n}):
    seed = (seed * 1103515245 + 12345) % 2147483648
    records.append({{
        "id": i,
        "region": REGIONS[seed % 5],
        "category": CATEGORIES[(seed // 5) % 7],
        "amount": (seed % 100000) / 100,
        "qty": 1 + seed % 9,
        "returned": seed % 17 == 0,
    }})

valid = [r for r in records if not r["returned"] and r["amount"] >= 5]
valid.sort(key=lambda r: (r["region"], -r["amount"]))

groups = {{}}
for r in valid:
    key = (r["region"], r["category"])
    if key not in groups:
        groups[key] = {{"n": 0, "revenue": 0.0, "units": 0, "max": 0.0}}
    g = groups[key]
    g["n"] += 1
    g["revenue"] += r["amount"] * r["qty"]
    g["units"] += r["qty"]
    if r["amount"] > g["max"]:
        g["max"] = r["amount"]

summary = []
for key, g in groups.items():
    summary.append({{
        "region": key[0],
        "category": key[1],
        "orders": g["n"],
        "revenue": round(g["revenue"], 2),
        "avg_price": round(g["revenue"] / g["units"], 2),
        "max": g["max"],
    }})
summary.sort(key=lambda s: -s["revenue"])
top_per_region = {{}}
for s in summary:
    if s["region"] not in top_per_region:
        top_per_region[s["region"]] = s["category"]
median_amount = valid[len(valid) // 2]["amount"]
{{"records": len(records), "kept": len(valid), "groups": len(summary),
 "top": summary[:3], "top_per_region": top_per_region, "median_pick": median_amount}}
"""

STRING_JSON = """\
import json

lines = []
for i in range({n}):
    rec = {{
        "id": f"ORD-{{i:06d}}",
        "customer": f"cust{{i % 97:03d}}",
        "email": f"user{{i % 501}}@example{{i % 7}}.com",
        "note": "  Rush delivery; FRAGILE  " if i % 11 == 0 else "standard",
        "items": [{{"sku": f"S{{(i * 31 + k) % 500:04d}}", "qty": 1 + (i + k) % 4}}
                  for k in range(1 + i % 3)],
    }}
    lines.append(json.dumps(rec, sort_keys=True))
payload = "\\n".join(lines)

domains = {{}}
skus = {{}}
rush = 0
labels = []
for line in payload.split("\\n"):
    rec = json.loads(line)
    domain = rec["email"].split("@")[1].upper()
    domains[domain] = domains.get(domain, 0) + 1
    note = rec["note"].strip().lower()
    if "rush" in note:
        rush += 1
    for item in rec["items"]:
        skus[item["sku"]] = skus.get(item["sku"], 0) + item["qty"]
    order_no = int(rec["id"].replace("ORD-", ""))
    if order_no % 1000 == 0:
        labels.append("{{}}|{{}}|{{:>8}}".format(rec["customer"].title(), domain.lower(),
                                              len(rec["items"])))

top_skus = sorted(skus.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
report = "; ".join(f"{{d}}={{c}}" for d, c in sorted(domains.items()))
out = json.dumps({{"rush": rush, "top": top_skus, "report": report, "labels": labels}})
{{"lines": len(lines), "bytes": len(payload), "rush": rush, "top_skus": top_skus,
 "domains": report, "labels": labels, "out_len": len(out)}}
"""

TRIVIAL = """\
x = 6 * 7
x
"""

PARALLEL = """\
rows = parallel(slow_lookup, [{{"key": f"K{{i}}"}} for i in range({n})])
{{"rows": len(rows), "total": sum(r["value"] for r in rows)}}
"""

SHORT_SESSION = """\
a = get_price(sku="SKU00001")
b = get_price(sku="SKU00002")
round(a["price"] + b["price"], 2)
"""

BATCH_ITEM = """\
a = get_price(sku=item["a"])
b = get_price(sku=item["b"])
round(a["price"] + b["price"], 2)
"""
"""The item script of the batch workload: ``item`` is bound per item."""


def batch_items(n: int) -> list[dict[str, str]]:
    """The ``n`` items of the batch workload (two SKUs each)."""
    return [{"a": f"SKU{i:05d}", "b": f"SKU{i + 1:05d}"} for i in range(n)]


def batch_value(values: list[Any]) -> dict[str, Any]:
    """What a batch run is checked by: item count and the sum of the item values."""
    return {"items": len(values), "total": round(sum(values), 2)}


@dataclass(frozen=True)
class Workload:
    """One benchmark workload.

    ``kind`` says how it is run: ``warm`` (timed ``session.run`` in an open
    session), ``fresh`` (a new runtime run each time: sandbox start included),
    ``concurrent`` (N fresh runs on ``concurrency`` threads) or ``batch`` (N
    items of the script, each bound to ``item``, ``concurrency`` at a time:
    toolscript's batch runner, a thread pool of fresh runs elsewhere).
    ``fresh_sessions`` marks the workloads that measure sandbox start-up,
    which the isolation-mode engine variants also run.
    """

    name: str
    title: str
    script: str
    sizes: dict[str, int]  # "full" / "quick" -> n
    kind: str = "warm"
    tool_calls: bool = False
    uses_parallel: bool = False
    concurrency: int = 1
    repeat_factor: int = 1  # cheap workloads take more samples (noise on shared machines)
    fresh_sessions: bool = False
    description: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def code(self, n: int) -> str:
        """The script text for size ``n``."""
        return self.script.format(n=n)


WORKLOADS: tuple[Workload, ...] = (
    Workload("tool_chain", "Tool chain", TOOL_CHAIN, {"full": 1000, "quick": 50},
             tool_calls=True, repeat_factor=2,
             description="a loop of N sequential calls of a cheap read-only tool"),
    Workload("compute", "Batch compute", COMPUTE, {"full": 200_000, "quick": 2_000},
             description="generate N records, filter, sort, group-by, aggregate"),
    Workload("string_json", "String/JSON", STRING_JSON, {"full": 10_000, "quick": 200},
             description="N records to JSON lines and back, string methods, formatting"),
    Workload("trivial_warm", "Trivial (warm session)", TRIVIAL, {"full": 1, "quick": 1},
             repeat_factor=3,
             description="fixed cost of one run in an open session"),
    Workload("trivial_fresh", "Trivial (fresh run)", TRIVIAL, {"full": 1, "quick": 1},
             kind="fresh", repeat_factor=3, fresh_sessions=True,
             description="fixed cost of runtime.run(): a new sandbox/interpreter each time"),
    Workload("parallel", "parallel() fan-out", PARALLEL, {"full": 100, "quick": 10},
             tool_calls=True, uses_parallel=True,
             description="parallel() of N calls of a 50 ms read-only tool"),
    Workload("sessions", "Fresh sessions", SHORT_SESSION, {"full": 200, "quick": 16},
             kind="concurrent", tool_calls=True, concurrency=4, fresh_sessions=True,
             description="N fresh runs (a new session each, 2 tool calls) on 4 threads; "
             "throughput"),
    Workload("batch", "Batch items", BATCH_ITEM, {"full": 400, "quick": 40},
             kind="batch", tool_calls=True, concurrency=4, fresh_sessions=True,
             description="N items of a 2-tool-call script, 4 at a time: toolscript's batch "
             "runner (`run_batch`, as `toolscript batch --out` calls it), a 4-thread pool of "
             "fresh runs elsewhere; throughput"),
)

WORKLOAD_NAMES = tuple(w.name for w in WORKLOADS)


def get(name: str) -> Workload:
    """The workload called ``name``."""
    for workload in WORKLOADS:
        if workload.name == name:
            return workload
    raise KeyError(name)
