"""The data-work facades and the numeric protocol, attacked as an attacker would.

For each facade (``time``, ``copy``, ``hashlib``, ``base64``, ``io``, ``csv``,
``uuid``, ``zoneinfo``, ``queue``, ``enum``, ``heapq``, ``bisect``,
``unicodedata``): write primitives on objects the script did not create,
reaching real modules, globals or frames, unbounded allocation or waiting,
and file access. Then the integer-size limit through script-defined
``**``/``<<`` and augmented assignment to attributes and items, the
``bytes`` size cap, and the guard names a script may not rebind. Each table
ends with the everyday use that must keep working.
"""

# ruff: noqa: E501  (tables of attack scripts read best one per line)

from __future__ import annotations

from typing import Any

import pytest
from security_helpers import COMPILE, Attack, Probe, limit, runtime, safe

TYPE = runtime("TypeError")
NO_ATTR = runtime("AttributeError")
TIMEOUT = limit("timeout")
INT_LIMIT = limit("integer_limit")

TIME = [
    Attack("time_sleep_forever_ends_at_wall_limit", "import time\ntime.sleep(10**9)\n'PWNED'", TIMEOUT),
    Attack("time_sleep_swallowed_abort",
           "import time\nfor _ in range(3):\n    try:\n        time.sleep(10**9)\n    except BaseException:\n        pass\n'PWNED'",
           TIMEOUT),
    Attack("time_sleep_in_finally_loop",
           "import time\nwhile True:\n    try:\n        time.sleep(1000)\n    finally:\n        continue", TIMEOUT),
    Attack("time_tzset_absent", "import time\ntime.tzset()", NO_ATTR),
    Attack("time_facade_read_only", "import time\ntime.time = lambda: 0\n'PWNED'", TYPE),
    Attack("time_sleep_globals", "import time\ntime.sleep.__globals__", COMPILE),
    Attack("time_sleep_closure_guards", "import time\ngetattr(time.sleep, '__closure__')", NO_ATTR),
    Attack("time_sleep_bad_arguments",
           "import time\nout = []\nfor bad in ('1', -1, float('nan'), None):\n    try:\n        time.sleep(bad)\n    except (TypeError, ValueError) as e:\n        out.append(type(e).__name__)\nout",
           safe(["TypeError", "ValueError", "ValueError", "TypeError"])),
    Attack("time_everyday_use",
           "import time\nt0 = time.monotonic()\ntime.sleep(0.01)\n[time.monotonic() - t0 >= 0.01, time.strftime('%Y-%m-%d', time.gmtime(0)), time.gmtime(86400).tm_yday, isinstance(time.time(), float), time.perf_counter() > 0]",
           safe([True, "1970-01-01", 2, True, True])),
]

COPY = [
    Attack("copy_memo_substitutes_state",
           "import copy\nclass C:\n    pass\nc = C()\nc.a = 1\ncopy.deepcopy(c, {id(vars(c)): {'__reduce_ex__': print}})", TYPE),
    Attack("copy_planted_reduce", "import copy\nclass C:\n    pass\nc = C()\nvars(c)['__reduce_ex__'] = lambda p: (lambda: 'PWNED', ())\ncopy.deepcopy(c)", NO_ATTR),
    Attack("copy_setattr_dunder", "import copy\nclass C:\n    pass\nc = C()\nsetattr(c, '__deepcopy__', lambda m: 'PWNED')\ncopy.deepcopy(c)", NO_ATTR),
    Attack("copy_reconstruct_private", "import copy\ncopy._reconstruct", NO_ATTR),
    Attack("copy_replace_absent", "import copy\ncopy.replace", NO_ATTR),
    Attack("copy_class_body_reduce", "class C:\n    def __reduce_ex__(self, p):\n        return (print, ('PWNED',))\n", COMPILE),
    Attack("copy_deepcopy_of_guarded_builtin",
           "import copy, json\ng = copy.deepcopy(getattr)\ng(json.JSONDecoder, '_private')", runtime("AttributeError", "TypeError")),
    Attack("copy_deepcopy_of_setattr_still_guarded",
           "import copy, json\ns = copy.deepcopy(setattr)\ns(json.JSONDecoder, 'decode', print)\n'PWNED'", TYPE),
    Attack("copy_of_facade_is_harmless",
           "import copy, json\nm = copy.copy(json)\nn = copy.deepcopy(json)\ntry:\n    m.dumps = 1\nexcept TypeError:\n    pass\n[m.dumps({'a': 1}), n.loads('[1]'), json.dumps is m.dumps]",
           safe(['{"a": 1}', [1], True])),
    Attack("copy_everyday_use",
           "import copy\nclass P:\n    def __init__(self):\n        self.items = [1, [2]]\np = P()\nq = copy.deepcopy(p)\nq.items[1].append(3)\nr = copy.copy(p)\n[p.items, q.items, r.items is p.items, copy.copy({'a': [1]})]",
           safe([[1, [2]], [1, [2, 3]], True, {"a": [1]}])),
]

