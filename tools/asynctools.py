"""``async def`` tools: where their coroutines run.

The runtime calls every tool synchronously, from the thread serving the run
or from a worker thread (a call with a timeout), after validation and
approval. An ``async def`` tool is therefore wrapped by :func:`blocking`: the
call submits the coroutine to an event loop and waits for its result, so it
keeps every guarantee of a plain tool — validation, approval, the call's
timeout (a coroutine still running at its timeout is abandoned like a
blocked thread: the call is answered ``timeout``, the coroutine runs on) and
the audit record.

The loop is the host's own when there is one: ``await runtime.run_async(...)``,
``await session.run_async(...)`` and ``await agent.run_async(...)`` register
the running loop (:func:`hosting`) for as long as they wait, so an async tool
may use the loop's resources (an ``aiohttp`` session, an async database
pool). With several loops hosting runs at once from different threads, a
call that cannot tell which one it belongs to (it runs on a worker thread)
uses the private loop instead. Without a host loop — sync use — coroutines
run on one private loop on a daemon thread, shared by every async tool of
the process (so loop-bound state survives between calls).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["blocking", "host_loop", "hosting", "offload", "run_coroutine"]

_CURRENT: contextvars.ContextVar[asyncio.AbstractEventLoop | None] = contextvars.ContextVar(
    "toolscript_host_loop", default=None
)
_lock = threading.Lock()
_active: dict[asyncio.AbstractEventLoop, int] = {}
_private: _LoopThread | None = None


class _LoopThread:
    """An event loop running forever on a daemon thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="toolscript-async-tools", daemon=True
        )
        self.thread.start()


@contextmanager
def hosting(loop: asyncio.AbstractEventLoop | None = None) -> Iterator[None]:
    """Let async tools run on ``loop`` (default: the running loop) while in the block."""
    loop = loop if loop is not None else asyncio.get_running_loop()
    with _lock:
        _active[loop] = _active.get(loop, 0) + 1
    token = _CURRENT.set(loop)
    try:
        yield
    finally:
        _CURRENT.reset(token)
        with _lock:
            _active[loop] -= 1
            if not _active[loop]:
                del _active[loop]


def host_loop() -> asyncio.AbstractEventLoop | None:
    """The host loop a coroutine called from this thread should run on, if any."""
    loop = _CURRENT.get()
    if loop is not None and loop.is_running():
        return loop
    with _lock:
        loops = [candidate for candidate in _active if candidate.is_running()]
    return loops[0] if len(loops) == 1 else None


def _private_loop() -> asyncio.AbstractEventLoop:
    global _private
    with _lock:
        if _private is None or not _private.thread.is_alive():
            _private = _LoopThread()
        return _private.loop


def run_coroutine(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` on the host loop (or the private one) and wait for its result."""
    loop = host_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if loop is None or loop is running:  # never block the loop the coroutine needs
        loop = _private_loop()
    return asyncio.run_coroutine_threadsafe(coro, loop).result()


def blocking(func: Callable[..., Coroutine[Any, Any, Any]]) -> Callable[..., Any]:
    """A plain function calling the coroutine function ``func`` through :func:`run_coroutine`."""

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        return run_coroutine(func(*args, **kwargs))

    return call


async def offload(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Await the blocking ``func(*args, **kwargs)`` run in a worker thread, while the
    running loop hosts the async tools it calls."""
    with hosting():
        return await asyncio.to_thread(func, *args, **kwargs)
