"""Escape attempts, written as an attacker would, on every backend.

Each :class:`Attack` names its expected outcome (see ``security_helpers``):
refused at compile time, refused at run time by a guard, or harmless. Every
test also checks that the host's shared state is unchanged (``host_intact``).
Families follow the issue: dunder walks, computed names, format strings,
frames, module facades, builtins recovery, class machinery, pickling, the
published RestrictedPython CVEs and the smolagents/asteval escapes.
"""

# ruff: noqa: E501  (tables of attack scripts read best one per line)

from __future__ import annotations

import pytest
from security_helpers import COMPILE, Attack, Probe, runtime, safe

NO_ATTR = runtime("AttributeError")
NOT_FOUND = runtime("ModuleNotFoundError")
"""An import without a facade: raised at the statement, nothing is loaded."""
NO_NAME = runtime("NameError")
TYPE = runtime("TypeError")

DUNDER_WALKS = [
    Attack("subclasses", "().__class__.__bases__[0].__subclasses__()", COMPILE),
    Attack("mro", "x = ''.__class__.__mro__[-1]\n'PWNED'", COMPILE),
    Attack("globals_of_function", "def f(): pass\nf.__globals__", COMPILE),
    Attack("builtins_name", "__builtins__['__import__']('os')", COMPILE),
    Attack("dict_of_class", "int.__dict__", COMPILE),
    Attack("base", "int.__base__", COMPILE),
    Attack("code_object", "def f(): pass\nf.__code__", COMPILE),
    Attack("closure", "def f():\n    x = 1\n    def g(): return x\n    return g\nf().__closure__",
           COMPILE),
    Attack("self_of_builtin", "len.__self__", COMPILE),
    Attack("init_globals", "import json\njson.JSONDecoder.__init__.__globals__", COMPILE),
    Attack("getattribute", "object.__getattribute__(1, '__class__')", COMPILE),
    Attack("subclasses_via_object", "object.__subclasses__()", COMPILE),
    Attack("reduce_ex", "(1).__reduce_ex__(2)", COMPILE),
    Attack("name_mangled", "import fractions\nfractions.Fraction(1)._Fraction__x", NO_ATTR),
    Attack("dunder_store", "def f(): pass\nf.__name__ = 'x'", COMPILE),
    Attack("reserved_guard_name", "_getattr_ = getattr", COMPILE),
    Attack("posonly_shadow_guard", "def f(_write_, /):\n    pass", COMPILE,
           "CVE-2026-55830: positional-only parameters shadowing a guard"),
    Attack("walrus_shadow_guard", "(_getattr_ := 1)", COMPILE),
    Attack("import_as_guard", "import math as _write_", COMPILE),
    Attack("except_as_guard", "try:\n    pass\nexcept Exception as _getattr_:\n    pass", COMPILE),
    Attack("class_safe_dunders", "class A:\n    pass\n[A.__name__, A.__qualname__, A().__class__.__name__]",
           safe(["A", "A", "A"])),
]

