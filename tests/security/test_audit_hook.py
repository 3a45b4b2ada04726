"""The audit hook of the process sandboxes, with the restricted interpreter bypassed.

The hook (``toolscript.sandbox.audithook``) is the layer that must still hold
when a script has escaped the interpreter. So most tests here do not go
through the interpreter at all: they run plain, unrestricted Python inside a
sandbox process started exactly as in production, through the server's
test-only ``test_exec`` message (``test_hooks=True`` on the backend; see
``toolscript.sandbox.walls.testing``). That test mode leaves the hook out, so
the first ``test_exec`` installs it the way the server does, trusting only the
test message's own compile-and-exec; every later attempt runs under it. The
objects an escaped script would hold (code objects, a generator, a
traceback) are made before the hook goes up.

Then production sandboxes, whose start-up installs the hook, show that the
interpreter keeps working under it: facades that generate code, tracebacks,
the watchdog, the warm pool, ``configure``/``reset``, the orphan watcher.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
from backend_marks import process_backends
from toolscript.runtime.backends.subprocess import SubprocessBackend
from toolscript.sandbox import audithook
from toolscript.sandbox.audittrust import TRUSTED, resolve_codes
from toolscript.sandbox.modules import DEFAULT_MODULES, OPTIONAL_MODULES
from walled import Walled

from toolscript import Limits, Runtime

TEST_RUNNER = "toolscript.sandbox.walls.testing:TestHookServer.handle"
STASH = "audit_hook_test_stash"

STASH_SOURCE = """
import marshal, sys

def function():
    return 1

def generator():
    yield 1

class Plain:
    pass

try:
    1 / 0
except ZeroDivisionError as exc:
    traceback = exc.__traceback__

code = compile("escaped = True", "<escaped>", "exec")
expression = compile("6 * 7", "<escaped>", "eval")
marshalled = marshal.dumps(function.__code__)
running = generator()
next(running)

def run(source):
    \"\"\"Run test code; report what it raised instead of raising (JSON data only).\"\"\"
    namespace = {"stash": sys.modules[__name__]}
    try:
        exec(compile(source, "<attempt>", "exec"), namespace)
    except BaseException as exc:
        return {"raised": type(exc).__name__, "event": getattr(exc, "event", None),
                "message": str(exc)}
    return {"raised": None, "result": namespace.get("result")}
