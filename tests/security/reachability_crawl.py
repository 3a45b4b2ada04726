"""The reachability crawler's script: restricted Python that runs INSIDE the sandbox.

``reachability.py`` (host side) prepends ``import`` lines for every default
facade module and a ``ROOTS`` list (every builtin name a script may use, every
module, the tool stubs), then appends ``crawl(ROOTS, LIMITS)`` as the final
expression. The script follows every route a script has from those roots, with
the script's own guards (it *is* a script): attribute names from ``dir()`` plus
every special and hidden name (through the sandbox's ``getattr``), ``type()``,
``mro()``, zero-argument calls, iteration, the exceptions each step raises,
class patterns (``case C(a, b)``), format fields (``"{0.x}".format(o)``,
``format_map``), ``vars()`` and ``super()``. It returns what it reached as JSON
data: the class objects by the name ``repr()`` gives them (with how many
distinct objects carry that name and whether each is a ``type()`` stand-in),
counts of objects by type, and routes on which two ways of reading the same
attribute disagree. The host compares that with :mod:`toolscript.sandbox.inventory`.

Bounded: at most ``max_objects`` objects, ``max_depth`` steps from a root, and
only the first ``per_type`` instances of a type reached under one attribute
name are followed further (every class object is followed).
"""

# The typing aliases and getattr calls are crawl roots, written the way scripts write them:
# ruff: noqa: UP006, UP007, UP014, UP017, UP045, B009

import asyncio
import collections
import copy
import dataclasses
import enum
import functools
import io
import json
import re
import typing

CRAWLED = (Exception, asyncio.CancelledError)
"""What a step may raise and the crawl goes on (a cancelled task's ``result()`` raises
``CancelledError``, a ``BaseException`` as in CPython)."""

SPECIAL_NAMES = (
    "__class__", "__init__", "__name__", "__qualname__", "__doc__", "__dict__", "__module__",
    "__mro__", "__bases__", "__base__", "__subclasses__", "__globals__", "__code__",
    "__closure__", "__defaults__", "__kwdefaults__", "__self__", "__func__", "__wrapped__",
    "__objclass__", "__traceback__", "__context__", "__cause__", "__suppress_context__",
    "__builtins__", "__annotations__", "__match_args__", "__slots__", "__weakref__",
    "__getattribute__", "__reduce__", "__reduce_ex__", "__getstate__", "__setstate__",
    "__new__", "__init_subclass__", "__subclasshook__", "__set_name__", "__get__",
    "__call__", "__origin__", "__args__", "__parameters__", "__orig_bases__",
    "__orig_class__", "__members__", "__dataclass_fields__", "__loader__", "__spec__",
    "__all__", "__copy__", "__deepcopy__", "__del__", "__setattr__", "__delattr__",
    "__sizeof__", "__format__", "__getnewargs__", "__prepare__", "__instancecheck__",
    "__private", "mro", "register",
)
"""Special names ``dir()`` does not list in the sandbox: each is tried through ``getattr``."""

HIDDEN_NAMES = (
    "gi_frame", "gi_code", "gi_yieldfrom", "tb_frame", "tb_next", "f_back", "f_globals",
    "f_locals", "f_builtins", "co_code", "co_consts", "cell_contents", "cr_frame", "cr_await",
    "ag_frame",
)
"""Frame, code and generator internals: refused by the rule wherever a name comes from."""

NO_CALL = frozenset({
    "clear", "pop", "popitem", "popleft", "reverse", "sort", "close", "detach", "reset",
    "seed", "task_done", "join", "get", "get_nowait", "cache_clear", "clear_cache",
    "clear_flags", "clear_traps", "truncate", "print", "breakpoint", "__init__", "setstate",
    "getstate",
})
"""Zero-argument methods not called (except on the crawler's own seeds, whose routes start
with ``@``): they would empty or change objects shared with the rest of the process."""


