"""Attacks on the compatibility constructs of issue 25, on every backend.

* Imports of modules without a facade raise ``ModuleNotFoundError`` at the
  statement, at run time: a refused import must still never load the module.
* Every builtin exception class is a script name; ``KeyboardInterrupt`` and
  ``SystemExit`` are the script's own classes, so raising them ends the script
  as an error (never a host Ctrl-C, a host exit or a sandbox exit) and no route
  from them leads to the real classes.
* Exact error classes: writes to builtin values raise ``AttributeError``; a
  tool's exception shows as the builtin (``ValueError('order not found')``)
  and is still a ``ToolError``.
* The ``sys`` and ``pathlib`` facades: no route to the real ``sys``, ``os``,
  ``open`` or a concrete ``Path``.
"""

# ruff: noqa: E501  (tables of attack scripts read best one per line)

from __future__ import annotations

import builtins
import sys
from typing import Any

import pytest
from security_helpers import COMPILE, Attack, runtime, safe

from toolscript import Runtime, tool

NO_ATTR = runtime("AttributeError")
NOT_FOUND = runtime("ModuleNotFoundError")


@tool(read_only=True)
def get_order(order_id: str) -> dict[str, Any]:
    """An order by id; ValueError for an unknown one."""
    if order_id != "A1":
        raise ValueError("order not found")
    return {"id": order_id}


@pytest.fixture
def rt(module_runtime: Any) -> Runtime:
    """The module's runtime on the current backend (each ``rt.run`` is a fresh session)."""
    runtime_: Runtime = module_runtime([get_order])
    return runtime_


def _value(rt: Runtime, code: str) -> Any:
    result = rt.run(code)
    assert result.ok, result.error
    return result.value


# --- imports at run time ---------------------------------------------------------------

IMPORTS = [
    Attack("import_os", "import os", NOT_FOUND),
    Attack("import_os_path", "import os.path", NOT_FOUND),
    Attack("from_os", "from os import system", NOT_FOUND),
    Attack("from_os_path", "from os.path import join", NOT_FOUND),
    Attack("import_builtins", "import builtins", NOT_FOUND),
    Attack("import_importlib", "import importlib", NOT_FOUND),
    Attack("import_internal", "import _strptime", NOT_FOUND,
           "the stdlib's C code imports it through __import__; a statement never does"),
    Attack("import_internal_from", "from _strptime import _strptime_time", NOT_FOUND),
    Attack("import_in_function", "def f():\n    import subprocess\n    return subprocess\nf()", NOT_FOUND),
    Attack("relative", "from . import x", runtime("ImportError")),
    Attack("relative_parent", "from ..pkg import y", runtime("ImportError")),
    Attack("refusal_helper_rebound", "_import_refused_ = print\nimport os", COMPILE),
    Attack("refusal_helper_read", "f = _import_refused_", COMPILE),
    Attack("star_import", "from os import *", COMPILE),
    Attack("caught_then_retried", "try:\n    import os\nexcept ImportError:\n    pass\nimport os", NOT_FOUND),
    Attack("caught_and_used", "try:\n    import os\nexcept ImportError:\n    os = None\nos is None", safe(True)),
    Attack("dunder_import", "__import__('os')", COMPILE),
    Attack("import_sys_real_modules", "import sys\nsys.modules", NO_ATTR),
    Attack("future_directive", "from __future__ import annotations\ndef f(x: Undefined) -> Nope:\n    return x\nf(1)", safe(1)),
    Attack("future_module", "import __future__", COMPILE),
    Attack("future_feature_data", "from __future__ import annotations as a\n[type(a.compiler_flag).__name__, hasattr(a, 'optional')]", safe(["int", True])),
]


