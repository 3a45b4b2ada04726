"""The capability inventory: every type and callable the sandbox may hand to a script.

This is the one reviewed list of what a script can hold. Each entry names a
class the way ``repr()`` shows it to a script (``'int'``, ``'re.Pattern'``;
``'enum:Color'``/``'flag:RegexFlag'`` for enum classes, whose ``repr`` has no
module), how it is exposed, and the rule that makes holding it harmless.
A script may hold a class listed here, instances of it, and its own classes
(``__sandbox__.*``) and their instances; nothing else. Per module,
:data:`MODULES` records how the module is exposed and the rule its facade
follows (the table that used to live in :mod:`.policy`'s docstring);
:data:`BUILTINS` and :data:`FACADE_FUNCTIONS` list the callables.

Exposures:

* :data:`REAL` - the standard library's (or Python's) own class;
* :data:`STAND_IN` - ``type()`` reports a stand-in (:mod:`.standins`):
  ``isinstance`` and ``repr`` work, calling and subclassing are refused, and
  the real class is never handed out (instances are);
* :data:`FACADE` - a sandbox class in place of the real one, which is never
  reachable (``mro()`` lists the facade);
* :data:`PRIVATE_COPY` - a class of a private copy of a pure-Python module;
* :data:`RESTRICTED` - reimplemented in the sandbox with a script's powers only.

``tests/security/test_reachability.py`` crawls every route a script has from a
fresh namespace on every backend and fails on a class that is not listed, on
a name two different classes share (a real class behind its facade), on an
entry whose exposure does not match what the script finds, and on a function
that is never handed out (:data:`NEVER_HANDED_OUT`) or is private and not a
method of a listed class (:func:`callable_problems`). A new facade member
therefore needs an entry here, reviewed against its rule.
"""

from __future__ import annotations

from dataclasses import dataclass

REAL = "real"
STAND_IN = "stand-in"
FACADE = "facade"
PRIVATE_COPY = "private copy"
RESTRICTED = "restricted reimplementation"
EXPOSURES = frozenset({REAL, STAND_IN, FACADE, PRIVATE_COPY, RESTRICTED})
"""How a class or module is handed to a script (see the module docstring)."""

SCRIPT_CLASS_PREFIX = "__sandbox__."
"""How ``repr()`` names a class the script created (a class statement, ``namedtuple``,
``dataclass``, the functional ``Enum`` API): its own, not inventoried."""


@dataclass(frozen=True)
class Capability:
    """One class a script may hold (and hold instances of)."""

    name: str
    """The class as ``repr()`` names it to a script."""
    exposure: str
    """One of :data:`EXPOSURES`."""
    rule: str
    """Why holding it (and its instances) gives a script nothing it should not have."""
    origin: str
    """Where a script gets it: ``builtins``, a module name, ``interpreter``, ``tools``."""
    shared_with_stand_in: bool = False
    """A stand-in is shown under the same name (``type(print)`` is shown as
    ``builtin_function_or_method``, like ``type(len)``): two classes, one of them
    refusing calls."""


@dataclass(frozen=True)
class ModuleDecision:
    """How one importable module is handed to a script."""

    name: str
    exposure: str
    """One of :data:`EXPOSURES`: what the facade's members are, mostly."""
    rule: str
    """What every member of the facade satisfies; the exclusions and replacements."""


def _names(text: str) -> list[str]:
    return text.split()


def _group(origin: str, exposure: str, rule: str, names: str) -> list[Capability]:
    return [Capability(name, exposure, rule, origin) for name in _names(names)]


_VALUES = ("values and their helper types: no member reads files, takes an attribute "
           "name, compiles Python or writes to an object the script did not create")
_ITERATORS = ("iterators, views and descriptors of the builtin types: they read the object "
              "they came from, nothing else")
_EXCEPTIONS = ("exception classes: instances hold the arguments they were raised with; "
               "__traceback__/__context__/__cause__ are hidden names")
_ABCS = ("abstract base classes: isinstance/issubclass only; register() only on the "
         "script's own ABCs, for classes the script created")
_TYPING = ("typing special forms: subscripting builds aliases (their type() is a "
           "stand-in); nothing evaluates strings")