HASHLIB_BASE64_IO_CSV = [
    Attack("hashlib_new_unknown_name", "import hashlib\nhashlib.new('md4')", runtime("ValueError")),
    Attack("hashlib_new_path_name", "import hashlib\nhashlib.new('../../etc/ssl/openssl.cnf')", runtime("ValueError")),
    Attack("hashlib_file_digest_absent", "import hashlib\nhashlib.file_digest", NO_ATTR),
    Attack("hashlib_pbkdf2_absent", "import hashlib\nhashlib.pbkdf2_hmac('sha256', b'p', b's', 10**9)", NO_ATTR),
    Attack("hashlib_str_needs_encoding", "import hashlib\nhashlib.sha256('abc')", TYPE),
    Attack("hashlib_huge_input_is_fine",
           "import hashlib\nhashlib.sha256(b'x' * 20_000_000).hexdigest()[:12]", safe("bc01a03f3f50")),
    Attack("hashlib_everyday_use",
           "import hashlib\n[hashlib.sha256('abc'.encode()).hexdigest()[:8], hashlib.md5(b'x').hexdigest()[:8], hashlib.new('SHA1', b'').hexdigest()[:8], hashlib.blake2b(b'a', digest_size=8).hexdigest()]",
           safe(["ba7816bf", "9dd4e461", "da39a3ee", "40f89e395b66422f"])),
    Attack("base64_reaches_no_module", "import base64\nbase64.binascii", NO_ATTR),
    Attack("base64_everyday_use",
           "import base64\n[base64.b64encode(b'hi').decode(), base64.urlsafe_b64decode('aGk=').decode(), base64.b16encode(b'A').decode()]",
           safe(["aGk=", "hi", "41"])),
    Attack("io_open_absent", "import io\nio.open('/etc/passwd').read()", NO_ATTR),
    Attack("io_fileio_absent", "import io\nio.FileIO('/etc/passwd')", NO_ATTR),
    Attack("io_class_read_only", "import io\nio.StringIO.getvalue = lambda self: 'PWNED'\n'PWNED'", TYPE),
    Attack("csv_register_dialect_absent", "import csv\ncsv.register_dialect('x', delimiter=';')", NO_ATTR),
    Attack("csv_field_size_limit_setter", "import csv\ncsv.field_size_limit(1)", TYPE),
    Attack("csv_class_read_only", "import csv\ncsv.DictReader.fieldnames = property(lambda s: 'PWNED')\n'PWNED'", TYPE),
    Attack("csv_dunder_field_names_stay_keys",
           "import csv, io\nout = io.StringIO()\nw = csv.DictWriter(out, fieldnames=['__class__', '__reduce_ex__'])\nw.writeheader()\nw.writerow({'__class__': 1, '__reduce_ex__': 2})\nrows = list(csv.DictReader(io.StringIO(out.getvalue())))\n[rows, type(rows[0]).__name__]",
           safe([[{"__class__": "1", "__reduce_ex__": "2"}], "dict"])),
    Attack("csv_everyday_use",
           "import csv, io\nsrc = io.StringIO('name,qty\\na,1\\nb,2\\n')\nrows = list(csv.DictReader(src))\nr = csv.DictReader(io.StringIO('x;y\\n1;2\\n'), delimiter=';')\nr.fieldnames = ['p', 'q']\nout = io.StringIO()\nw = csv.writer(out, lineterminator='\\n')\nw.writerows([[r['name'], int(r['qty']) * 2] for r in rows])\n[out.getvalue(), list(r), csv.field_size_limit() > 0]",
           safe(["a,2\nb,4\n", [{"p": "x", "q": "y"}, {"p": "1", "q": "2"}], True])),
]

