"""Four more escape classes (issue 23), written as an attacker would, on every backend.

1. ``mro()`` (and ``type.mro``, ``super()``, metaclasses) handed out the real
   class behind every subclass-style facade: the real ``enum`` bases (also in
   the MRO of ``re.RegexFlag`` and ``uuid.SafeUUID``), ``functools.cached_property``
   and ``zoneinfo.ZoneInfo``, whose unchecked machinery then wrote any name.
2. Checked values were used after script code could change them: a class
   pattern's ``__match_args__``, ``cached_property.attrname`` read again after
   the getter ran, the functional ``Enum`` API reading its names twice.
3. Script code ran outside its run: a finalizer-bearing base (``io.StringIO``'s
   ``close()``), generator finalizers, code reached when the host handles a result.
4. A live traceback in ``__exit__``, the real stub class behind ``type(tool)``,
   host addresses and internal names in ``repr(print)``, the real ``ZoneInfo``'s
   process-wide cache controls.

Each family holds the issue's reproduction and variants; ``LEGITIMATE`` holds
what models write and must keep working. The host-side tests at the end run in
process, where a finalizer would run in the host's own thread.
"""

# ruff: noqa: E501  (tables of attack scripts read best one per line)

from __future__ import annotations

import decimal
import gc
import threading
import zoneinfo
from typing import Any

import pytest
from security_helpers import COMPILE, SECURITY_TOOLS, Attack, Probe, limit, runtime, safe

from toolscript import Limits, Runtime

TYPE = runtime("TypeError")
NO_ATTR = runtime("AttributeError")
REFUSED = runtime("TypeError", "AttributeError")

REPRO_MRO_FLAG = """\
import re, copy
RealFlag = re.RegexFlag.mro()[4]
F = RealFlag('F', {'__copy__': None, '__reduce_ex__': lambda self, proto: (str, ('PLANTED',)), 'A': 1})
copy.copy(F.A)
"""

PLANT = "{'__copy__': None, '__reduce_ex__': lambda self, proto: (str, ('PLANTED',)), 'A': 1}"
"""The functional API's names that would make ``copy.copy`` run a script function."""