CLASSES: tuple[Capability, ...] = tuple(
    _group("builtins", REAL, "a builtin value type: data and its methods",
           "object int float complex bool str bytes bytearray list tuple dict set frozenset "
           "range slice NoneType NotImplementedType ellipsis memoryview")
    + _group("builtins", REAL, "a builtin helper over the values the script passes",
             "enumerate filter map zip reversed super property classmethod staticmethod")
    + _group("builtins", REAL, _ITERATORS,
             "list_iterator tuple_iterator str_iterator str_ascii_iterator bytes_iterator "
             "bytearray_iterator set_iterator range_iterator longrange_iterator "
             "dict_keyiterator dict_valueiterator dict_itemiterator dict_keys dict_values "
             "dict_items mappingproxy memory_iterator callable_iterator "
             "list_reverseiterator dict_reversekeyiterator dict_reversevalueiterator "
             "dict_reverseitemiterator odict_iterator odict_keys odict_values odict_items "
             "generic_alias_iterator iterator "
             "getset_descriptor member_descriptor method_descriptor wrapper_descriptor "
             "classmethod_descriptor method-wrapper builtin_method")
    + [Capability("builtin_function_or_method", REAL, "functions of the builtin modules and "
                  "methods of builtin values; the sandbox's own builtins (print, getattr...) "
                  "show as this name through a stand-in that refuses calls", "builtins",
                  shared_with_stand_in=True)]
    + _group("builtins", FACADE, "the sandbox's type: type(x) and isinstance(C, type); "
             "three-argument calls (class creation) are refused; every metaclass shows as it",
             "type")
    + _group("interpreter", STAND_IN,
             "type() of functions, methods, generators, coroutines, code, frames, cells "
             "and typing aliases: isinstance works, calling and subclassing are refused; "
             "frame, code and closure internals are hidden names",
             "function method generator coroutine async_generator cell code frame "
             "types.GenericAlias typing._GenericAlias typing._SpecialGenericAlias "
             "typing._CallableType typing._CallableGenericAlias typing._TupleType "
             "typing._UnionGenericAlias typing._LiteralGenericAlias typing._AnnotatedAlias "
             "typing._ConcatenateGenericAlias typing._UnpackGenericAlias typing.ForwardRef "
             "toolscript.sandbox.classfacades._SandboxAnnotatedAlias")
    + _group("builtins", REAL, "the type of int | str: isinstance only, it cannot be "
             "instantiated and its arguments are hidden names", "types.UnionType")
    + _group("builtins", REAL, _EXCEPTIONS,
             "BaseException Exception ArithmeticError AssertionError AttributeError "
             "BufferError EOFError FloatingPointError GeneratorExit ImportError IndexError "
             "KeyError LookupError MemoryError ModuleNotFoundError NameError "
             "NotImplementedError OSError OverflowError PermissionError RecursionError "
             "RuntimeError StopIteration TimeoutError TypeError UnboundLocalError "
             "UnicodeDecodeError UnicodeEncodeError UnicodeError ValueError "
             "ZeroDivisionError ConnectionError ExceptionGroup BaseExceptionGroup Warning "
             "UserWarning DeprecationWarning RuntimeWarning FileNotFoundError "
             "IsADirectoryError InterruptedError StopAsyncIteration SyntaxError")
    + _group("interpreter", FACADE,
             "a read-only namespace of curated members (ModuleFacade): no real module "
             "object is ever handed out", "toolscript.sandbox.guards.ModuleFacade")
    + _group("tools", STAND_IN,
             "the stub of a tool: calling it sends {tool, args} to the host; type(tool) "
             "is a stand-in shown as 'tool', so no script builds a stub with its own "
             "callback", "tool")
    + _group("tools", STAND_IN,
             "a namespace of tools (github.list_prs): read-only attributes that are the "
             "namespace's tool stubs, private names refused, nothing can be set; type() is a "
             "stand-in shown as 'tool_namespace', so no script builds one over its own stubs",
             "tool_namespace")
    + _group("interpreter", REAL,
             "provenance boxes (labels on, issue 27): a labelled str/int/float/bytes, a bool "
             "(an int printing as True/False), a None; subclasses with no member of their "
             "own beyond printing; the label lives in the interpreter's table, never on "
             "the object, so constructing one makes an unlabelled value",
             "toolscript.sandbox.provenance.LStr toolscript.sandbox.provenance.LInt "
             "toolscript.sandbox.provenance.LFloat toolscript.sandbox.provenance.LBytes "
             "toolscript.sandbox.provenance.LBool toolscript.sandbox.provenance.LNone")
    + _group("interpreter", FACADE,
             "what a script's __exit__ receives in place of a live traceback (which leads "
             "to frames): true, with nothing to read",
             "toolscript.sandbox.guards.TracebackStandIn")
    + _group("tools", REAL, _EXCEPTIONS + "; raised by tool calls, holding only JSON data "
             "from the host",
             "toolscript.sandbox.toolcalls.ToolError toolscript.sandbox.toolcalls._ToolRaised "
             "toolscript.sandbox.toolcalls.ToolArgumentError "
             "toolscript.sandbox.toolcalls.ToolDenied toolscript.sandbox.toolcalls.ToolNotFound "
             "toolscript.sandbox.toolcalls.ToolTimeout ToolArithmeticError ToolAssertionError "
             "toolerror.ArithmeticError toolerror.AssertionError toolerror.AttributeError "
             "toolerror.ConnectionError toolerror.FileNotFoundError toolerror.IndexError "
             "toolerror.KeyError toolerror.LookupError toolerror.NotImplementedError "
             "toolerror.OSError toolerror.OverflowError toolerror.RecursionError "
             "toolerror.RuntimeError toolerror.TypeError toolerror.ValueError "
             "toolerror.ZeroDivisionError")
    + _group("builtins", REAL, _EXCEPTIONS, "BlockingIOError BrokenPipeError BytesWarning "
             "ChildProcessError ConnectionAbortedError ConnectionRefusedError "
             "ConnectionResetError EncodingWarning FileExistsError FutureWarning "
             "ImportWarning IndentationError NotADirectoryError PendingDeprecationWarning "
             "ProcessLookupError ReferenceError ResourceWarning SyntaxWarning SystemError "
             "TabError UnicodeTranslateError UnicodeWarning PythonFinalizationError")
    + _group("builtins", FACADE, _EXCEPTIONS + "; the script's own classes under the names "
             "of the host's signals (toolscript.sandbox.scriptexceptions): raising one ends "
             "the script as an error, never the host or the sandbox; the real classes are "
             "unreachable", "KeyboardInterrupt SystemExit")
    + _group("sys", REAL, "struct sequences of interpreter facts: immutable tuples",
             "sys.version_info sys.float_info sys.int_info")
    + _group("__future__", REAL, "the feature records a `from __future__ import` binds: "
             "release tuples and a compiler flag (the compiler acted on the statement)",
             "__future__._Feature")
    + _group("pathlib", FACADE, "pure paths written over a plain str "
             "(toolscript.sandbox.pathfacade): every answer is a str, bool or a new facade "
             "path; no real path object, flavour, parser module or concrete Path class, no "
             "__fspath__", "pathlib.PurePath pathlib.PurePosixPath")
    + _group("asyncio", STAND_IN, "the sandbox's own loop objects (toolscript.sandbox."
             "asyncsupport): a task or future holds a result or an exception of the script's "
             "own run; the coroutine, the loop and the callbacks are private names; type() is a "
             "stand-in, so no script builds one around its own callback or another loop",
             "asyncio.Task asyncio.Future asyncio._Gathering asyncio.Timeout")
    + _group("tools", STAND_IN, "a tool call made from async code: the stub and its "
             "JSON-checked arguments (private names); awaiting it sends the call through the "
             "same host path as a direct call or parallel(); type() is a stand-in shown as "
             "'tool_call'", "tool_call")
    + _group("asyncio", RESTRICTED, "written in the sandbox over its single-threaded loop: "
             "no I/O, no threads, no loop object; waits end when the run is aborted",
             "asyncio.TaskGroup asyncio.Semaphore asyncio.BoundedSemaphore asyncio.Lock "
             "asyncio.Event asyncio.Queue asyncio._Final")
    + _group("asyncio", REAL, _EXCEPTIONS + "; the sandbox's own classes under asyncio's "
             "names", "asyncio.CancelledError asyncio.InvalidStateError asyncio.QueueEmpty "
             "asyncio.QueueFull")
    + _group("builtins", REAL, "the awaitables of an async generator's asend/athrow/aclose: "
             "they drive the script's own async generator, like a generator's send/throw; "
             "no frame or code attribute", "async_generator_asend async_generator_athrow")
    + _group("calendar", REAL, _VALUES + " (optional module); the localized name lists "
             "are read-only to scripts", "calendar.Calendar calendar.IllegalMonthError "
             "calendar.IllegalWeekdayError calendar._localized_day calendar._localized_month")
    + _group("collections", REAL, _VALUES,
             "collections.ChainMap collections.Counter collections.OrderedDict "
             "collections.UserDict collections.UserList collections.UserString "
             "collections.defaultdict collections.deque _collections._deque_iterator "
             "_collections._deque_reverse_iterator _collections._tuplegetter")
    + _group("collections.abc", REAL, _ABCS,
             "collections.abc.AsyncGenerator collections.abc.AsyncIterable "
             "collections.abc.AsyncIterator collections.abc.Awaitable "
             "collections.abc.ByteString collections.abc.Callable collections.abc.Collection "
             "collections.abc.Container collections.abc.Coroutine collections.abc.Generator "
             "collections.abc.Hashable collections.abc.ItemsView collections.abc.Iterable "
             "collections.abc.Iterator collections.abc.KeysView collections.abc.Mapping "
             "collections.abc.MappingView collections.abc.MutableMapping "
             "collections.abc.MutableSequence collections.abc.MutableSet "
             "collections.abc.Reversible collections.abc.Sequence collections.abc.Set "
             "collections.abc.Sized collections.abc.ValuesView collections.abc.Buffer "
             "numbers.Number numbers.Complex numbers.Real numbers.Rational numbers.Integral")
    + _group("copy", REAL, _EXCEPTIONS, "copy.Error")
    + _group("csv", REAL, _VALUES + "; readers and writers over what the script passes, "
             "no dialect registry writes", "csv.Dialect csv.DictReader csv.DictWriter "
             "csv.Sniffer csv.excel csv.excel_tab csv.unix_dialect _csv.Error _csv.Dialect "
             "csv.Sniffer.sniff.<locals>.dialect")
    + _group("csv", STAND_IN, "csv readers and writers over what the script passes; their "
             "types are stand-ins (called directly, Python 3.11.2's build objects that crash "
             "when used)", "_csv.reader _csv.writer")
    + _group("dataclasses", REAL, "dataclass fields and markers: data; dataclass() and "
             "friends are facade functions that take only the script's own classes",
             "dataclasses.Field dataclasses.FrozenInstanceError dataclasses.InitVar "
             "dataclasses._KW_ONLY_TYPE dataclasses._MISSING_TYPE")
    + _group("datetime", REAL, _VALUES, "datetime.IsoCalendarDate datetime.date "
             "datetime.datetime datetime.time datetime.timedelta datetime.timezone "
             "datetime.tzinfo")
    + _group("decimal", REAL, _VALUES + "; the template contexts are per-interpreter copies",
             "decimal.Clamped decimal.Context decimal.ContextManager decimal.ConversionSyntax "
             "decimal.Decimal decimal.DecimalException decimal.DecimalTuple "
             "decimal.DivisionByZero decimal.DivisionImpossible decimal.DivisionUndefined "
             "decimal.FloatOperation decimal.Inexact decimal.InvalidContext "
             "decimal.InvalidOperation decimal.Overflow decimal.Rounded decimal.Subnormal "
             "decimal.Underflow")
    + _group("enum", FACADE, "the enum bases: subclasses whose metaclass checks the "
             "functional API's member names; mro() lists these, never the real bases",
             "enum:Enum enum:IntEnum enum:StrEnum flag:Flag flag:IntFlag enum:ReprEnum")
    + _group("enum", REAL, "enum helpers and the standard library's finished enums "
             "(their members exist; the functional API of a class with members only "
             "looks members up)", "enum.auto enum.member enum.nonmember enum.verify "
             "enum._auto_null enum:EnumCheck enum:FlagBoundary flag:RegexFlag enum:SafeUUID")
    + _group("fractions", REAL, _VALUES, "fractions.Fraction")
    + _group("functools", REAL, _VALUES + "; partial objects are the script's own "
             "(writable like its functions)", "functools.partial functools.partialmethod")
    + _group("functools", REAL, "what lru_cache and cmp_to_key return: a new wrapper of "
             "the callable the script passed, whose cache_info/cache_clear act on that "
             "wrapper's own cache", "functools._lru_cache_wrapper functools.CacheInfo "
             "functools.KeyWrapper")
    + _group("functools", FACADE, "cached_property written in the sandbox: the attribute "
             "name is checked on every read and the same string stores the value",
             "functools.cached_property")
    + _group("hashlib", REAL, _VALUES, "_hashlib.HASH _hashlib.HASHXOF _blake2.blake2b "
             "_blake2.blake2s")
    + _group("io", REAL, "in-memory streams owned by the script (no file, no fd)",
             "_io.StringIO _io.BytesIO _io._BytesIOBuffer _io._IOBase _io._TextIOBase "
             "_io._BufferedIOBase io.UnsupportedOperation")
    + _group("itertools", REAL, _VALUES,
             "itertools.accumulate itertools.chain itertools.combinations "
             "itertools.combinations_with_replacement itertools.compress itertools.count "
             "itertools.cycle itertools.dropwhile itertools.filterfalse itertools.groupby "
             "itertools._grouper itertools.islice itertools.pairwise itertools.permutations "
             "itertools.product itertools.repeat itertools.starmap itertools.takewhile "
             "itertools.zip_longest itertools._tee itertools.batched")
    + _group("json", REAL, _VALUES, "json.decoder.JSONDecodeError json.decoder.JSONDecoder "
             "json.encoder.JSONEncoder _json.Scanner _json.Encoder")
    + _group("operator", REAL, _VALUES, "operator.itemgetter")
    + _group("queue", RESTRICTED, "single-threaded queues written in the sandbox: an "
             "operation that would block raises at once", "queue.Queue queue.LifoQueue "
             "queue.PriorityQueue queue.SimpleQueue _queue.Empty queue.Full")
    + _group("random", REAL, "generators the script creates; the module functions are "
             "bound methods of a private generator", "random.Random _random.Random")
    + _group("re", REAL, _VALUES, "re.Match re.Pattern re.error _sre.SRE_Scanner")
    + _group("statistics", REAL, _VALUES, "statistics.NormalDist statistics.StatisticsError")
    + _group("string", REAL, _VALUES + "; the format methods of every str are the safe "
             "ones", "string.Template")
    + _group("textwrap", PRIVATE_COPY, "the class of the interpreter's private copy of "
             "textwrap: its shared state is the interpreter's own", "textwrap.TextWrapper")
    + _group("time", REAL, _VALUES, "time.struct_time")
    + _group("typing", REAL, _TYPING, "typing._SpecialForm typing._LiteralSpecialForm "
             "typing.TypeVar typing.ParamSpec typing.Generic typing.Protocol "
             "typing.SupportsFloat typing.SupportsInt typing.NamedTuple typing.TypedDict "
             "typing.Any typing._Final typing._Immutable typing._NotIterable "
             "typing._BoundVarianceMixin typing._PickleUsingNameMixin typing._TypedDictMeta")
    + _group("typing", FACADE, "Annotated whose aliases cannot be called", "typing.Annotated")
    + _group("unicodedata", REAL, _VALUES, "unicodedata.UCD")
    + _group("uuid", REAL, _VALUES, "uuid.UUID")
    + _group("zoneinfo", FACADE, "ZoneInfo built from tz data read before the script "
             "started; a key is looked up, never made into a path; no cache controls",
             "zoneinfo.ZoneInfo")
    + _group("zoneinfo", REAL, _EXCEPTIONS, "zoneinfo._common.ZoneInfoNotFoundError "
             "zoneinfo._tzpath.InvalidTZPathWarning")
)
"""Every class a script may hold, by the name ``repr()`` gives it."""