"""

INSTALL = f"""
import sys, types
from toolscript.sandbox import audithook
stash = types.ModuleType({STASH!r})
exec({STASH_SOURCE!r}, stash.__dict__)
sys.modules[{STASH!r}] = stash
audithook.install_audit_hook(code_runners=[{TEST_RUNNER!r}, {STASH + ":run"!r}])
result = audithook.installed()
"""

ATTACKS: list[tuple[str, str, str]] = [
    # files
    ("open", "open", "open('/etc/hostname').read()"),
    ("os_open", "open", "os.open('/etc/hostname', os.O_RDONLY)"),
    ("open_code", "open", "import io; io.open_code('/etc/hostname')"),
    ("listdir", "os.listdir", "os.listdir('/')"),
    ("scandir", "os.scandir", "list(os.scandir('/'))"),
    ("chdir", "os.chdir", "os.chdir('/tmp')"),
    ("mkdir", "os.mkdir", "os.mkdir('/tmp/toolscript-audit-hook-test')"),
    ("remove", "os.remove", "os.remove('/tmp/toolscript-audit-hook-test')"),
    ("rename", "os.rename", "os.rename('/tmp/a', '/tmp/b')"),
    ("chmod", "os.chmod", "os.chmod('/tmp', 0o777)"),
    # processes and signals
    ("system", "os.system", "os.system('true')"),
    ("exec", "os.exec", "os.execv('/bin/true', ['true'])"),
    ("posix_spawn", "os.posix_spawn", "os.posix_spawn('/bin/true', ['true'], {})"),
    ("fork", "os.fork", "os.fork()"),
    ("kill", "os.kill", "os.kill(os.getppid(), 0)"),
    ("putenv", "os.putenv", "os.environ['TOOLSCRIPT_AUDIT_TEST'] = '1'"),
    ("popen", "subprocess.Popen", "import subprocess; subprocess.Popen(['true'])"),
    # network
    ("socket", "socket.__new__", "import socket; socket.socket()"),
    ("getaddrinfo", "socket.getaddrinfo", "import socket; socket.getaddrinfo('localhost', 80)"),
    # native code
    ("dlopen", "ctypes.dlopen", "import ctypes; ctypes.CDLL('libc.so.6')"),
    ("dlsym", "ctypes.dlsym", "import ctypes; ctypes.pythonapi.PyEval_SetTrace"),
    ("addressof", "ctypes.addressof", "import ctypes; ctypes.addressof(ctypes.c_int(1))"),
    # modules that were not loaded
    ("import", "import", "import smtplib"),
    # code outside the script
    ("compile", "compile", "compile('1 + 1', '<x>', 'eval')"),
    ("exec_string", "compile", "exec('x = 1')"),
    ("exec_code", "exec", "exec(stash.code)"),
    ("eval_code", "exec", "eval(stash.expression)"),
    ("function_new", "function.__new__", "types.FunctionType(stash.code, {})"),
    ("code_new", "code.__new__", "stash.code.replace(co_name='other')"),
    ("code_write", "object.__setattr__", "stash.function.__code__ = stash.code"),
    ("marshal", "marshal.loads", "import marshal; marshal.loads(stash.marshalled)"),
    # frames, code objects, interpreter internals
    ("getframe", "sys._getframe", "sys._getframe()"),
    ("gi_frame", "object.__getattr__", "stash.running.gi_frame"),
    ("gi_code", "object.__getattr__", "stash.running.gi_code"),
    ("tb_frame", "object.__getattr__", "stash.traceback.tb_frame"),
    ("code_read", "object.__getattr__", "stash.function.__code__"),
    ("class_write", "object.__setattr__", "stash.Plain.__qualname__ = 'Other'"),
    ("settrace", "sys.settrace", "sys.settrace(lambda *a: None)"),
    ("setprofile", "sys.setprofile", "sys.setprofile(lambda *a: None)"),
    ("current_frames", "sys._current_frames", "sys._current_frames()"),
    ("addaudithook", "sys.addaudithook", "sys.addaudithook(lambda *a: None)"),
    ("gc_objects", "gc.get_objects", "import gc; gc.get_objects()"),
    ("gc_referrers", "gc.get_referrers", "import gc; gc.get_referrers(stash)"),
    ("gc_referents", "gc.get_referents", "import gc; gc.get_referents(stash)"),
    ("input", "builtins.input", "input()"),
    ("rlimit_raise", "resource.setrlimit",
     "import resource\n"
     "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
     "resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard + 1))"),
    # default-deny: an event nobody listed
    ("unknown_event", "toolscript.test.unknown", "sys.audit('toolscript.test.unknown')"),
]


class Hooked(Walled):
    """A sandbox started as in production plus the test flag, with the hook installed."""

    def __init__(self, runtime: Runtime) -> None:
        super().__init__(runtime)
        assert self.handle.ready_info["audit_hook"] is False  # the test mode leaves it out
        assert self.exec(INSTALL, helpers=False) is True

    def run(self, code: str) -> dict[str, Any]:
        """Run ``code`` under the hook; ``{"raised": None, "result": ...}`` or what it raised."""
        outcome: dict[str, Any] = self.exec(
            f"import sys\nresult = sys.modules[{STASH!r}].run({code!r})", helpers=False)
        return outcome

    def result(self, code: str) -> Any:
        """Run ``code`` under the hook; it must not raise; return its ``result`` variable."""
        outcome = self.run(code)
        assert outcome["raised"] is None, outcome
        return outcome["result"]

    def attempt(self, body: str) -> dict[str, Any]:
        """Run ``body`` as the body of a function (``stash``, ``os``, ``sys``, ``types``
        in scope); say whether and how it was refused."""
        return self.run("import os, sys, types\ndef attempt():\n"
                        + textwrap.indent(textwrap.dedent(body), "    ") + "\nattempt()")


def start_hooked(backend_name: str) -> Hooked:
    """A hooked test-mode sandbox on ``backend_name``."""
    if backend_name == "docker":
        from toolscript.runtime.backends.docker.backend import DockerBackend
        from toolscript.runtime.backends.docker.image import DEFAULT_IMAGE

        image = os.environ.get("TOOLSCRIPT_IMAGE", DEFAULT_IMAGE)
        return Hooked(Runtime(backend=DockerBackend(image, pool_size=0, test_hooks=True)))
    return Hooked(Runtime(backend=SubprocessBackend(pool_size=0, test_hooks=True)))


@pytest.fixture(scope="module")
def _hooked_boxes() -> Iterator[dict[str, Hooked]]:
    boxes: dict[str, Hooked] = {}
    yield boxes
    for box in boxes.values():
        box.close()


@pytest.fixture
def hooked(backend_name: str, _hooked_boxes: dict[str, Hooked]) -> Hooked:
    """One hooked sandbox per backend, shared by the attempts of this module."""
    box = _hooked_boxes.get(backend_name)
    if box is None or not box.handle.is_alive():
        box = _hooked_boxes[backend_name] = start_hooked(backend_name)
    return box


def assert_refused(outcome: dict[str, Any], event: str) -> None:
    """The attempt ended in the hook's refusal of ``event``, with a message naming it."""
    assert outcome["raised"] == "SandboxViolation", outcome
    assert outcome["event"] == event, outcome
    assert f"the sandbox refused audit event {event!r}" in outcome["message"], outcome


