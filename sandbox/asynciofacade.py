"""The ``asyncio`` facade: the safe subset, written over :mod:`.asyncsupport`'s loop.

Members: ``run``, ``sleep``, ``gather``, ``create_task``, ``ensure_future``,
``shield``, ``wait_for``, ``wait``, ``as_completed``, ``timeout``,
``TaskGroup``, ``Semaphore``/``BoundedSemaphore``, ``Lock``, ``Event``,
``Queue`` (+ ``QueueEmpty``/``QueueFull``), ``current_task``, ``iscoroutine``,
``CancelledError``, ``TimeoutError``, ``InvalidStateError`` and the ``wait``
constants. Everything that reaches the real loop, threads, processes,
sockets or files (``get_event_loop``, ``to_thread``, ``subprocess``,
``open_connection``...) is a function that raises and names the substitute.
No member hands out the loop object, a coroutine's frame or a callback slot.
"""

from __future__ import annotations

import types
from collections import deque
from collections.abc import Generator, Iterator
from typing import Any

from .asyncsupport import (
    CancelledError,
    EventLoop,
    Future,
    InvalidStateError,
    Task,
    ToolCall,
    check_delay,
    current_loop,
    new_loop,
    running_loop,
)
from .standins import hide_constructor

ALL_COMPLETED = "ALL_COMPLETED"
FIRST_COMPLETED = "FIRST_COMPLETED"
FIRST_EXCEPTION = "FIRST_EXCEPTION"


def run(main: Any, *, debug: Any = None) -> Any:
    """``asyncio.run(main())``: run the coroutine on a fresh loop, return its result."""
    if current_loop() is not None:
        raise RuntimeError("asyncio.run() cannot be called from a running event loop")
    if not isinstance(main, _COROUTINES):
        raise ValueError(f"a coroutine was expected, got {type(main).__name__}")
    return new_loop().run_main(main)


async def sleep(delay: Any, result: Any = None) -> Any:
    """Wait ``delay`` seconds on the loop's clock (no real sleep: the clock jumps when
    nothing else can run; the time counts against the run's wall-clock limit)."""
    if delay != delay:  # NaN (a number compared with itself is equal)
        raise ValueError("Invalid delay: NaN (not a number)")
    if delay <= 0:  # CPython's own comparison: its TypeError for a non-number
        running_loop("asyncio.sleep()")
        await _YIELD
        return result
    seconds = check_delay(delay, "sleep length")
    loop = running_loop("asyncio.sleep()")
    if seconds <= 0:
        await _YIELD
        return result
    future = loop.create_future()
    timer = loop._call_later(seconds, future._set_result_unless_done, None)
    try:
        await future
    finally:
        timer.cancel()
    return result


class _Yield:
    """What ``sleep(0)`` awaits: one bare yield to the loop."""

    __slots__ = ()

    def __await__(self) -> Generator[None, None, None]:
        yield None


_YIELD = _Yield()
_COROUTINES = (types.CoroutineType, ToolCall)


def _ensure(loop: EventLoop, awaitable: Any) -> Future:
    if isinstance(awaitable, Future):
        if awaitable._loop is not loop:
            raise ValueError("The future belongs to a different loop than the one specified "
                             "as the loop argument")
        return awaitable
    if not isinstance(awaitable, _COROUTINES):
        raise TypeError("An asyncio.Future, a coroutine or an awaitable is required")
    return loop.create_task(awaitable)


def create_task(coro: Any, *, name: Any = None, context: Any = None) -> Task:
    """Start running ``coro`` concurrently; await the task for its result."""
    loop = running_loop("asyncio.create_task()")
    if not isinstance(coro, _COROUTINES):
        raise TypeError(f"a coroutine was expected, got {type(coro).__name__}")
    return loop.create_task(coro, None if name is None else str(name))


def ensure_future(awaitable: Any) -> Future:
    """A task for a coroutine or tool call; a future or task as it is."""
    loop = running_loop("asyncio.ensure_future()")
    return _ensure(loop, awaitable)