BY_NAME: dict[str, Capability] = {entry.name: entry for entry in CLASSES}
""":data:`CLASSES` by name."""

BUILTINS: dict[str, str] = {
    **dict.fromkeys(
        _names("abs all any ascii bin bool callable chr classmethod complex dict divmod enumerate "
        "filter float format frozenset hash hex id int isinstance issubclass iter len list "
        "map max min next object oct ord property range repr reversed round set slice sorted "
        "staticmethod str sum super tuple zip bytes bytearray NotImplemented Ellipsis False "
        "True None"),
        "Python's own builtin: works on the values it is given"),
    **dict.fromkeys(
        _names("BaseException Exception ArithmeticError AssertionError AttributeError BufferError "
        "EOFError FloatingPointError GeneratorExit ImportError IndexError KeyError "
        "LookupError MemoryError ModuleNotFoundError NameError NotImplementedError OSError "
        "OverflowError PermissionError RecursionError RuntimeError StopIteration "
        "TimeoutError TypeError UnboundLocalError UnicodeDecodeError UnicodeEncodeError "
        "UnicodeError ValueError ZeroDivisionError ConnectionError ExceptionGroup "
        "BaseExceptionGroup Warning UserWarning DeprecationWarning RuntimeWarning "
        "FileNotFoundError IsADirectoryError InterruptedError StopAsyncIteration SyntaxError "
        "BlockingIOError BrokenPipeError BytesWarning ChildProcessError "
        "ConnectionAbortedError ConnectionRefusedError ConnectionResetError EncodingWarning "
        "EnvironmentError FileExistsError FutureWarning IOError ImportWarning "
        "IndentationError NotADirectoryError PendingDeprecationWarning ProcessLookupError "
        "ReferenceError ResourceWarning SyntaxWarning SystemError TabError "
        "UnicodeTranslateError UnicodeWarning"),
        "an exception class"),
    **dict.fromkeys(_names("KeyboardInterrupt SystemExit"),
                    "the script's own exception class under the name of a host signal"),
    **dict.fromkeys(
        _names("ToolError ToolArgumentError ToolDenied ToolNotFound ToolTimeout"),
        "an exception class of failed tool calls"),
    "type": "the sandbox's type (no class creation)",
    "getattr": "the attribute rule of the policy, for computed names",
    "hasattr": "existence only",
    "setattr": "writes only to the script's own objects, never special names",
    "delattr": "deletes only on the script's own objects, never special names",
    "vars": "a snapshot of a script object's attributes whose writes go through setattr",
    "dir": "names without the special ones",
    "pow": "the integer-size limit of **",
    "print": "captured output with a size limit",
    "breakpoint": "refused with a hint",
    "aiter": "what async for calls: the object's own __aiter__, CPython's messages",
    "anext": "the object's own __anext__ awaitable (a coroutine of ours with a default)",
    "parallel": "read-only tool calls at once, through the same host call path",
}
"""Every name of a script's builtins it can use (besides the tools and the guard
names, which the policy refuses to compile), with its rule."""