REAL_CLASSES = [
    Attack("repro_regexflag_mro_real_flag", REPRO_MRO_FLAG, TYPE,
           "mro()[4] is the facade Flag now, whose functional API checks names"),
    Attack("enum_mro_is_facades",
           "import enum\n[repr(c) for c in enum.Enum.mro()] + [repr(c) for c in enum.IntFlag.mro()]",
           safe(["<enum 'Enum'>", "<class 'object'>", "<flag 'IntFlag'>", "<class 'int'>",
                 "<enum 'ReprEnum'>", "<flag 'Flag'>", "<enum 'Enum'>", "<class 'object'>"])),
    *[Attack(f"mro_functional_api_{base.lower()}",
             f"import enum, copy\nReal = enum.{base}.mro()[1]\nF = Real('F', {PLANT})\ncopy.copy(F.A)", REFUSED)
      for base in ("Enum", "Flag", "IntFlag", "IntEnum", "StrEnum")],
    Attack("mro_of_uuid_safeuuid",
           f"import uuid, copy\nReal = uuid.SafeUUID.mro()[1]\nF = Real('F', {PLANT})\ncopy.copy(F.A)", TYPE),
    Attack("mro_of_own_enum",
           f"import enum, copy\nclass E(enum.Enum):\n    X = 1\nReal = E.mro()[2] if len(E.mro()) > 3 else E.mro()[1]\n"
           f"F = Real('F', {PLANT})\ncopy.copy(F.A)", TYPE),
    Attack("mro_repr_enum_stand_in",
           "import enum\nenum.IntEnum.mro()[2]('F', {'__copy__': None, 'A': 1})", TYPE,
           "ReprEnum has no facade: its place in the MRO is an inert stand-in"),
    Attack("mro_repr_enum_stand_in_subclass",
           "import enum\nclass X(enum.IntEnum.mro()[2]):\n    pass\n'made'", TYPE),
    Attack("type_mro_of_facade",
           f"import enum, copy\nReal = type.mro(enum.Flag)[1]\nF = Real('F', {PLANT})\ncopy.copy(F.A)", TYPE),
    Attack("getattr_mro",
           f"import enum, copy\nReal = getattr(enum.Flag, 'mro')()[1]\nF = Real('F', {PLANT})\ncopy.copy(F.A)", TYPE),
    Attack("methodcaller_mro",
           f"import enum, copy, operator\nReal = operator.methodcaller('mro')(enum.Flag)[1]\nF = Real('F', {PLANT})\ncopy.copy(F.A)", TYPE),
    Attack("attrgetter_mro",
           f"import enum, copy, operator\nReal = operator.attrgetter('mro')(enum.Flag)()[1]\nF = Real('F', {PLANT})\ncopy.copy(F.A)", TYPE),
    Attack("mro_by_keyword_pattern", "import enum\nmatch enum.Flag:\n    case type(mro=m):\n        pass\n'x'", COMPILE,
           "a pattern would read the attribute raw"),
    Attack("mro_by_format_field", "import enum\n'{0.mro.__self__}'.format(enum.Flag)", NO_ATTR),
    Attack("metaclass_of_enum_is_safe_type",
           "import enum, re\n[type(enum.Enum) is type, type(re.RegexFlag) is type, enum.Enum.__class__ is type]",
           safe([True, True, True])),
    Attack("metaclass_functional_api",
           f"import enum\ntype(enum.Enum)('F', (enum.Enum,), {PLANT})", TYPE),
    Attack("enum_metaclass_names_absent", "import enum\nenum.EnumType", NO_ATTR),
    Attack("regexflag_functional_api_has_members",
           f"import re\nre.RegexFlag('F', {PLANT})", TYPE),
    Attack("super_reaches_no_functional_api",
           "import enum\nsuper(enum.Enum, enum.Enum)._create_('F', ['__copy__'])", NO_ATTR),
    Attack("super_private_of_real_enum",
           "import enum\ngetattr(super(enum.Flag, enum.Flag), '_get_value')", NO_ATTR),
    Attack("cached_property_mro_is_facade",
           "import functools\n[repr(c) for c in functools.cached_property.mro()]",
           safe(["<class 'functools.cached_property'>", "<class 'object'>"])),
    Attack("cached_property_real_by_mro_plants_dict",
           "import functools, copy\nReal = functools.cached_property.mro()[1]\n"
           "cp = Real(lambda self: lambda proto: (str, ('PLANTED',)))\ncp.attrname = '__reduce_ex__'\n"
           "class C:\n    pass\nC.x = cp\nc = C()\nc.x\ncopy.copy(c)", REFUSED),
    Attack("zoneinfo_mro_is_facade",
           "import zoneinfo\n[repr(c) for c in zoneinfo.ZoneInfo.mro()]",
           safe(["<class 'zoneinfo.ZoneInfo'>", "<class 'datetime.tzinfo'>", "<class 'object'>"])),
    Attack("zoneinfo_super_no_cache_reads_host_files",
           "import zoneinfo\nsuper(zoneinfo.ZoneInfo, zoneinfo.ZoneInfo).no_cache('Europe/Paris')", NO_ATTR),
    Attack("zoneinfo_real_zone_slot", "import zoneinfo\nzoneinfo.ZoneInfo('UTC')._zone_", NO_ATTR),
    Attack("zoneinfo_real_zone_slot_own_subclass",
           "import zoneinfo\nclass Z(zoneinfo.ZoneInfo):\n    pass\nz = Z('UTC')\n"
           "[list(vars(z)), getattr(z, '_zone_', 'hidden')]", safe([[], "hidden"])),
    Attack("zoneinfo_real_zone_by_format", "import zoneinfo\n'{0._zone_}'.format(zoneinfo.ZoneInfo('UTC'))", NO_ATTR),
    Attack("zoneinfo_wrap_hidden", "import zoneinfo\nzoneinfo.ZoneInfo._wrap_(None)", NO_ATTR),
    Attack("zoneinfo_clear_cache_is_harmless",
           "import zoneinfo\nz = zoneinfo.ZoneInfo('UTC')\nzoneinfo.ZoneInfo.clear_cache()\nz is zoneinfo.ZoneInfo('UTC')",
           safe(True)),
]

