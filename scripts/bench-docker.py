"""Measure the docker backend: transport round trip, tool call, start, warm acquire.

Usage: python scripts/bench-docker.py [--image TAG] [--rounds N]

Prints medians (and p10/p90) for both transports (Unix socket, attached
stdio) next to the subprocess backend. Numbers on a shared 2-core machine
are noisy: compare within one run.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from toolscript.runtime.backends.base import SandboxSpec
from toolscript.runtime.backends.docker.backend import DockerBackend, flush_removals
from toolscript.runtime.backends.docker.image import DEFAULT_IMAGE
from toolscript.runtime.limits import Limits
from toolscript.runtime.runtime import Runtime


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _stats(samples: list[float], scale: float = 1e6) -> str:
    q = statistics.quantiles(samples, n=10)
    return (f"median {statistics.median(samples) * scale:8.1f}  "
            f"p10 {q[0] * scale:8.1f}  p90 {q[-1] * scale:8.1f}")  # fmt: skip


def _time(fn: Callable[[], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--image", default=DEFAULT_IMAGE)
    ap.add_argument("--rounds", type=int, default=2000)
    args = ap.parse_args()
    n = args.rounds
    limits = Limits(tool_timeout_s=None)  # tools inline: measure the transport, not a pool
    spec = SandboxSpec(limits)

    for transport in ("socket", "attach"):
        print(f"== docker, transport={transport}")
        with DockerBackend(args.image, pool_size=0, transport=transport) as b:
            cold = _time(lambda b=b: b.start(spec).close(), 10)
            print(f"cold start (create..ready) ms   {_stats(cold, 1e3)}")
            h = b.start(spec)

            def ping(h=h) -> None:
                h.send({"type": "ping"})
                h.recv(5)

            _time(ping, 200)
            print(f"raw round trip (ping) us       {_stats(_time(ping, n))}")
            h.close()
        with Runtime(tools=[add], backend=DockerBackend(args.image, pool_size=2,
                     transport=transport), limits=limits) as rt:  # fmt: skip
            assert rt.backend is not None
            pool = rt.backend.warm(spec)  # type: ignore[attr-defined]
            pool.wait_ready(60)
            acquire = []
            for _ in range(10):
                pool.wait_ready(60)
                t = time.perf_counter()
                h = rt.backend.start(spec)
                acquire.append(time.perf_counter() - t)
                h.close()
            print(f"warm acquire us                 {_stats(acquire)}")
            ends = []
            for _ in range(10):
                pool.wait_ready(60)
                t = time.perf_counter()
                rt.run("1 + 1")
                ends.append(time.perf_counter() - t)
            print(f"rt.run() on a warm pool ms      {_stats(ends, 1e3)}")
            with rt.session() as s:
                s.run("0")
                k = 1000
                per_call = []
                for _ in range(7):
                    t = time.perf_counter()
                    s.run(f"for i in range({k}):\n    add(i, 1)\n")
                    per_call.append((time.perf_counter() - t) / k)
                print(f"tool call (session) us          {_stats(per_call)}")
                trivial = _time(lambda s=s: s.run("1"), 300)
                print(f"warm-session trivial run ms     {_stats(trivial, 1e3)}")
        flush_removals()

    print("== subprocess (for comparison)")
    with Runtime(tools=[add], backend="subprocess", limits=limits) as rt, rt.session() as s:
        s.run("0")
        h = s._handle
        assert h is not None

        def sping(h=h) -> None:
            h.send({"type": "ping"})
            h.recv(5)

        print(f"raw round trip (ping) us       {_stats(_time(sping, n))}")
        per_call = []
        for _ in range(7):
            t = time.perf_counter()
            s.run("for i in range(1000):\n    add(i, 1)\n")
            per_call.append((time.perf_counter() - t) / 1000)
        print(f"tool call (session) us          {_stats(per_call)}")


if __name__ == "__main__":
    main()