FACADE_FUNCTIONS: dict[str, tuple[str, ...]] = {
    "asyncio": ("run", "sleep", "gather", "create_task", "ensure_future", "shield",
                "wait_for", "wait", "as_completed", "timeout", "timeout_at", "current_task",
                "iscoroutine", "get_event_loop", "get_running_loop", "new_event_loop",
                "to_thread", "run_coroutine_threadsafe", "create_subprocess_exec",
                "open_connection"),
    "collections": ("namedtuple",),
    "copy": ("copy", "deepcopy"),
    "csv": ("field_size_limit",),
    "dataclasses": ("dataclass", "fields", "asdict", "astuple", "replace"),
    "functools": ("update_wrapper", "wraps", "total_ordering"),
    "hashlib": ("new",),
    "operator": ("attrgetter", "methodcaller", "pow", "ipow", "lshift", "ilshift"),
    "time": ("sleep",),
    "typing": ("get_origin", "NamedTuple", "final", "runtime_checkable", "overload"),
    "zoneinfo": ("available_timezones",),
}
"""Module members that are sandbox functions in place of the real ones (each
module's rule in :data:`MODULES` says what they check)."""

_PLAIN_DATA = ("functions and classes over plain data: no member takes an attribute name, "
               "compiles Python or shares mutable state")