REPRO_STALE_PATTERN = """\
import dataclasses
class S(str):
    format: object
s = S('{0.__init__.__globals__[sys]}')
match (dataclasses.dataclass(S), s)[1]:
    case S(f):
        pass
f(dataclasses.is_dataclass)
"""
"""The class pattern is decided before the subject is evaluated, and the subject
gives ``S`` a ``__match_args__`` naming ``format``: read raw, that is the real
``str.format``, which walks ``__globals__``."""

STALE_VERDICTS = [
    Attack("repro_match_args_change_in_subject", REPRO_STALE_PATTERN, TYPE,
           "the pattern reads the checked copy: no __match_args__, so S(f) binds the subject"),
    Attack("match_args_change_in_earlier_guard",
           REPRO_STALE_PATTERN.replace("match (dataclasses.dataclass(S), s)[1]:\n",
                                       "match s:\n    case str() if dataclasses.dataclass(S) is None:\n        pass\n"),
           TYPE),
    Attack("match_args_change_in_a_loop",
           "import dataclasses\nclass S(str):\n    format: object\ns = S('{0.__init__.__globals__[sys]}')\nfound = []\n"
           "for step in range(2):\n    if step:\n        dataclasses.dataclass(S)\n        del s.format\n"
           "    match s:\n        case S(f):\n            found.append(f)\nfound[-1](dataclasses.is_dataclass)", REFUSED,
           "a pattern decided in one iteration is decided again once dataclass() changed the class"),
    Attack("cached_property_attrname_rewritten_by_getter",
           "import functools, copy\nclass CP(functools.cached_property):\n    pass\n"
           "def getter(self):\n    cp.attrname = '__reduce_ex__'\n    return lambda proto: (str, ('PLANTED',))\n"
           "cp = CP(getter)\nclass C:\n    x = cp\nc = C()\nc.x\nr = copy.copy(c)\nr if type(r) is str else type(r).__name__",
           safe("C"), "the name is read once per access: the value is stored under 'x'"),
    Attack("cached_property_attrname_rewritten_before",
           "import functools\nclass CP(functools.cached_property):\n    pass\ncp = CP(lambda self: 1)\n"
           "class C:\n    x = cp\ncp.attrname = '__deepcopy__'\nC().x", TYPE),
    Attack("cached_property_attrname_property",
           "import functools\nclass CP(functools.cached_property):\n    n = 0\n    @property\n    def attrname(self):\n"
           "        CP.n += 1\n        return 'x' if CP.n < 3 else '__reduce_ex__'\n    @attrname.setter\n"
           "    def attrname(self, v):\n        pass\ncp = CP(lambda self: 1)\nclass C:\n    x = cp\nc = C()\n"
           "[c.x, c.x, sorted(vars(c))]", REFUSED),
    Attack("enum_functional_mapping_answers_twice",
           "import enum, copy\nclass Names(dict):\n    calls = 0\n    def __iter__(self):\n        Names.calls += 1\n"
           "        return iter(['A'] if Names.calls == 1 else ['A', '__copy__', '__reduce_ex__'])\n"
           "    def __getitem__(self, k):\n        return {'A': 1, '__copy__': None, '__reduce_ex__': lambda self, p: (str, ('PLANTED',))}[k]\n"
           "E = enum.Enum('E', Names(A=1))\nr = copy.copy(E.A)\nr if type(r) is str else r.name", safe("A")),
    Attack("enum_functional_pairs_answer_twice",
           "import enum, copy\nclass Pair:\n    def __init__(self, name, value):\n        self.name, self.value, self.n = name, value, 0\n"
           "    def __iter__(self):\n        self.n += 1\n        return iter(('A', 1) if self.n == 1 else (self.name, self.value))\n"
           "E = enum.Enum('E', [('B', 2), Pair('__copy__', None), Pair('__reduce_ex__', lambda self, p: (str, ('PLANTED',)))])\n"
           "r = copy.copy(E.B)\nr if type(r) is str else sorted(m.name for m in E)", REFUSED),
    Attack("enum_functional_str_subclass_names",
           "import enum\nclass N(str):\n    def replace(self, *a):\n        return 'A'\n    def split(self, *a):\n        return ['__copy__']\n"
           "E = enum.Enum('E', N('A'))\n[m.name for m in E]", safe(["A"])),
]

