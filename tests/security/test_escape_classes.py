"""Two escape classes, written as an attacker would, on every backend.

Class A: a name chosen by the script reaches the interpreter's own
``getattr`` - class patterns read ``__match_args__`` and keyword names, and
``namedtuple``/``typing.NamedTuple``/``dataclass`` write ``__match_args__``
from field names; ``ABC.register`` makes ``isinstance`` accept generators and
frames. Class B: the standard library writes or reads attributes for the
script (``copy`` reconstruction, ``cached_property``, ``dataclasses``,
``typing`` aliases) or hands out a code object, a frame, a function or code
constructor, a metaclass or the real ``getattr``. Each family below holds
the reproduction that reached the real ``os`` module and variants of it;
``LEGITIMATE`` holds what models write and must keep working.
"""

# ruff: noqa: E501  (tables of attack scripts read best one per line)

from __future__ import annotations

import abc
import random
import types
from typing import Any

import pytest
from security_helpers import (
    COMPILE,
    SECURITY_TOOLS,
    Attack,
    Probe,
    limit,
    runtime,
    safe,
)
from toolscript.sandbox.guards import AbortState, Guards
from toolscript.sandbox.modules import DEFAULT_MODULES, OPTIONAL_MODULES

from toolscript import Limits

TYPE = runtime("TypeError")
NO_ATTR = runtime("AttributeError")

REPRO_CLASS_PATTERNS = """\
import collections, collections.abc
def reader(name):
    class R(collections.namedtuple('R', name), collections.abc.Container):
        pass
    return R
GiFrame, FBack, FBuiltins = reader('gi_frame'), reader('f_back'), reader('f_builtins')
def gen():
    match g:
        case GiFrame(frame): pass
    FBack.register(type(frame)); FBuiltins.register(type(frame))
    match frame:
        case FBack(FBack(FBack(FBuiltins(real_builtins)))): pass
    yield real_builtins
g = gen()
GiFrame.register(type(g))
next(g)['__import__']('os').getuid()
"""

REPRO_WRITE_PRIMITIVES = """\
import typing, dataclasses
class Keep(dict):
    pass
def force_setattr(target, name, value):
    attrs = Keep({name: value})
    vars(attrs)['__deepcopy__'] = lambda memo: attrs
    class Carrier:
        pass
    c = Carrier()
    vars(c)['__reduce_ex__'] = lambda proto: (lambda: target, (), (None, attrs))
    @dataclasses.dataclass
    class Box:
        x: object
    dataclasses.asdict(Box(c))
captured = {}
fr = typing.get_args(typing.List["dir.__globals__['_builtins'].__import__('os')"])[0]
FRC = type(fr)
@dataclasses.dataclass
class T:
    x: object = None
fld = dataclasses.fields(T)[0]
force_setattr(fld, 'name', '__forward_code__')
force_setattr(FRC, '__dataclass_fields__', Keep({'__forward_code__': fld}))
force_setattr(FRC, '__new__', lambda cls, **kw: captured.update(kw))
dataclasses.replace(fr)
type(lambda: 0)(captured['__forward_code__'], {})().getuid()
"""

GEN = "def gen():\n    yield 1\ng = gen()\n"
"""A live generator ``g`` (its ``gi_frame`` is the way to the frame chain)."""