MODULES: dict[str, ModuleDecision] = {decision.name: decision for decision in (
    ModuleDecision("math", REAL, _PLAIN_DATA),
    ModuleDecision("itertools", REAL, _PLAIN_DATA),
    ModuleDecision("bisect", REAL, _PLAIN_DATA),
    ModuleDecision("heapq", REAL, _PLAIN_DATA),
    ModuleDecision("statistics", REAL, _PLAIN_DATA),
    ModuleDecision("fractions", REAL, _PLAIN_DATA),
    ModuleDecision("datetime", REAL, _PLAIN_DATA),
    ModuleDecision("re", REAL, _PLAIN_DATA + "; excluded: template, purge"),
    ModuleDecision("json", REAL, _PLAIN_DATA + "; excluded: load, dump (files)"),
    ModuleDecision("string", REAL, _PLAIN_DATA + "; excluded: Formatter"),
    ModuleDecision("calendar", REAL, _PLAIN_DATA + " (optional module); excluded: the "
                   "printing classes and the global setters"),
    ModuleDecision("unicodedata", REAL, "functions over strings"),
    ModuleDecision("base64", REAL, "functions over strings and bytes"),
    ModuleDecision("decimal", REAL, "real classes; per-interpreter copies of the template "
                   "contexts"),
    ModuleDecision("random", REAL, "bound methods of a private Random; Random itself"),
    ModuleDecision("operator", FACADE, "real functions, except attrgetter/methodcaller (the "
                   "getattr rule) and pow/ipow/lshift/ilshift (the integer-size limit)"),
    ModuleDecision("textwrap", PRIVATE_COPY, "a private copy of the module per interpreter"),
    ModuleDecision("collections", REAL, "real classes; namedtuple checks field names (the "
                   "class is the script's own); UserString.format is the safe one"),
    ModuleDecision("collections.abc", REAL, "register only on the script's own ABCs, and "
                   "only for classes the script created"),
    ModuleDecision("functools", FACADE, "update_wrapper/wraps/total_ordering only on the "
                   "script's own objects and standard names; cached_property written in the "
                   "sandbox; singledispatch excluded (evaluates annotation strings)"),
    ModuleDecision("dataclasses", FACADE, "dataclass/fields/asdict/astuple/replace only on "
                   "the script's own classes, plain field names and exact Field objects; "
                   "make_dataclass excluded"),
    ModuleDecision("typing", FACADE, "an explicit list; get_origin never returns a "
                   "metaclass; Annotated aliases cannot be called; NamedTuple checks field "
                   "names; final and runtime_checkable write only to the script's objects; "
                   "overload keeps no registry; get_type_hints excluded (evaluates strings)"),
    ModuleDecision("copy", FACADE, "copy/deepcopy over the real functions: the methods a "
                   "copy consults come only from standard-library classes (no class body "
                   "defines them, nothing plants them on instances); deepcopy takes no memo; "
                   "replace excluded"),
    ModuleDecision("enum", FACADE, "Enum/IntEnum/StrEnum/Flag/IntFlag are subclasses whose "
                   "metaclass checks the functional API's member names, and mro() shows "
                   "them in place of the real bases; metaclasses, global_*, pickle_by_*, "
                   "property excluded"),
    ModuleDecision("time", FACADE, "clocks and formatting; sleep ends when the run is "
                   "aborted; tzset excluded"),
    ModuleDecision("hashlib", REAL, "the named constructors and new over the guaranteed "
                   "names; file_digest, pbkdf2_hmac, scrypt excluded"),
    ModuleDecision("io", REAL, "StringIO and BytesIO only: in memory, owned by the script"),
    ModuleDecision("csv", REAL, "readers and writers over what the script passes; the "
                   "dialect registry writes and the field_size_limit setter excluded"),
    ModuleDecision("uuid", REAL, "UUID, uuid3/uuid4/uuid5 and the namespaces; uuid1/getnode "
                   "(the MAC address) excluded"),
    ModuleDecision("queue", RESTRICTED, "single-threaded queues written in the sandbox: "
                   "an operation that would block raises Empty/Full at once"),
    ModuleDecision("sys", FACADE, "read-only facts (version_info, version, platform, "
                   "maxsize, byteorder, float_info, int_info...), getrecursionlimit and an empty "
                   "argv; no exit; nothing of the real "
                   "sys state (modules, streams, frames, hooks, setters)"),
    ModuleDecision("asyncio", RESTRICTED, "written in the sandbox "
                   "(toolscript.sandbox.asynciofacade) over its own single-threaded loop with "
                   "no I/O: run, sleep (the clock jumps; skipped time counts against the wall "
                   "limit), gather/TaskGroup (tool calls batched like parallel()), wait_for, "
                   "timeout, Semaphore, Lock, Event, Queue; the loop object, threads, "
                   "subprocesses and sockets are refused with a substitute; the real asyncio "
                   "is never imported"),
    ModuleDecision("pathlib", FACADE, "PurePath and PurePosixPath written in the sandbox "
                   "over the path's text; no Path, PosixPath or file system access"),
    ModuleDecision("zoneinfo", FACADE, "zones from tz data read before the script starts; "
                   "a key is looked up, never made into a path"),
)}
"""How each importable module is exposed, and the rule its facade follows."""


