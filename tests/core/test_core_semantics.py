"""Interpreter semantics models rely on: each script's value must equal what
plain CPython computes (the expected values below are what CPython gives)."""

from __future__ import annotations

from typing import Any

import pytest

CASES: dict[str, tuple[str, Any]] = {
    "class_super_init": ("""
class Base:
    def __init__(self, name):
        self.name = name
class Child(Base):
    def __init__(self, name, age):
        super().__init__(name)
        self.age = age
c = Child('ann', 3)
[c.name, c.age, isinstance(c, Base), type(c).__name__, issubclass(Child, Base)]
""", ["ann", 3, True, "Child", True]),
    "property_classmethod_staticmethod": ("""
class Temp:
    scale = 'C'
    def __init__(self, c):
        self._c = c
    @property
    def f(self):
        return self._c * 9 / 5 + 32
    @f.setter
    def f(self, value):
        self._c = (value - 32) * 5 / 9
    @classmethod
    def boiling(cls):
        return cls(100)
    @staticmethod
    def unit():
        return 'deg'
t = Temp.boiling()
before = t.f
t.f = 32
[before, t._c, Temp.unit(), t.scale]
""", [212.0, 0.0, "deg", "C"]),
    "dunder_methods": ("""
import functools
@functools.total_ordering
class Money:
    def __init__(self, cents):
        self.cents = cents
    def __repr__(self):
        return f'Money({self.cents})'
    def __eq__(self, other):
        return isinstance(other, Money) and self.cents == other.cents
    def __lt__(self, other):
        return self.cents < other.cents
    def __hash__(self):
        return hash(self.cents)
    def __add__(self, other):
        return Money(self.cents + other.cents)
    def __len__(self):
        return 1
items = [Money(3), Money(1), Money(2)]
[repr(sorted(items)), Money(1) == Money(1), Money(1) != Money(2), Money(2) >= Money(1),
 str(max(items)), repr(sum(items, Money(0))), len({Money(1), Money(1)}), f'{Money(5)!r}']
""", ["[Money(1), Money(2), Money(3)]", True, True, True, "Money(3)", "Money(6)", 1,
      "Money(5)"]),
    "dataclasses": ("""
from dataclasses import dataclass, field, asdict, replace, FrozenInstanceError
@dataclass(frozen=True, order=True)
class Version:
    major: int
    minor: int = 0
@dataclass
class Basket:
    owner: str
    items: list = field(default_factory=list)
    def add(self, x):
        self.items.append(x)
a, b = Basket('a'), Basket('b')
a.add(1)
try:
    Version(1).major = 2
    frozen = 'mutable'
except FrozenInstanceError:
    frozen = 'frozen'
[sorted([Version(2), Version(1, 5), Version(1)]) == [Version(1), Version(1, 5), Version(2)],
 asdict(a), b.items, frozen, repr(Version(1)), replace(Version(1), minor=9).minor,
 Version(1) < Version(1, 1), hash(Version(1)) == hash(Version(1))]
""", [True, {"owner": "a", "items": [1]}, [], "frozen", "Version(major=1, minor=0)", 9, True,
      True]),
    "namedtuple": ("""
from collections import namedtuple
from typing import NamedTuple
Point = namedtuple('Point', ['x', 'y'], defaults=[0])
class Row(NamedTuple):
    id: int
    name: str = '?'
p = Point(1)
q = p._replace(y=5)
r = Row(1)
[p, q._asdict(), Point._fields, Point._make([7, 8]), r.name, r._asdict(), q.x + q.y,
 repr(q)]
""", [[1, 0], {"x": 1, "y": 5}, ["x", "y"], [7, 8], "?", {"id": 1, "name": "?"}, 6,
      "Point(x=1, y=5)"]),
    "nonlocal_global_closures": ("""
counter = 0
def bump():
    global counter
    counter += 1
def make_acc():
    total = 0
    def acc(x):
        nonlocal total
        total += x
        return total
    return acc
acc = make_acc()
bump(); bump()
[acc(1), acc(10), counter, [f() for f in [lambda i=i: i * 2 for i in range(3)]]]
""", [1, 11, 2, [0, 2, 4]]),
    "generators": ("""
def gen(n):
    for i in range(n):
        got = yield i
        if got:
            yield f'got {got}'
def chain(*its):
    for it in its:
        yield from it
def inner():
    yield 1
    return 'done'
def outer():
    result = yield from inner()
    yield result
g = gen(3)
first = next(g)
sent = g.send('x')
[first, sent, list(chain([1], (2, 3), range(4, 5))), list(outer()),
 sum(x * x for x in range(4)), list(zip(gen(2), 'ab'))]
""", [0, "got x", [1, 2, 3, 4], [1, "done"], 14, [[0, "a"], [1, "b"]]]),
    "match_all_patterns": ("""
from dataclasses import dataclass
@dataclass
class Pt:
    x: int
    y: int
def describe(v):
    match v:
        case None:
            return 'none'
        case True:
            return 'true'
        case 0 | 1:
            return 'small'
        case int(n) if n < 0:
            return f'neg {n}'
        case str() as s:
            return f'str {s}'
        case [x]:
            return f'one {x}'
        case [x, *rest]:
            return f'many {x} {rest}'
        case {'kind': 'user', 'name': name, **extra}:
            return f'user {name} {sorted(extra)}'
        case Pt(x=0, y=y):
            return f'on y axis {y}'
        case Pt(x, y):
            return f'pt {x},{y}'
        case _:
            return 'other'
[describe(v) for v in [None, True, 1, -5, 'hi', [9], [1, 2, 3],
                        {'kind': 'user', 'name': 'ann', 'age': 3}, Pt(0, 4), Pt(2, 3), 3.5]]
""", ["none", "true", "small", "neg -5", "str hi", "one 9", "many 1 [2, 3]",
      "user ann ['age']", "on y axis 4", "pt 2,3", "other"]),
    "walrus_star_unpacking": ("""
data = [1, 5, 12, 7]
big = [y for x in data if (y := x * 2) > 10]
first, *middle, last = data
(a, b), *_ = [(1, 2), (3, 4)]
merged = {**{'a': 1}, **{'b': 2}, 'c': 3}
combined = [*range(2), *'ab']
def f(*args, **kwargs):
    return [args, kwargs]
if (n := len(data)) > 3:
    size = n
[big, first, middle, last, a, b, merged, combined, f(*data[:2], **{'k': 1}), size]
""", [[24, 14], 1, [5, 12], 7, 1, 2, {"a": 1, "b": 2, "c": 3}, [0, 1, "a", "b"],
      [[1, 5], {"k": 1}], 4]),
    "augmented_assignment": ("""
class Box:
    def __init__(self):
        self.n = 0
        self._hidden = 10
        self.items = []
    def tick(self):
        self._hidden += 1
        self.n += 1
        return self._hidden
b = Box()
b.n += 5
b.items += [1]
b.tick()
d = {'k': 1, 'l': [1]}
d['k'] += 1
d['l'] *= 2
d.setdefault('m', 0)
d['m'] -= 3
m = [[1, 2], [3, 4]]
m[1][0] **= 2
m[0][1] //= 2
s = 'a'
s *= 3
x = 7
x %= 4
x <<= 2
x |= 1
x ^= 3
x >>= 1
[b.n, b._hidden, b.items, d, m, s, x]
""", [6, 11, [1], {"k": 2, "l": [1, 1], "m": -3}, [[1, 1], [9, 4]], "aaa", 7]),
    "slices": ("""
a = list(range(10))
a[2:5] = ['x']
b = list(range(6))
b[::2] = [0, 0, 0]
c = [1, 2, 3, 4]
del c[1:3]
d = list(range(5))
d[1:1] = [9, 9]
[a, b, c, d, 'hello'[::-1], 'hello'[1:-1], a[-2:], list(range(10))[slice(1, 8, 3)]]
""", [[0, 1, "x", 5, 6, 7, 8, 9], [0, 1, 0, 3, 0, 5], [1, 4], [0, 9, 9, 1, 2, 3, 4], "olleh",
      "ell", [8, 9], [1, 4, 7]]),
    "string_formatting": ("""
from decimal import Decimal
from datetime import date
price, n, name = 1234.5678, 42, 'ann'
[f'{price:,.2f}', f'{n:>6}|', f'{n:<6}|', f'{n:^7}|', f'{n:08.3f}', f'{0.256:.1%}',
 f'{n:x} {n:o} {n:b} {n:#x}', f'{name!r:>8}', f'{price=:.1f}', f'{1e-7:g}',
 f"{date(2026, 8, 24):%Y/%m/%d}", f'{Decimal("1.10") * 3}', f'{-3:+d} {3:+d}',
 '%s has %d items costing %.2f (%5.1f%%)' % (name, n, price, 12.5),
 '%(a)s-%(b)03d' % {'a': 'x', 'b': 7},
 '{} {:>5} {name}'.format('p', 'q', name='r'),
 '{0[k]} {1.real}'.format({'k': 'v'}, 3),
 '{:{w}.{p}f}'.format(3.14159, w=8, p=2), format(1234567, ','), str(Decimal('2.50'))]
""", ["1,234.57", "    42|", "42    |", "  42   |", "0042.000", "25.6%", "2a 52 101010 0x2a",
      "   'ann'", "price=1234.6", "1e-07", "2026/08/24", "3.30", "-3 +3",
      "ann has 42 items costing 1234.57 ( 12.5%)", "x-007", "p     q r", "v 3",
      "    3.14", "1,234,567", "2.50"]),
    "type_introspection": ("""
class C:
    pass
class D(C):
    pass
[type(3).__name__, type('s').__name__, type(C()).__name__, type(D()) is D,
 isinstance(C, type), isinstance(3, type), isinstance(int, type), type(C) is type,
 issubclass(D, C), C.__name__, D().__class__.__name__, type(None).__name__,
 callable(C), isinstance(D(), (int, C))]
""", ["int", "str", "C", True, True, False, True, True, True, "C", "D", "NoneType", True,
      True]),
    "exceptions_and_control_flow": ("""
class AppError(Exception):
    def __init__(self, code, msg):
        super().__init__(msg)
        self.code = code
log = []
def risky(x):
    try:
        if x == 0:
            raise AppError(400, 'zero')
        r = 10 // x
    except AppError as e:
        log.append(f'app {e.code} {e}')
        return None
    except (ZeroDivisionError, TypeError) as e:
        log.append(type(e).__name__)
        raise
    else:
        log.append('else')
        return r
    finally:
        log.append('finally')
try:
    risky('a')
except TypeError:
    log.append('reraised')
try:
    try:
        {}['missing']
    except KeyError as e:
        raise ValueError('wrapped') from e
except ValueError as e:
    log.append([str(e), type(e).__name__])
with_ctx = []
class Ctx:
    def __enter__(self):
        with_ctx.append('enter')
        return self
    def __exit__(self, kind, value, tb):
        with_ctx.append(kind.__name__ if kind else 'clean')
        return kind is KeyError
with Ctx():
    {}['x']
with Ctx() as c:
    pass
[risky(0), risky(5), log, with_ctx, isinstance(c, Ctx)]
""", [None, 2, ["TypeError", "finally", "reraised", ["wrapped", "ValueError"], "app 400 zero",
                "finally", "else", "finally"], ["enter", "KeyError", "enter", "clean"],
      True]),
    "decorators_and_functools": ("""
import functools
calls = []
def logged(fn):
    @functools.wraps(fn)
    def wrapper(*a, **kw):
        calls.append(fn.__name__)
        return fn(*a, **kw)
    return wrapper
@logged
def square(x):
    '''Square it.'''
    return x * x
@functools.lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
part = functools.partial(pow, 2)
[square(4), square.__name__, square.__doc__, calls, fib(50), part(10),
 functools.reduce(lambda a, b: a * b, range(1, 6))]
""", [16, "square", "Square it.", ["square"], 12586269025, 1024, 120]),
    "collections_and_itertools": ("""
from collections import Counter, defaultdict, deque, OrderedDict, ChainMap
from collections.abc import Mapping, Sequence, Iterable
import itertools, operator
c = Counter('abracadabra')
dd = defaultdict(list)
for k, v in [('a', 1), ('b', 2), ('a', 3)]:
    dd[k].append(v)
dq = deque([1, 2, 3], maxlen=3)
dq.append(4)
groups = {k: list(g) for k, g in itertools.groupby(sorted('aabbbc'))}
[c.most_common(2), dict(dd), list(dq), groups,
 list(itertools.accumulate([1, 2, 3])), list(itertools.islice(itertools.count(5), 3)),
 list(itertools.product('ab', repeat=2))[:3], isinstance({}, Mapping),
 isinstance([], Sequence), isinstance((x for x in []), Iterable),
 sorted([{'n': 2}, {'n': 1}], key=operator.itemgetter('n')), ChainMap({'a': 1}, {'a': 2})['a'],
 list(OrderedDict(b=1, a=2))]
""", [[["a", 5], ["b", 2]], {"a": [1, 3], "b": [2]}, [2, 3, 4], {"a": ["a", "a"],
      "b": ["b", "b", "b"], "c": ["c"]}, [1, 3, 6], [5, 6, 7], [["a", "a"], ["a", "b"],
      ["b", "a"]], True, True, True, [{"n": 1}, {"n": 2}], 1, ["b", "a"]]),
    "comprehensions_and_builtins": ("""
rows = [{'city': c, 'v': v} for c, v in zip('xyzx', [3, 1, 2, 4])]
by_city = {}
for r in rows:
    by_city.setdefault(r['city'], []).append(r['v'])
[{k: sum(v) for k, v in sorted(by_city.items())}, sorted({r['city'] for r in rows}),
 max(rows, key=lambda r: r['v'])['city'], [i for i, _ in enumerate('ab', start=1)],
 list(map(str.upper, 'ab')), list(filter(None, [0, 1, '', 'a'])), any([]), all([]),
 round(2.675, 2), divmod(17, 5), tuple(reversed([1, 2])), abs(-3.5), min(3, 1, 2),
 sorted('bca', reverse=True), [*zip(*[(1, 'a'), (2, 'b')])], bytes([104, 105]).decode(),
 int('ff', 16), chr(65) + str(ord('B')), hex(255), 7 / 2, 7 // 2, -7 // 2, 2 ** -1]
""", [{"x": 7, "y": 1, "z": 2}, ["x", "y", "z"], "x", [1, 2], ["A", "B"], [1, "a"], False,
      True, 2.67, [3, 2], [2, 1], 3.5, 1, ["c", "b", "a"], [[1, 2], ["a", "b"]], "hi", 255,
      "A66", "0xff", 3.5, 3, -4, 0.5]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_semantics_match_cpython(fresh: Any, name: str) -> None:
    code, expected = CASES[name]
    result = fresh.run(code)
    assert result.ok, f"{name}: {result.error}"
    assert result.value == expected


def test_expected_values_are_what_cpython_computes() -> None:
    """The table above is checked against plain CPython, so a wrong expectation
    cannot hide a sandbox difference."""
    import ast
    import json

    for name, (code, expected) in CASES.items():
        tree = ast.parse(code)
        last = tree.body.pop()
        assert isinstance(last, ast.Expr)
        namespace: dict[str, Any] = {"__name__": "__main__"}
        exec(compile(tree, name, "exec"), namespace)
        value = eval(compile(ast.Expression(last.value), name, "eval"), namespace)
        assert json.loads(json.dumps(value)) == expected, name


COMPILER_WARNED = r"""
import re
x = 1if True else 2
y = x is 1
[x, y, re.findall('\d+', 'a12b3')]
"""
"""A script CPython runs but its compiler warns about: ``1if`` (an invalid decimal
literal), ``is`` with a literal, a backslash before ``d`` in a plain string (an
invalid escape sequence)."""


def test_what_the_compiler_only_warns_about_runs_and_stays_in_the_sandbox(fresh: Any) -> None:
    """Such a script runs as in CPython even where the host makes warnings errors
    (a test suite's ``filterwarnings = error``), and no warning about it reaches
    the host."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        namespace: dict[str, Any] = {}
        exec(compile(COMPILER_WARNED.replace("\n[", "\n_ = ["), "cpython", "exec"), namespace)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        strict = fresh.run(COMPILER_WARNED)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        shown = fresh.run(COMPILER_WARNED)
    for result in (strict, shown):
        assert result.ok, result.error
        assert result.value == namespace["_"] == [1, True, ["12", "3"]]
    assert [str(w.message) for w in seen] == []


DEFAULT_MODULES = ["math", "statistics", "json", "re", "datetime", "collections",
                   "collections.abc", "itertools", "functools", "dataclasses", "typing",
                   "string", "decimal", "fractions", "random", "operator", "textwrap"]


def test_every_default_module_imports(fresh: Any) -> None:
    code = "\n".join(f"import {m}" for m in DEFAULT_MODULES) + "\n" + (
        "import collections.abc as cabc\n"
        "from math import sqrt, pi\n"
        "from statistics import mean, median\n"
        "from json import dumps, loads\n"
        "from re import compile as re_compile, findall\n"
        "from datetime import date, datetime, timedelta, timezone\n"
        "from collections import Counter\n"
        "from collections.abc import Mapping\n"
        "from itertools import chain\n"
        "from functools import reduce\n"
        "from dataclasses import dataclass\n"
        "from typing import Optional, Any, TypedDict\n"
        "from string import ascii_lowercase, Template\n"
        "from decimal import Decimal, ROUND_HALF_UP\n"
        "from fractions import Fraction\n"
        "from random import Random\n"
        "from operator import itemgetter\n"
        "from textwrap import dedent, shorten\n"
        "[sqrt(16), round(pi, 2), mean([1, 2, 3]), median([3, 1, 2]), loads(dumps({'a': [1]})),\n"
        " findall(r'\\d+', 'a1b22'), re_compile('x+').sub('-', 'axxb'),\n"
        " (date(2026, 1, 31) + timedelta(days=1)).isoformat(),\n"
        " datetime(2026, 1, 1, tzinfo=timezone.utc).isoformat(),\n"
        " datetime.strptime('2026-08-24', '%Y-%m-%d').strftime('%d.%m.%Y'),\n"
        " list(chain([1], [2])), reduce(lambda a, b: a + b, [1, 2, 3]), ascii_lowercase[:3],\n"
        " Template('$x!').substitute(x='hi'),\n"
        " str(Decimal('2.675').quantize(Decimal('0.01'), rounding=ROUND_HALF_UP)),\n"
        " str(Fraction(1, 3) + Fraction(1, 6)), Random(7).randint(1, 1), itemgetter(1)('ab'),\n"
        " dedent('  a\\n  b'), shorten('hello world foo', width=12), cabc is collections.abc,\n"
        " isinstance({}, Mapping), Counter('aab')['a'], math.gcd(12, 18),\n"
        " statistics.stdev([1, 2, 3, 4]), string.digits, textwrap.fill('a b', 10),\n"
        " operator.add(1, 2), fractions.Fraction('0.5').denominator, json.dumps(None),\n"
        " random.Random(1).random() < 1, typing.get_origin(typing.List[int]) is list,\n"
        " decimal.Decimal(1) / 4 == decimal.Decimal('0.25'), itertools.repeat(1, 2) is not None,\n"
        " dataclasses.is_dataclass(1), datetime.min.year, collections.deque([1]).pop(),\n"
        " functools.cmp_to_key(lambda a, b: a - b)(1)\n"
        "   < functools.cmp_to_key(lambda a, b: a - b)(2)]\n"
    )
    result = fresh.run(code)
    assert result.ok, result.error
    assert result.value == [
        4.0, 3.14, 2, 2, {"a": [1]}, ["1", "22"], "a-b", "2026-02-01",
        "2026-01-01T00:00:00+00:00", "24.08.2026", [1, 2], 6, "abc", "hi!", "2.68", "1/2", 1,
        "b", "a\nb", "hello [...]", True, True, 2, 6, 1.2909944487358056, "0123456789", "a b",
        3, 2, "null", True, True, True, True, False, 1, 1, True]


def test_module_objects_are_facades_not_modules(fresh: Any) -> None:
    result = fresh.run("import json, math\n[type(json).__name__ != 'module', repr(math)]")
    assert result.ok, result.error
    assert result.value[0] is True
    assert "sandbox" in result.value[1]


def test_nested_and_recursive_functions_and_sorting_stability(fresh: Any) -> None:
    result = fresh.run(
        "def flatten(x):\n"
        "    return [z for y in x for z in (flatten(y) if isinstance(y, list) else [y])]\n"
        "recs = [('b', 1), ('a', 1), ('c', 0)]\n"
        "[flatten([1, [2, [3, [4]]]]), sorted(recs, key=lambda r: r[1]),\n"
        " sorted(recs), sorted(recs, key=lambda r: (-r[1], r[0]))]"
    )
    assert result.value == [[1, 2, 3, 4], [["c", 0], ["b", 1], ["a", 1]],
                            [["a", 1], ["b", 1], ["c", 0]], [["a", 1], ["b", 1], ["c", 0]]]