CLASS_PATTERNS = [
    Attack("repro_namedtuple_frame_walk", REPRO_CLASS_PATTERNS, TYPE,
           "namedtuple field names become __match_args__; refused where the name is chosen"),
    Attack("repro_register_step_alone",
           REPRO_CLASS_PATTERNS.replace("reader('gi_frame'), reader('f_back'), reader('f_builtins')",
                                        "reader('gx_frame'), reader('fx_back'), reader('fx_builtins')"),
           TYPE, "with plain field names the script gets as far as register(type(g)): refused"),
    Attack("typing_namedtuple_class_syntax",
           "import typing\nclass GiFrame(typing.NamedTuple):\n    gi_frame: object\n" + GEN
           + "match g:\n    case GiFrame(frame): pass\nframe", TYPE),
    Attack("typing_namedtuple_functional",
           "import typing\nGiFrame = typing.NamedTuple('GiFrame', [('gi_frame', object)])\n" + GEN
           + "match g:\n    case GiFrame(frame): pass\nframe", TYPE),
    Attack("typing_namedtuple_keywords",
           "import typing\nGiFrame = typing.NamedTuple('GiFrame', gi_frame=object)\n'made'", TYPE),
    Attack("dataclass_match_args",
           "import dataclasses\n@dataclasses.dataclass\nclass GiFrame:\n    gi_frame: object\n" + GEN
           + "match g:\n    case GiFrame(frame): pass\nframe", TYPE),
    Attack("dataclass_traceback_fields",
           "from dataclasses import dataclass\n@dataclass\nclass Tb:\n    tb_frame: object\n"
           "    tb_next: object\ntry:\n    1 / 0\nexcept ZeroDivisionError as e:\n    err = e\n'made'", TYPE),
    Attack("namedtuple_base_in_class_body",
           "import collections\nclass FBack(collections.namedtuple('B', ['f_back'])):\n    pass\n'made'", TYPE),
    Attack("namedtuple_rename_keeps_check",
           "import collections\nR = collections.namedtuple('R', ['f_globals', 'x'], rename=True)\n'made'", TYPE,
           "rename=True renames invalid names only; hidden names are still refused"),
    Attack("namedtuple_code_field",
           "import collections\nCode = collections.namedtuple('Code', 'co_consts')\n'made'", TYPE),
    Attack("register_generator_type",
           "import collections.abc\nclass Mine(collections.abc.Container):\n    def __contains__(self, x): return False\n"
           + GEN + "Mine.register(type(g))\nisinstance(g, Mine)", TYPE),
    Attack("register_via_getattr",
           "import collections.abc\nclass Mine(collections.abc.Sized):\n    def __len__(self): return 0\n"
           + GEN + "getattr(Mine, 'reg' + 'ister')(type(g))\nisinstance(g, Mine)", TYPE),
    Attack("register_via_methodcaller",
           "import collections.abc, operator\nclass Mine(collections.abc.Sized):\n    def __len__(self): return 0\n"
           + GEN + "operator.methodcaller('register', type(g))(Mine)\nisinstance(g, Mine)", TYPE),
    Attack("register_builtin_type",
           "import collections.abc\nclass Mine(collections.abc.Hashable):\n    def __hash__(self): return 1\n"
           "Mine.register(dict)\nisinstance({}, Mine)", TYPE),
    Attack("keyword_pattern_frame", GEN + "match g:\n    case object(gi_frame=frame): pass\n'x'", COMPILE),
    Attack("keyword_pattern_dunder", "match 1:\n    case object(__class__=c): pass\n'x'", COMPILE),
    Attack("keyword_pattern_private",
           "import random\nmatch random.Random():\n    case object(_randbelow=r): pass\n'x'", COMPILE),
    Attack("keyword_pattern_format",
           "import dataclasses\nmatch '{0.__init__.__globals__}':\n    case str(format=f):\n"
           "        leaked = f(dataclasses.fields)\nleaked", COMPILE,
           "the real bound str.format walks dunder attributes"),
    Attack("keyword_pattern_register",
           "import collections.abc\nmatch collections.abc.Sequence:\n    case type(register=r):\n"
           "        r(dict)\nisinstance({}, collections.abc.Sequence)", COMPILE),
    Attack("keyword_pattern_nested_hidden",
           GEN + "match [g]:\n    case [object(gi_code=c)]: pass\n'x'", COMPILE),
    Attack("positional_format_from_str_subclass",
           "import dataclasses\n@dataclasses.dataclass\nclass S(str):\n    format: object\n"
           "s = S('{0.__globals__[sys]}')\ndel s.format\nmatch s:\n    case S(f): pass\n"
           "f(dataclasses.is_dataclass)", NO_ATTR,
           "the stand-in class reads guarded names through the guard first"),
    Attack("match_verdict_renewed_by_dataclass",
           "import dataclasses\nclass S(str):\n    format: object\nmatch 1:\n    case S(f): pass\n"
           "S = dataclasses.dataclass(S)\ns = S('{0.__globals__[sys]}')\ndel s.format\n"
           "match s:\n    case S(f): pass\nf(dataclasses.is_dataclass)", NO_ATTR,
           "a class matched before dataclass() gave it __match_args__ is decided again"),
    Attack("nested_positional_walk",
           "import collections\nOuter = collections.namedtuple('Outer', 'inner')\n"
           "Inner = collections.namedtuple('Inner', 'f_locals')\n'made'", TYPE),
    Attack("value_pattern_private_attribute",
           "class A:\n    _k = 1\nmatch 1:\n    case A._k: pass\n'x'", COMPILE,
           "a guarded read in a value pattern used to crash the interpreter"),
]