NEVER_HANDED_OUT = frozenset({
    "eval", "exec", "compile", "open", "__import__", "__build_class__", "globals", "locals",
    "input", "help", "exit", "quit", "getattr", "setattr", "delattr", "vars", "dir",
    "breakpoint", "system", "popen", "spawnv", "execv", "fork", "kill", "_exit", "_getframe",
    "import_module", "reload", "load_module", "exec_module", "settrace", "setprofile",
    "addaudithook", "setrecursionlimit",
})
"""Names of C functions a script never gets (the sandbox's own ``getattr``, ``vars``,
``dir``... are its :data:`BUILTINS`, which show no ``__qualname__``)."""

BUILTIN_CALLABLE_TYPES = frozenset({"builtin_function_or_method", "builtin_method"})
"""The types of C functions: the ones :data:`NEVER_HANDED_OUT` applies to
(``re.compile`` is a Python function called ``compile``)."""

SANDBOX_INTERNALS = frozenset({"_operator_members", "_SafeFormatter"})
"""Private functions and classes of the sandbox whose inner functions or methods are
facade members (``operator.attrgetter``; the safe ``str.format``)."""

_CLASS_QUALNAMES = frozenset(entry.name.rsplit(".", 1)[-1].split(":")[-1] for entry in CLASSES)


