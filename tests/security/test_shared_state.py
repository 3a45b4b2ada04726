"""Writes to objects the script shares with the rest of the process.

On the inprocess backend the sandbox lives in the host's interpreter: a
script that changes ``collections.Counter`` or ``decimal.DefaultContext``
changes them for the host. Each attack must be refused, or stay local to the
script's own copies; ``host_intact`` compares the host's state before and
after. The process backends run the same cases (their host is trivially
intact; the sandbox's answers must match).
"""

# ruff: noqa: E501  (tables of attack scripts read best one per line)

from __future__ import annotations

import decimal
from typing import Any

import pytest
from security_helpers import Attack, Probe, runtime, safe

from toolscript import Limits, Runtime, tool

TYPE = runtime("TypeError")
NO_ATTR = runtime("AttributeError")

SHARED_WRITES = [
    Attack("counter_method", "import collections\ncollections.Counter.most_common = len", TYPE),
    Attack("counter_via_typing_alias",
           "import typing\ntyping.Counter.most_common = lambda self, n=None: 'PWNED'", TYPE,
           "found by this suite: typing aliases forward attribute writes to their origin"),
    Attack("mapping_via_typing_alias", "import typing\ntyping.Mapping.get = len", TYPE),
    Attack("subscripted_alias", "import typing\ntyping.Mapping[str, int].get = len", TYPE),
    Attack("json_function_attr", "import json\njson.dumps.x = 1", TYPE),
    Attack("json_class_attr", "import json\njson.JSONEncoder.item_separator = ';'", TYPE),
    Attack("math_constant", "import math\nmath.pi = 3", TYPE),
    Attack("missing_sentinel", "import dataclasses\ndataclasses.MISSING.x = 1", TYPE),
    Attack("enum_member", "import re\nre.I.x = 1", TYPE),
    Attack("special_form_reinit", "import typing\ntyping.Optional.__init__(len)", NO_ATTR,
           "found by this suite: __init__ re-initialised shared typing objects"),
    Attack("special_form_reinit_unbound",
           "import typing\ntype(typing.Optional).__init__(typing.Optional, len)", TYPE),
    Attack("alias_reinit", "import typing\ntyping.List.__init__(dict, 0)", NO_ATTR),
    Attack("abc_register", "import collections.abc\ncollections.abc.Sequence.register(dict)",
           NO_ATTR, "found by this suite: ABC.register changes isinstance process-wide"),
    Attack("abc_register_via_alias", "import typing\ntyping.Sequence.register(dict)", NO_ATTR),
    Attack("abc_register_getattr",
           "import collections.abc\ngetattr(collections.abc.Sequence, 'register')(dict)", NO_ATTR),
    Attack("abc_register_own_ok",
           "import collections.abc\nclass Mine(collections.abc.Sized):\n"
           "    def __len__(self): return 0\nclass Other:\n    pass\nMine.register(Other)\n"
           "isinstance(Other(), Mine)", safe(True)),
    Attack("abc_register_foreign_class",
           "import collections.abc\nclass Mine(collections.abc.Sized):\n"
           "    def __len__(self): return 0\nMine.register(list)\nisinstance([], Mine)",
           runtime("TypeError"), "only classes the script created can be registered"),
    Attack("default_context_attr", "import decimal\ndecimal.DefaultContext.prec = 3\n"
           "decimal.DefaultContext.prec", safe(3), "the facade holds a per-interpreter copy"),
    Attack("default_context_traps",
           "import decimal\ndecimal.DefaultContext.traps[decimal.Inexact] = True\n"
           "decimal.DefaultContext.clear_flags()\ndecimal.BasicContext.prec = 2\n'local'",
           safe("local")),
    Attack("default_context_reinit", "import decimal\ndecimal.DefaultContext.__init__(prec=2)\n"
           "decimal.DefaultContext.prec", safe(2)),
    Attack("thread_context", "import decimal\ndecimal.getcontext().prec = 1\n"
           "str(decimal.Decimal(2) / 3)", safe("0.7")),
    Attack("setcontext", "import decimal\ndecimal.setcontext(decimal.Context(prec=2))\n"
           "str(decimal.Decimal(2) / 3)", safe("0.67")),
    Attack("textwrap_class_dict",
           "import textwrap\ntextwrap.TextWrapper.unicode_whitespace_trans[ord('e')] = ord('3')\n"
           "textwrap.fill('see', 10)", safe("s33"),
           "found by this suite: an unguarded item write on a stdlib class dict"),
    Attack("textwrap_own_instance_ok",
           "import textwrap\nw = textwrap.TextWrapper()\nw.width = 3\nw.wrap('aa bb')",
           safe(["aa", "bb"])),
    Attack("shared_tool_result",
           "r = shared_rows()\nr['rows'].append(666)\nr['owner'] = 'script'\nshared_rows()",
           safe({"rows": [1, 2, 3], "owner": "host"}),
           "a tool result is a fresh copy: mutating it changes nothing the host or a later call sees"),
    Attack("own_function_attr_ok", "def f(): pass\nf.calls = 1\nf.calls", safe(1)),
    Attack("own_exception_attr_ok", "e = ValueError('x')\ne.code = 3\ne.code", safe(3)),
]


@pytest.mark.parametrize("attack", SHARED_WRITES, ids=[a.id for a in SHARED_WRITES])
def test_shared_write(attack: Attack, probe: Probe, host_intact: None) -> None:
    result = probe.run(attack.code)
    attack.expect.check(result, attack.code)


def test_local_copies_do_not_cross_sessions(probe: Probe, host_intact: None) -> None:
    """A facade copy changed in one session is fresh in the next one."""
    first = probe.run("import decimal\ndecimal.DefaultContext.prec = 3\n"
                      "import textwrap\ntextwrap.TextWrapper.unicode_whitespace_trans[32] = 95\n1")
    assert first.ok, first.error
    with probe.runtime.session() as other:
        result = other.run("import decimal, textwrap\n"
                           "[decimal.DefaultContext.prec, textwrap.fill('a b', 10)]")
    assert result.value == [28, "a b"]


@tool
def third() -> str:
    """One third, computed on the host with the host thread's decimal context."""
    return str(decimal.Decimal(1) / 3)


@pytest.mark.parametrize("tool_timeout_s", [None, 5.0], ids=["inline", "worker-thread"])
def test_script_decimal_context_does_not_reach_host_tools(
    make_runtime: Any, tool_timeout_s: float | None, host_intact: None
) -> None:
    """``decimal.getcontext().prec = 3`` in a script must not change how a host
    tool computes (inline tools run in the script's thread on inprocess)."""
    runtime: Runtime = make_runtime([third], limits=Limits(tool_timeout_s=tool_timeout_s))
    result = runtime.run("import decimal\ndecimal.getcontext().prec = 3\n"
                         "[third(), str(decimal.Decimal(1) / 3)]")
    assert result.ok, result.error
    assert result.value == ["0.3333333333333333333333333333", "0.333"]
    assert decimal.getcontext().prec == 28