WRITE_PRIMITIVES = [
    Attack("repro_deepcopy_setattr_forward_code", REPRO_WRITE_PRIMITIVES, NO_ATTR,
           "vars() no longer hands out the live __dict__"),
    Attack("vars_plant_reduce_ex",
           "class C:\n    pass\nc = C()\nvars(c)['__reduce_ex__'] = lambda p: (len, ([],))\n'planted'", NO_ATTR),
    Attack("vars_update_plants_deepcopy",
           "class C:\n    pass\nc = C()\nvars(c).update({'__deepcopy__': lambda memo: 'PWNED'})\n'planted'", NO_ATTR),
    Attack("vars_setdefault_plants_getstate",
           "class C:\n    pass\nc = C()\nvars(c).setdefault('__getstate__', lambda: {})\n'planted'", NO_ATTR),
    Attack("vars_ior_plants_setstate",
           "class C:\n    pass\nc = C()\nv = vars(c)\nv |= {'__setstate__': print}\n'planted'", NO_ATTR),
    Attack("vars_unbound_dict_update_is_a_copy",
           "import dataclasses\nclass C:\n    pass\nc = C()\n"
           "dict.update(vars(c), {'__reduce_ex__': lambda p: (lambda: 'PWNED', ())})\n"
           "@dataclasses.dataclass\nclass Box:\n    x: object\n"
           "type(dataclasses.asdict(Box(c))['x']).__name__", safe("C"),
           "dict.update on the snapshot reaches no instance"),
    Attack("vars_of_exception_subclass",
           "class E(Exception):\n    pass\ne = E()\nvars(e)['__reduce_ex__'] = lambda p: (len, ([],))\n'planted'", NO_ATTR),
    Attack("cached_property_subclass_attrname",
           "import functools, dataclasses\nclass CP(functools.cached_property):\n    pass\n"
           "def reducer(self):\n    return lambda proto: (lambda: 'PWNED', ())\n"
           "cp = CP(reducer)\ncp.attrname = '__reduce_ex__'\n"
           "class Carrier:\n    pass\nCarrier.x = cp\nc = Carrier()\nc.x\n"
           "@dataclasses.dataclass\nclass Box:\n    y: object\ndataclasses.asdict(Box(c))['y']", TYPE),
    Attack("cached_property_dunder_method",
           "import functools\nclass C:\n    @functools.cached_property\n    def __repr__(self):\n"
           "        return 'x'\n'made'", TYPE),
    Attack("dataclass_field_subclass_property_name",
           "import dataclasses\nclass F(dataclasses.Field):\n    @property\n    def name(self):\n"
           "        return \"x=__import__('os').getuid(),y\"\n    @name.setter\n    def name(self, v):\n"
           "        pass\nf = F(dataclasses.MISSING, dataclasses.MISSING, True, True, None, True, None, False)\n"
           "@dataclasses.dataclass\nclass C:\n    x: int = f\n'PWNED'", TYPE,
           "dataclass compiles __init__ from Field.name"),
    Attack("dataclass_field_subclass_renamed_later",
           "import dataclasses\nclass F(dataclasses.Field):\n    pass\n"
           "f = F(dataclasses.MISSING, dataclasses.MISSING, True, True, None, True, None, False)\n"
           "@dataclasses.dataclass\nclass C:\n    x: int = f\nf.name = '__setattr__'\n"
           "dataclasses.asdict(C(1))['__setattr__']('__reduce_ex__', print)", TYPE),
    Attack("typeddict_str_subclass_key",
           "import typing, dataclasses\nclass S(str):\n    def isidentifier(self):\n        return True\n"
           "TD = typing.TypedDict('TD', {S('a=print(1) or 1, b'): int})\nclass Y(TD):\n    pass\n"
           "dataclasses.dataclass(Y)\n'PWNED'", TYPE),
    Attack("typeddict_dunder_field",
           "import typing, dataclasses\nTD = typing.TypedDict('TD', {'__reduce_ex__': object})\n"
           "class Y(TD):\n    pass\ndataclasses.dataclass(Y)\n'PWNED'", TYPE,
           "a dataclass __init__ would plant the dunder on every instance"),
    Attack("dataclasses_replace_foreign",
           "import typing, dataclasses\nfr = typing.get_args(typing.List['x'])[0]\ndataclasses.replace(fr)", TYPE),
    Attack("dataclasses_fields_foreign",
           "import typing, dataclasses\nfr = typing.get_args(typing.List['x'])[0]\ndataclasses.fields(fr)", TYPE),
    Attack("dataclasses_astuple_foreign",
           "import typing, dataclasses\nfr = typing.get_args(typing.List['x'])[0]\ndataclasses.astuple(fr)", TYPE),
    Attack("attribute_error_obj_is_real_type",
           "import typing\ntry:\n    typing.Type.anything\nexcept AttributeError as e:\n    T = e.obj\n"
           "X = T('X', (), {'__getattribute__': lambda self, n: 'PWNED'})\nX().x", TYPE,
           "the alias forwarded the read to the real type; obj is cleared"),
    Attack("attribute_error_obj_by_class_pattern",
           "import typing\ntry:\n    typing.Type.anything\nexcept AttributeError as e:\n    match e:\n"
           "        case AttributeError(obj=T): pass\nrepr(T)", safe("None")),
    Attack("attribute_error_obj_in_exit",
           "import typing\nclass Catch:\n    def __enter__(self):\n        return self\n"
           "    def __exit__(self, kind, exc, tb):\n        self.leaked = exc.obj\n        return True\n"
           "with Catch() as c:\n    typing.Type.anything\nrepr(c.leaked)", safe("None"),
           "__exit__ receives the exception too"),
    Attack("typing_final_writes_shared_class",
           "import typing, collections\ntyping.final(collections.Counter)\nhasattr(collections.Counter, '__final__')",
           safe(False)),
    Attack("runtime_checkable_shared_protocol", "import typing\ntyping.runtime_checkable(typing.Protocol)", TYPE),
    Attack("annotated_call_writes_shared_class",
           "import typing, collections\ntyping.Annotated[lambda: collections.Counter, 0]()\n"
           "hasattr(collections.Counter, '__orig_class__')", TYPE,
           "calling an alias writes __orig_class__ onto whatever its origin returns"),
    Attack("annotated_generic_substitution",
           "import typing, collections\nT = typing.TypeVar('T')\nA = typing.Annotated[T, 0]\n"
           "A[lambda: collections.Counter]()\n'PWNED'", TYPE),
    Attack("annotated_copy_with",
           "import typing, collections\ntyping.Annotated[int, 0].copy_with((lambda: collections.Counter,))()\n'PWNED'", TYPE),
    Attack("annotated_origin_is_facade",
           "import typing\nA = typing.get_origin(typing.Annotated[int, 0])\nA[lambda: 'x', 0]()", TYPE),
]