def shield(awaitable: Any) -> Future:
    """The awaitable's task, kept running when the awaiting task is cancelled."""
    loop = running_loop("asyncio.shield()")
    inner = _ensure(loop, awaitable)
    outer = loop.create_future()

    def copy(done: Future) -> None:
        if outer.done():
            return
        if done.cancelled():
            outer.cancel()
        elif done._exception is not None:
            outer._set_exception(done._exception)
        else:
            outer._set_result(done._result)

    inner._add_callback(copy)
    return outer


class _Gathering(Future):
    """The future ``gather`` returns; cancelling it cancels its children."""

    __slots__ = ("_children",)

    def __init__(self, loop: EventLoop, children: list[Future]) -> None:
        super().__init__(loop)
        self._children = children

    def cancel(self, msg: Any = None) -> bool:
        if self.done():
            return False
        cancelled = False
        for child in self._children:
            if child.cancel():
                cancelled = True
        if not cancelled:
            return super().cancel()
        return True


def gather(*aws: Any, return_exceptions: bool = False) -> Future:
    """Run the awaitables concurrently; the results in their order. Tool calls among
    them go to the host together, as one ``parallel()`` batch."""
    loop = running_loop("asyncio.gather()")
    children: list[Future] = []
    seen: dict[int, Future] = {}
    for awaitable in aws:
        child = seen.get(id(awaitable))
        if child is None:
            child = _ensure(loop, awaitable)
            seen[id(awaitable)] = child
        children.append(child)
    outer = _Gathering(loop, children)
    if not children:
        outer._set_result([])
        return outer
    remaining = [len(set(map(id, children)))]

    def child_done(child: Future) -> None:
        if outer.done():
            return
        if not return_exceptions:
            if child.cancelled():
                outer._set_exception(CancelledError())
                return
            if child._exception is not None:
                outer._set_exception(child._exception)
                return
        remaining[0] -= 1
        if remaining[0]:
            return
        results: list[Any] = []
        for each in children:
            if each.cancelled():
                results.append(CancelledError())
            elif each._exception is not None:
                results.append(each._exception)
            else:
                results.append(each._result)
        if outer._state == "PENDING":
            outer._set_result(results)

    for child in {id(c): c for c in children}.values():
        child._add_callback(child_done)
    return outer


async def wait_for(aw: Any, timeout: Any) -> Any:
    """Await ``aw``; after ``timeout`` seconds cancel it and raise ``TimeoutError``. A
    tool call that is running when the time is up is not interrupted (the tool's own
    timeout bounds it): its result is dropped when it returns."""
    loop = running_loop("asyncio.wait_for()")
    if timeout is None:
        return await aw
    seconds = check_delay(timeout, "timeout")
    task = _ensure(loop, aw)
    if seconds <= 0:
        if task.done():
            return task.result()
        task.cancel()
        raise TimeoutError()
    async with Timeout(loop, loop.time() + seconds):
        return await task


class _Final:
    """Base of the facade's classes: a script cannot subclass them (a subclass's
    instances would be the script's own, and read the loop's private slots)."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        if cls.__module__ != __name__:
            raise TypeError(f"asyncio.{cls.__mro__[1].__name__} cannot be subclassed in the "
                            "sandbox: keep an instance in an attribute of your own class")
        super().__init_subclass__(**kwargs)


class Timeout(_Final):
    """``async with asyncio.timeout(seconds):``: the block is cancelled when the time
    is up, and ``TimeoutError`` is raised at its end."""

    __slots__ = ("_expired", "_loop", "_task", "_timer", "_when")

    def __init__(self, loop: EventLoop, when: float | None) -> None:
        self._loop = loop
        self._when = when
        self._task: Task | None = None
        self._timer: Any = None
        self._expired = False

    def when(self) -> float | None:
        """The deadline on the loop's clock (None: no deadline)."""
        return self._when

    def expired(self) -> bool:
        """True if the deadline passed inside the block."""
        return self._expired

    def reschedule(self, when: Any) -> None:
        """Move the deadline (None removes it)."""
        self._when = None if when is None else check_delay(when, "when")
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._task is not None and self._when is not None:
            self._timer = self._loop._call_at(self._when, self._expire, None)

    def _expire(self, _argument: Any) -> None:
        self._expired = True
        if self._task is not None:
            self._task.cancel()

    async def __aenter__(self) -> Timeout:
        self._task = self._loop.current_task()
        if self._task is None:
            raise RuntimeError("Timeout should be used inside a task")
        self.reschedule(self._when)
        return self

    async def __aexit__(self, kind: Any, value: Any, traceback: Any) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._expired and kind is CancelledError:
            raise TimeoutError() from None
        return None

    def __repr__(self) -> str:
        return f"<Timeout when={self._when}>"