UUID_ZONEINFO_QUEUE = [
    Attack("uuid1_absent", "import uuid\nuuid.uuid1()", NO_ATTR),
    Attack("uuid_getnode_absent", "import uuid\nuuid.getnode()", NO_ATTR),
    Attack("uuid_private_module", "import uuid\nuuid._uuid", NO_ATTR),
    Attack("uuid_write_to_shared_namespace", "import uuid\nuuid.NAMESPACE_DNS.int = 0\n'PWNED'", TYPE),
    Attack("uuid_everyday_use",
           "import uuid\nu = uuid.UUID('12345678-1234-5678-1234-567812345678')\n[str(u), u.hex[:4], len(str(uuid.uuid4())), str(uuid.uuid5(uuid.NAMESPACE_DNS, 'a.b'))[:8]]",
           safe(["12345678-1234-5678-1234-567812345678", "1234", 36, "0e7af403"])),
    Attack("zoneinfo_traversal", "import zoneinfo\nzoneinfo.ZoneInfo('../../etc/passwd')", runtime("ZoneInfoNotFoundError")),
    Attack("zoneinfo_absolute_path", "import zoneinfo\nzoneinfo.ZoneInfo('/etc/passwd')", runtime("ZoneInfoNotFoundError")),
    Attack("zoneinfo_no_cache_traversal", "import zoneinfo\nzoneinfo.ZoneInfo.no_cache('Europe/../../../../etc/shadow')", runtime("ZoneInfoNotFoundError")),
    Attack("zoneinfo_non_string_key", "import zoneinfo\nzoneinfo.ZoneInfo(b'UTC')", TYPE),
    Attack("zoneinfo_tzpath_setters_absent", "import zoneinfo\nzoneinfo.reset_tzpath(['/etc'])", NO_ATTR),
    Attack("zoneinfo_from_file_junk", "import zoneinfo, io\nzoneinfo.ZoneInfo.from_file(io.BytesIO(b'junk'))", runtime("ValueError")),
    Attack("zoneinfo_subclass_not_cached",
           "import zoneinfo\nclass Z(zoneinfo.ZoneInfo):\n    def utcoffset(self, dt):\n        return None\nz = Z('Europe/Paris')\n[type(z).__name__, type(zoneinfo.ZoneInfo('Europe/Paris')).__name__, zoneinfo.ZoneInfo('Europe/Paris') is zoneinfo.ZoneInfo('Europe/Paris')]",
           safe(["Z", "ZoneInfo", True])),
    Attack("zoneinfo_everyday_use",
           "import zoneinfo\nfrom datetime import datetime, timezone\ntz = zoneinfo.ZoneInfo('America/New_York')\nd = datetime(2024, 7, 1, 12, tzinfo=timezone.utc).astimezone(tz)\n[d.isoformat(), str(tz), 'Europe/Paris' in zoneinfo.available_timezones()]",
           safe(["2024-07-01T08:00:00-04:00", "America/New_York", True])),
    Attack("queue_get_empty_does_not_hang", "import queue\nqueue.Queue().get()", runtime("Empty")),
    Attack("queue_simple_get_empty", "import queue\nqueue.SimpleQueue().get(timeout=10**9)", runtime("Empty")),
    Attack("queue_put_full", "import queue\nq = queue.Queue(1)\nq.put(1)\nq.put(2)", runtime("Full")),
    Attack("queue_join_unfinished", "import queue\nq = queue.Queue()\nq.put(1)\nq.join()", runtime("RuntimeError")),
    Attack("queue_no_locks_to_wait_on", "import queue\nqueue.Queue().not_empty.wait(10**9)", NO_ATTR),
    Attack("queue_class_read_only", "import queue\nqueue.Queue.get = lambda self, *a: 'PWNED'\n'PWNED'", TYPE),
    Attack("queue_everyday_use",
           "import queue\nq = queue.Queue()\nfor i in range(3):\n    q.put(i)\nout = []\nwhile not q.empty():\n    out.append(q.get())\n    q.task_done()\nq.join()\npq = queue.PriorityQueue()\nfor t in [(2, 'b'), (1, 'a')]:\n    pq.put(t)\nlq = queue.LifoQueue()\nlq.put(1)\nlq.put(2)\ntry:\n    q.get(timeout=0.1)\nexcept queue.Empty:\n    out.append('empty')\n[out, pq.get(), lq.get(), q.qsize()]",
           safe([[0, 1, 2, "empty"], [1, "a"], 2, 0])),
]