HOLDERS = frozenset({
    "toolscript.sandbox.guards.ModuleFacade", "list", "tuple", "dict", "set", "frozenset",
    "dict_keys", "dict_values", "dict_items", "mappingproxy",
})
"""Types whose objects hold routes rather than being one: always followed, and
everything within :data:`FREE_STEPS` of them too (classes likewise)."""

LEAVES = frozenset({
    "str", "int", "float", "bool", "bytes", "complex", "NoneType", "super",
    "str_ascii_iterator", "str_iterator", "bytes_iterator",
})
"""Types whose objects all offer the same routes: only the first few are followed,
wherever they come from."""

CALLABLES = frozenset({
    "function", "method", "builtin_function_or_method", "builtin_method", "method-wrapper",
    "method_descriptor", "wrapper_descriptor", "classmethod_descriptor",
})
"""Types whose objects the report lists by ``__qualname__`` too (as ``'type qualname'``)."""

FREE_STEPS = 1
ITEMS = 40
"""Items taken from each iterator."""


def class_key(cls, own=()):
    """The name ``repr()`` gives a class: ``'int'``, ``'re.Pattern'``, ``'enum:Enum'``;
    ``'__sandbox__.<qualname>'`` for the crawler's own classes (``own``), and
    ``'unowned:...'`` for any other class that claims to be the script's."""
    for mine in own:
        if cls is mine:
            return "__sandbox__." + cls.__qualname__
    text = repr(cls)
    if text.startswith("<class '__sandbox__."):
        return "unowned:" + text
    for prefix, tag in (("<class '", ""), ("<enum '", "enum:"), ("<flag '", "flag:")):
        if text.startswith(prefix) and text.endswith("'>"):
            return tag + text[len(prefix):-2]
    return text


class Exit:
    """A context manager that keeps what ``__exit__`` is handed."""

    def __init__(self, found):
        self.found = found

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        self.found.extend([kind, value, tb])
        return True


class Own:
    """An object of the script's own class."""

    def __init__(self):
        self.value = 1
        self._private = [1]

    def method(self):
        return super()


@dataclasses.dataclass
class Point:
    """A dataclass of the script."""

    x: int = 1
    y: int = 2


class Color(enum.Enum):
    """An enum of the script."""

    RED = 1


try:
    class Stream(io.StringIO):
        """A script subclass of a class with a finalizer (the sandbox may refuse it)."""
except TypeError:
    Stream = None


class Cached:
    """A ``functools.cached_property`` user."""

    @functools.cached_property
    def total(self):
        return 3


def generator():
    yield 1
    yield 2


Pair = collections.namedtuple("Pair", "a b")
Shade = enum.Enum("Shade", "DARK LIGHT")
Bits = enum.Flag("Bits", "A B")
Named = typing.NamedTuple("Named", [("a", int)])
OWN = tuple(c for c in (Own, Point, Color, Stream, Cached, Exit, Pair, Shade, Bits, Named)
            if c is not None)
"""The crawler's own classes: the only classes it may reach that are not inventoried."""


