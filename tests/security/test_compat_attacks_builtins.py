"""Attacks on the builtins and facade messages added for Monty's test cases, on every backend.

* ``aiter``/``anext`` are the sandbox's own functions: they call the object's
  ``__aiter__``/``__anext__`` exactly as ``async for`` does, and what they hand
  back is what ``async for`` would use (a script object, an async generator's
  own awaitable, or a coroutine of ours when a default is given). No route
  from them or their results reaches frames, code, the loop or the real
  builtins.
* ``getattr`` and ``print`` check their calls with CPython's messages before
  the guard runs: the guard's own signature never shows, and a computed
  special name is still refused.
* A module facade's missing member raises CPython's ``AttributeError``
  (``module 'x' has no attribute 'y'``), and says ``not available in the
  sandbox`` when the real module has the name; the name a script passes is
  only text in a message, the real module is never handed out or imported.
"""

# ruff: noqa: E501  (tables of attack scripts read best one per line)

from __future__ import annotations

from typing import Any

import pytest
from security_helpers import COMPILE, Attack, runtime, safe

from toolscript import Runtime

HIDDEN = runtime("AttributeError", "PermissionError", "TypeError")

_GEN = "async def gen():\n    yield 1\n    yield 2\n"
_CLS = ("class It:\n    def __init__(self):\n        self.n = 0\n"
        "    def __aiter__(self):\n        return self\n"
        "    async def __anext__(self):\n        self.n += 1\n"
        "        if self.n > 2:\n            raise StopAsyncIteration\n        return self.n\n")

AITER = [
    Attack("aiter_async_gen", _GEN + "async def main():\n    it = aiter(gen())\n    return [await anext(it), await anext(it), await anext(it, 'end')]\nawait main()", safe([1, 2, "end"])),
    Attack("aiter_script_class", _CLS + "async def main():\n    it = aiter(It())\n    return [await anext(it), await anext(it), await anext(it, None)]\nawait main()", safe([1, 2, None])),
    Attack("anext_exhausted", _GEN + "async def main():\n    it = gen()\n    await anext(it)\n    await anext(it)\n    await anext(it)\nawait main()", runtime("StopAsyncIteration")),
    Attack("aiter_not_async", "aiter([1, 2])", runtime("TypeError")),
    Attack("anext_not_async", "anext(iter([1]))", runtime("TypeError")),
    Attack("anext_too_many", _GEN + "anext(gen(), 1, 2)", runtime("TypeError")),
    Attack("anext_no_args", "anext()", runtime("TypeError")),
    Attack("aiter_repr", "[repr(aiter), repr(anext), type(aiter).__name__]", safe(["<built-in function aiter>", "<built-in function anext>", "builtin_function_or_method"])),
    Attack("aiter_func_hidden", "aiter._func", HIDDEN),
    Attack("aiter_getattr_func", "getattr(anext, '_func')", HIDDEN),
    Attack("aiter_self", "aiter.__self__", COMPILE),
    Attack("aiter_closure", "anext.__closure__", COMPILE),
    Attack("anext_default_frame", _GEN + "c = anext(gen(), 0)\nc.cr_frame", COMPILE),
    Attack("anext_default_getattr_frame", _GEN + "c = anext(gen(), 0)\ngetattr(c, 'cr_frame')", HIDDEN),
    Attack("anext_default_code", _GEN + "c = anext(gen(), 0)\ngetattr(c, 'cr_code')", HIDDEN),
    Attack("anext_default_await", _GEN + "c = anext(gen(), 0)\ngetattr(c, 'cr_await')", HIDDEN),
    Attack("anext_default_vars", _GEN + "c = anext(gen(), 0)\nvars(c)", runtime("TypeError")),
    Attack("anext_default_closed", _GEN + "c = anext(gen(), 0)\nc.close()\n'closed'", safe("closed")),
    Attack("anext_awaitable_frame", _GEN + "a = anext(gen())\ngetattr(a, 'gi_frame', None) is None and getattr(a, 'ag_frame', None) is None", HIDDEN),
    Attack("aiter_class_dunder_returns_host_thing", "class X:\n    def __aiter__(self):\n        return print\naiter(X())", runtime("TypeError")),
    Attack("aiter_rebound", "aiter = 1\naiter", safe(1)),
    Attack("anext_default_type", _GEN + "type(anext(gen(), 0)).__name__", safe("coroutine")),
]

