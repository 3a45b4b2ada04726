"""Async code in the sandbox: a small single-threaded event loop of our own.

Scripts may write ``async def``, ``await``, ``async for``/``async with`` and
top-level ``await``; the ``asyncio`` facade (:mod:`.asynciofacade`) gives them
``run``, ``gather``, ``sleep``, ``wait_for``, ``timeout``, ``TaskGroup`` and
friends, all driven by :class:`EventLoop` here. The real ``asyncio`` is never
imported: its loop owns selectors, a self-pipe socket pair, threads
(``to_thread``, executors), subprocesses, signal handlers and process-wide
registries (``all_tasks``, the running-loop slot, the async-generator hooks) -
everything a script must not hold. This loop does no I/O at all:

* a task is a coroutine the loop resumes with ``send``/``throw``; what it
  yields is one of the loop's own requests (a :class:`ToolCall`, a
  :class:`Future`, ``None`` for ``sleep(0)``), anything else is thrown back
  as a ``RuntimeError``;
* when no task can run, the tool calls the tasks are waiting for go to the
  host at once, through the same path as ``parallel()``
  (:meth:`.toolcalls.ToolCaller.parallel`; one call alone through
  :meth:`.toolcalls.ToolCaller.call`): read-only calls concurrently, writes
  one at a time, replies in call order;
* when only timers remain, the loop's clock jumps to the next one instead of
  sleeping; the skipped time counts against the run's wall-clock limit, so
  ``await asyncio.sleep(10**9)`` ends the run as a too-long run does;
* a limit or the host's abort (:class:`.guards.SandboxAbort`) is never
  stored in a task: it leaves the loop at once, whatever the script catches.

A tool stub called from async code (an ``async def`` body or the top level of
a script that awaits) returns a :class:`ToolCall` - the policy routes those
calls through ``_defer_`` (:func:`defer`) - so ``await get_order(id=1)`` and
``asyncio.gather(*[get_x(id=i) for i in ids])`` work as in Anthropic's
programmatic tool calling; the same tool called from sync code returns its
value, so scripts may mix both.
"""

from __future__ import annotations

import heapq
import math
import threading
import time
import types
from collections import deque
from collections.abc import Callable, Generator
from typing import Any

from .guards import AbortState, SandboxAbort
from .toolcalls import ToolCaller, ToolError, ToolStub

__all__ = [
    "CancelledError", "EventLoop", "Future", "InvalidStateError", "Task", "ToolCall",
    "bind", "current_loop", "defer", "is_awaitable", "run_script",
]


class CancelledError(BaseException):
    """The task or future was cancelled (``asyncio.CancelledError``)."""

    __module__ = "asyncio"


class InvalidStateError(Exception):
    """A future's result was read before it was set, or set twice."""

    __module__ = "asyncio"


class _Host:
    """What the loop of one run needs from the interpreter: the tool caller, the
    abort state and the run's wall-clock limit (for the time ``sleep`` skips)."""

    __slots__ = ("abort", "caller", "started", "wall_s")

    def __init__(self, caller: ToolCaller, abort: AbortState, wall_s: float | None) -> None:
        self.caller = caller
        self.abort = abort
        self.wall_s = wall_s
        self.started = time.monotonic()


_STATE = threading.local()
"""Per thread (in process, several interpreters run in host threads): ``host`` of
the run in progress and the ``loop`` running now, if any."""


def bind(caller: ToolCaller, abort: AbortState, wall_s: float | None) -> None:
    """Called by the interpreter as each run starts, in the run's thread."""
    _STATE.host = _Host(caller, abort, wall_s)
    _STATE.loop = None


def _host() -> _Host:
    host = getattr(_STATE, "host", None)
    if host is None:
        raise RuntimeError("async code runs only inside a script run")
    return host  # type: ignore[no-any-return]


def current_loop() -> EventLoop | None:
    """The loop running in this thread, or None."""
    return getattr(_STATE, "loop", None)


def running_loop(what: str) -> EventLoop:
    """The running loop, or the ``RuntimeError`` CPython raises for ``what``."""
    loop = current_loop()
    if loop is None:
        raise RuntimeError(f"{what}: no running event loop; call it from async code "
                           "(inside async def, or at the top level of a script that uses "
                           "await), or start one with asyncio.run(main())")
    return loop


# --- awaitables -------------------------------------------------------------------------
def _wait_for_request(request: Any) -> Generator[Any, Any, Any]:
    """The iterator behind ``await`` of a request: hands it to the loop, returns
    what the loop sends back (or raises what it throws)."""
    return (yield request)