COMPUTED_NAMES = [
    Attack("getattr_concat", "def f(): pass\ngetattr(f, '__gl' + 'obals__')", NO_ATTR),
    Attack("getattr_underscores", "def f(): pass\ngetattr(f, '_' * 2 + 'globals' + '_' * 2)",
           NO_ATTR),
    Attack("getattr_join", "repr(getattr((), ''.join(['__', 'class', '__'])))",
           safe("<class 'tuple'>"), "__class__ is readable and harmless for non-metaclasses"),
    Attack("getattr_subclasses", "getattr(getattr((), '__class__'), '__subclasses__')", NO_ATTR),
    Attack("getattr_private_facade", "import random\ngetattr(random, '_os')", NO_ATTR),
    Attack("getattr_frame", "g = (i for i in [1])\ngetattr(g, 'gi_' + 'frame')", NO_ATTR),
    Attack("hasattr_reveals_only", "def f(): pass\nhasattr(f, '__globals__')", safe(True)),
    Attack("setattr_dunder", "def f(): pass\nsetattr(f, '__code__', None)", NO_ATTR),
    Attack("setattr_shared_module", "import json\nsetattr(json, 'dumps', len)", TYPE),
    Attack("vars_no_arg", "vars()", TYPE),
    Attack("vars_of_class", "class A: pass\nvars(A)", TYPE),
    Attack("vars_of_builtin", "vars(len)", TYPE),
    Attack("dir_no_arg", "dir()", TYPE),
    Attack("dir_hides_dunders", "len([n for n in dir(1) if n.startswith('__')])", safe(0)),
    Attack("globals_builtin", "globals()", NO_NAME),
    Attack("locals_builtin", "locals()", NO_NAME),
    Attack("eval_builtin", "eval('1')", COMPILE),
    Attack("exec_builtin", "exec('1')", COMPILE),
    Attack("compile_builtin", "compile('1', 'x', 'eval')", COMPILE),
    Attack("open_builtin", "open('/proc/self/environ').read()", NO_NAME),
    Attack("breakpoint", "breakpoint()", runtime("NotImplementedError")),
    Attack("import_dunder_call", "__import__('os')", COMPILE),
    Attack("builtins_via_getattr", "getattr(print, '__self__')", NO_ATTR),
    Attack("attrgetter_globals",
           "import operator\ndef f(): pass\noperator.attrgetter('__globals__')(f)", NO_ATTR),
    Attack("attrgetter_dotted",
           "import operator\noperator.attrgetter('__class__.__base__')(1)", NO_ATTR),
    Attack("attrgetter_class_is_safe",
           "import operator\nrepr(operator.attrgetter('__class__')(int))", safe("<class 'type'>")),
    Attack("methodcaller_reduce", "import operator\noperator.methodcaller('__reduce_ex__', 2)(1)",
           NO_ATTR),
    Attack("methodcaller_format",
           "import operator, random\n"
           "operator.methodcaller('format', random.Random)('{0.seed.__globals__}')", NO_ATTR),
]

FORMAT_STRINGS = [
    Attack("format_globals",
           "def f(): pass\n'{0.__globals__}'.format(f)", NO_ATTR),
    Attack("format_init_globals",
           "import random\n'{0.__init__.__globals__[_os]}'.format(random.Random())", NO_ATTR),
    Attack("format_class_walk", "'{0.__class__.__base__}'.format(1)", NO_ATTR),
    Attack("format_map_walk", "'{x.__class__.__init__.__globals__}'.format_map({'x': 1})",
           NO_ATTR),
    Attack("format_unbound", "import random\nstr.format('{0.seed.__globals__}', random.Random)",
           NO_ATTR),
    Attack("format_via_type", "import random\ntype('').format('{0.seed.__globals__}', random.Random)",
           NO_ATTR),
    Attack("format_via_class_attr",
           "import random\n''.__class__.format('{0.seed.__globals__}', random.Random)", NO_ATTR),
    Attack("format_getattr_built",
           "import random\ngetattr('{0.seed.__globals__}', 'for' + 'mat')(random.Random)",
           NO_ATTR),
    Attack("format_private", "class A:\n    _x = 1\n'{0._private}'.format(1)", NO_ATTR),
    Attack("format_private_own_ok", "class A:\n    _x = 7\n'{0._x}'.format(A())", safe("7")),
    Attack("format_spec_nested", "def f(): pass\n'{0:{1.__globals__}}'.format(1, f)", NO_ATTR),
    Attack("format_frame", "g = (i for i in [1])\n'{0.gi_frame.f_globals}'.format(g)", NO_ATTR),
    Attack("format_subclass",
           "import random\nclass S(str):\n    pass\nS('{0.seed.__globals__}').format(random.Random)",
           NO_ATTR),
    Attack("format_super_bound",
           "import random\nclass S(str):\n    pass\n"
           "super(S, S('{0.seed.__globals__[_os]}')).format(random.Random)", NO_ATTR,
           "found by this suite: super() handed out the real bound str.format"),
    Attack("format_super_unbound",
           "import random\nclass S(str):\n    pass\n"
           "super(S, S).format(S('{0.seed.__globals__}'), random.Random)", NO_ATTR),
    Attack("format_userstring",
           "import collections, random\n"
           "collections.UserString('{0.seed.__globals__[_os]}').format(random.Random)", NO_ATTR,
           "found by this suite: UserString.format calls the real str.format"),
    Attack("format_userstring_unbound",
           "import collections, random\nus = collections.UserString('{0.seed.__globals__}')\n"
           "collections.UserString.format(us, random.Random)", NO_ATTR),
    Attack("format_userstring_map",
           "import collections, random\n"
           "collections.UserString('{r.seed.__globals__}').format_map({'r': random.Random})",
           NO_ATTR),
    Attack("string_formatter_absent", "import string\nstring.Formatter().get_field('0', [1], {})",
           NO_ATTR, "CVE-2024-47532 / CVE-2026-76825: string.Formatter is not in the facade"),
    Attack("template_is_harmless", "import string\nstring.Template('$a').substitute(a='ok')",
           safe("ok")),
    Attack("fstring_dunder", "def f(): pass\nf'{f.__globals__}'", COMPILE),
    Attack("fstring_class_walk", "f'{(1).__class__.__base__}'", COMPILE),
    Attack("format_builtin_ok", "format(3.14159, '.2f')", safe("3.14")),
    Attack("percent_format_ok", "'%(a)s' % {'a': 1}", safe("1")),
]