def test_a_refused_import_is_catchable_and_names_the_substitute(rt: Runtime) -> None:
    value = _value(rt, (
        "out = []\n"
        "try:\n    import numpy as np\nexcept ImportError as e:\n"
        "    np = None\n    out += [type(e).__name__, e.name, 'math and statistics' in str(e)]\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pandas import DataFrame\n"
        "try:\n    from .helpers import load\nexcept ImportError as e:\n    out.append(type(e).__name__)\n"
        "out\n"))
    assert value == ["ModuleNotFoundError", "numpy", True, "ImportError"]
    uncaught = rt.run("import json\nx = 1\nimport pandas")
    assert uncaught.error.type == "script_error"
    assert uncaught.error.details["exception"] == "ModuleNotFoundError"
    assert uncaught.error.line == 3 and "pandas" in uncaught.error.message
    # the allowed part of a mixed statement runs first, as in CPython
    assert _value(rt, "try:\n    import json, os\nexcept ImportError:\n    r = json.dumps(1)\nr") == "1"


def test_an_unknown_future_feature_is_a_syntax_error(rt: Runtime) -> None:
    for code in ("from __future__ import braces", "from __future__ import nothing_here",
                 "x = 1\nfrom __future__ import annotations"):
        assert rt.run(code).error.type == "syntax_error", code


def test_a_refused_import_never_loads_the_module(rt: Runtime, backend_name: str) -> None:
    # ``this`` prints the Zen of Python when it is loaded: it never is
    result = rt.run("try:\n    import this\nexcept ImportError:\n    pass\n"
                    "try:\n    from antigravity import geohash\nexcept ImportError:\n    pass\n'ok'")
    assert result.value == "ok" and result.stdout == ""
    if backend_name == "inprocess":
        assert "this" not in sys.modules and "antigravity" not in sys.modules


# --- builtin exceptions and the host's signals -----------------------------------------

SIGNALS = [
    Attack("raise_system_exit", "raise SystemExit(0)", runtime("SystemExit")),
    Attack("raise_system_exit_class", "raise SystemExit", runtime("SystemExit")),
    Attack("raise_keyboard_interrupt", "raise KeyboardInterrupt()", runtime("KeyboardInterrupt")),
    Attack("raise_generator_exit", "raise GeneratorExit", runtime("GeneratorExit")),
    Attack("raise_from_finally", "try:\n    pass\nfinally:\n    raise SystemExit(2)", runtime("SystemExit")),
    Attack("raise_in_generator", "def g():\n    yield 1\n    raise KeyboardInterrupt\nlist(g())", runtime("KeyboardInterrupt")),
    Attack("subclass", "class Quit(SystemExit):\n    pass\nraise Quit(1)", runtime("Quit")),
    Attack("mro_bases", "for c in SystemExit.mro() + KeyboardInterrupt.mro():\n    if c is not object and c is not BaseException:\n        raise c()", runtime("SystemExit", "KeyboardInterrupt")),
    Attack("type_mro", "raise type.mro(KeyboardInterrupt)[1]('x')", runtime("BaseException")),
    Attack("from_str", "raise SystemExit('bye')", runtime("SystemExit")),
    Attack("exit_in_str", "class E(Exception):\n    def __str__(self):\n        raise SystemExit(1)\nraise E()", runtime("E")),
    Attack("interrupt_in_repr", "class E(Exception):\n    def __str__(self):\n        raise KeyboardInterrupt\nraise E()", runtime("E")),
    Attack("exit_in_generator_close", "def g():\n    try:\n        yield 1\n    finally:\n        raise SystemExit(1)\nit = g()\nnext(it)\nit.close()", runtime("SystemExit")),
    Attack("group", "raise BaseExceptionGroup('g', [SystemExit(1), KeyboardInterrupt()])", runtime("BaseExceptionGroup")),
    Attack("except_exception", "try:\n    raise KeyboardInterrupt\nexcept Exception:\n    r = 'caught'\nr", runtime("KeyboardInterrupt")),
    Attack("except_own_name", "try:\n    raise SystemExit(3)\nexcept SystemExit as e:\n    r = [e.code, repr(e), type(e).__name__]\nr", safe([3, "SystemExit(3)", "SystemExit"])),
]


