"""The tools of the batch workloads, as a module Dask workers load by name
(``RuntimeSpec(tools=("benchmarks.cluster_tools",))``)."""

from __future__ import annotations

from benchmarks.workloads import get_price, slow_lookup
from toolscript import tool

TOOLS = [tool(read_only=True)(get_price), tool(read_only=True)(slow_lookup)]
