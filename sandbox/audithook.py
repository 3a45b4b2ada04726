"""A PEP 578 audit hook: the process sandboxes refuse what a sandbox never needs.

The restricted interpreter is the first layer; this hook assumes it has been
escaped. It is installed once, by the sandbox server of the process backends
(never by the inprocess backend: a hook cannot be removed and would govern the
host), after every module a script can reach has been imported, and it is
default-deny: an audit event it does not know is refused. What stays allowed
is what the interpreter itself does while scripts run, each decided by *who*
raises the event (the code object of the calling frame, which a script cannot
forge: ``function.__new__``, ``code.__new__`` and writes of ``__code__`` are
refused) rather than by a flag that script code could reach:

* ``compile`` only from the policy module (which compiles only checked
  syntax trees), ``ast.parse`` (syntax trees only) and the standard-library
  code generators the facades use (``collections.namedtuple``,
  ``dataclasses``, ``typing.ForwardRef``);
* ``exec``/``eval`` of the script's own compiled code from the interpreter,
  of code those generators just compiled, and of the modules copied privately
  per interpreter (compiled before the hook was installed);
* ``sys._getframe``, the audited attribute reads (``__code__``, ``tb_frame``,
  ``gi_frame``, ``cr_frame``, ``ag_frame``, ...) and the audited writes of
  special attributes only from the standard-library functions that need them
  and from the interpreter's own traceback walk;
* a new thread only for the watchdog and the orphan watcher; rlimits only
  lowered.

Everything else - ``open``, every ``os.*`` file and process event,
``socket.*``, ``subprocess.Popen``, ``ctypes.*``, ``import`` of anything not
preloaded, ``marshal``, ``pickle``, ``gc`` introspection, tracing and
profiling, ``input``, further audit hooks - ends the run with the error type
``sandbox_violation``: the refusal is recorded in the running interpreter's
:class:`~.guards.AbortState` before :class:`SandboxViolation` is raised, so
``except BaseException`` cannot keep the run going. (One exception: the
import a codec lookup tries for an encoding that was not preloaded fails as
an ``ImportError``, so the script sees "unknown encoding".)

The hook binds everything it uses when it is installed (rebinding a module
attribute or a builtin afterwards changes nothing) and never calls code of
the objects an event carries. The trust table, the preloaded modules and the
trusted functions are in :mod:`.audittrust`.

Limits (CPython's, not this module's): an audit hook sees only audited
operations. Calls through ``ctypes`` function objects, which the process
already holds for the watchdog and the walls, raise no event (nor does making
one from an address), so code that reaches real module globals can write
memory and remove any in-process hook; so can code that rewrites the
sandbox's own classes. The operating-system walls of the process backends
(seccomp, Landlock, the unprivileged uid) are the layer that holds then.
"""

from __future__ import annotations

import ast
import contextlib
import sys
import types
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from .audittrust import Trust, build_trust
from .audittrust import preload as preload  # the server preloads before the OS walls
from .guards import AbortState, SandboxAbort

VIOLATION = "sandbox_violation"
"""The stable error type of a run that raised a refused audit event."""

ALWAYS_ALLOWED = frozenset({
    "builtins.id",
    "sys._getframemodulename",  # a module name, not a frame
    "sys.excepthook", "sys.unraisablehook",  # reporting an error, not causing one
    "time.sleep",
    "cpython._PySys_ClearAuditHooks", "cpython.PyInterpreterState_Clear",  # shutdown
})
"""Events that never need a decision."""

CODE_EVENTS = frozenset({"compile", "exec", "function.__new__", "code.__new__",
                         "marshal.load", "marshal.loads", "pickle.find_class"})
INTROSPECTION_EVENTS = frozenset({"sys._getframe", "object.__getattr__", "object.__setattr__",
                                  "object.__delattr__", "sys.settrace", "sys.setprofile",
                                  "sys._current_frames", "sys._current_exceptions",
                                  "sys.addaudithook", "gc.get_objects", "gc.get_referrers",
                                  "gc.get_referents"})
"""Events by the kind of refusal message they get (``refusal_message``)."""