@pytest.mark.parametrize("attack", SIGNALS, ids=[a.id for a in SIGNALS])
def test_script_signals_are_script_errors(attack: Attack, rt: Runtime) -> None:
    with rt.session() as session:
        result = session.run(attack.code)
        attack.expect.check(result, attack.code)
        assert result.session_restarted is False
        assert session.run("'alive'").value == "alive"


def test_every_builtin_exception_class_is_a_script_name(rt: Runtime) -> None:
    names = sorted(n for n in dir(builtins) if not n.startswith("_")
                   and isinstance(getattr(builtins, n), type)
                   and issubclass(getattr(builtins, n), BaseException))
    classes = ", ".join(names)
    value = _value(rt, f"names = {names!r}\nclasses = [{classes}]\n"
                       "[[n, c.__name__ == n or n in ('EnvironmentError', 'IOError'),\n"
                       "  issubclass(c, Exception)] for n, c in zip(names, classes)]")
    assert value == [[n, True, issubclass(getattr(builtins, n), Exception)] for n in names]


def test_uncaught_signals_leave_the_session_working(make_runtime: Any) -> None:
    rt = make_runtime()
    with rt.session() as session:
        session.run("x = 41")
        for code in ("raise SystemExit(0)", "raise KeyboardInterrupt()", "raise SystemExit",
                     "import sys\nraise SystemExit(sys.maxsize)"):
            result = session.run(code)
            assert result.error.type == "script_error", result.error
            assert result.session_restarted is False
            assert "Traceback" not in result.error.message
        assert session.run("x + 1").value == 42


# --- exact error classes ---------------------------------------------------------------

WRITES = [
    Attack(f"set_on_{name}", f"x = {literal}\nx.foo = 1", NO_ATTR)
    for name, literal in [("int", "5"), ("list", "[]"), ("str", "'s'"), ("dict", "{}"), ("tuple", "()"),
                          ("none", "None"), ("float", "1.5"), ("object", "object()"), ("bool", "True"),
                          ("bytes", "b''"), ("set", "set()"), ("range", "range(3)")]
] + [
    Attack("setattr_int", "setattr(5, 'foo', 1)", NO_ATTR),
    Attack("setattr_private_int", "setattr(5, '_foo', 1)", NO_ATTR),
    Attack("list_method", "[].append = print", NO_ATTR),
    Attack("int_real", "(5).real = 3", NO_ATTR),
    Attack("delattr_int", "delattr(5, 'real')", runtime("AttributeError", "TypeError")),
    Attack("class_of_int", "x = 5\nx.__class__ = bool", COMPILE),
    Attack("class_int", "int.foo = 1", runtime("TypeError")),
    Attack("module_write", "import math\nmath.pi = 3", runtime("TypeError")),
    Attack("print_repr", "repr(print)", safe("<built-in function print>")),
    Attack("len_repr", "repr(len)", safe("<built-in function len>")),
]


def test_a_tool_exception_looks_like_the_builtin(rt: Runtime) -> None:
    value = _value(rt, (
        "try:\n    get_order('Z9')\nexcept Exception as e:\n"
        "    r = [repr(e), type(e).__name__, str(e), e.tool, e.type, e.message,\n"
        "         isinstance(e, ValueError), isinstance(e, ToolError), repr(type(e)), e.args]\n"
        "try:\n    get_order('Z9')\nexcept ToolError as e:\n    r.append(e.tool)\n"
        "try:\n    get_order('Z9')\nexcept ValueError as e:\n    r.append(str(e))\n"
        "r"))
    assert value == ["ValueError('order not found')", "ValueError", "order not found", "get_order",
                     "tool_exception", "get_order: ValueError: order not found", True, True,
                     "<class 'toolerror.ValueError'>", ["order not found"], "get_order",
                     "order not found"]
    uncaught = rt.run("get_order('Z9')")
    assert uncaught.error.type == "tool_error"
    assert uncaught.error.message == "ToolError: get_order: ValueError: order not found"