def values():
    """Instances a script builds with arguments (zero-argument calls do not reach them)."""
    import datetime
    import decimal
    import fractions
    import hashlib
    import itertools
    import operator
    import statistics
    import string
    import typing
    import uuid
    import zoneinfo

    stream = io.StringIO("a,b\n1,2\n")
    found = [
        typing.List[int], typing.Optional[int], typing.Union[int, str], typing.Literal[1],
        typing.Callable[[int], int], typing.Annotated[int, "x"], typing.Tuple[int, ...],
        typing.TypeVar("T"), typing.Dict[str, int], list[int], int | str,
        datetime.datetime(2020, 1, 2, 3, 4, 5), datetime.timedelta(days=1),
        datetime.timezone.utc, fractions.Fraction(1, 3), decimal.Decimal("1.5"),
        decimal.localcontext(), collections.Counter("abca"), collections.ChainMap({"a": 1}),
        collections.deque([1, 2]), collections.OrderedDict(a=1), collections.defaultdict(list),
        collections.UserString("s"), functools.partial(max, 1), itertools.chain([1], [2]),
        itertools.groupby("aab"), itertools.tee([1, 2]), itertools.islice("abc", 2),
        operator.itemgetter(0), operator.attrgetter("real"), operator.methodcaller("upper"),
        hashlib.sha256(b"x"), hashlib.blake2b(b"x"), hashlib.shake_128(b"x"), uuid.uuid4(),
        zoneinfo.ZoneInfo("UTC"), string.Template("$a"), statistics.NormalDist(0, 1),
        re.compile("(a)"), re.compile("a").scanner("aa"), stream,
        io.BytesIO(b"ab"), bytearray(b"ab"),
        {"a": 1}.items(), reversed([1]), reversed(range(3)), iter(range(1 << 70)),
        iter(lambda: 1, 2), property(lambda self: 1), classmethod(len), staticmethod(len),
        slice(1, 2), complex(1, 2), range(3), enumerate("ab"), zip("ab"), map(str, [1]),
        filter(None, [1]), json.JSONDecoder(), json.JSONEncoder(),
    ]
    return found + made(more_values(stream))


def more_values(stream):
    """Builders of what the facades return from calls with arguments, each tried on its own."""
    import base64
    import csv
    import datetime
    import decimal
    import hashlib
    import heapq
    import itertools
    import queue
    import random
    import textwrap
    import time
    import typing
    import uuid
    import zoneinfo

    paris = lambda: zoneinfo.ZoneInfo("Europe/Paris")  # noqa: E731
    return [
        lambda: csv.reader(["a,b", "1,2"]), lambda: csv.writer(stream),
        lambda: csv.DictReader(["a,b", "1,2"]), lambda: csv.DictWriter(stream, ["a"]),
        lambda: list(csv.DictReader(["a,b", "1,2"])), lambda: csv.Sniffer().sniff("a,b\n1,2"),
        lambda: textwrap.TextWrapper(width=10), lambda: queue.Queue(2), lambda: queue.SimpleQueue(),
        lambda: random.Random(1), lambda: decimal.Context(prec=5), lambda: uuid.UUID(int=1),
        lambda: time.gmtime(0), lambda: datetime.datetime(2020, 6, 1, tzinfo=paris()),
        lambda: paris().utcoffset(datetime.datetime(2020, 6, 1)),
        lambda: datetime.datetime(2020, 1, 1).astimezone(paris()),
        lambda: re.finditer("a", "aa"), lambda: re.match("(?P<x>a)", "a").groupdict(),
        lambda: heapq.merge([1], [2]), lambda: next(itertools.groupby("aab")),
        lambda: dataclasses.fields(Point()),
        lambda: dataclasses.asdict(Point()), lambda: dataclasses.field(default=1),
        lambda: typing.get_args(typing.Dict[str, int]),
        lambda: Named(1), lambda: typing.Generic[typing.TypeVar("U")],
        lambda: collections.Counter("ab").most_common(),
        lambda: base64.b64encode(b"x"), lambda: hashlib.new("md5"), lambda: copy.deepcopy(Point()),
        lambda: io.BytesIO(b"ab").getbuffer(), lambda: Bits.A | Bits.B, lambda: ~Bits.A,
        lambda: json.loads('{"a": [1]}'),
        lambda: decimal.Decimal(1) / decimal.Decimal(3), lambda: datetime.date(2020, 1, 1),
        lambda: datetime.time(1, 2, tzinfo=datetime.timezone.utc),
        lambda: functools.reduce(max, [1, 2]), lambda: functools.lru_cache(maxsize=2)(len),
        lambda: functools.partialmethod(len), lambda: functools.cmp_to_key(len),
    ]