CODE_FRAMES_CONSTRUCTORS = [
    Attack("function_type_constructor", "def f():\n    return 1\ntype(f)(None, {})", TYPE),
    Attack("function_class_attribute_constructor", "(lambda: 0).__class__(None, {})", TYPE),
    Attack("method_type_constructor",
           "class A:\n    def m(self):\n        pass\ntype(A().m)(len, 1)", TYPE),
    Attack("generator_type_constructor", "type((x for x in []))()", TYPE),
    Attack("forward_ref_constructor_compiles",
           "import typing\nFRC = type(typing.get_args(typing.List['x'])[0])\nFRC('__import__(\"os\")')", TYPE),
    Attack("forward_ref_code_by_getattr",
           "import typing\nfr = typing.get_args(typing.List['x'])[0]\ngetattr(fr, '__forward_code__')", NO_ATTR),
    Attack("typing_alias_constructor",
           "import typing, collections\ntype(typing.List[int])(lambda: collections.Counter, ())()\n'PWNED'", TYPE),
    Attack("generic_alias_constructor",
           "import collections\ntype(list[int])(lambda: collections.Counter, ())()\n'PWNED'", TYPE),
    Attack("collections_abc_alias_constructor",
           "import collections, collections.abc\nC = type(collections.abc.Callable[[int], int])\n"
           "C(lambda: collections.Counter, ([], int))()\nhasattr(collections.Counter, '__orig_class__')", TYPE,
           "found by this suite: collections.abc has its own alias class"),
    Attack("stand_in_cannot_be_subclassed", "class F(type(lambda: 0)):\n    pass\n'made'", TYPE),
    Attack("get_origin_hands_out_real_type",
           "import typing\nT = typing.get_origin(typing.Type[int])\n"
           "T('X', (), {'__getattribute__': lambda self, n: 'PWNED'})().x", TYPE),
    Attack("subclass_typing_type_alias",
           "import typing\nclass M(typing.Type[int]):\n    pass\n"
           "M('X', (), {'__getattribute__': lambda self, n: 'PWNED'})().x", TYPE,
           "the alias resolves its base to the real type: a metaclass"),
    Attack("subclass_typing_type", "import typing\nclass M(typing.Type):\n    pass\n'made'", TYPE),
    Attack("frame_by_attrgetter", "import operator\n" + GEN + "operator.attrgetter('gi_frame')(g)", NO_ATTR),
    Attack("frame_by_dotted_attrgetter", "import operator\n" + GEN + "operator.attrgetter('gi_frame.f_back')(g)", NO_ATTR),
    Attack("frame_by_partial_getattr", "import functools\n" + GEN + "functools.partial(getattr, g)('gi_frame')", NO_ATTR),
    Attack("frame_by_reduce_getattr",
           "import functools\n" + GEN + "functools.reduce(getattr, ['gi_frame', 'f_back'], g)", NO_ATTR),
    Attack("code_by_format", GEN + "'{0.gi_code.co_consts}'.format(g)", NO_ATTR),
    Attack("frame_by_format_map", GEN + "'{g.gi_frame.f_globals}'.format_map({'g': g})", NO_ATTR),
    Attack("closure_cell_by_getattr",
           "def outer():\n    x = 1\n    def inner():\n        return x\n    return inner\n"
           "getattr(outer(), '__closure__')", NO_ATTR),
    Attack("register_by_format_field", "import collections.abc\n'{0.register}'.format(collections.abc.Sequence)",
           NO_ATTR),
    Attack("template_does_not_walk_attributes",
           "import string\nstring.Template('${a}.gi_frame').substitute(a='x')", safe("x.gi_frame")),
    Attack("operator_pow_keeps_integer_limit", "import operator\noperator.pow(10, 10 ** 8)",
           limit("integer_limit")),
    Attack("operator_lshift_keeps_integer_limit", "import operator\noperator.lshift(1, 10 ** 9)",
           limit("integer_limit")),
]