class ToolCall:
    """A tool call made from async code: awaiting it sends the call (with the other
    calls the loop's tasks are waiting for) and gives its value; never awaited, it is
    never sent (as a coroutine that is never awaited never runs)."""

    __slots__ = ("_args", "_awaited", "_stub")

    def __init__(self, stub: ToolStub, args: dict[str, Any]) -> None:
        self._stub = stub
        self._args = args
        self._awaited = False

    @property
    def tool(self) -> str:
        """The tool's name."""
        return self._stub.name

    def __await__(self) -> Generator[Any, Any, Any]:
        if self._awaited:
            raise RuntimeError("cannot reuse already awaited coroutine")
        self._awaited = True
        return _wait_for_request(self)

    def close(self) -> None:
        """Like ``coroutine.close()``: the call will never be sent."""
        self._awaited = True

    def __repr__(self) -> str:
        return f"<coroutine object {self._stub.name}>"


def defer(func: Any) -> Any:
    """``_defer_(f)`` for each call in async code: a tool stub becomes a maker of
    :class:`ToolCall` (arguments bound and checked now, as a call binds them);
    anything else is returned as it is."""
    if type(func) is not ToolStub:
        return func
    stub: ToolStub = func

    def tool_call(*args: Any, **kwargs: Any) -> ToolCall:
        return ToolCall(stub, stub.bind(args, kwargs))

    return tool_call


def is_awaitable(obj: Any) -> bool:
    """True for what ``await`` accepts in the sandbox."""
    return isinstance(obj, (types.CoroutineType, ToolCall, Future))


class Future:
    """A result that is not there yet (``asyncio.Future``, for this loop only)."""

    __slots__ = ("__weakref__", "_callbacks", "_exception", "_loop", "_result", "_state")

    def __init__(self, loop: EventLoop) -> None:
        self._loop = loop
        self._state = "PENDING"
        self._result: Any = None
        self._exception: BaseException | None = None
        self._callbacks: list[Callable[[Future], None]] = []

    def done(self) -> bool:
        """True once it has a result, an exception or was cancelled."""
        return self._state != "PENDING"

    def cancelled(self) -> bool:
        """True if it was cancelled."""
        return self._state == "CANCELLED"

    def result(self) -> Any:
        """The result; raises the exception, ``CancelledError`` or ``InvalidStateError``."""
        if self._state == "CANCELLED":
            raise CancelledError()
        if self._state == "PENDING":
            raise InvalidStateError("Result is not set.")
        if self._exception is not None:
            raise self._exception
        return self._result

    def exception(self) -> BaseException | None:
        """The exception (None if it succeeded)."""
        if self._state == "CANCELLED":
            raise CancelledError()
        if self._state == "PENDING":
            raise InvalidStateError("Exception is not set.")
        return self._exception

    def cancel(self) -> bool:
        """Cancel it; False if it is already done."""
        if self._state != "PENDING":
            return False
        self._state = "CANCELLED"
        self._schedule_callbacks()
        return True

    def _set_result(self, value: Any) -> None:
        if self._state != "PENDING":
            raise InvalidStateError("invalid state")
        self._result = value
        self._state = "FINISHED"
        self._schedule_callbacks()

    def _set_exception(self, exc: BaseException) -> None:
        if self._state != "PENDING":
            raise InvalidStateError("invalid state")
        self._exception = exc
        self._state = "FINISHED"
        self._schedule_callbacks()

    def _set_result_unless_done(self, value: Any) -> None:
        if self._state == "PENDING":
            self._set_result(value)

    def _add_callback(self, callback: Callable[[Future], None]) -> None:
        if self._state != "PENDING":
            self._loop._soon(callback, self)
        else:
            self._callbacks.append(callback)

    def _remove_callback(self, callback: Callable[[Future], None]) -> None:
        self._callbacks = [c for c in self._callbacks if c is not callback]

    def _schedule_callbacks(self) -> None:
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            self._loop._soon(callback, self)

    def __await__(self) -> Generator[Any, Any, Any]:
        if self._state == "PENDING":
            yield self
        return self.result()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._state.lower()}>"


