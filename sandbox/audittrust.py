"""What the process sandboxes' audit hook allows, decided before it is installed.

:mod:`.audithook` refuses every audit event it does not know; the events a
running sandbox does raise are allowed by *who* raises them: the functions in
:data:`TRUSTED`, resolved here to their code objects (compared by identity) -
the standard library's code generators and introspection the facades use, and
the sandbox's own compile-and-run path, traceback walk and threads. Imports
are refused once the hook is installed, so :func:`preload` imports first
everything a script can make the sandbox import.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

PRELOADED_ENCODINGS: tuple[str, ...] = (
    "ascii", "base64_codec", "charmap", "cp437", "cp850", "cp1250", "cp1251", "cp1252",
    "hex_codec", "idna", "iso8859_1", "iso8859_2", "iso8859_15", "latin_1", "mac_roman",
    "punycode", "raw_unicode_escape", "unicode_escape", "utf_7", "utf_8_sig", "utf_16",
    "utf_16_be", "utf_16_le", "utf_32", "utf_32_be", "utf_32_le",
)
"""Codecs imported before the hook: a codec lookup imports its module lazily,
and imports are refused afterwards (other encodings are "unknown")."""

LAZY_STDLIB_IMPORTS: tuple[str, ...] = ("_sha2", "copy", "heapq", "linecache", "resource",
                                         "unicodedata")
"""Modules imported inside functions: by facade members (``Counter.most_common``,
``re``'s ``\\N{...}``, ``UserDict.copy``, ``random.seed`` on 3.13) and by the
server (rlimits)."""

Codes = tuple[types.CodeType, ...]


@dataclass(frozen=True)
class Trust:
    """Who may raise each conditionally allowed event: code objects of the calling
    functions, compared by identity (equal code compiled elsewhere is not trusted)."""

    script_filename: str
    compile_callers: Codes
    compile_files: frozenset[str]
    exec_callers: Codes
    exec_codes: Codes
    script_runners: Codes
    frame_readers: Codes
    attribute_readers: Codes
    attribute_writers: Codes
    thread_starters: Codes
    thread_start: Codes
    import_probers: Codes


def _walk_codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if type(const) is types.CodeType:
            yield from _walk_codes(const)


def _module_codes(module: types.ModuleType) -> Iterator[types.CodeType]:
    """Every code object of the functions and methods defined in ``module``."""
    seen: set[type] = set()

    def functions(namespace: Iterable[Any]) -> Iterator[types.FunctionType]:
        for value in namespace:
            if isinstance(value, (classmethod, staticmethod)):
                value = value.__func__
            if isinstance(value, property):
                yield from functions((value.fget, value.fset, value.fdel))
            elif type(value) is types.FunctionType:
                yield value
            elif isinstance(value, type) and value.__module__ == module.__name__ and (
                value not in seen
            ):
                seen.add(value)
                yield from functions(vars(value).values())

    for function in functions(vars(module).values()):
        if function.__module__ == module.__name__:
            yield from _walk_codes(function.__code__)


TRUSTED: dict[str, tuple[str, ...]] = {
    "compile_callers": ("ast:parse", "collections:namedtuple", "dataclasses:_create_fn",
                        "dataclasses:_FuncBuilder.add_fns_to_class",
                        "typing:ForwardRef.__init__"),
    "exec_callers": ("collections:namedtuple", "dataclasses:_create_fn",
                     "dataclasses:_FuncBuilder.add_fns_to_class"),
    "script_runners": ("toolscript.sandbox.interpreter:Interpreter._execute",),
    "frame_readers": ("collections:namedtuple", "typing:_caller", "enum:EnumType._create_",
                      "dataclasses:make_dataclass"),
    "attribute_readers": ("toolscript.sandbox.interpreter:_script_line", "typing:overload",
                          "inspect:_signature_from_function",
                          "inspect:_signature_is_functionlike"),
    "attribute_writers": ("collections:namedtuple", "dataclasses:_process_class",
                          "dataclasses:_add_slots", "typing:NamedTupleMeta.__new__",
                          "abc:update_abstractmethods", "functools:update_wrapper",
                          "enum:EnumType.__new__"),
    "thread_starters": ("toolscript.sandbox.watchdog:Watchdog._ensure_thread",
                        "toolscript.sandbox.launcher:_exit_when_orphaned"),
    "thread_start": ("threading:Thread.start",),
    "import_probers": ("encodings:search_function",),
}
"""The functions (``"module:qualified.name"``) trusted with each kind of event:
the standard library's code generators and introspection that the facades
use (names missing from this Python version are skipped), and the sandbox's
own compile-and-run path, traceback walk and threads."""


def resolve_codes(names: Iterable[str]) -> Codes:
    """The code objects of the functions named ``"module:qualified.name"`` (missing
    ones are skipped: the standard library differs between Python versions)."""
    wanted: dict[str, set[str]] = {}
    for name in names:
        module_name, _, qualname = name.partition(":")
        wanted.setdefault(module_name, set()).add(qualname)
    found: list[types.CodeType] = []
    for module_name, qualnames in wanted.items():
        module = sys.modules.get(module_name) or importlib.import_module(module_name)
        found.extend(code for code in _module_codes(module) if code.co_qualname in qualnames)
    return tuple(found)


def build_trust(code_runners: Iterable[str] = ()) -> Trust:
    """The trust table of this process (resolved before the hook is installed).

    ``code_runners`` (tests only) name further functions that may compile and
    run code of their own.
    """
    from . import modules, policy

    runners = tuple(code_runners)
    codes = {role: resolve_codes(names) for role, names in TRUSTED.items()}
    return Trust(
        script_filename=policy.SCRIPT_FILENAME,
        compile_callers=codes["compile_callers"] + resolve_codes(runners),
        compile_files=frozenset({policy.compile_script.__code__.co_filename}),
        exec_callers=codes["exec_callers"] + resolve_codes(runners),
        exec_codes=tuple(modules.private_copy_codes()),
        script_runners=codes["script_runners"],
        frame_readers=codes["frame_readers"],
        attribute_readers=codes["attribute_readers"],
        attribute_writers=codes["attribute_writers"],
        thread_starters=codes["thread_starters"],
        thread_start=codes["thread_start"],
        import_probers=codes["import_probers"],
    )


def preload() -> None:
    """Import everything a script can make the sandbox import, while imports work.

    Idempotent, and a no-op once done in this process or the fork server it
    came from; call it before the OS walls go up (they may take away reading
    the Python installation); :func:`.audithook.install_audit_hook` calls it again.
    """
    global _preloaded
    if _preloaded:
        return
    from . import modules, zonedata

    names = [*modules.DEFAULT_MODULES, *modules.OPTIONAL_MODULES,
             *sorted(modules.INTERNAL_IMPORTS), *LAZY_STDLIB_IMPORTS,
             *(f"encodings.{name}" for name in PRELOADED_ENCODINGS)]
    for name in names:
        if name in modules.WRITTEN_IN_SANDBOX:
            continue
        try:
            importlib.import_module(name)
        except (ImportError, OSError):  # pragma: no cover - missing from this build
            continue
    modules.private_copy_codes()
    zonedata.preload()  # the zoneinfo facade reads no file once the hook stands
    _preloaded = True


_preloaded = False