LEGITIMATE = [
    Attack("match_own_dataclass",
           "from dataclasses import dataclass\n@dataclass\nclass Point:\n    x: int\n    y: int\nout = []\n"
           "for p in [Point(0, 3), Point(2, 5), 7, 'a', [1, 2]]:\n    match p:\n"
           "        case Point(x=0, y=y): out.append(['axis', y])\n"
           "        case Point(x, y): out.append(['pt', x, y])\n"
           "        case int(n): out.append(['int', n])\n"
           "        case str(s): out.append(['str', s])\n"
           "        case [a, b]: out.append(['seq', a, b])\nout",
           safe([["axis", 3], ["pt", 2, 5], ["int", 7], ["str", "a"], ["seq", 1, 2]])),
    Attack("match_namedtuples_and_nested",
           "import collections, typing\nPair = collections.namedtuple('Pair', 'left right')\n"
           "class Leaf(typing.NamedTuple):\n    value: int\n"
           "def total(node):\n    match node:\n        case Pair(left, right): return total(left) + total(right)\n"
           "        case Leaf(v): return v\ntotal(Pair(Leaf(1), Pair(Leaf(2), Leaf(3))))", safe(6)),
    Attack("match_private_field_own_object",
           "from dataclasses import dataclass\n@dataclass\nclass Tagged:\n    _tag: str\n    value: int\n"
           "match Tagged('t', 4):\n    case Tagged(tag, value): got = [tag, value]\ngot", safe(["t", 4])),
    Attack("match_in_class_body_and_loop",
           "import collections\nP = collections.namedtuple('P', 'a b')\nclass Holder:\n"
           "    match P(1, 2):\n        case P(a, b): seen = a + b\n"
           "[Holder.seen, [n for n in dir(Holder) if 'sandbox' in n]]", safe([3, []])),
    Attack("match_own_format_field",
           "from dataclasses import dataclass\n@dataclass\nclass Report:\n    title: str\n    format: str\n"
           "match Report('q3', 'pdf'):\n    case Report(t, f): got = [t, f]\ngot", safe(["q3", "pdf"])),
    Attack("vars_reads_and_writes_through",
           "import json\nclass C:\n    def __init__(self, **kw):\n        vars(self).update(kw)\n"
           "c = C(a=1, b=2)\nv = vars(c)\nv['c'] = 3\ndel v['a']\n"
           "[json.dumps(vars(c), sort_keys=True), hasattr(c, 'a'), c.c, isinstance(v, dict)]",
           safe(['{"b": 2, "c": 3}', False, 3, True])),
    Attack("dataclasses_helpers_on_own_nested",
           "import dataclasses\n@dataclasses.dataclass\nclass Item:\n    name: str\n    qty: int = 1\n"
           "@dataclasses.dataclass\nclass Order:\n    items: list\n    meta: dict\n"
           "o = Order([Item('a'), Item('b', 2)], {'k': Item('c')})\n"
           "[dataclasses.asdict(o), dataclasses.astuple(Item('z', 3)), dataclasses.replace(Item('a'), qty=5).qty,"
           " [f.name for f in dataclasses.fields(Item)]]",
           safe([{"items": [{"name": "a", "qty": 1}, {"name": "b", "qty": 2}],
                  "meta": {"k": {"name": "c", "qty": 1}}}, ["z", 3], 5, ["name", "qty"]])),
    Attack("dataclass_slots_is_own_class",
           "import dataclasses\n@dataclasses.dataclass(slots=True)\nclass P:\n    x: int\np = P(1)\np.x = 2\n"
           "[p.x, dataclasses.asdict(p)]", safe([2, {"x": 2}])),
    Attack("cached_property_ordinary",
           "import functools\nclass C:\n    calls = 0\n    @functools.cached_property\n    def total(self):\n"
           "        C.calls += 1\n        return 42\nc = C()\n[c.total, c.total, C.calls]", safe([42, 42, 1])),
    Attack("cached_property_of_lambda",
           "import functools\nclass C:\n    area = functools.cached_property(lambda self: 6 * 7)\nC().area",
           safe(42)),
    Attack("register_own_class_on_own_abc",
           "import collections.abc\nclass Shape(collections.abc.Hashable):\n    pass\n"
           "@Shape.register\nclass Square:\n    pass\n"
           "isinstance(Square(), Shape)", safe(True)),
    Attack("types_of_functions_and_generators",
           "def f():\n    yield 1\ng = f()\n[repr(type(f)), isinstance(g, type(f())), type(f) is type(lambda: 0),"
           " issubclass(type(g), object), type(f).__name__]",
           safe(["<class 'function'>", True, True, True, "function"])),
    Attack("typing_everyday_use",
           "import typing, dataclasses\n@dataclasses.dataclass\nclass Node:\n    value: int\n"
           "    children: typing.List['Node'] = dataclasses.field(default_factory=list)\n"
           "    unit: typing.Annotated[str, 'si'] = 'm'\n"
           "Pt = typing.NamedTuple('Pt', [('x', int), ('y', int)])\n"
           "[typing.get_origin(typing.List[int]) is list, typing.get_args(typing.Annotated[int, 'm'])[1:],"
           " Node(1, [Node(2)]).children[0].value, Pt(1, 2)._asdict(), typing.get_origin(typing.Type[int]) is type,"
           " repr(typing.get_origin(typing.Annotated[int, 0]))]",
           safe([True, ["m"], 2, {"x": 1, "y": 2}, True, "<class 'typing.Annotated'>"])),
]