REPRO_FINALIZER = """\
import io, decimal
class Bomb(io.StringIO):
    def close(self):
        decimal.getcontext().prec = 3
box = [Bomb()]
box.append(box)
del box
'left in a cycle'
"""

OUTSIDE_THE_RUN = [
    Attack("repro_stringio_close_in_cycle", REPRO_FINALIZER, TYPE),
    Attack("bytesio_subclass", "import io\nclass B(io.BytesIO):\n    def close(self):\n        pass\n'made'", TYPE),
    Attack("stringio_subclass_of_subclass",
           "import io\nclass A(io.StringIO.mro()[1]):\n    pass\n'made'", TYPE, "the private io base has the finalizer"),
    Attack("stringio_via_dataclass_slots",
           "import io, dataclasses\n@dataclasses.dataclass(slots=True)\nclass B(io.StringIO):\n    x: int = 0\n'made'", TYPE),
    Attack("del_in_class_body", "class C:\n    def __del__(self):\n        pass\n'made'", COMPILE),
    Attack("del_by_assignment", "class C:\n    __del__ = print\n'made'", COMPILE),
    Attack("del_by_setattr", "class C:\n    pass\nsetattr(C, '__del__', print)", NO_ATTR),
    Attack("del_by_functional_enum", "import enum\nenum.Enum('E', {'__del__': print, 'A': 1})", TYPE),
    Attack("del_by_namedtuple", "import collections\ncollections.namedtuple('T', ['__del__'])",
           runtime("TypeError", "ValueError")),
    Attack("set_name_hook_in_class_body", "class D:\n    def __set_name__(self, owner, name):\n        pass\n'made'", COMPILE),
    Attack("init_subclass_hook_in_class_body",
           "class B:\n    def __init_subclass__(cls):\n        pass\n'made'", COMPILE),
    Attack("class_getitem_hook_in_class_body",
           "class B:\n    def __class_getitem__(cls, item):\n        pass\n'made'", COMPILE),
    Attack("init_subclass_by_setattr", "class B:\n    pass\nsetattr(B, '__init_subclass__', print)", NO_ATTR),
    Attack("weakref_not_importable", "import weakref\n'x'", runtime("ModuleNotFoundError")),
    Attack("atexit_not_importable", "import atexit\n'x'", runtime("ModuleNotFoundError")),
    Attack("generator_finally_after_run",
           "import decimal\ndef g():\n    try:\n        yield 1\n    finally:\n        decimal.getcontext().prec = 3\n"
           "box = [g()]\nnext(box[0])\nbox.append(box)\ndel box\n'suspended'",
           safe("suspended"), "collected in the run or after it: never in the host (see the host-side test)"),
    Attack("result_int_subclass_repr_not_called",
           "class I(int):\n    def __repr__(self):\n        while True:\n            pass\n    def __index__(self):\n"
           "        while True:\n            pass\n[I(1), {'k': I(2)}]", safe([1, {"k": 2}])),
    Attack("result_str_subclass_methods_not_called",
           "class S(str):\n    def __str__(self):\n        while True:\n            pass\n    def __repr__(self):\n"
           "        while True:\n            pass\n    def __iter__(self):\n        while True:\n            pass\n"
           "d = {}\nd[S('k')] = [S('v')]\nd", safe({"k": ["v"]})),
    Attack("result_dict_subclass_items_inside_the_run",
           "class D(dict):\n    def items(self):\n        while True:\n            pass\nD(a=1)",
           limit("wall_time", "cpu_time", "timeout"), "runs under the watchdog, inside the run"),
]