def timeout(delay: Any) -> Timeout:
    """``async with asyncio.timeout(seconds):`` (None: no deadline)."""
    loop = running_loop("asyncio.timeout()")
    when = None if delay is None else loop.time() + check_delay(delay, "delay")
    return Timeout(loop, when)


def timeout_at(when: Any) -> Timeout:
    """``async with asyncio.timeout_at(deadline):`` on the loop's clock."""
    loop = running_loop("asyncio.timeout_at()")
    return Timeout(loop, None if when is None else check_delay(when, "when"))


async def wait(aws: Any, *, timeout: Any = None,
               return_when: str = ALL_COMPLETED) -> tuple[set[Future], set[Future]]:
    """``done, pending = await asyncio.wait(tasks)``."""
    loop = running_loop("asyncio.wait()")
    futures = [_ensure(loop, a) for a in aws]
    if not futures:
        raise ValueError("Set of Tasks/Futures is empty.")
    if return_when not in (ALL_COMPLETED, FIRST_COMPLETED, FIRST_EXCEPTION):
        raise ValueError(f"Invalid return_when value: {return_when}")
    waiter = loop.create_future()
    counter = [len(futures)]

    def one_done(future: Future) -> None:
        counter[0] -= 1
        if (counter[0] <= 0 or return_when == FIRST_COMPLETED or (
                return_when == FIRST_EXCEPTION and not future.cancelled()
                and future._exception is not None)):
            waiter._set_result_unless_done(None)

    for future in futures:
        future._add_callback(one_done)
    timer = None
    if timeout is not None:
        timer = loop._call_later(check_delay(timeout, "timeout"),
                                 waiter._set_result_unless_done, None)
    try:
        if not all(f.done() for f in futures) or not futures:
            await waiter
    finally:
        if timer is not None:
            timer.cancel()
        for future in futures:
            future._remove_callback(one_done)
    done = {f for f in futures if f.done()}
    return done, {f for f in futures if not f.done()}


def as_completed(aws: Any, *, timeout: Any = None) -> Iterator[Any]:
    """``for next_done in asyncio.as_completed(tasks): result = await next_done``."""
    loop = running_loop("asyncio.as_completed()")
    futures = list({id(f): f for f in (_ensure(loop, a) for a in aws)}.values())
    finished: deque[Future] = deque()
    waiters: deque[Future] = deque()

    def one_done(future: Future) -> None:
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter._set_result(future)
                return
        finished.append(future)

    for future in futures:
        future._add_callback(one_done)

    async def next_done() -> Any:
        if finished:
            return finished.popleft().result()
        waiter = loop.create_future()
        waiters.append(waiter)
        if timeout is None:
            done = await waiter
        else:
            done = await wait_for(waiter, timeout)
        return done.result()

    return iter([next_done() for _ in futures])


def current_task() -> Task | None:
    """The task running now (None outside async code)."""
    loop = current_loop()
    return None if loop is None else loop.current_task()


def iscoroutine(obj: Any) -> bool:
    """True for a coroutine (and a tool call made from async code)."""
    return isinstance(obj, _COROUTINES)


