"""A private asyncio loop on a daemon thread, for calling async SDKs from sync code.

Tools are plain functions called from the runtime's worker threads, while the
MCP SDK is async and its connection lives in one task. :class:`LoopThread`
runs a loop on its own thread; :meth:`LoopThread.call` submits a coroutine to
it and waits for the result from any thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["LoopThread"]


class LoopThread:
    """An event loop running on a daemon thread until :meth:`stop`."""

    def __init__(self, name: str = "toolscript-mcp") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()
        self.loop.close()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop; return a thread-safe future."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def call(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the loop and wait for its result.

        Raises:
            TimeoutError: no result within ``timeout`` seconds (the coroutine is cancelled).
        """
        future = self.submit(coro)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer within {timeout:g} s") from None

    def stop(self) -> None:
        """Stop the loop and wait for its thread. Idempotent."""
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=10)