class Task(Future):
    """A coroutine the loop runs (``asyncio.Task``); made by ``create_task``,
    ``gather``, ``TaskGroup.create_task`` and friends, never by the script's
    own call of the class."""

    __slots__ = ("_coro", "_must_cancel", "_name", "_parked", "_wake")

    def __init__(self, loop: EventLoop, coro: Any, name: str) -> None:
        super().__init__(loop)
        self._coro = coro
        self._name = name
        self._must_cancel = False
        self._parked: tuple[str, Any] | None = None
        self._wake = self._woken_by
        loop._tasks.append(self)
        loop._ready.append((self, None, None))

    def get_name(self) -> str:
        """The task's name (``Task-1``, or the name given to ``create_task``)."""
        return self._name

    def get_coro(self) -> None:
        """Not available: the coroutine belongs to the loop."""
        raise RuntimeError("Task.get_coro() is not available in the sandbox: await the task "
                           "for its result")

    def cancel(self, msg: Any = None) -> bool:
        """Ask the task to stop: ``CancelledError`` is raised inside it at its await."""
        if self.done():
            return False
        parked, self._parked = self._parked, None
        if parked is None:
            self._must_cancel = True
            return True
        kind, what = parked
        if kind == "call":
            self._loop._calls = [(t, c) for t, c in self._loop._calls if t is not self]
        elif kind == "future":
            what._remove_callback(self._wake)
            what.cancel()  # a task or gather awaited: cancelled with it, as in asyncio
        self._must_cancel = True
        self._loop._ready.append((self, None, None))
        return True

    def _woken_by(self, future: Future) -> None:
        if self._parked is not None and self._parked[1] is future:
            self._parked = None
            self._loop._ready.append((self, None, None))

    def _step(self, value: Any, error: BaseException | None) -> None:
        if self.done():
            return
        if self._must_cancel:
            self._must_cancel = False
            error = CancelledError()
        loop = self._loop
        loop._current = self
        try:
            yielded = self._coro.send(value) if error is None else self._coro.throw(error)
        except StopIteration as stop:
            self._set_result(stop.value)
        except CancelledError:
            super().cancel()
        except (SandboxAbort, KeyboardInterrupt, SystemExit):
            raise  # a limit or the host's signal: never stored in a task
        except BaseException as exc:  # the script's failure, awaited by whoever waits
            self._set_exception(exc)
        else:
            loop._park(self, yielded)
        finally:
            loop._current = None

    def __repr__(self) -> str:
        return f"<Task {self._state.lower()} name={self._name!r}>"


class _Timer:
    """A callback the loop calls at a time on its clock."""

    __slots__ = ("argument", "callback", "cancelled", "when")

    def __init__(self, when: float, callback: Callable[[Any], None], argument: Any) -> None:
        self.when = when
        self.callback = callback
        self.argument = argument
        self.cancelled = False

    def cancel(self) -> None:
        """The callback will not be called."""
        self.cancelled = True