OPTIONAL_MODULE_ATTACKS = [
    Attack("enum_pickle_by_enum_name_real_getattr",
           "import enum\nclass C(enum.Enum):\n    A = 1\nf, args = enum.pickle_by_enum_name(C.A, 4)\n"
           "f(enum.unique, '__globals__')['sys'].modules['os'].getuid()", NO_ATTR,
           "the function returned the real getattr"),
    Attack("enum_global_enum_writes_module_globals",
           "import enum\nE = enum.Enum('E', 'dumps', module='json')\nenum.global_enum(E)\n'PWNED'", NO_ATTR),
    Attack("enum_functional_dunder_mapping",
           "import enum\nE = enum.Enum('E', {'__del__': print, 'A': 1})\n'made'", TYPE),
    Attack("enum_functional_dunder_string", "import enum\nE = enum.Enum('E', '__reduce_ex__ A')\n'made'", TYPE),
    Attack("enum_functional_on_own_base",
           "import enum\nclass Base(enum.Enum):\n    pass\nE = Base('E', [('__getattribute__', len), ('A', 1)])\n'made'",
           TYPE),
    Attack("enum_functional_generator_names",
           "import enum\nE = enum.IntEnum('E', ((n, i) for i, n in enumerate(['A', '__init_subclass__'])))\n'made'",
           TYPE),
    Attack("enum_functional_keyword_names",
           "import enum\nE = enum.Enum(value='E', names={'__reduce_ex__': print})\n'made'", TYPE),
    Attack("enum_property_absent", "import enum\nenum.property", NO_ATTR),
    Attack("copy_deepcopy_planted_reduce",
           "import copy\nclass C:\n    pass\nc = C()\nvars(c)['__reduce_ex__'] = lambda p: (lambda: 'PWNED', ())\n"
           "copy.deepcopy(c)", NO_ATTR),
    Attack("copy_reconstruct_setattr",
           "import copy, collections\nclass C:\n    pass\nc = C()\n"
           "state = {'most_common': len}\nvars(c).update(__reduce_ex__=lambda p: (lambda: collections.Counter, (), state))\n"
           "copy.copy(c)\n'PWNED'", NO_ATTR),
    Attack("copy_cached_property_plant",
           "import copy, functools\nclass CP(functools.cached_property):\n    pass\n"
           "def reducer(self):\n    return lambda proto: (lambda: 'PWNED', ())\n"
           "cp = CP(reducer)\ncp.attrname = '__reduce_ex__'\n"
           "class Carrier:\n    pass\nCarrier.x = cp\nc = Carrier()\nc.x\ncopy.deepcopy(c)", TYPE),
    Attack("enum_and_copy_everyday_use",
           "import enum, copy, re\nclass Color(enum.Enum):\n    RED = 1\n    GREEN = 2\n"
           "Shape = enum.Enum('Shape', 'SQUARE CIRCLE')\nclass Perm(enum.Flag):\n    R = 1\n    W = 2\n"
           "class P:\n    def __init__(self):\n        self.items = [1, 2]\np = copy.deepcopy(P())\n"
           "[Color(2).name, Shape.CIRCLE.value, (Perm.R | Perm.W).value, isinstance(re.I, enum.Flag),"
           " issubclass(Color, enum.Enum), p.items, copy.copy(Color.RED) is Color.RED]",
           safe(["GREEN", 2, 3, True, True, [1, 2], True])),
]

