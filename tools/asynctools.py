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
run on one private loop on a daemon thread (:func:`fallback_loop`), shared by
every async tool of the process (so loop-bound state survives between calls).

Code whose coroutines must run on one given loop (a connection that lives on
the loop it was opened on, like the MCP tool source's) passes that loop to
:func:`run_coroutine`; a call that would block that very loop is refused. So
is a call for a loop whose thread is itself waiting in a sync ``run(...)``
(:func:`waiting_sync` marks it): sync code inside a coroutine blocks that
loop, and the call, made from the run's serving thread, would otherwise wait
for it until its timeout.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

__all__ = [
    "blocking",
    "fallback_loop",
    "host_loop",
    "hosting",
    "offload",
    "run_coroutine",
    "running_loop",
    "waiting_sync",
]

_CURRENT: contextvars.ContextVar[asyncio.AbstractEventLoop | None] = contextvars.ContextVar(
    "toolscript_host_loop", default=None
)
_lock = threading.Lock()
_active: dict[asyncio.AbstractEventLoop, int] = {}
_blocked: dict[asyncio.AbstractEventLoop, int] = {}
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


def waiting_sync() -> AbstractContextManager[None]:
    """Mark the loop running in this thread, if any, as blocked while in the block:
    sync entry points (``Session.run``) wrap their wait in it, so a coroutine that
    needs that loop is refused at once instead of waiting for it to its timeout.
    Without a running loop (the usual case, on every run's path) it is a shared
    no-op context."""
    loop = asyncio._get_running_loop()  # no exception when there is none
    return _NOTHING_BLOCKED if loop is None else _blocking(loop)


_NOTHING_BLOCKED: AbstractContextManager[None] = nullcontext()


@contextmanager
def _blocking(loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    with _lock:
        _blocked[loop] = _blocked.get(loop, 0) + 1
    try:
        yield
    finally:
        with _lock:
            _blocked[loop] -= 1
            if not _blocked[loop]:
                del _blocked[loop]


def _is_blocked(loop: asyncio.AbstractEventLoop) -> bool:
    return bool(_blocked) and loop in _blocked


def host_loop() -> asyncio.AbstractEventLoop | None:
    """The host loop a coroutine called from this thread should run on, if any."""
    loop = _CURRENT.get()
    if loop is not None and loop.is_running() and not _is_blocked(loop):
        return loop
    with _lock:
        loops = [candidate for candidate in _active
                 if candidate.is_running() and candidate not in _blocked]
    return loops[0] if len(loops) == 1 else None


def fallback_loop() -> asyncio.AbstractEventLoop:
    """The private loop on a daemon thread where coroutines run when there is no host
    loop: one per process, started on first use, running until the process exits."""
    global _private
    with _lock:
        if _private is None or not _private.thread.is_alive():
            _private = _LoopThread()
        return _private.loop


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The loop running in this thread, if any."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def run_coroutine(
    coro: Coroutine[Any, Any, Any],
    *,
    loop: asyncio.AbstractEventLoop | None = None,
    timeout: float | None = None,
) -> Any:
    """Run ``coro`` on ``loop`` (default: the host loop, else :func:`fallback_loop`)
    and wait for its result.

    Raises:
        RuntimeError: ``loop`` is the loop running in this thread, or one whose
            thread waits in a sync run (waiting would block the loop the
            coroutine needs), or is not running.
        TimeoutError: no result within ``timeout`` seconds (the coroutine is cancelled).
    """
    running = running_loop()
    if loop is None:
        loop = host_loop()
        if loop is None or loop is running:  # never block the loop the coroutine needs
            loop = fallback_loop()
    elif loop is running or _is_blocked(loop):
        coro.close()
        where = ("this thread runs the event loop the coroutine needs, so waiting here "
                 "would block it" if loop is running else
                 "the event loop the coroutine needs is blocked by a sync run(...) called "
                 "on its thread")
        raise RuntimeError(
            f"{where}: from async code, await runtime.run_async(...) or "
            "session.run_async(...) instead of calling run(...)"
        )
    elif not loop.is_running():
        coro.close()
        raise RuntimeError("the event loop the coroutine needs is not running")
    future = asyncio.run_coroutine_threadsafe(coro, loop)
    try:
        return future.result(timeout)
    except TimeoutError:
        if future.done():  # the coroutine's own TimeoutError, or it just finished
            return future.result()
        future.cancel()
        raise TimeoutError(f"no answer within {timeout:g} s") from None


def blocking(func: Callable[..., Coroutine[Any, Any, Any]]) -> Callable[..., Any]:
    """A plain function calling the coroutine function ``func`` through :func:`run_coroutine`."""

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        return run_coroutine(func(*args, **kwargs))

    return call


OFFLOAD_THREADS = 256
"""Blocking runs awaited at once (:func:`offload`). A run holds its thread
until it ends, so the loop's default executor (``min(32, CPUs + 4)`` threads)
would cap concurrent ``run_async`` calls, an MCP server's scripts included, at
a handful on a small machine; threads are started only as runs need them."""

_offload_pool: ThreadPoolExecutor | None = None


def _offload_executor() -> ThreadPoolExecutor:
    global _offload_pool
    with _lock:
        if _offload_pool is None:
            _offload_pool = ThreadPoolExecutor(OFFLOAD_THREADS,
                                               thread_name_prefix="toolscript-offload")
        return _offload_pool


async def offload(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Await the blocking ``func(*args, **kwargs)`` run in a worker thread (with the
    caller's context variables), while the running loop hosts the async tools it
    calls."""
    with hosting():
        call = functools.partial(contextvars.copy_context().run, func, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(_offload_executor(), call)
