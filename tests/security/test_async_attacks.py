"""Attacks on async code in the sandbox (issue 25 item 1), on every backend.

Async machinery is a classic route to frames: ``cr_frame``/``ag_frame``/``gi_frame``,
``cr_code``, ``cr_await``/``ag_await`` (which would hand out the sandbox's own
``__await__`` iterators), coroutine wrappers from ``__await__()``, driving a
coroutine by hand with ``send``/``throw``, the event loop object behind tasks and
futures, task callbacks, and the tracebacks of exceptions thrown into a task
(an awaited tool error). Each attack below is written as a script would try it;
each must be refused (at compile time or by a guard at run time), contained by a
limit, or run harmlessly with a value that proves nothing escaped.
"""

# ruff: noqa: E501  (tables of attack scripts read best one per line)

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from backend_marks import BACKENDS, backend_options
from security_helpers import COMPILE, Attack, limit, runtime, safe

from toolscript import Limits, Runtime, tool

NO_ATTR = runtime("AttributeError")
TYPE = runtime("TypeError")
RUNTIME = runtime("RuntimeError")


@tool(read_only=True)
def echo(value: Any = None) -> Any:
    """Return the value unchanged."""
    return value


@tool(read_only=True)
def explode(key: str = "k") -> None:
    """Raise a KeyError on the host."""
    raise KeyError(key)


@pytest.fixture(scope="module", params=BACKENDS)
def backend_name(request: pytest.FixtureRequest) -> str:
    """Each backend in turn (one runtime per backend for the whole module)."""
    name: str = request.param
    if name == "docker":
        request.getfixturevalue("docker_image_tag")
    return name


@pytest.fixture(scope="module")
def rt(backend_name: str) -> Iterator[Runtime]:
    with Runtime(tools=[echo, explode], backend=backend_name,
                 backend_options=backend_options(backend_name),
                 limits=Limits(wall_time_s=5, max_tool_calls=50)) as runtime_:
        yield runtime_


CORO = "async def f():\n    return 1\nc = f()\n"
AGEN = "async def g():\n    yield 1\na = g()\n"
PARKED = "import asyncio\nasync def f():\n    return await echo(value=1)\nc = f()\nreq = c.send(None)\n"

FRAMES = [
    Attack("cr_frame", CORO + "c.cr_frame", COMPILE),
    Attack("cr_frame_globals", CORO + "c.cr_frame.f_globals['__builtins__']", COMPILE),
    Attack("cr_code", CORO + "c.cr_code", COMPILE),
    Attack("cr_await", PARKED + "c.cr_await", COMPILE),
    Attack("cr_origin", CORO + "c.cr_origin", COMPILE),
    Attack("ag_frame", AGEN + "a.ag_frame", COMPILE),
    Attack("ag_code", AGEN + "a.ag_code", COMPILE),
    Attack("ag_await", AGEN + "a.ag_await", COMPILE),
    Attack("gi_frame_of_await_iterator", PARKED + "c.cr_await.gi_frame", COMPILE),
    Attack("gi_yieldfrom", PARKED + "c.gi_yieldfrom", COMPILE),
    Attack("dunder_await", CORO + "w = c.__await__()", COMPILE),
    Attack("getattr_cr_frame", CORO + "getattr(c, 'cr_frame')", NO_ATTR),
    Attack("getattr_cr_await", PARKED + "getattr(c, 'cr_await')", NO_ATTR),
    Attack("getattr_ag_frame", AGEN + "getattr(a, 'ag_frame')", NO_ATTR),
    Attack("getattr_dunder_await", CORO + "getattr(c, '__await__')()", NO_ATTR),
    Attack("format_cr_frame", CORO + "'{0.cr_frame}'.format(c)", runtime("AttributeError", "ValueError")),
    Attack("format_map_cr_code", CORO + "'{c.cr_code}'.format_map({'c': c})", runtime("AttributeError", "ValueError")),
    Attack("attrgetter_cr_frame", "import operator\n" + CORO + "operator.attrgetter('cr_frame')(c)", NO_ATTR),
    Attack("attrgetter_dotted", "import operator\n" + CORO + "operator.attrgetter('cr_frame.f_back')(c)", NO_ATTR),
    Attack("methodcaller_await", "import operator\n" + CORO + "operator.methodcaller('__await__')(c)", NO_ATTR),
    Attack("match_cr_frame", CORO + "match c:\n    case object(cr_frame=fr):\n        pass", COMPILE),
    Attack("type_coroutine_call", CORO + "type(c)(None)", TYPE),
    Attack("type_async_generator_call", AGEN + "type(a)()", TYPE),
    Attack("subclass_coroutine_type", CORO + "class C(type(c)):\n    pass", TYPE),
    Attack("asend_frame", AGEN + "s = a.asend(None)\ns.gi_frame", COMPILE),
    Attack("asend_getattr_frame", AGEN + "s = a.asend(None)\ngetattr(s, 'gi_frame')", NO_ATTR),
]