@tool(read_only=True)
def get_customer(customer_id: str) -> dict[str, Any]:
    """A customer by id; KeyError for an unknown one."""
    raise KeyError(f"customer {customer_id} was deleted")


def test_a_tool_key_error_has_cpythons_repr(make_runtime: Any) -> None:
    rt = make_runtime([get_customer])
    code = "try:\n    get_customer('C1')\nexcept KeyError as e:\n    r = [repr(e), str(e), e.args]\nr"
    exc = KeyError("customer C1 was deleted")  # what CPython shows for the direct call
    assert _value(rt, code) == [repr(exc), str(exc), list(exc.args)]


TOOL_CLASSES = [
    Attack("tool_class_mro", "try:\n    get_order('Z9')\nexcept Exception as e:\n    r = [c.__name__ for c in type(e).mro()]\nr",
           safe(["ValueError", "_ToolRaised", "ToolError", "ValueError", "Exception", "BaseException", "object"])),
    Attack("tool_class_new", "try:\n    get_order('Z9')\nexcept Exception as e:\n    k = type(e)\nx = k('forged', tool='get_order')\n[repr(x), x.tool]",
           safe(["ValueError('forged')", "get_order"]), "a script can make one: it holds only its own strings"),
    Attack("tool_class_details", "try:\n    get_order('Z9')\nexcept Exception as e:\n    r = sorted(e.details)\nr",
           safe(["builtin_exception", "exception", "exception_message"])),
]


# --- the sys facade --------------------------------------------------------------------

SYS = [
    Attack(f"sys_{name}", f"import sys\nsys.{name}", NO_ATTR)
    for name in ("modules", "stdout", "stderr", "stdin", "exit", "settrace", "setrecursionlimit",
                 "path", "meta_path", "executable", "exc_info", "excepthook", "flags",
                 "addaudithook", "breakpointhook", "displayhook", "getrefcount", "intern",
                 "implementation", "orig_argv", "prefix")
] + [
    Attack("sys_getframe", "import sys\nsys._getframe()", NO_ATTR),
    Attack("sys_getframe_getattr", "import sys\ngetattr(sys, '_getframe')", NO_ATTR),
    Attack("sys_self_of_function", "import sys\ngetattr(sys.getrecursionlimit, '__self__')", NO_ATTR),
    Attack("sys_self_dunder", "import sys\nsys.getrecursionlimit.__self__", COMPILE),
    Attack("sys_write", "import sys\nsys.platform = 'win32'", runtime("TypeError")),
    Attack("sys_version_info_new", "import sys\ntype(sys.version_info)((1, 2, 3, 4, 5))", runtime("TypeError")),
    Attack("sys_float_info_class", "import sys\ntype(sys.float_info).mro()[-1].__subclasses__()", COMPILE),
    Attack("sys_vars", "import sys\nvars(sys)", runtime("TypeError")),
    Attack("sys_argv_private", "import sys\nsys.argv.append('x')\nimport sys as s2\ns2.argv", safe(["x"])),
    Attack("sys_values", "import sys\n[sys.version_info >= (3, 8), type(sys.maxsize).__name__, sys.byteorder in ('little', 'big'), sys.argv, sys.getrecursionlimit() > 100, sys.float_info.max > 1e300, sys.int_info.bits_per_digit > 0, type(sys.version).__name__]",
           safe([True, "int", True, [], True, True, True, "str"])),
]


def test_sys_argv_is_per_interpreter(make_runtime: Any) -> None:
    rt = make_runtime()
    with rt.session() as session:
        session.run("import sys\nsys.argv.append('x')")
        session.reset()
        assert session.run("import sys\nsys.argv").value == []


# --- the pathlib facade ----------------------------------------------------------------

P = "from pathlib import PurePath, PurePosixPath\np = PurePosixPath('/data/q1.csv')\n"