SMALL_MODULES = [
    Attack("enum_metaclass_absent", "import enum\nenum.EnumType", NO_ATTR),
    Attack("enum_functional_dunder", "import enum\nenum.Enum('E', {'__del__': print, 'A': 1})", TYPE),
    Attack("enum_class_read_only", "import enum\nenum.Enum.__new__ = print", COMPILE),
    Attack("enum_missing_hook_cannot_return_foreign",
           "import enum, json\nclass E(enum.Enum):\n    A = 1\n    @classmethod\n    def _missing_(cls, value):\n        return json\nE(5)", runtime("TypeError", "ValueError")),
    Attack("enum_other_sunder_names_refused", "import enum\nclass E(enum.Enum):\n    _ignore_ = ['x']\n    A = 1\n", COMPILE),
    Attack("enum_hooks_everyday_use",
           "from enum import Enum, StrEnum, auto\nclass C(Enum):\n    RED = auto()\n    @classmethod\n    def _missing_(cls, value):\n        return cls.RED\nclass L(StrEnum):\n    @staticmethod\n    def _generate_next_value_(name, start, count, last):\n        return name.lower()\n    A = auto()\n[C(99).name, C['RED'].value, L.A.value]",
           safe(["RED", 1, "a"])),
    Attack("heapq_private_absent", "import heapq\nheapq._heapify_max", NO_ATTR),
    Attack("heapq_facade_read_only", "import heapq\nheapq.heappush = print\n'PWNED'", TYPE),
    Attack("unicodedata_shared_object_read_only", "import unicodedata\nunicodedata.ucd_3_2_0.x = 1\n'PWNED'", TYPE),
    Attack("small_modules_everyday_use",
           "import enum, heapq, bisect, unicodedata\nclass S(enum.Enum):\n    NEW = 'new'\n    DONE = 'done'\nh = []\nfor x in [5, 1, 4]:\n    heapq.heappush(h, x)\n[S('done').name, heapq.heappop(h), heapq.nlargest(1, [3, 9, 2]), bisect.bisect([1, 2, 4], 3), unicodedata.normalize('NFKD', 'café').encode('ascii', 'ignore').decode(), unicodedata.category('A')]",
           safe(["DONE", 1, [9], 2, "cafe", "Lu"])),
]

NUMERIC = [
    Attack("pow_item_augmented", "x = [2]\nx[0] **= 10**8\n'PWNED'", INT_LIMIT),
    Attack("pow_dict_item_augmented", "d = {'k': 3}\nd['k'] **= 10**8\n'PWNED'", INT_LIMIT),
    Attack("lshift_attribute_augmented", "class C:\n    pass\nc = C()\nc.v = 1\nc.v <<= 10**9\n'PWNED'", INT_LIMIT),
    Attack("pow_private_attribute_augmented", "class C:\n    pass\nc = C()\nc._v = 7\nc._v **= 10**8\n'PWNED'", INT_LIMIT),
    Attack("augmented_on_foreign_attribute", "import json\njson.JSONDecoder.x **= 2", TYPE),
    Attack("augmented_pow_on_slice", "x = [1, 2]\nx[0:1] **= 2", COMPILE),
    Attack("rpow_in_script_method",
           "class E:\n    def __rpow__(self, base):\n        return base ** 10**8\n2 ** E()", INT_LIMIT),
    Attack("ipow_in_script_method",
           "class E:\n    def __init__(self):\n        self.v = 3\n    def __ipow__(self, n):\n        self.v **= n\n        return self\ne = E()\ne **= 10**8", INT_LIMIT),
    Attack("operator_ipow", "import operator\noperator.ipow(3, 10**8)", INT_LIMIT),
    Attack("class_body_exit_by_assignment", "class Swallow:\n    __enter__ = lambda self: self\n    __exit__ = lambda *a: True\n", COMPILE),
    Attack("class_body_dunder_alias_everyday_use",
           "class M:\n    def __init__(self, v):\n        self.v = v\n    def __add__(self, o):\n        return M(self.v + (o.v if isinstance(o, M) else o))\n    __radd__ = __add__\n    __hash__ = None\n[sum([M(1), M(2)], 0).v, (5 + M(1)).v]",
           safe([3, 6])),
    Attack("index_into_bytes", "class N:\n    def __index__(self):\n        return 10**10\nbytes(N())", limit("memory_limit")),
    Attack("bytes_keyword_size", "bytes(source=10**10)", limit("memory_limit")),
    Attack("bytearray_star_size", "bytearray(*[10**10])", limit("memory_limit")),
    Attack("numeric_everyday_use",
           "class V:\n    def __init__(self, v):\n        self.v = v\n    def __pow__(self, n):\n        return V(self.v ** n)\n    def __lshift__(self, n):\n        return V(self.v << n)\n    def __invert__(self):\n        return V(~self.v)\n    def __divmod__(self, o):\n        return divmod(self.v, o)\n    def __itruediv__(self, o):\n        self.v /= o\n        return self\n"
           "a = V(3)\nb = V(8)\nb /= 2\nc = [2]\nc[0] **= 3\n[(a ** 2).v, (a << 2).v, (~a).v, list(divmod(a, 2)), b.v, c, isinstance(b'x', bytes), type(b'x') is bytes, bytes.fromhex('4142').decode()]",
           safe([9, 12, -4, [1, 1], 4.0, [8], True, True, "AB"])),
]