REPRO_TRACEBACK = """\
class Catch:
    def __enter__(self):
        return self
    def __exit__(self, kind, exc, tb):
        self.tb = tb
        return True
with Catch() as c:
    1 / 0
[repr(c.tb), bool(c.tb)]
"""

LOW = [
    Attack("repro_traceback_in_exit", REPRO_TRACEBACK, safe(["<traceback object>", True])),
    Attack("traceback_in_exit_star_args",
           REPRO_TRACEBACK.replace("kind, exc, tb):\n        self.tb = tb", "*args):\n        self.tb = args[2]"),
           safe(["<traceback object>", True])),
    Attack("traceback_in_static_exit",
           REPRO_TRACEBACK.replace("    def __exit__(self, kind, exc, tb):\n        self.tb = tb\n        return True\n",
                                   "    @staticmethod\n    def __exit__(kind, exc, tb):\n        Catch.tb = tb\n        return True\n"),
           safe(["<traceback object>", True])),
    Attack("traceback_in_inherited_exit",
           REPRO_TRACEBACK.replace("with Catch() as c:", "class Sub(Catch):\n    pass\nwith Sub() as c:"),
           safe(["<traceback object>", True])),
    Attack("traceback_frame_by_getattr",
           REPRO_TRACEBACK.replace("[repr(c.tb), bool(c.tb)]", "getattr(c.tb, 'tb_frame')"), NO_ATTR),
    Attack("no_traceback_without_exception",
           REPRO_TRACEBACK.replace("    1 / 0\n", "    pass\n"), safe(["None", False])),
    Attack("tool_stub_class_is_stand_in", "[repr(type(echo)), type(echo).__name__]", safe(["<class 'tool'>", "tool"])),
    Attack("tool_stub_class_builds_no_stub",
           "type(echo)('send_email', ['to', 'body'], True, '', lambda name, args: 'PWNED')('a', 'b')", TYPE),
    Attack("tool_stub_callback_private", "echo._call_host", NO_ATTR),
    Attack("tool_stub_subclass", "class T(type(echo)):\n    pass\n'made'", TYPE),
    Attack("print_repr_is_builtin",
           "[repr(print), repr(getattr), repr(vars), repr(parallel), repr(type(print)), print.__name__]",
           safe(["<built-in function print>", "<built-in function getattr>", "<built-in function vars>",
                 "<built-in function parallel>", "<class 'builtin_function_or_method'>", "print"])),
    Attack("print_implementation_private", "print._func", NO_ATTR),
    Attack("print_class_builds_nothing", "type(print)(len)", TYPE),
    Attack("print_buffer_not_reachable", "getattr(getattr(print, '_func'), '__self__')", NO_ATTR),
]