def callable_problems(kind: str, qualname: str) -> list[str]:
    """What is wrong with a function or method a script reached, by its type (as
    ``repr()`` names it) and ``__qualname__``: a C function that is never handed
    out, or a private function of the standard library or the sandbox
    (``copy._reconstruct``, ``typing._eval_type``) that is not a method of an
    inventoried class. Empty if it may be held."""
    if kind in BUILTIN_CALLABLE_TYPES and qualname in NEVER_HANDED_OUT:
        return [f"function {qualname!r}: never handed out to a script"]
    first = qualname.split(".", 1)[0]
    if first.startswith("_") and not first.startswith("__") and (
            first not in _CLASS_QUALNAMES and first not in SANDBOX_INTERNALS):
        return [f"function {qualname!r}: a private function, not a method of an inventoried "
                "class"]
    return []


def problems(name: str, refuses_calls: list[bool]) -> list[str]:
    """What is wrong with a class name a script reached, by the inventory: ``name``
    as ``repr()`` gives it, ``refuses_calls`` one flag per different class object
    shown under that name (True: calling it is refused as a stand-in's call is).
    Empty if the script may hold them."""
    if name.startswith(SCRIPT_CLASS_PREFIX):
        return []
    entry = BY_NAME.get(name)
    if entry is None:
        return [f"{name}: not in the capability inventory"]
    found = []
    allowed = 2 if entry.shared_with_stand_in else 1
    callable_classes = refuses_calls.count(False)
    if len(refuses_calls) > allowed or (entry.shared_with_stand_in and callable_classes > 1):
        found.append(f"{name}: {len(refuses_calls)} different classes carry this name (a real "
                     "class behind its facade or stand-in?)")
    if entry.exposure == STAND_IN and callable_classes:
        found.append(f"{name}: the script holds the real class, the inventory lists a stand-in "
                     "(whose calls are refused)")
    return found