GETATTR_PRINT = [
    Attack("getattr_no_args", "try:\n    getattr()\nexcept TypeError as e:\n    r = str(e)\nr", safe("getattr expected at least 2 arguments, got 0")),
    Attack("getattr_keywords", "try:\n    getattr(obj=1, name='real')\nexcept TypeError as e:\n    r = str(e)\nr", safe("getattr() takes no keyword arguments")),
    Attack("getattr_four", "try:\n    getattr(1, 'real', 0, 0)\nexcept TypeError as e:\n    r = str(e)\nr", safe("getattr expected at most 3 arguments, got 4")),
    Attack("getattr_name_type", "try:\n    getattr(1, 2)\nexcept TypeError as e:\n    r = str(e)\nr", safe("attribute name must be string, not 'int'")),
    Attack("getattr_dunder_still_hidden", "getattr(getattr, '__globals__')", HIDDEN),
    Attack("getattr_str_subclass_name", "class S(str):\n    pass\ngetattr(1, S('real'))", runtime("TypeError"), "the guard takes exact str names only"),
    Attack("getattr_str_subclass_hidden", "class S(str):\n    pass\ngetattr(print, S('__globals__'))", HIDDEN),
    Attack("print_bad_keyword", "try:\n    print(1, foo=2)\nexcept TypeError as e:\n    r = str(e)\nr", safe("'foo' is an invalid keyword argument for print()")),
    Attack("print_file_refused", "print(1, file=None)\nprint(2, file=1)", runtime("TypeError")),
    Attack("print_inner_hidden", "print._func", HIDDEN),
]

FACADE_MESSAGES = [
    Attack("missing_member", "import json\ntry:\n    json.nope\nexcept AttributeError as e:\n    r = str(e)\nr", safe("module 'json' has no attribute 'nope'")),
    Attack("real_member_refused", "import pathlib\ntry:\n    pathlib.Path\nexcept AttributeError as e:\n    r = str(e)\nr", safe("module 'pathlib' has no attribute 'Path': it is not available in the sandbox")),
    Attack("hasattr_false", "import sys\n[hasattr(sys, 'modules'), hasattr(sys, 'version_info')]", safe([False, True])),
    Attack("getattr_default", "import sys\ngetattr(sys, 'modules', 'none')", safe("none")),
    Attack("dunder_member_hidden", "import json\ngetattr(json, '__loader__')", HIDDEN),
    Attack("facade_getattr_hidden", "import json\njson.__getattr__", COMPILE),
    Attack("facade_getattr_computed", "import json\ngetattr(json, '__getattr__')", HIDDEN),
    Attack("non_str_name", "import json\ngetattr(json, 5)", runtime("TypeError")),
    Attack("huge_name", "import json\ntry:\n    getattr(json, 'x' * 100000)\nexcept AttributeError as e:\n    r = len(str(e)) > 100000\nr", safe(True)),
    Attack("not_imported_module_name", "import textwrap\ntry:\n    textwrap.shorten2\nexcept AttributeError as e:\n    r = 'not available' in str(e)\nr", safe(False)),
]

TABLES = {"aiter": AITER, "getattr_print": GETATTR_PRINT, "facade": FACADE_MESSAGES}


@pytest.fixture
def rt(module_runtime: Any) -> Runtime:
    """The module's runtime on the current backend (each ``rt.run`` is a fresh session)."""
    runtime_: Runtime = module_runtime([])
    return runtime_


@pytest.mark.parametrize("attack", [pytest.param(attack, id=f"{table}-{attack.id}")
                                    for table, rows in TABLES.items() for attack in rows])
def test_attack_tables(attack: Attack, rt: Runtime) -> None:
    attack.expect.check(rt.run(attack.code), attack.code)


def test_async_for_and_aiter_agree(rt: Runtime) -> None:
    code = (_CLS + _GEN
            + "async def main():\n"
              "    a = [x async for x in It()] + [x async for x in gen()]\n"
              "    it, it2 = aiter(It()), aiter(gen())\n"
              "    b = [await anext(it), await anext(it), await anext(it, 'e'),\n"
              "         await anext(it2), await anext(it2), await anext(it2, 'e')]\n"
              "    return [a, b]\n"
              "await main()")
    result = rt.run(code)
    assert result.ok, result.error
    assert result.value == [[1, 2, 1, 2], [1, 2, "e", 1, 2, "e"]]