FRAMES = [
    Attack("gen_frame", "g = (i for i in [1])\ng.gi_frame.f_back.f_globals", COMPILE,
           "CVE-2023-37271"),
    Attack("gen_frame_def", "def gen():\n    yield 1\ng = gen()\ng.gi_frame", COMPILE),
    Attack("gen_code", "def gen():\n    yield 1\ngen().gi_code", COMPILE),
    Attack("gen_yieldfrom", "def gen():\n    yield 1\ngen().gi_yieldfrom", COMPILE),
    Attack("coroutine", "async def f():\n    pass\nf().cr_frame", COMPILE),
    Attack("await", "async def f():\n    await g()\nf().cr_await", COMPILE),
    Attack("traceback_attr", "try:\n    1/0\nexcept Exception as e:\n    tb = e.__traceback__", COMPILE),
    Attack("traceback_getattr",
           "try:\n    1/0\nexcept Exception as e:\n    tb = getattr(e, '__traceback__')", NO_ATTR),
    Attack("tb_frame_getattr",
           "try:\n    1/0\nexcept Exception as e:\n    e2 = e\ngetattr(e2, 'tb_frame', 'none')",
           NO_ATTR, "a default does not turn a hidden name into a probe"),
    Attack("exc_context", "try:\n    1/0\nexcept Exception as e:\n    c = e.__context__", COMPILE),
    Attack("sys_exc_info", "import sys\nsys.exc_info()", NO_ATTR),
    Attack("inspect_module", "import inspect\ninspect.currentframe()", NOT_FOUND),
    Attack("traceback_module", "import traceback", NOT_FOUND),
    Attack("attribute_error_obj",
           "class A:\n    pass\ntry:\n    getattr(len, '__self__')\nexcept AttributeError as e:\n"
           "    leaked = e.obj\nrepr(leaked)", safe("None"),
           "the guard's AttributeError carries no object"),
]

FACADES = [
    Attack("dataclasses_sys", "import dataclasses\ndataclasses.sys", NO_ATTR),
    Attack("dataclasses_builtins", "import dataclasses\ndataclasses.builtins", NO_ATTR),
    Attack("typing_sys", "import typing\ntyping.sys", NO_ATTR),
    Attack("statistics_sys", "import statistics\nstatistics.sys", NO_ATTR),
    Attack("random_os", "import random\nrandom._os", NO_ATTR),
    Attack("random_inst", "import random\nrandom._inst", NO_ATTR),
    Attack("json_decoder", "import json\njson.decoder", NO_ATTR),
    Attack("json_scanner", "import json\njson.scanner", NO_ATTR),
    Attack("re_compiler", "import re\nre._compiler", NO_ATTR),
    Attack("re_sre", "import re\nre.sre_compile", NO_ATTR),
    Attack("collections_abc_sys", "import collections.abc\ncollections.abc.sys", NO_ATTR),
    Attack("functools_singledispatch", "import functools\nfunctools.singledispatch", NO_ATTR),
    Attack("typing_get_type_hints",
           "import typing\nclass A:\n    x: 'print(1)'\ntyping.get_type_hints(A)", NO_ATTR),
    Attack("forward_ref_evaluate",
           "import typing\nref = typing.get_args(typing.List['__import__(\"os\")'])[0]\n"
           "ref._evaluate(None, None, frozenset())", NO_ATTR),
    Attack("typing_named_tuple_annotations",
           "import typing\nP = typing.NamedTuple('P', [('x', '__import__(\"os\")')])\nP(1).x",
           safe(1), "string annotations are never evaluated"),
    Attack("facade_private_name", "import math\nmath._facade_name", NO_ATTR),
    Attack("facade_is_read_only", "import math\nmath.pi = 3", TYPE),
    Attack("facade_class_reinit",
           "import math\ntype(math).__init__(math, 'math', {'pi': 3})\nmath.pi", TYPE,
           "re-initialising a facade is a write"),
    Attack("import_os", "import os", NOT_FOUND),
    Attack("import_subprocess", "import subprocess", NOT_FOUND),
    Attack("import_builtins", "import builtins", NOT_FOUND),
    Attack("from_import_os", "from os import system", NOT_FOUND),
    Attack("relative_import", "from . import x", runtime("ImportError")),
    Attack("import_strptime_internal", "import _strptime", NOT_FOUND,
           "_strptime is importable by stdlib C code only, never by scripts"),
    Attack("enum_metaclass_absent", "import re\ntype(re.RegexFlag)('X', (), {})", TYPE),
    Attack("pickle", "import pickle", NOT_FOUND),
    Attack("ctypes", "import ctypes", NOT_FOUND),
    Attack("threading", "import threading", NOT_FOUND),
]