LEGITIMATE = [
    Attack("enum_everyday",
           "import enum, re\nclass Color(enum.Enum):\n    RED = 1\n    GREEN = 2\nclass P(enum.IntFlag):\n    R = 4\n    W = 2\n"
           "Shape = enum.Enum('Shape', 'SQUARE CIRCLE')\nPairs = enum.IntEnum('Pairs', [('ONE', 1), ('TWO', 2)])\n"
           "[Color(2).name, (P.R | P.W).value, Shape.CIRCLE.value, Pairs.TWO + 1, issubclass(re.RegexFlag, enum.Flag),"
           " isinstance(re.I, enum.IntFlag), [c.__name__ for c in Color.mro()]]",
           safe(["GREEN", 6, 2, 3, True, True, ["Color", "Enum", "object"]])),
    Attack("mro_of_own_classes",
           "class A:\n    pass\nclass B(A):\n    pass\nclass M:\n    def mro(self):\n        return 'mine'\n"
           "[[c.__name__ for c in B.mro()], [c.__name__ for c in type.mro(B)], M().mro(), [c.__name__ for c in int.mro()]]",
           safe([["B", "A", "object"], ["B", "A", "object"], "mine", ["int", "object"]])),
    Attack("cached_property_everyday",
           "import functools\nclass C:\n    def __init__(self):\n        self.n = 0\n    @functools.cached_property\n"
           "    def total(self):\n        self.n += 1\n        return 42\nc = C()\n[c.total, c.total, c.n, 'total' in vars(c), isinstance(C.total, functools.cached_property)]",
           safe([42, 42, 1, True, True])),
    Attack("zoneinfo_everyday",
           "import zoneinfo, datetime, copy\nz = zoneinfo.ZoneInfo('Europe/Paris')\n"
           "d = datetime.datetime(2024, 3, 31, 1, 30, tzinfo=datetime.timezone.utc).astimezone(z)\n"
           "[repr(z), str(z), z.key, str(d), d.tzname(), str(datetime.datetime(2024, 10, 27, 2, 30, fold=1, tzinfo=z)),"
           " copy.deepcopy(d) == d, z is zoneinfo.ZoneInfo('Europe/Paris'), isinstance(z, datetime.tzinfo)]",
           safe(["zoneinfo.ZoneInfo(key='Europe/Paris')", "Europe/Paris", "Europe/Paris", "2024-03-31 03:30:00+02:00",
                 "CEST", "2024-10-27 02:30:00+01:00", True, True, True])),
    Attack("match_everyday",
           "import collections, dataclasses\n@dataclasses.dataclass\nclass P:\n    x: int\n    y: int\n"
           "T = collections.namedtuple('T', 'a b')\nclass S(str):\n    pass\nout = []\n"
           "for v in [P(1, 2), T(3, 4), S('s'), 5, True, 'q', (6, 7)]:\n    match v:\n"
           "        case P(x, y): out.append(['P', x, y])\n        case T(a, b): out.append(['T', a, b])\n"
           "        case S(s): out.append(['S', s])\n        case bool(b): out.append(['bool', b])\n"
           "        case int(i): out.append(['int', i])\n        case str(s): out.append(['str', s])\n"
           "        case tuple(t): out.append(['tuple', list(t)])\nout",
           safe([["P", 1, 2], ["T", 3, 4], ["S", "s"], ["int", 5], ["bool", True], ["str", "q"], ["tuple", [6, 7]]])),
    Attack("context_manager_everyday",
           "class Timer:\n    def __enter__(self):\n        self.log = ['in']\n        return self\n"
           "    def __exit__(self, kind, exc, tb):\n        self.log.append(kind.__name__ if kind else 'ok')\n        return kind is ValueError\n"
           "with Timer() as a:\n    pass\nwith Timer() as b:\n    raise ValueError('x')\n[a.log, b.log]",
           safe([["in", "ok"], ["in", "ValueError"]])),
    Attack("io_everyday",
           "import io, csv\nclass Report:\n    def __init__(self):\n        self.buffer = io.StringIO()\n"
           "    def row(self, *cells):\n        csv.writer(self.buffer).writerow(cells)\nr = Report()\nr.row('a', 1)\nr.buffer.getvalue()",
           safe("a,1\r\n")),
]

ALL = REAL_CLASSES + STALE_VERDICTS + OUTSIDE_THE_RUN + LOW + LEGITIMATE


def test_attack_ids_are_unique() -> None:
    ids = [attack.id for attack in ALL]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("attack", ALL, ids=[a.id for a in ALL])
def test_escape_class_wave3(attack: Attack, probe: Probe, host_intact: None) -> None:
    result = probe.run(attack.code)
    attack.expect.check(result, attack.code)


# --- in process: nothing of the script runs in the host's thread after its run -------

SUSPENDED_BOMB_IN_A_CYCLE = """\
import decimal
def g():
    try:
        yield 1
    finally:
        decimal.getcontext().prec = 3
        while True:
            pass
box = [g()]
next(box[0])
box.append(box)
"""
"""A suspended generator whose ``finally`` would change the decimal context of the thread
that finalizes it and then never return, left in a reference cycle (``box``)."""

FINALLY_BOMB = SUSPENDED_BOMB_IN_A_CYCLE + """\
kept = g()
next(kept)
del box
'suspended'
"""
"""Two suspended generators whose ``finally`` would change the host thread's decimal
context and loop forever: one left in a reference cycle, one in the namespace."""