PATHS = [
    Attack("path_class", "from pathlib import Path", runtime("ImportError")),
    Attack("posix_path_class", "from pathlib import PosixPath", runtime("ImportError")),
    Attack("module_path", "import pathlib\npathlib.Path", NO_ATTR),
    Attack("module_os", "import pathlib\npathlib.os", NO_ATTR),
    Attack("module_private", "import pathlib\npathlib._Real", NO_ATTR),
    Attack("text_slot", P + "p._text", NO_ATTR),
    Attack("text_slot_getattr", P + "getattr(p, '_text')", NO_ATTR),
    Attack("text_descriptor", P + "PurePath._text", NO_ATTR),
    Attack("flavour", P + "p._flavour", NO_ATTR),
    Attack("parser", P + "p.parser", NO_ATTR),
    Attack("fspath", P + "p.__fspath__()", COMPILE),
    Attack("fspath_getattr", P + "getattr(p, '__fspath__')", NO_ATTR),
    Attack("open", P + "open(p)", runtime("NameError")),
    Attack("concrete_methods", P + "[hasattr(p, n) for n in ('open', 'read_text', 'exists', 'iterdir', 'stat', 'cwd', 'home', 'resolve', 'glob', 'unlink', 'write_text', 'touch', 'mkdir', 'owner')]", safe([False] * 14)),
    Attack("mro", P + "[c.__name__ for c in type(p).mro()]", safe(["PurePosixPath", "PurePath", "object"])),
    Attack("type_repr", P + "[repr(type(p)), repr(type(PurePath('x'))), repr(type(p / 'x')), repr(type(p.parent)), repr(type(p.with_segments('y')))]",
           safe(["<class 'pathlib.PurePosixPath'>"] * 5)),
    Attack("parents_types", P + "sorted({repr(type(q)) for q in p.parents})", safe(["<class 'pathlib.PurePosixPath'>"])),
    Attack("class_write", P + "PurePosixPath.open = print", runtime("TypeError")),
    Attack("instance_write", P + "p.x = 1", runtime("TypeError", "AttributeError")),
    Attack("subclass_private_helpers", P + "class Q(PurePosixPath):\n    pass\nq = Q('a')\n[hasattr(q, '_real'), type(q._text).__name__]", safe([False, "str"])),
    Attack("subclass_forged_text", P + "class Q(PurePosixPath):\n    pass\nq = Q('a')\nq._text = ['x']\nq / 'b'", runtime("TypeError")),
    Attack("subclass_uninitialised", "from pathlib import PurePosixPath\nclass Q(PurePosixPath):\n    def __new__(cls):\n        return object.__new__(cls)\nstr(Q())", COMPILE),
    Attack("str_subclass_segment", "from pathlib import PurePath\nclass S(str):\n    def __str__(self):\n        return '/etc/passwd'\nstr(PurePath(S('a')))", safe("a")),
    Attack("bad_segment", P + "p / 5", runtime("TypeError")),
    Attack("bad_segment_new", "from pathlib import PurePath\nPurePath(b'/etc')", runtime("TypeError")),
    Attack("relative_error", P + "p.relative_to('/other')", runtime("ValueError")),
    Attack("uri", P + "p.as_uri()", safe("file:///data/q1.csv")),
    Attack("super_proxy", P + "str(super(PurePosixPath, p).with_suffix('.txt'))", safe("/data/q1.txt")),
]


TABLES = {"import": IMPORTS, "write": WRITES, "tool_class": TOOL_CLASSES, "sys": SYS,
          "pathlib": PATHS}
"""The attack tables whose every row is one run and its expected outcome: refused imports,
writes to builtin values, tool error classes, the sys and pathlib facades."""


@pytest.mark.parametrize("attack", [pytest.param(attack, id=f"{table}-{attack.id}")
                                    for table, rows in TABLES.items() for attack in rows])
def test_attack_tables(attack: Attack, rt: Runtime) -> None:
    attack.expect.check(rt.run(attack.code), attack.code)