BUILTINS_RECOVERY = [
    Attack("type_three_args", "type('X', (), {})", TYPE),
    Attack("type_of_type", "type(int)('X', (), {'f': 1})", TYPE),
    Attack("type_of_type_of_type", "type(type(type))('X', (), {})", TYPE),
    Attack("class_of_type", "int.__class__.__class__('X', (), {})", TYPE),
    Attack("metaclass_of_abc",
           "import collections.abc\ntype(collections.abc.Mapping)('X', (), {'__del__': len})", TYPE,
           "found by this suite: type() handed out ABCMeta, which builds classes from any dict"),
    Attack("metaclass_of_typeddict",
           "import typing\nTD = typing.TypedDict('TD', {'a': int})\ntype(TD)('X', (), {})", TYPE),
    Attack("metaclass_via_class_attr",
           "import collections.abc\ncollections.abc.Mapping.__class__('X', (), {})", TYPE),
    Attack("type_repr_is_type", "repr(type(int))", safe("<class 'type'>")),
    Attack("isinstance_type_ok", "isinstance(int, type)", safe(True)),
    Attack("super_getattribute", "class A:\n    def f(self):\n        return super().__getattribute__('x')",
           COMPILE),
    Attack("super_object_walk",
           "class A:\n    pass\ns = super(A, A())\ngetattr(s, '__self_class__')", NO_ATTR),
    Attack("object_new", "object.__new__(int)", COMPILE),
    Attack("print_file", "print('x', file=None)\nprint('y', file=1)", TYPE),
]