# --- the interpreter bypassed: the hook refuses --------------------------------------------


@process_backends
@pytest.mark.parametrize(("event", "body"), [pytest.param(e, b, id=i) for i, e, b in ATTACKS])
def test_unrestricted_code_is_refused(hooked: Hooked, event: str, body: str) -> None:
    assert_refused(hooked.attempt(body), event)


@process_backends
def test_nothing_was_done_by_the_refused_attempts(hooked: Hooked) -> None:
    state = ("import os\n"
             "result = [os.getcwd(), 'TOOLSCRIPT_AUDIT_TEST' in os.environ,\n"
             "          hasattr(stash, 'escaped'),\n"
             "          os.path.exists('/tmp/toolscript-audit-hook-test')]")
    before = hooked.result(state)
    for _, _, body in ATTACKS:  # whatever order pytest ran them in, run them all once more
        hooked.attempt(body)
    assert hooked.result(state) == before
    assert before[1:] == [False, False, False]


@process_backends
def test_first_escape_final_step_is_refused(hooked: Hooked) -> None:
    """A class pattern reads ``gi_frame`` with the real getattr: the hook refuses the read."""
    outcome = hooked.attempt(textwrap.dedent("""
        import collections, collections.abc
        class GiFrame(collections.namedtuple('GiFrame', 'gi_frame'), collections.abc.Container):
            pass
        def gen():
            yield 1
        g = gen()
        GiFrame.register(type(g))
        match g:
            case GiFrame(frame):
                return frame
    """))
    assert_refused(outcome, "object.__getattr__")
    assert "generator.gi_frame" in outcome["message"]


@process_backends
@pytest.mark.parametrize(("event", "final_step"), [
    ("function.__new__", "type(lambda: 0)(code, {})()"),
    ("exec", "eval(code)"),
    ("exec", "reference._evaluate({}, {}, frozenset())"),
])
def test_second_escape_final_step_is_refused(hooked: Hooked, event: str, final_step: str) -> None:
    """A ``typing.ForwardRef`` compiles a string the script chose (allowed: it is how
    ``List["Node"]`` works); running that code object is what the hook refuses."""
    outcome = hooked.attempt(textwrap.dedent(f"""
        import typing
        reference = typing.ForwardRef("__import__('os').getuid()")
        code = reference.__forward_code__
        {final_step}
    """))
    assert_refused(outcome, event)


@process_backends
def test_code_generators_of_the_facades_still_work(hooked: Hooked) -> None:
    """The trusted standard-library callers work under the hook for unrestricted code too."""
    outcome = hooked.result(textwrap.dedent("""
        import collections, dataclasses, enum, typing
        Point = collections.namedtuple('Point', 'x y')
        @dataclasses.dataclass(order=True, slots=True)
        class Item:
            name: str
            qty: int = 0
        Color = enum.Enum('Color', 'RED GREEN')
        class Pair(typing.NamedTuple):
            a: int
            b: 'int' = 2
        result = [Point(1, 2).x, Item('a') < Item('b'), Color.GREEN.value, Pair(1).b]
    """))
    assert outcome == [1, True, 2, 2]


@process_backends
def test_a_refusal_ends_the_run_even_if_the_script_catches_it(hooked: Hooked) -> None:
    """Give the interpreter a hole (a builtin that reads a frame, made before the hook):
    the script's ``except BaseException`` cannot keep the run going, the error is
    ``sandbox_violation`` naming the event, and the next run works."""
    hooked.result(textwrap.dedent("""
        from toolscript.sandbox import interpreter
        def hole():
            return stash.running.gi_frame
        original = interpreter.make_builtins
        def with_hole(*args):
            names = original(*args)
            names["hole"] = hole
            return names
        interpreter.make_builtins = with_hole
        result = True
    """))
    hooked.session.reset()  # builds the builtins again, now with the hole
    result = hooked.session.run(textwrap.dedent("""
        def attempt():
            try:
                return hole()
            except BaseException:
                return "swallowed"
        kept = attempt()
        print("still running")
        kept
    """))
    assert not result.ok
    assert result.error is not None and result.error.type == "sandbox_violation", result.error
    assert "'object.__getattr__' (generator.gi_frame)" in result.error.message
    assert "still running" not in result.stdout
    assert hooked.session.run("6 * 7").value == 42