ALL_DEFAULT = CLASS_PATTERNS + WRITE_PRIMITIVES + CODE_FRAMES_CONSTRUCTORS + LEGITIMATE
ALL_MODULES = [*DEFAULT_MODULES, *OPTIONAL_MODULES]
OPTIONAL_LIMITS = Limits(wall_time_s=5.0, memory_mb=256, max_output_chars=10_000,
                         max_tool_calls=200, tool_timeout_s=5.0)


def test_attack_ids_are_unique() -> None:
    ids = [attack.id for attack in ALL_DEFAULT + OPTIONAL_MODULE_ATTACKS]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("attack", ALL_DEFAULT, ids=[a.id for a in ALL_DEFAULT])
def test_escape_class(attack: Attack, probe: Probe, host_intact: None) -> None:
    result = probe.run(attack.code)
    attack.expect.check(result, attack.code)
    assert not result.session_restarted, "an attack that a guard refuses must not kill the sandbox"


@pytest.fixture
def all_modules_session(make_runtime: Any) -> Any:
    """A session of a runtime that allows the optional modules (``copy``, ``enum``...)."""
    runtime = make_runtime(SECURITY_TOOLS, limits=OPTIONAL_LIMITS, modules=ALL_MODULES)
    with runtime.session() as session:
        yield session


@pytest.mark.parametrize("attack", OPTIONAL_MODULE_ATTACKS, ids=[a.id for a in OPTIONAL_MODULE_ATTACKS])
def test_escape_class_with_optional_modules(attack: Attack, all_modules_session: Any,
                                            host_intact: None) -> None:
    result = all_modules_session.run(attack.code)
    attack.expect.check(result, attack.code)


PROTOCOL_MATCH = """\
import typing, dataclasses
@typing.runtime_checkable
@dataclasses.dataclass
class P(typing.Protocol):
    _evaluate: object
fr = typing.get_args(typing.List['x'])[0]
found = 'no match'
match fr:
    case P(ev):
        found = ev
found
"""


def test_protocol_structural_match_reads_no_private_attribute(probe: Probe) -> None:
    """A runtime-checkable protocol accepts foreign objects by their attributes
    (on 3.12+ a ``ForwardRef`` matches this one); the class pattern must still
    not read a private attribute from them. On 3.11 the dataclass's own
    attributes make the protocol reject the subject: no match is also safe."""
    result = probe.run(PROTOCOL_MATCH)
    if result.ok:
        assert result.value == "no match", result.to_dict()
    else:
        assert result.error is not None
        assert result.error.details.get("exception") == "AttributeError", result.to_dict()
        assert "private" in result.error.message