NAMES = [
    Attack("rebind_guard_getattr", "_getattr_ = getattr\n'PWNED'", COMPILE),
    Attack("rebind_guard_write", "def _write_(obj):\n    return obj\n'PWNED'", COMPILE),
    Attack("rebind_guard_bytes", "_bytes_ = lambda kind, n: kind(n)\nbytes(10**10)", COMPILE),
    Attack("rebind_guard_augment", "_augment_ = print", COMPILE),
    Attack("rebind_builtins_mapping", "__builtins__ = {}", COMPILE),
    Attack("rebind_import", "__import__ = print", COMPILE),
    Attack("rebind_build_class", "__build_class__ = print", COMPILE),
    Attack("rebound_bytes_is_the_scripts", "def bytes(n):\n    return n\nbytes(10**10)", safe(10**10)),
    Attack("rebind_builtins_everyday_use",
           "print = '3'\nlist = [1, 2]\ndef id(x):\n    return 'mine'\nsum_ = sum(list)\n[print, list, id(1), sum_]",
           safe(["3", [1, 2], "mine", 3])),
]

ALL = TIME + COPY + HASHLIB_BASE64_IO_CSV + UUID_ZONEINFO_QUEUE + SMALL_MODULES + NUMERIC + NAMES


def test_attack_ids_are_unique() -> None:
    ids = [attack.id for attack in ALL]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("attack", ALL, ids=[a.id for a in ALL])
def test_data_facade_attack(attack: Attack, probe: Probe, host_intact: None) -> None:
    result = probe.run(attack.code)
    attack.expect.check(result, attack.code)


def test_refused_import_names_a_substitute(probe: Probe) -> None:
    for module, hint in (("os", "tools"), ("pandas", "collections"), ("threading", "parallel"),
                         ("pytz", "zoneinfo"), ("pickle", "json")):
        result = probe.run(f"import {module}")
        assert result.error is not None and result.error.type == "script_error"
        assert result.error.details["exception"] == "ModuleNotFoundError"
        assert f"Use {hint}" in result.error.message or hint in result.error.message, result.error


def test_rebinding_a_guard_name_says_why(probe: Probe) -> None:
    result = probe.run("_getattr_ = 1")
    assert result.error is not None and "guard names" in result.error.message


def test_zone_cache_is_not_poisoned_across_runs(probe: Probe) -> None:
    first = probe.run("import zoneinfo\nclass Z(zoneinfo.ZoneInfo):\n    pass\n"
                      "type(Z('Asia/Tokyo')).__name__")
    assert first.value == "Z", first.to_dict()
    second: Any = probe.run("import zoneinfo\ntype(zoneinfo.ZoneInfo('Asia/Tokyo')).__name__")
    assert second.value == "ZoneInfo", second.to_dict()