class SandboxViolation(SandboxAbort):
    """Internal: a refused audit event: ends the run with :data:`VIOLATION`."""

    def __init__(self, event: str, message: str) -> None:
        super().__init__(VIOLATION, message)
        self.event = event


class _AbortSink:
    """Where refusals are recorded: the abort state of the running interpreter."""

    __slots__ = ("abort",)

    def __init__(self) -> None:
        self.abort: AbortState | None = None


_SINK = _AbortSink()
_installed = False


def installed() -> bool:
    """Whether this process runs under the audit hook."""
    return _installed


def bind(abort: AbortState) -> None:
    """Record refusals in ``abort`` from now on (the interpreter calls this per run).

    A no-op without the hook (the inprocess backend).
    """
    if _installed:
        _SINK.abort = abort


def refusal_message(event: str, detail: str = "",
                    kinds: tuple[frozenset[str], frozenset[str]] = (
                        CODE_EVENTS, INTROSPECTION_EVENTS)) -> str:
    """The message of a run that raised the refused audit event ``event``."""
    code_events, introspection_events = kinds
    what = f"audit event {event!r}" + (f" ({detail})" if detail else "")
    if event in code_events:
        hint = ("scripts cannot compile or run code outside the script itself; "
                "write that code in the script")
    elif event in introspection_events:
        hint = ("scripts cannot reach interpreter frames, code objects or internals; "
                "use the script's own variables")
    elif event == "import":
        hint = "scripts can import only the sandbox's allowed modules"
    else:
        hint = ("scripts cannot use files, processes, the network or native code; "
                "ask for a tool that does it")
    return f"the sandbox refused {what}: {hint}"