# --- the guards themselves, with objects only host code can make ----------------------

class _Foreign:
    """A class the script did not create, with a private attribute."""

    _secret = "host"


def _accepting_foreign(name: str, namespace: dict[str, Any]) -> type:
    """A class whose ``isinstance`` accepts foreign objects, as if some future
    route had registered them (host code can; scripts cannot)."""
    cls = abc.ABCMeta(name, (), namespace)
    cls.register(_Foreign)
    cls.register(types.GeneratorType)
    return cls


def _guards_owning(*classes: type) -> Guards:
    guards = Guards({}, AbortState())
    guards.classes.update(classes)
    return guards


@pytest.mark.parametrize("names", [("gi_frame",), ("f_back",), ("__globals__",), ("__dict__",),
                                   ("__x",), ("co_consts",)])
def test_match_class_refuses_hidden_names_whatever_wrote_them(names: tuple[str, ...]) -> None:
    cls = _accepting_foreign("Written", {"__match_args__": names})
    guards = _guards_owning(cls)
    stand_in = guards.match_class(cls, 1)
    assert stand_in is not cls
    assert stand_in.__match_args__ == names
    subject = (lambda: (yield))()
    with pytest.raises(AttributeError, match="case Written\\(\\) as obj"):
        isinstance(subject, stand_in)
    assert isinstance(object(), stand_in) is False  # not an instance: no read, no refusal


def test_match_class_reads_private_names_only_on_the_scripts_objects() -> None:
    cls = _accepting_foreign("Private", {"__match_args__": ("_secret",), "_secret": "own"})
    guards = _guards_owning(cls)
    stand_in = guards.match_class(cls, 1)
    assert isinstance(cls(), stand_in) is True
    with pytest.raises(AttributeError, match="private"):
        isinstance(_Foreign(), stand_in)


def test_match_class_keeps_immutable_types_and_copies_the_rest() -> None:
    cls = type("Plain", (), {"__match_args__": ("x", "_y")})
    guards = _guards_owning(cls)
    stand_in = guards.match_class(cls, 1)
    assert stand_in is not cls  # a class whose attributes can change: a stand-in
    assert stand_in.__match_args__ is cls.__match_args__  # the very value that was checked
    assert isinstance(cls(), stand_in) and not isinstance(object(), stand_in)
    assert guards.match_class(int, 1) is int  # an immutable type cannot change under the check
    assert guards.match_classes[cls, 2] is guards.match_classes[cls, 2]  # remembered per class


def test_match_verdict_cannot_go_stale_when_match_args_change() -> None:
    """A write that changes ``__match_args__`` after the verdict (host code can; the
    issue's write primitives could) changes nothing the pattern reads: the
    pattern reads the stand-in's copy of the checked value."""
    cls = type("Box", (), {"__match_args__": ("value",)})
    guards = _guards_owning(cls)
    stand_in = guards.match_classes[cls, 1]
    box = cls()
    box.value = "plain"
    box.gi_frame = "hidden"
    cls.__match_args__ = ("gi_frame",)  # the write, after the check
    match box:
        case stand_in(got):  # type: ignore[misc]
            pass
    assert got == "plain"
    assert guards.match_classes[cls, 1] is stand_in  # still the checked copy


def test_match_class_without_match_args_keeps_binding_the_subject() -> None:
    cls = type("S", (str,), {})
    guards = _guards_owning(cls)
    stand_in = guards.match_classes[cls, 1]
    cls.__match_args__ = ("format",)  # appears after the check
    match cls("x"):
        case stand_in(got):  # type: ignore[misc]
            pass
    assert got == "x" and type(got) is cls


def test_scrub_clears_attribute_error_obj_inside_groups() -> None:
    inner = AttributeError("x", name="x", obj=type)
    guards = Guards({}, AbortState())
    try:
        raise ExceptionGroup("g", [ValueError(), ExceptionGroup("h", [inner])])
    except ExceptionGroup:
        guards.check_abort()  # what every except block of a script runs first
    assert inner.obj is None


def test_register_refuses_foreign_classes_on_an_own_abc() -> None:
    own = type("Own", (abc.ABC,), {})
    other = type("Other", (), {})
    guards = _guards_owning(own, other)
    register = guards.register_of(own)
    assert register(other) is other
    for foreign in (types.GeneratorType, types.FrameType, dict, random.Random):
        with pytest.raises(TypeError, match="subclass Own in a class statement"):
            register(foreign)