class EventLoop:
    """The single-threaded loop of one ``asyncio.run`` (or of a script that awaits at
    its top level): see the module docstring."""

    def __init__(self, host: _Host) -> None:
        self._host = host
        self._ready: deque[tuple[Task, Any, BaseException | None]] = deque()
        self._soon_calls: deque[tuple[Callable[[Any], None], Any]] = deque()
        self._timers: list[tuple[float, int, _Timer]] = []
        self._calls: list[tuple[Task, ToolCall]] = []
        self._tasks: list[Task] = []
        self._sequence = 0
        self._skipped = 0.0
        self._current: Task | None = None

    # --- the clock ------------------------------------------------------------------
    def time(self) -> float:
        """The loop's clock: monotonic time plus what sleeps skipped."""
        return time.monotonic() + self._skipped

    def _call_at(self, when: float, callback: Callable[[Any], None], argument: Any) -> _Timer:
        timer = _Timer(when, callback, argument)
        self._sequence += 1
        heapq.heappush(self._timers, (when, self._sequence, timer))
        return timer

    def _call_later(self, delay: float, callback: Callable[[Any], None],
                    argument: Any) -> _Timer:
        return self._call_at(self.time() + delay, callback, argument)

    def _skip_to(self, when: float) -> None:
        """Jump the clock to ``when``: the skipped time counts against the run's limit."""
        gap = when - self.time()
        if gap <= 0:
            return
        host = self._host
        if host.wall_s is not None and (
                time.monotonic() - host.started + self._skipped + gap > host.wall_s):
            message = ("the script exceeded its wall-clock time limit (time waited in "
                       "asyncio.sleep and timeouts counts against it)")
            host.abort.set("timeout", message)
            raise SandboxAbort("timeout", message)
        self._skipped += gap

    # --- scheduling ---------------------------------------------------------------
    def _soon(self, callback: Callable[[Any], None], argument: Any) -> None:
        self._soon_calls.append((callback, argument))

    def create_future(self) -> Future:
        """A new pending future of this loop."""
        return Future(self)

    def create_task(self, awaitable: Any, name: str | None = None) -> Task:
        """A task running ``awaitable`` (a coroutine, a tool call or a future)."""
        if isinstance(awaitable, Task):
            return awaitable
        if isinstance(awaitable, (ToolCall, Future)):
            awaitable = _await_one(awaitable)
        elif not isinstance(awaitable, types.CoroutineType):
            raise TypeError(f"a coroutine was expected, got {_describe(awaitable)}")
        self._sequence += 1
        return Task(self, awaitable, name if name is not None else f"Task-{len(self._tasks) + 1}")

    def current_task(self) -> Task | None:
        """The task running now."""
        return self._current

    def _park(self, task: Task, yielded: Any) -> None:
        if task._must_cancel:  # it cancelled itself (or was cancelled) while running
            self._ready.append((task, None, None))
        elif type(yielded) is ToolCall:
            task._parked = ("call", yielded)
            self._calls.append((task, yielded))
        elif isinstance(yielded, Future):
            if yielded._loop is not self:
                self._ready.append((task, None, RuntimeError(
                    "the task awaited a future of another event loop")))
                return
            task._parked = ("future", yielded)
            yielded._add_callback(task._wake)
        elif yielded is None:
            self._ready.append((task, None, None))
        else:
            self._ready.append((task, None, RuntimeError(
                f"Task got bad yield: {_describe(yielded)} (await only tool calls, "
                "coroutines, tasks and asyncio's own awaitables)")))

    # --- running ------------------------------------------------------------------
    def run_until_complete(self, main: Task) -> None:
        """Run tasks until ``main`` is done; tool calls go to the host in batches."""
        abort = self._host.abort
        while not main.done():
            abort.raise_if_set()
            if self._run_due_timers():
                continue
            if self._soon_calls:
                callback, argument = self._soon_calls.popleft()
                callback(argument)
            elif self._ready:
                task, value, error = self._ready.popleft()
                task._step(value, error)
            elif self._calls:
                self._send_calls()
            elif self._timers:
                self._skip_to(self._timers[0][0])
            else:
                self._ready.append((main, None, RuntimeError(
                    "every task is waiting and nothing will wake it: the script would wait "
                    "forever (an Event never set, a Queue never filled, a future never "
                    "given a result)")))

    def _run_due_timers(self) -> bool:
        ran = False
        now = self.time()
        while self._timers and self._timers[0][0] <= now:
            _when, _seq, timer = heapq.heappop(self._timers)
            if not timer.cancelled:
                timer.callback(timer.argument)
                ran = True
        return ran

    def _send_calls(self) -> None:
        """The tool calls every waiting task needs, in the order they were awaited: one
        alone as a plain call, several as one ``parallel`` batch."""
        batch, self._calls = self._calls, []
        caller = self._host.caller
        outcomes: list[tuple[Any, BaseException | None]] = []
        if len(batch) == 1:
            call = batch[0][1]
            try:
                outcomes.append((caller.call(call._stub.name, call._args), None))
            except ToolError as exc:
                outcomes.append((None, exc))
        else:
            values = caller.parallel([(call._stub, call._args) for _task, call in batch],
                                     return_exceptions=True)
            outcomes = [(None, v) if isinstance(v, ToolError) else (v, None) for v in values]
        for (task, _call), (value, error) in zip(batch, outcomes, strict=True):
            task._parked = None
            self._ready.append((task, value, error))

    def run_main(self, coro: Any) -> Any:
        """``asyncio.run``: run ``coro`` as the main task, then cancel what is left."""
        previous = current_loop()
        _STATE.loop = self
        try:
            main = self.create_task(coro, "Task-1")
            try:
                self.run_until_complete(main)
            finally:
                self._finish()
            return main.result()
        finally:
            _STATE.loop = previous

    def _finish(self) -> None:
        """Cancel every task still pending and let each run to its end."""
        for _ in range(3):
            pending = [t for t in self._tasks if not t.done()]
            if not pending:
                return
            for task in pending:
                task.cancel()
            gathered = self.create_task(_wait_all(pending), "cleanup")
            self.run_until_complete(gathered)


async def _await_one(awaitable: Any) -> Any:
    return await awaitable


async def _wait_all(tasks: list[Task]) -> None:
    for task in tasks:
        if not task.done():
            try:
                await task
            except (SandboxAbort, KeyboardInterrupt, SystemExit):
                raise
            except BaseException:  # a cancelled task's own failure: nobody awaits it
                continue


def _describe(obj: Any) -> str:
    """A short description that runs no script code (no ``repr`` of script objects)."""
    return f"an object of type {type(obj).__name__!r}"


def new_loop() -> EventLoop:
    """A loop for a run that is in progress in this thread."""
    return EventLoop(_host())


def run_script(body: Any) -> None:
    """Run a script whose top level awaits (``body`` is the coroutine ``eval`` made of
    it) on a fresh loop; ``asyncio.run`` inside it is then refused, as in CPython."""
    if current_loop() is not None:  # pragma: no cover - the interpreter never nests runs
        raise RuntimeError("a script cannot start inside a running loop")
    new_loop().run_main(body)


def check_delay(value: Any, what: str) -> float:
    """A delay or timeout in seconds as ``float`` (``TypeError``/``ValueError`` as CPython)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what} must be a number of seconds, not {type(value).__name__}")
    seconds = float(value)
    if math.isnan(seconds):
        raise ValueError(f"{what}: invalid value NaN (not a number)")
    return seconds