def _show_warning(message: Any, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    """Warnings without their source line: reading it would open a file."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line=""))


def make_hook(trust: Trust, sink: _AbortSink) -> Callable[[str, tuple[Any, ...]], None]:
    """The audit hook function for ``trust``, recording refusals in ``sink``.

    Everything the hook uses is bound here, once, as local names of its
    closure: rebinding a module attribute, a builtin or ``types.CodeType``
    later changes nothing it decides, and the trust table is held as tuples in
    closure cells, out of reach of whoever reads a frame's locals. Arguments
    are checked by exact type before use: ``sys.audit`` lets anyone raise any
    event with any objects, and the hook never calls code those objects define.
    """
    import resource

    exact_type, size, text, integer, pair = type, len, str, int, tuple
    code_type, frame_type, syntax_tree = types.CodeType, types.FrameType, ast.AST
    getframe, getrlimit, unlimited = sys._getframe, resource.getrlimit, resource.RLIM_INFINITY
    name_of = type.__dict__["__name__"].__get__  # past any metaclass of the object's class
    bases_of = type.__dict__["__mro__"].__get__
    always, violation, abort_state = ALWAYS_ALLOWED, VIOLATION, AbortState
    record, refused, message_for = AbortState.set, SandboxViolation, refusal_message
    script_filename, compile_files = trust.script_filename, trust.compile_files
    compile_callers, exec_callers, exec_codes = (trust.compile_callers, trust.exec_callers,
                                                 trust.exec_codes)
    script_runners, frame_readers = trust.script_runners, trust.frame_readers
    readers, writers = trust.attribute_readers, trust.attribute_writers
    thread_start, thread_starters = trust.thread_start, trust.thread_starters
    import_probers = trust.import_probers
    own_globals = globals()
    hook_code: Any = None

    # Loops, not any(): a builtin is looked up when called, these names are bound now.
    def one_of(obj: object, codes: tuple[types.CodeType, ...]) -> bool:
        for trusted in codes:  # noqa: SIM110 - identity, never ``==``
            if obj is trusted:
                return True
        return False

    def attribute(args: tuple[Any, ...]) -> str:
        if not args:
            return ""
        kind = name_of(exact_type(args[0]))
        name = args[1] if size(args) > 1 and exact_type(args[1]) is text else "?"
        return f"{kind if exact_type(kind) is text else '?'}.{name}"

    def syntax_tree_only(args: tuple[Any, ...]) -> bool:
        if not args:
            return False
        for base in bases_of(exact_type(args[0])):  # noqa: SIM110
            if base is syntax_tree:
                return True
        return False

    def hard_limit_kept(args: tuple[Any, ...]) -> bool:
        if size(args) != 2 or exact_type(args[0]) is not integer:
            return False
        limits = args[1]
        if exact_type(limits) is not pair or size(limits) != 2:
            return False
        new_hard = limits[1]
        if exact_type(new_hard) is not integer:
            return False
        try:
            hard = getrlimit(args[0])[1]
        except (ValueError, OSError):
            return False
        return hard == unlimited or (new_hard != unlimited and 0 <= new_hard <= hard)

    def decide(event: str, args: tuple[Any, ...], caller: types.FrameType | None) -> str | None:
        """``None`` to allow ``event`` raised by ``caller``, else the reason to refuse it."""
        code = caller.f_code if caller is not None else None
        if event == "exec":
            target: Any = args[0] if args else None  # exact type checked first, not narrowed
            if exact_type(target) is code_type and (
                one_of(target, exec_codes) or one_of(code, exec_callers)
                or (one_of(code, script_runners) and target.co_filename == script_filename)
            ):
                return None
            return message_for(event)
        if event == "compile":
            if one_of(code, compile_callers) or (
                code is not None and code.co_filename in compile_files
                and syntax_tree_only(args)  # the policy compiles checked syntax trees only
            ):
                return None
            filename = args[1] if size(args) > 1 and exact_type(args[1]) is text else ""
            return message_for(event, filename[:100])
        if event == "object.__getattr__":
            return None if one_of(code, readers) else message_for(event, attribute(args))
        if event in ("object.__setattr__", "object.__delattr__"):
            return None if one_of(code, writers) else message_for(event, attribute(args))
        if event == "sys._getframe":
            return None if one_of(code, frame_readers) else message_for(event)
        if event in ("_thread.start_new_thread", "_thread.start_joinable_thread"):
            starter = caller.f_back if caller is not None else None
            if one_of(code, thread_start) and starter is not None and one_of(
                starter.f_code, thread_starters
            ):
                return None
            return message_for(event)
        if event == "resource.setrlimit":
            return None if hard_limit_kept(args) else message_for(event, "raises a hard limit")
        detail = args[0] if args and exact_type(args[0]) is text else ""
        return message_for(event, detail[:200])

    def audit_hook(event: str, args: tuple[Any, ...]) -> None:
        if event in always:
            return
        if event == "object.__getattr__" and size(args) == 2 and exact_type(args[1]) is text and (
            args[1] == "f_code"
        ):
            return  # whoever holds a frame got it through an audited read; the hook reads it too
        if event == "sys._getframe" and args:
            # The hook's own look at its caller (below) raises this event again.
            frame = args[0]
            if exact_type(frame) is frame_type and frame.f_globals is own_globals and (
                frame.f_code is hook_code
            ):
                return
        caller = getframe(0).f_back
        message = decide(event, args, caller)
        if message is None:
            return
        if event == "import" and caller is not None and one_of(caller.f_code, import_probers):
            # A codec lookup tries to import ``encodings.<name>``: "unknown encoding".
            raise ImportError(message)
        abort: Any = sink.abort  # an AbortState or None; checked by exact type
        if exact_type(abort) is abort_state:
            record(abort, violation, message)
        raise refused(event, message)

    hook_code = audit_hook.__code__
    return audit_hook


_PREPARED: dict[tuple[str, ...], Trust] = {}


def prepare_trust(code_runners: Iterable[str] = ()) -> None:
    """Build the trust table ahead of :func:`install_audit_hook` (the fork server does,
    once for all the sandboxes it forks: each is a copy of the same process)."""
    _PREPARED[tuple(code_runners)] = build_trust(code_runners)


def install_audit_hook(code_runners: Iterable[str] = ()) -> None:
    """Preload the reachable modules and install the hook (process backends only).

    Idempotent: once installed, nothing changes it. Call it after the process
    is set up (file descriptors, walls) and before any thread starts or any
    script runs. ``code_runners``: see :func:`build_trust` (tests only).
    """
    global _installed
    if _installed:
        return
    preload()
    trust = _PREPARED.get(tuple(code_runners)) or build_trust(code_runners)
    warnings.showwarning = _show_warning
    hook = make_hook(trust, _SINK)
    sys.addaudithook(hook)
    _installed = True