CLASS_MACHINERY = [
    Attack("metaclass_keyword", "class M(type): pass\nclass A(metaclass=M): pass", COMPILE),
    Attack("init_subclass", "class A:\n    def __init_subclass__(cls):\n        pass", COMPILE),
    Attack("class_getitem", "class A:\n    def __class_getitem__(cls, x):\n        return x", COMPILE),
    Attack("descriptor_get", "class D:\n    def __get__(self, obj, owner):\n        return owner",
           COMPILE),
    Attack("set_name", "class D:\n    def __set_name__(self, owner, name):\n        pass", COMPILE),
    Attack("del_method", "class A:\n    def __del__(self):\n        pass", COMPILE,
           "smolagents #2395: __del__ as a time bomb in the host"),
    Attack("getattribute_method", "class A:\n    def __getattribute__(self, n):\n        pass", COMPILE),
    Attack("setattr_method", "class A:\n    def __setattr__(self, n, v):\n        pass", COMPILE),
    Attack("reduce_method", "class A:\n    def __reduce__(self):\n        return (len, ([],))", COMPILE),
    Attack("slots_name", "class A:\n    __slots__ = ('x',)", COMPILE),
    Attack("dunder_assign_in_body", "class A:\n    __exit__ = len", COMPILE),
    Attack("subclasshook", "class A:\n    @classmethod\n    def __subclasshook__(cls, c):\n        return True",
           COMPILE),
    Attack("mro_entries", "class A:\n    def __mro_entries__(self, b):\n        return ()", COMPILE),
    Attack("decorator_returns_anything",
           "def deco(f):\n    return 42\n@deco\ndef g(): pass\ng", safe(42)),
    Attack("decorator_on_class", "def deco(c):\n    return c.__name__\n@deco\nclass A: pass\nA",
           safe("A")),
    Attack("wraps_copies_names",
           "import functools\ndef outer(f):\n    @functools.wraps(f)\n    def inner(*a):\n"
           "        return f(*a)\n    return inner\n@outer\ndef hello(): return 1\n"
           "[hello.__name__, hello()]", safe(["hello", 1])),
    Attack("update_wrapper_globals",
           "import functools, dataclasses\ndef me(): pass\n"
           "functools.update_wrapper(me, dataclasses.fields, (), ('__globals__',))\n"
           "sys.modules['os'].getcwd()", TYPE,
           "found by this suite: copied a stdlib module's globals (sys) into the namespace"),
    Attack("wraps_globals",
           "import functools, json\n@functools.wraps(json.loads, (), ('__globals__',))\n"
           "def me(): pass\n'PWNED'", TYPE),
    Attack("update_wrapper_shared_class",
           "import functools, collections\ndef f(): pass\n"
           "functools.update_wrapper(collections.Counter, f)", TYPE),
    Attack("update_wrapper_assign_method",
           "import functools, collections\nclass Evil:\n    most_common = 1\n"
           "functools.update_wrapper(collections.Counter, Evil(), ('most_common',), ())", TYPE),
    Attack("total_ordering_shared", "import functools, statistics\nfunctools.total_ordering(statistics.NormalDist)",
           TYPE),
    Attack("dataclass_shared_class", "import dataclasses, textwrap\ndataclasses.dataclass(textwrap.TextWrapper)",
           TYPE),
    Attack("dataclass_typeddict_field_injection",
           "import typing, dataclasses\n"
           "TD = typing.TypedDict('TD', {'a,__import__(\"os\").getcwd()': int})\n"
           "class Y(TD):\n    pass\ndataclasses.dataclass(Y)\n'PWNED'", TYPE,
           "found by this suite: dataclass compiles source text from field names"),
    Attack("dataclass_own_ok",
           "import dataclasses\n@dataclasses.dataclass(order=True)\nclass P:\n    x: int\n"
           "    y: int = 0\n[dataclasses.asdict(P(1)), P(1) < P(2)]", safe([{"x": 1, "y": 0}, True])),
    Attack("exit_swallow_ok_without_abort",
           "class S:\n    def __enter__(self): return self\n    def __exit__(self, *a): return True\n"
           "with S():\n    1/0\n'swallowed'", safe("swallowed")),
]

PICKLING = [
    Attack("reduce_getattr", "getattr(print, '__reduce__')()", NO_ATTR,
           "asteval #86: print.__reduce__ handed out getattr"),
    Attack("reduce_attr", "print.__reduce__()", COMPILE),
    Attack("copyreg", "import copyreg", NOT_FOUND),
    Attack("marshal", "import marshal", NOT_FOUND),
]

SMOLAGENTS_ASTEVAL = [
    Attack("smolagents_cve_2025_9959_popen",
           "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'Popen']", COMPILE),
    Attack("smolagents_popen_getattr",
           "base = getattr(getattr((), '__class__'), '__base__')\n"
           "getattr(base, '__subclasses__')()", NO_ATTR),
    Attack("smolagents_cve_2025_5120_module_attr",
           "import random\nrandom._os.system('id')", NO_ATTR),
    Attack("smolagents_builtins_via_function",
           "def f(): pass\nb = getattr(f, '__builtins__')", NO_ATTR),
    Attack("asteval_type_of_str", "type(str)('X', (str,), {})", TYPE,
           "asteval #32: type(str) returned the real type"),
    Attack("asteval_procedure_attrs",
           "def f(): pass\n[getattr(f, n, 'hidden') for n in ('__code__', 'func_code')]",
           NO_ATTR),
    Attack("asteval_format_leak", "'{0.__class__.__mro__}'.format(1)", NO_ATTR),
]

ALL = (DUNDER_WALKS + COMPUTED_NAMES + FORMAT_STRINGS + FRAMES + FACADES + BUILTINS_RECOVERY
       + CLASS_MACHINERY + PICKLING + SMOLAGENTS_ASTEVAL)


def test_attack_ids_are_unique() -> None:
    ids = [attack.id for attack in ALL]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("attack", ALL, ids=[a.id for a in ALL])
def test_attack(attack: Attack, probe: Probe, host_intact: None) -> None:
    result = probe.run(attack.code)
    attack.expect.check(result, attack.code)
    assert not result.session_restarted, "an attack that a guard refuses must not kill the sandbox"