class TaskGroup(_Final):
    """``async with asyncio.TaskGroup() as tg: tg.create_task(...)``: every task has
    ended when the block ends; failures are raised together as an ``ExceptionGroup``
    (the other tasks are cancelled at the first one)."""

    __slots__ = (
        "_aborting",
        "_entered",
        "_errors",
        "_exited",
        "_exiting",
        "_loop",
        "_parent",
        "_parent_cancelled",
        "_tasks",
    )

    def __init__(self) -> None:
        self._loop: EventLoop | None = None
        self._tasks: list[Task] = []
        self._errors: list[BaseException] = []
        self._parent: Task | None = None
        self._entered = self._exiting = self._exited = False
        self._aborting = self._parent_cancelled = False

    async def __aenter__(self) -> TaskGroup:
        if self._entered:
            raise RuntimeError(f"TaskGroup {self!r} has already been entered")
        self._loop = running_loop("asyncio.TaskGroup")
        self._parent = self._loop.current_task()
        self._entered = True
        return self

    def create_task(self, coro: Any, *, name: Any = None, context: Any = None) -> Task:
        """Start ``coro`` in the group."""
        if not self._entered or self._loop is None:
            raise RuntimeError(f"TaskGroup {self!r} has not been entered")
        if self._exited:
            raise RuntimeError(f"TaskGroup {self!r} is finished")
        if self._aborting:
            raise RuntimeError(f"TaskGroup {self!r} is shutting down")
        if not isinstance(coro, _COROUTINES):
            raise TypeError(f"a coroutine was expected, got {type(coro).__name__}")
        task = self._loop.create_task(coro, None if name is None else str(name))
        self._tasks.append(task)
        task._add_callback(self._task_done)
        return task

    def _abort(self) -> None:
        self._aborting = True
        for task in self._tasks:
            if not task.done():
                task.cancel()

    def _task_done(self, task: Future) -> None:
        if task.cancelled() or task._exception is None:
            return
        self._errors.append(task._exception)
        if not self._aborting:
            self._abort()
            if not self._exiting and self._parent is not None and not self._parent.done():
                self._parent_cancelled = True
                self._parent.cancel()

    async def __aexit__(self, kind: Any, value: Any, traceback: Any) -> bool:
        self._exiting = True
        if value is not None and kind is not CancelledError:
            self._errors.append(value)
        if value is not None and not self._aborting:
            self._abort()
        while any(not t.done() for t in self._tasks):
            waiter = self._loop.create_future() if self._loop is not None else None
            if waiter is None:  # pragma: no cover - entered means a loop
                break
            pending = [t for t in self._tasks if not t.done()]
            remaining = [len(pending)]

            def one_done(_task: Future, waiter: Future = waiter,
                         remaining: list[int] = remaining) -> None:
                remaining[0] -= 1
                if remaining[0] <= 0:
                    waiter._set_result_unless_done(None)

            for task in pending:
                task._add_callback(one_done)
            try:
                await waiter
            except CancelledError:
                if not self._aborting:
                    self._abort()
        self._exited = True
        if self._errors:
            errors, self._errors = self._errors, []
            raise BaseExceptionGroup("unhandled errors in a TaskGroup", errors) from None
        return bool(kind is CancelledError and self._parent_cancelled)

    def __repr__(self) -> str:
        state = "exited" if self._exited else "entered" if self._entered else "new"
        return f"<TaskGroup {state}>"


class Semaphore(_Final):
    """``async with sem:`` lets at most ``value`` tasks in at once."""

    __slots__ = ("_bound", "_value", "_waiters")

    def __init__(self, value: int = 1) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError("Semaphore initial value must be an int")
        if value < 0:
            raise ValueError("Semaphore initial value must be >= 0")
        self._value = value
        self._waiters: deque[Future] = deque()
        self._bound: int | None = None

    def locked(self) -> bool:
        """True if no task can enter now."""
        return self._value == 0 or any(not w.cancelled() for w in self._waiters)

    async def acquire(self) -> bool:
        """Wait until a task may enter, then enter."""
        if self._value > 0 and not any(not w.done() for w in self._waiters):
            self._value -= 1
            return True
        waiter = running_loop("Semaphore.acquire()").create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed over just before the cancellation: pass it on
            raise
        return True

    def release(self) -> None:
        """Let the next waiting task in."""
        if self._bound is not None and self._value >= self._bound and not self._waiters:
            raise ValueError("BoundedSemaphore released too many times")
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter._set_result(True)
                return
        self._value += 1

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, kind: Any, value: Any, traceback: Any) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} value={self._value}>"