@process_backends
def test_the_hook_never_runs_code_of_the_objects_an_event_carries(hooked: Hooked) -> None:
    """``sys.audit`` lets an escaped script raise any event with any objects: a class
    whose metaclass fakes ``__name__``/``__mro__``, a ``str`` subclass with its own
    ``__eq__``/``__hash__``, a fake frame. The hook refuses without calling any of them."""
    outcome = hooked.result(textwrap.dedent("""
        import sys
        calls = []
        class Meta(type):
            @property
            def __name__(cls):
                calls.append("__name__")
                return "Fake"
            @property
            def __mro__(cls):
                calls.append("__mro__")
                return (object,)
            def __eq__(cls, other):
                calls.append("type __eq__")
                return True
            def __hash__(cls):
                return 0
        class Sneaky(metaclass=Meta):
            @property
            def f_globals(self):
                calls.append("f_globals")
                return {}
        class Name(str):
            def __eq__(self, other):
                calls.append("__eq__")
                return True
            def __hash__(self):
                calls.append("__hash__")
                return 0
        refused = []
        for event, args in [("object.__getattr__", (Sneaky(), Name("f_code"))),
                            ("sys._getframe", (Sneaky(),)), ("compile", (Sneaky(), Name("x"))),
                            ("exec", (Sneaky(),)), ("import", (Name("os"),))]:
            try:
                sys.audit(event, *args)
            except BaseException as exc:
                refused.append(type(exc).__name__)
        result = [refused, calls]
    """))
    assert outcome == [["SandboxViolation"] * 5, []]


@process_backends
def test_rebinding_what_the_hook_uses_changes_nothing(hooked: Hooked) -> None:
    """The hook's allow-lists, helpers and the builtins it calls are bound when it is
    installed: an escaped script that rebinds module attributes and builtins gains nothing."""
    outcome = hooked.result(textwrap.dedent("""
        import builtins, sys, types
        from toolscript.sandbox import audithook, audittrust
        saved = (audithook.ALWAYS_ALLOWED, audithook.refusal_message, audittrust.resolve_codes,
                 audittrust.TRUSTED, types.CodeType, builtins.len, builtins.type)
        real_type = type
        audithook.ALWAYS_ALLOWED = frozenset({"open", "exec", "sys._getframe"})
        audithook.refusal_message = lambda *args, **kwargs: None
        audittrust.resolve_codes = lambda *args: ()
        audittrust.TRUSTED = {}
        types.CodeType = object
        builtins.len = lambda value: 2
        builtins.type = lambda value: types.FrameType
        outcomes = []
        try:
            for attempt in (lambda: open("/etc/hostname"), lambda: exec(stash.code),
                            lambda: sys._getframe()):
                try:
                    attempt()
                    outcomes.append("allowed")
                except BaseException as exc:
                    outcomes.append(real_type(exc).__name__)
        finally:
            (audithook.ALWAYS_ALLOWED, audithook.refusal_message, audittrust.resolve_codes,
             audittrust.TRUSTED, types.CodeType, builtins.len, builtins.type) = saved
        result = outcomes
    """))
    assert outcome == ["SandboxViolation"] * 3


def test_every_trusted_function_of_the_sandbox_exists() -> None:
    """The hook finds the sandbox's own functions by name: a rename must not silently
    turn a trusted path into a refused one (or the reverse)."""
    for names in TRUSTED.values():
        for name in names:
            if name.startswith("toolscript."):
                assert len(resolve_codes([name])) == 1, name


def test_the_inprocess_backend_never_installs_the_hook() -> None:
    with Runtime(backend="inprocess") as runtime:
        assert runtime.run("import collections\ncollections.namedtuple('P', 'x')(1).x").value == 1
    assert not audithook.installed()


# --- production start-up: the hook is installed and the sandbox keeps working ----------------