TRACEBACKS = [
    Attack("awaited_tool_error_traceback", "async def f():\n    try:\n        await explode()\n    except Exception as e:\n        return e.__traceback__\nimport asyncio\nasyncio.run(f())", COMPILE),
    Attack("awaited_tool_error_getattr_tb", "import asyncio\nasync def f():\n    try:\n        await explode()\n    except Exception as e:\n        return getattr(e, '__traceback__')\nasyncio.run(f())", NO_ATTR),
    Attack("gather_error_context", "import asyncio\ntry:\n    await asyncio.gather(explode())\nexcept Exception as e:\n    e.__context__", COMPILE),
    Attack("taskgroup_group_traceback", "import asyncio\nasync def bad():\n    raise ValueError('x')\ntry:\n    async with asyncio.TaskGroup() as tg:\n        tg.create_task(bad())\nexcept ExceptionGroup as eg:\n    getattr(eg.exceptions[0], '__traceback__')", NO_ATTR),
    Attack("aexit_gets_a_stand_in", "class M:\n    async def __aenter__(self):\n        return self\n    async def __aexit__(self, kind, value, tb):\n        self.seen = [repr(tb), kind.__name__, str(value)]\n        return True\nm = M()\nasync with m:\n    await explode(key='x')\nm.seen", safe(["<traceback object>", "KeyError", "'x'"])),
    Attack("aexit_tb_frame", "class M:\n    async def __aenter__(self):\n        return self\n    async def __aexit__(self, kind, value, tb):\n        self.tb = tb\n        return True\nm = M()\nasync with m:\n    1 / 0\ngetattr(m.tb, 'tb_frame')", NO_ATTR),
    Attack("aexit_static_tb", "class M:\n    async def __aenter__(self):\n        return self\n    @staticmethod\n    async def __aexit__(kind, value, tb):\n        global kept\n        kept = tb\n        return True\nasync with M():\n    1 / 0\ntype(kept).__name__", safe("TracebackStandIn")),
]

LOOP = [
    Attack("get_event_loop", "import asyncio\nasyncio.get_event_loop()", RUNTIME),
    Attack("get_running_loop", "import asyncio\nasync def f():\n    return asyncio.get_running_loop()\nawait f()", RUNTIME),
    Attack("new_event_loop", "import asyncio\nasyncio.new_event_loop()", RUNTIME),
    Attack("to_thread", "import asyncio\nawait asyncio.to_thread(print, 1)", RUNTIME),
    Attack("subprocess", "import asyncio\nawait asyncio.create_subprocess_exec('id')", RUNTIME),
    Attack("open_connection", "import asyncio\nawait asyncio.open_connection('127.0.0.1', 80)", RUNTIME),
    Attack("future_constructor", "import asyncio\nasyncio.Future()", RUNTIME),
    Attack("task_constructor", "import asyncio\nasyncio.Task(None)", RUNTIME),
    Attack("import_asyncio_events", "from asyncio import events", runtime("ImportError")),
    Attack("import_asyncio_submodule", "import asyncio.subprocess", runtime("ModuleNotFoundError")),
    Attack("asyncio_events_attribute", "import asyncio\nasyncio.events", NO_ATTR),
    Attack("task_loop", "import asyncio\nawait asyncio.sleep(0)\nt = asyncio.current_task()\nt._loop", NO_ATTR),
    Attack("task_coro", "import asyncio\nawait asyncio.sleep(0)\nt = asyncio.current_task()\nt._coro", NO_ATTR),
    Attack("task_get_coro", "import asyncio\nawait asyncio.sleep(0)\nt = asyncio.current_task()\nt.get_coro()", RUNTIME),
    Attack("task_callbacks", "import asyncio\nawait asyncio.sleep(0)\nt = asyncio.current_task()\nt._callbacks", NO_ATTR),
    Attack("task_add_callback", "import asyncio\nawait asyncio.sleep(0)\nt = asyncio.current_task()\nt._add_callback(print)", NO_ATTR),
    Attack("task_getattr_loop", "import asyncio\nawait asyncio.sleep(0)\nt = asyncio.current_task()\ngetattr(t, '_loop')", NO_ATTR),
    Attack("task_vars", "import asyncio\nawait asyncio.sleep(0)\nt = asyncio.current_task()\nvars(t)", runtime("TypeError", "AttributeError")),
    Attack("type_task_call", "import asyncio\nawait asyncio.sleep(0)\nt = asyncio.current_task()\ntype(t)(None, None, 'x')", TYPE),
    Attack("subclass_task_type", "import asyncio\nawait asyncio.sleep(0)\nt = asyncio.current_task()\nclass T(type(t)):\n    pass", TYPE),
    Attack("gather_children", "import asyncio\nawait asyncio.sleep(0)\ng = asyncio.gather()\ng._children", NO_ATTR),
    Attack("gather_loop", "import asyncio\nawait asyncio.sleep(0)\ng = asyncio.gather()\ng._loop", NO_ATTR),
    Attack("timeout_loop", "import asyncio\nasync with asyncio.timeout(1) as t:\n    t._loop", NO_ATTR),
    Attack("timeout_timer", "import asyncio\nasync with asyncio.timeout(1) as t:\n    t._timer", NO_ATTR),
    Attack("subclass_taskgroup", "import asyncio\nclass G(asyncio.TaskGroup):\n    pass", TYPE),
    Attack("subclass_queue", "import asyncio\nclass Q(asyncio.Queue):\n    def peek(self):\n        return self._getters", TYPE),
    Attack("subclass_lock", "import asyncio\nclass L(asyncio.Lock):\n    pass", TYPE),
    Attack("queue_private", "import asyncio\nq = asyncio.Queue()\nq._getters", NO_ATTR),
    Attack("facade_function_globals", "import asyncio\nasyncio.run.__globals__", COMPILE),
    Attack("facade_function_getattr_globals", "import asyncio\ngetattr(asyncio.gather, '__globals__')", NO_ATTR),
    Attack("facade_function_code", "import asyncio\ngetattr(asyncio.sleep, '__code__')", NO_ATTR),
    Attack("facade_module_write", "import asyncio\nasyncio.run = print", TYPE),
    Attack("facade_class_write", "import asyncio\nasyncio.Queue.get_nowait = print", TYPE),
    Attack("facade_instance_write", "import asyncio\nq = asyncio.Queue()\nq.put_nowait = print", runtime("TypeError", "AttributeError")),
    Attack("nested_run", "import asyncio\nasync def f():\n    return 1\nasyncio.run(f())\nasync def g():\n    return asyncio.run(f())\nawait g()", RUNTIME),
]