def test_generator_finalizer_runs_nothing_in_the_host() -> None:
    """The issue's class 3 in process: the host's ``gc.collect()`` after the run,
    and the session's reset, finalise the script's suspended generators in the
    host's thread; their ``finally`` stops at its first line (the abort is
    pending between runs), so the host's decimal context keeps its precision
    and the collection returns."""
    runtime = Runtime(tools=SECURITY_TOOLS, backend="inprocess", limits=Limits(wall_time_s=5.0))
    gc.disable()  # the cycle must outlive the run (no collection inside it)
    try:
        with runtime.session() as session:
            assert session.run(FINALLY_BOMB).value == "suspended"
            gc.enable()
            precision = decimal.getcontext().prec
            done = threading.Event()

            def collect() -> None:
                gc.collect()
                session.reset()  # drops ``kept`` in this (the host's) thread
                gc.collect()
                done.set()

            worker = threading.Thread(target=collect, daemon=True)
            worker.start()
            worker.join(30)
            assert done.is_set(), "a script finalizer hung a host thread"
            assert decimal.getcontext().prec == precision
            gc.collect()
            assert decimal.getcontext().prec == precision
    finally:
        gc.enable()
        runtime.close()


CYCLE_THEN_SLEEP = SUSPENDED_BOMB_IN_A_CYCLE + """\
import time
del box
time.sleep(1.0)
'slept'
"""
"""A suspended generator left in a cycle while the run goes on (sleeping)."""


def test_generator_finalized_by_a_host_thread_during_the_run() -> None:
    """While the run sleeps, another host thread's ``gc.collect()`` finalises the
    script's generator in that thread, where the run's watchdog cannot reach:
    its ``finally`` must stop at its first line, not loop in the host thread."""
    runtime = Runtime(tools=SECURITY_TOOLS, backend="inprocess", limits=Limits(wall_time_s=5.0))
    outcome: dict[str, Any] = {}
    gc.disable()  # only the host thread below collects
    try:
        def run() -> None:
            outcome["result"] = runtime.run(CYCLE_THEN_SLEEP)

        runner = threading.Thread(target=run, daemon=True)
        runner.start()
        collected = threading.Event()

        def collect() -> None:
            threading.Event().wait(0.3)  # the run is asleep by now
            gc.collect()
            outcome["precision"] = decimal.getcontext().prec
            collected.set()

        collector = threading.Thread(target=collect, daemon=True)
        collector.start()
        collector.join(30)
        runner.join(30)
        assert collected.is_set(), "the script's finally ran its loop in a host thread"
        assert outcome["precision"] == decimal.Context().prec
        assert outcome["result"].value == "slept"
    finally:
        gc.enable()
        runtime.close()


def test_zoneinfo_cache_controls_do_not_reach_the_host() -> None:
    """``clear_cache`` in a script leaves the real, process-wide ``zoneinfo``
    cache alone (the host's zones stay the same objects)."""
    host_zone = zoneinfo.ZoneInfo("Europe/Paris")
    runtime = Runtime(tools=SECURITY_TOOLS, backend="inprocess", limits=Limits(wall_time_s=5.0))
    try:
        result = runtime.run("import zoneinfo\nzoneinfo.ZoneInfo.clear_cache()\n"
                             "zoneinfo.ZoneInfo.no_cache('Europe/Paris').key")
        assert result.value == "Europe/Paris"
    finally:
        runtime.close()
    assert zoneinfo.ZoneInfo("Europe/Paris") is host_zone


def test_print_repr_shows_no_host_address() -> None:
    runtime = Runtime(tools=SECURITY_TOOLS, backend="inprocess", limits=Limits(wall_time_s=5.0))
    try:
        text: Any = runtime.run("[repr(f) for f in (print, getattr, setattr, hasattr, delattr, vars, dir, pow, "
                                "breakpoint, parallel, echo)]").value
    finally:
        runtime.close()
    assert not any("0x" in item or "sandbox" in item or "Guards" in item for item in text), text