def made(builders):
    """What each builder returns, or the exception it raises (also a route)."""
    found = []
    for build in builders:
        try:
            found.append(build())
        except CRAWLED as exc:
            found.append(exc)
    return found


async def async_seeds(tools, found):
    """Objects async code makes: coroutines, tasks, futures, the asyncio facade's
    classes, async generators and their awaitables, tool calls, the exceptions."""

    async def own():
        return 1

    async def agen():
        yield 1

    async def failing():
        raise KeyError("k")

    class Manager:
        async def __aenter__(self):
            return self

        async def __aexit__(self, kind, value, tb):
            found.extend([("__aexit__ kind", kind), ("__aexit__ value", value),
                          ("__aexit__ tb", tb)])
            return True

    found.append(("coroutine", own()))
    task = asyncio.create_task(own(), name="seed")
    found.append(("task", task))
    await task
    pending = asyncio.create_task(asyncio.sleep(0))
    found.append(("pending task", pending))
    found.append(("gather", asyncio.gather(own(), own())))
    gen = agen()
    found += [("async generator", gen), ("asend", gen.asend(None)),
              ("athrow", gen.athrow(ValueError)), ("aclose", gen.aclose())]
    async for _value in agen():
        pass
    for _name, tool in tools:
        found.append(("tool call", tool()))
        try:
            found.append(("awaited tool", await tool()))
        except CRAWLED as exc:
            found.append(("awaited tool raised", exc))
    async with asyncio.TaskGroup() as group:
        group.create_task(own())
    found.append(("task group", group))
    try:
        async with asyncio.TaskGroup() as failed_group:
            failed_group.create_task(failing())
    except CRAWLED as exc:
        found.append(("task group error", exc))
    try:
        await asyncio.wait_for(asyncio.sleep(5), timeout=0.01)
    except CRAWLED as exc:
        found.append(("wait_for timeout", exc))
    cancelled = asyncio.create_task(asyncio.sleep(5))
    await asyncio.sleep(0)
    cancelled.cancel()
    try:
        await cancelled
    except BaseException as exc:
        found.append(("cancelled", exc))
    async with asyncio.timeout(5) as limit:
        found.append(("timeout", limit))
    async with Manager():
        raise KeyError("k")
    found += [("semaphore", asyncio.Semaphore(2)), ("lock", asyncio.Lock()),
              ("event", asyncio.Event()), ("queue", asyncio.Queue()),
              ("bounded", asyncio.BoundedSemaphore(1)),
              ("as_completed", asyncio.as_completed([own()])),
              ("wait", await asyncio.wait([asyncio.create_task(own())])),
              ("current", asyncio.current_task()), ("shield", asyncio.shield(own()))]
    for refused in (asyncio.get_event_loop, asyncio.to_thread):
        try:
            refused()
        except CRAWLED as exc:
            found.append(("refused", exc))


def seeds(tools):
    """Objects a script makes in a few lines: its own classes and instances,
    generators, exceptions raised by the interpreter, facades and tools, and
    what ``__exit__`` receives."""
    found = [("Own", Own), ("Point", Point), ("Color", Color), ("Stream", Stream),
             ("Cached", Cached), ("Exit", Exit),
             ("Own()", Own()), ("Own().method()", Own().method()), ("Point()", Point()),
             ("Color.RED", Color.RED), ("Cached()", Cached()),
             ("generator()", generator()), ("lambda", lambda: 0),
             ("Pair(1, 2)", Pair(1, 2)), ("Shade", Shade),
             ("re.match", re.match("(a)(b)?", "ab")), ("copy", copy.copy([1]))]
    found += [(f"value{index}", value) for index, value in enumerate(values())]
    failing = [lambda: Stream("x"), lambda: json.loads("{"), lambda: re.compile("("), lambda: 1 / 0,
               lambda: undefined_name, lambda: [].pop(), lambda: {}["k"],  # noqa: F821
               lambda: next(iter(())), lambda: int("x"), lambda: Own().missing,
               lambda: getattr(Own(), "__dict__"), lambda: copy.deepcopy([], {})]
    failing += [tool for _name, tool in tools]
    failing += [lambda t=tool: t(1, 2, 3, 4, 5) for _name, tool in tools]
    for index, make in enumerate(failing):
        try:
            found.append((f"seed{index}()", make()))
        except CRAWLED as exc:
            found.append((f"seed{index}() raised", exc))
    kept = []
    with Exit(kept):
        json.loads("[")
    with Exit(kept):
        raise KeyError("k")
    found += [(f"__exit__ argument {i}", value) for i, value in enumerate(kept)]
    made_async = []
    asyncio.run(async_seeds(tools, made_async))
    found += made_async
    return [("@" + name, value) for name, value in found]  # "@": the crawler made it