TOOL_CALLS = [
    Attack("tool_call_stub", "async def f():\n    return echo(value=1)._stub\nawait f()", NO_ATTR),
    Attack("tool_call_args", "async def f():\n    return echo(value=1)._args\nawait f()", NO_ATTR),
    Attack("tool_call_type_call", "async def f():\n    return type(echo(value=1))(echo, {'value': 1})\nawait f()", TYPE),
    Attack("tool_call_await_twice", "c = echo(value=1)\nawait c\nawait c", RUNTIME),
    Attack("tool_call_type_name", "async def f():\n    return type(echo(value=1)).__name__\nawait f()", safe("tool_call")),
    Attack("defer_rebind", "_defer_ = lambda f: f", COMPILE),
    Attack("defer_def", "def _defer_(f):\n    return f", COMPILE),
    Attack("defer_read", "x = _defer_", COMPILE),
    Attack("defer_global", "async def f():\n    global _defer_\n    _defer_ = print", COMPILE),
    Attack("drive_by_hand_fakes_only_itself", PARKED + "kind = type(req).__name__\ntry:\n    c.send({'forged': True})\nexcept StopIteration as stop:\n    got = stop.value\n[kind, got]", safe(["tool_call", {"forged": True}])),
    Attack("drive_by_hand_throw", PARKED + "try:\n    c.throw(KeyError('mine'))\nexcept KeyError as e:\n    out = str(e)\nout", safe("'mine'")),
    Attack("not_json_arguments", "async def f():\n    return await echo(value={1, 2})\nimport asyncio\ntry:\n    asyncio.run(f())\nexcept ToolError as e:\n    r = e.type\nr", safe("invalid_arguments")),
    Attack("await_plain_value", "async def f():\n    return await 1\nawait f()", TYPE),
    Attack("gather_non_awaitable", "import asyncio\nawait asyncio.gather(1)", TYPE),
    Attack("script_await_dunder", "class A:\n    def __await__(self):\n        yield 1\nawait A()", COMPILE),
    Attack("task_of_an_earlier_loop", "import asyncio\nasync def keep():\n    t = asyncio.create_task(echo(value=3))\n    await t\n    return t\nt = asyncio.run(keep())\nasync def use():\n    return await t\nasyncio.run(use())", safe(3)),
]