class BoundedSemaphore(Semaphore):
    """A semaphore that refuses to be released more often than acquired."""

    __slots__ = ()

    def __init__(self, value: int = 1) -> None:
        super().__init__(value)
        self._bound = value


class Lock(Semaphore):
    """``async with lock:`` lets one task in at a time."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(1)

    def release(self) -> None:
        """Unlock; ``RuntimeError`` if it is not locked."""
        if self._value >= 1 and not self._waiters:
            raise RuntimeError("Lock is not acquired.")
        super().release()


class Event(_Final):
    """``await event.wait()`` until some task calls ``event.set()``."""

    __slots__ = ("_set", "_waiters")

    def __init__(self) -> None:
        self._set = False
        self._waiters: list[Future] = []

    def is_set(self) -> bool:
        """True once set (until cleared)."""
        return self._set

    def set(self) -> None:
        """Wake every waiting task."""
        if not self._set:
            self._set = True
            waiters, self._waiters = self._waiters, []
            for waiter in waiters:
                waiter._set_result_unless_done(True)

    def clear(self) -> None:
        """Unset it."""
        self._set = False

    async def wait(self) -> bool:
        """Wait until it is set."""
        if self._set:
            return True
        waiter = running_loop("Event.wait()").create_future()
        self._waiters.append(waiter)
        await waiter
        return True

    def __repr__(self) -> str:
        return f"<Event {'set' if self._set else 'unset'}>"


class QueueEmpty(Exception):
    """``get_nowait()`` on an empty queue."""


class QueueFull(Exception):
    """``put_nowait()`` on a full queue."""


class Queue(_Final):
    """A first-in first-out queue between tasks (``maxsize`` 0: unbounded)."""

    __slots__ = ("_finished", "_getters", "_items", "_maxsize", "_putters", "_unfinished")

    def __init__(self, maxsize: int = 0) -> None:
        if isinstance(maxsize, bool) or not isinstance(maxsize, int):
            raise TypeError("maxsize must be an int")
        self._maxsize = maxsize
        self._items: deque[Any] = deque()
        self._getters: deque[Future] = deque()
        self._putters: deque[Future] = deque()
        self._unfinished = 0
        self._finished = Event()
        self._finished.set()

    @property
    def maxsize(self) -> int:
        """The most items it holds (0: no limit)."""
        return self._maxsize

    def qsize(self) -> int:
        """How many items it holds."""
        return len(self._items)

    def empty(self) -> bool:
        """True if it holds nothing."""
        return not self._items

    def full(self) -> bool:
        """True if ``put`` would wait."""
        return 0 < self._maxsize <= len(self._items)

    @staticmethod
    def _wake(waiters: deque[Future]) -> None:
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter._set_result(None)
                return

    def put_nowait(self, item: Any) -> None:
        """Add ``item``; ``QueueFull`` if it is full."""
        if self.full():
            raise QueueFull()
        self._items.append(item)
        self._unfinished += 1
        self._finished.clear()
        self._wake(self._getters)

    async def put(self, item: Any) -> None:
        """Add ``item``, waiting while it is full."""
        while self.full():
            waiter = running_loop("Queue.put()").create_future()
            self._putters.append(waiter)
            await waiter
        self.put_nowait(item)

    def get_nowait(self) -> Any:
        """Take the first item; ``QueueEmpty`` if there is none."""
        if not self._items:
            raise QueueEmpty()
        item = self._items.popleft()
        self._wake(self._putters)
        return item

    async def get(self) -> Any:
        """Take the first item, waiting while it is empty."""
        while not self._items:
            waiter = running_loop("Queue.get()").create_future()
            self._getters.append(waiter)
            await waiter
        return self.get_nowait()

    def task_done(self) -> None:
        """One item taken earlier is dealt with."""
        if self._unfinished <= 0:
            raise ValueError("task_done() called too many times")
        self._unfinished -= 1
        if self._unfinished == 0:
            self._finished.set()

    async def join(self) -> None:
        """Wait until every item put has been marked done."""
        if self._unfinished > 0:
            await self._finished.wait()

    def __repr__(self) -> str:
        return f"<Queue maxsize={self._maxsize} qsize={len(self._items)}>"


_REFUSED: dict[str, str] = {
    "get_event_loop": "use asyncio.run(main()) or top-level await; the loop object is not "
    "available",
    "get_running_loop": "use the asyncio functions (create_task, sleep, gather); the loop "
    "object is not available",
    "new_event_loop": "use asyncio.run(main()) or top-level await",
    "set_event_loop": "use asyncio.run(main()) or top-level await",
    "Runner": "use asyncio.run(main())",
    "run_coroutine_threadsafe": "there are no threads: await the coroutine",
    "to_thread": "there are no threads: call the function directly, or await a tool",
    "create_subprocess_exec": "the tools", "create_subprocess_shell": "the tools",
    "open_connection": "the tools", "start_server": "the tools",
    "open_unix_connection": "the tools", "start_unix_server": "the tools",
    "Future": "use asyncio.create_task(coro), or an asyncio.Event to signal between tasks",
    "Task": "use asyncio.create_task(coro)",
}
"""Names of the real ``asyncio`` that the facade refuses, with what to use instead."""


def _refusal(name: str, substitute: str) -> Any:
    if substitute == "the tools":
        substitute = "call the tools: they do all I/O"

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"asyncio.{name} is not available in the sandbox: {substitute}.")

    refused.__name__ = refused.__qualname__ = name
    refused.__doc__ = f"Refused in the sandbox: {substitute}."
    return refused


for _cls in (_Final, Timeout, TaskGroup, Semaphore, BoundedSemaphore, Lock, Event, Queue,
             QueueEmpty, QueueFull, _Gathering, _Yield):
    _cls.__module__ = "asyncio"
Future.__module__ = Task.__module__ = "asyncio"
hide_constructor(Task, "use asyncio.create_task(coro)")
hide_constructor(Future, "use asyncio.create_task(coro), or an asyncio.Event")
hide_constructor(_Gathering, "use asyncio.gather(...)")
hide_constructor(Timeout, "use asyncio.timeout(seconds)")
hide_constructor(ToolCall, "call the tool from async code: await get_x(...)",
                 shown_as="tool_call")
ToolCall.__name__ = "coroutine"  # "'coroutine' object is not subscriptable", as in CPython


def asyncio_members() -> dict[str, Any]:
    """The members of the ``asyncio`` facade (see the module docstring)."""
    members: dict[str, Any] = {
        "run": run, "sleep": sleep, "gather": gather, "create_task": create_task,
        "ensure_future": ensure_future, "shield": shield, "wait_for": wait_for, "wait": wait,
        "as_completed": as_completed, "timeout": timeout, "timeout_at": timeout_at,
        "current_task": current_task, "iscoroutine": iscoroutine, "TaskGroup": TaskGroup,
        "Semaphore": Semaphore, "BoundedSemaphore": BoundedSemaphore, "Lock": Lock,
        "Event": Event, "Queue": Queue, "QueueEmpty": QueueEmpty, "QueueFull": QueueFull,
        "CancelledError": CancelledError, "TimeoutError": TimeoutError,
        "InvalidStateError": InvalidStateError, "ALL_COMPLETED": ALL_COMPLETED,
        "FIRST_COMPLETED": FIRST_COMPLETED, "FIRST_EXCEPTION": FIRST_EXCEPTION,
    }
    members.update({name: _refusal(name, why) for name, why in _REFUSED.items()})
    return members