def match_route(obj, cls, n):
    """What a class pattern ``case cls(a, ...)`` with ``n`` positions captures."""
    if n == 1:
        match obj:
            case cls(a):
                return [a]
    elif n == 2:
        match obj:
            case cls(a, b):
                return [a, b]
    else:
        match obj:
            case cls(a, b, c):
                return [a, b, c]
    return []


def crawl(roots, limits, own):
    """Follow every route from ``roots``; return the report (see the module docstring)."""
    max_objects, max_depth, per_type = limits
    seen = {}
    classes = {}
    types = {}
    followed = {}
    raised = {}
    functions = {}
    stats = collections.Counter()
    disagreements = []
    pending = collections.deque()

    state = {"free": 0}

    def push(obj, path, depth):
        pending.append((obj, path, depth, state["free"]))

    def push_error(exc, path, depth):
        key = class_key(type(exc), own)
        raised[key] = raised.get(key, 0) + 1
        if raised[key] <= per_type:
            push(exc, path + "!", depth)

    def note_class(cls, path):
        key = class_key(cls, own)
        entry = classes.get(key)
        if entry is None:
            entry = classes[key] = {"ids": [], "refuses_calls": [], "paths": []}
        if id(cls) not in entry["ids"]:
            entry["ids"].append(id(cls))
            entry["paths"].append(path)
            refused = False
            try:
                cls()
            except TypeError as exc:
                refused = "cannot be called in the sandbox" in str(exc)
            except CRAWLED:
                pass
            entry["refuses_calls"].append(refused)

    def read(obj, name, path, depth, check_format):
        stats["attributes"] += 1
        try:
            value = getattr(obj, name)
        except CRAWLED as exc:
            stats["refused"] += 1
            push_error(exc, path + "." + name, depth)
            if check_format:
                for how, run in (("format", lambda: ("{0." + name + "}").format(obj)),
                                 ("format_map",
                                  lambda: ("{o." + name + "}").format_map({"o": obj}))):
                    try:
                        run()
                    except CRAWLED:
                        continue
                    disagreements.append(f"{path}: getattr refuses {name!r}, {how} reads it")
            return
        push(value, path + "." + name, depth)

    def call(obj, path, depth):
        own_object = path.startswith("@") and path.count(".") <= 1  # a seed's own method
        if path.rsplit(".", 1)[-1] in NO_CALL and not own_object:
            return
        stats["calls"] += 1
        try:
            push(obj(), path + "()", depth)
        except CRAWLED as exc:
            push_error(exc, path + "()", depth)

    def iterate(obj, path, depth):
        try:
            iterator = iter(obj)
        except CRAWLED:
            return
        stats["iterations"] += 1
        push(iterator, path + ".iter()", depth)
        for index in range(ITEMS):
            try:
                push(next(iterator), f"{path}[{index}]", depth)
            except StopIteration:
                return
            except CRAWLED as exc:
                push_error(exc, path + ".next()", depth)
                return

    def supers(obj, kind, is_class, names, path, depth):
        """``super(K, obj)`` for every class K along the MRO, and what each proxy finds
        under every name: a base class's method applied to this object."""
        try:
            bases = (obj if is_class else kind).mro()
        except CRAWLED:
            bases = [kind]
        for base in bases:
            route = f"{path}.super({class_key(base, own)})"
            try:
                proxy = super(base, obj)
            except CRAWLED as exc:
                push_error(exc, route, depth)
                continue
            push(proxy, route, depth)
            for name in names:
                stats["attributes"] += 1
                try:
                    value = getattr(proxy, name)
                except CRAWLED as exc:
                    push_error(exc, route + "." + name, depth)
                    continue
                try:
                    same = value == getattr(obj, name)
                except CRAWLED:
                    same = False
                if not same:  # a base's attribute the object overrides: a route of its own
                    push(value, route + "." + name, depth)

    def patterns(obj, kind, path, depth):
        try:
            bases = kind.mro()
        except CRAWLED:
            bases = [kind]
        for cls in bases:
            for n in (1, 2, 3):
                stats["patterns"] += 1
                try:
                    captured = match_route(obj, cls, n)
                except CRAWLED as exc:
                    push_error(exc, f"{path}|case {class_key(cls, own)}({n})", depth)
                    continue
                for index, value in enumerate(captured):
                    push(value, f"{path}|case {class_key(cls, own)}({n})[{index}]", depth)

    state["free"] = FREE_STEPS
    for name, obj in roots:
        push(obj, name, 0)
    while pending and len(seen) < max_objects:
        obj, path, depth, free = pending.popleft()
        if id(obj) in seen:
            continue
        seen[id(obj)] = obj
        kind = type(obj)
        key = class_key(kind, own)
        types[key] = types.get(key, 0) + 1
        if key in CALLABLES:
            try:
                qualname = obj.__qualname__
            except CRAWLED:
                qualname = "?"
            if type(qualname) is str:
                entry = key + " " + qualname
                functions[entry] = functions.get(entry, 0) + 1
        push(kind, path + ".type()", depth + 1)
        is_class = isinstance(obj, type)
        if is_class:
            note_class(obj, path)
        if depth >= max_depth:
            continue
        route = (key, "" if key in LEAVES else path.rsplit(".", 1)[-1])
        count = followed.get(route, 0)
        holder = is_class or key in HOLDERS
        if count >= per_type and not holder and not free:
            continue
        followed[route] = count + 1
        state["free"] = FREE_STEPS if holder else max(free - 1, 0)
        first = count < 3
        next_depth = depth + 1
        try:
            names = dir(obj)
        except CRAWLED as exc:
            names = []
            push_error(exc, path + ".dir()", next_depth)
        listed = list(names)
        if first or is_class:
            names = listed + list(SPECIAL_NAMES) + list(HIDDEN_NAMES)
        for name in names:
            read(obj, name, path, next_depth, first)
        if callable(obj):
            call(obj, path, next_depth)
        iterate(obj, path, next_depth)
        try:
            push(vars(obj), path + ".vars()", next_depth)
        except CRAWLED as exc:
            push_error(exc, path + ".vars()", next_depth)
        if first or is_class:
            supers(obj, kind, is_class, listed, path, next_depth)
        if is_class:
            try:
                push(obj.mro(), path + ".mro()", next_depth)
            except CRAWLED as exc:
                push_error(exc, path + ".mro()", next_depth)
        if first:
            patterns(obj, kind, path, next_depth)
    stats["objects"] = len(seen)
    stats["unvisited"] = len(pending)
    return {"classes": {key: {"count": len(entry["ids"]),
                              "refuses_calls": entry["refuses_calls"],
                              "paths": entry["paths"][:3]} for key, entry in classes.items()},
            "types": types, "raised": raised, "stats": dict(stats), "functions": functions,
            "disagreements": disagreements[:50]}