LIMITS = [
    Attack("sleep_past_wall_limit", "import asyncio\nawait asyncio.sleep(10**9)", limit("timeout")),
    Attack("sleep_past_wall_limit_caught", "import asyncio\ntry:\n    await asyncio.sleep(3600)\nexcept BaseException:\n    pass\n'escaped'", limit("timeout")),
    Attack("sleep_infinity", "import asyncio\nawait asyncio.sleep(float('inf'))", limit("timeout")),
    Attack("sleep_nan", "import asyncio\nawait asyncio.sleep(float('nan'))", runtime("ValueError")),
    Attack("cancel_resisting_task", "import asyncio\nasync def stubborn():\n    while True:\n        try:\n            await asyncio.sleep(1)\n        except asyncio.CancelledError:\n            pass\nasync def main():\n    asyncio.create_task(stubborn())\n    await asyncio.sleep(0)\nasyncio.run(main())", limit("timeout")),
    Attack("busy_tasks", "import asyncio\nasync def spin():\n    while True:\n        await asyncio.sleep(0)\nawait asyncio.gather(spin(), spin())", limit("timeout")),
    Attack("aexit_swallows_limit", "import asyncio\nclass Swallow:\n    async def __aenter__(self):\n        return self\n    async def __aexit__(self, *exc):\n        return True\nasync with Swallow():\n    await asyncio.sleep(10**6)\n'escaped'", limit("timeout")),
    Attack("tool_call_limit_in_gather", "import asyncio\ntry:\n    await asyncio.gather(*[echo(value=i) for i in range(200)], return_exceptions=True)\nexcept BaseException:\n    pass\n'escaped'", limit("tool_call_limit")),
    Attack("recursion", "async def f():\n    return await f()\nawait f()", limit("recursion_limit")),
    Attack("deadlock", "import asyncio\nawait asyncio.Event().wait()", RUNTIME),
    Attack("main_task_cancels_itself", "import asyncio\nasyncio.current_task().cancel()\nawait asyncio.sleep(0)", runtime("CancelledError")),
    Attack("script_keyboard_interrupt_in_task", "import asyncio\nasync def f():\n    raise KeyboardInterrupt\nawait asyncio.gather(f())", runtime("KeyboardInterrupt")),
    Attack("script_system_exit_in_task", "import asyncio\nasync def f():\n    raise SystemExit(3)\nawait asyncio.gather(f())", runtime("SystemExit")),
]

SUBMODULES = [  # IMPORT_FROM falls back to sys.modules['M.name'] for a name the facade lacks
    Attack("from_asyncio_import_events", "from asyncio import events\nevents.get_event_loop", runtime("ImportError")),
    Attack("from_asyncio_import_tasks", "from asyncio import tasks\ntasks.sys", runtime("ImportError")),
    Attack("from_json_import_decoder", "from json import decoder\ndecoder.re.enum.sys.platform", runtime("ImportError")),
    Attack("from_collections_import_abc_is_the_facade", "from collections import abc\ngetattr(abc, 'sys', 'none')", safe("none")),
    Attack("from_import_caught_then_used", "try:\n    from json import scanner\nexcept ImportError:\n    scanner = None\nscanner is None", safe(True)),
]

ALL = FRAMES + TRACEBACKS + LOOP + TOOL_CALLS + LIMITS + SUBMODULES


@pytest.mark.parametrize("attack", ALL, ids=[a.id for a in ALL])
def test_async_attack(attack: Attack, rt: Runtime) -> None:
    attack.expect.check(rt.run(attack.code), attack.code)


def test_refusals_name_a_substitute(rt: Runtime) -> None:
    """Every refused asyncio name says what to write instead."""
    result = rt.run("import asyncio\nasyncio.get_event_loop()")
    assert not result.ok and "asyncio.run(main())" in result.error.message


def test_a_run_leaves_no_task_behind(rt: Runtime) -> None:
    """A task still pending when its run ends is cancelled then (its finally runs),
    and nothing of it runs in the next run."""
    session = rt.session()
    first = session.run("import asyncio\nasync def later():\n    try:\n        await asyncio.sleep(100)\n    finally:\n        print('cleaned')\nasync def main():\n    global t\n    t = asyncio.create_task(later())\n    await asyncio.sleep(0)\nasyncio.run(main())\nt.cancelled()")
    assert first.ok, first.error
    assert first.stdout == "cleaned\n" and first.value is True
    second = session.run("print('second')\nt.done()")
    assert second.ok and second.stdout == "second\n" and second.value is True


def test_a_suspended_async_generator_stays_in_its_run(rt: Runtime) -> None:
    """An async generator left suspended by its run runs nothing in the next run
    until the script itself resumes it (``finally`` then runs in that run)."""
    session = rt.session()
    first = session.run("async def g():\n    try:\n        yield 1\n    finally:\n        print('late')\nit = g()\nawait it.asend(None)")
    assert first.ok and first.value == 1 and first.stdout == ""
    second = session.run("print('next')")
    assert second.ok and second.stdout == "next\n", second
    third = session.run("try:\n    await it.asend(None)\nexcept StopAsyncIteration:\n    print('done')")
    assert third.ok and third.stdout == "late\ndone\n", third