FEATURES = textwrap.dedent("""
    import collections, copy, dataclasses, datetime, enum, functools, heapq, json, re
    import statistics, string, textwrap, typing

    @dataclasses.dataclass(frozen=True, order=True)
    class Row:
        region: str
        total: float = 0.0

    @dataclasses.dataclass(slots=True, kw_only=True)
    class Options:
        limit: int

    class Pair(typing.NamedTuple):
        left: int
        right: 'int' = 0

    Level = enum.Enum('Level', 'LOW HIGH')
    T = typing.TypeVar('T')
    Point = collections.namedtuple('Point', 'x y', defaults=[0])

    @functools.lru_cache(maxsize=None)
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args):
            return f(*args)
        return wrapper

    @decorate
    def double(x):
        return 2 * x

    try:
        {}['missing']
    except KeyError as exc:
        caught = repr(exc)

    rows = sorted([Row('b', 2.0), Row('a', 1.0)])
    when = datetime.datetime.strptime('2024-03-05', '%Y-%m-%d')
    [
        dataclasses.asdict(rows[0]), Options(limit=3).limit, Pair(1)._asdict(), Level.HIGH.value,
        Point(1).y, fib(40), double.__name__, caught, when.strftime('%A %d %B'),
        collections.Counter('abracadabra').most_common(1), heapq.nsmallest(1, [3, 1, 2]),
        copy.deepcopy({'a': [1]}), re.sub(r'\\N{LATIN SMALL LETTER A}', 'o', 'banana'),
        textwrap.shorten('one two three four', 12), string.Template('$x!').substitute(x=1),
        'é'.encode('utf-16-le').hex(), statistics.median([3, 1, 2]), json.loads('[1]'),
    ]
""")

FEATURES_VALUE = [
    {"region": "a", "total": 1.0}, 3, {"left": 1, "right": 0}, 2, 0, 102334155, "double",
    "KeyError('missing')", "Tuesday 05 March", [["a", 5]], [1], {"a": [1]}, "bonono",
    "one [...]", "1!", "e900", 2, [1],
]


@process_backends
def test_production_sandboxes_run_under_the_hook(make_runtime: Any) -> None:
    runtime = make_runtime(modules=[*DEFAULT_MODULES, *OPTIONAL_MODULES], pool_size=2)
    with runtime.session() as session:
        result = session.run(FEATURES)
        assert result.ok, result.error
        assert result.value == FEATURES_VALUE
        handle = session.sandbox
        assert handle is not None and handle.ready_info["audit_hook"] is True
        failed = session.run("def f():\n    return 1 / 0\nx = 1\nf()")
        assert failed.error is not None and failed.error.type == "script_error"
        assert failed.error.details["line"] == 2  # the traceback walk works under the hook
        session.reset()
        forgotten = session.run("x")
        assert forgotten.error is not None and forgotten.error.details["exception"] == "NameError"
    with runtime.session() as second:  # the pool's next sandbox
        assert second.run("sum(range(10))").value == 45


@process_backends
def test_watchdog_limits_work_under_the_hook(make_runtime: Any) -> None:
    runtime = make_runtime(limits=Limits(wall_time_s=1.0, cpu_time_s=0.5))
    with runtime.session() as session:
        cpu = session.run("while True:\n    pass")
        assert cpu.error is not None and cpu.error.type in ("cpu_limit", "timeout"), cpu.error
        caught = session.run(
            "n = 0\nwhile True:\n    try:\n        n += 1\n    except BaseException:\n        pass")
        assert caught.error is not None and caught.error.type in ("cpu_limit", "timeout")
        assert session.run("7 * 6").value == 42


ORPHAN_HOST = """
import sys
from toolscript import Runtime
runtime = Runtime(backend="subprocess")
session = runtime.session()
session.run("1")
print(session.sandbox.process.pid, session.sandbox.ready_info["audit_hook"], flush=True)
sys.stdin.read()
"""


def test_orphan_watcher_ends_the_sandbox_under_the_hook() -> None:
    host = subprocess.Popen([sys.executable, "-c", ORPHAN_HOST], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert host.stdout is not None
        pid_text, hooked = host.stdout.readline().split()
        assert hooked == "True"
        sandbox_pid = int(pid_text)
        host.send_signal(signal.SIGKILL)
        host.wait()
        assert _gone(sandbox_pid, timeout_s=30.0), "the sandbox outlived its host"
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()


def _gone(pid: int, timeout_s: float) -> bool:
    """Wait (bounded) until ``pid`` has exited: its pidfd becomes readable."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([pidfd], [], [], timeout_s)
        return bool(readable)
    finally:
        os.close(pidfd)
