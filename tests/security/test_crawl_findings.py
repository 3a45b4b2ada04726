"""Holes the reachability crawler found (``test_reachability.py``), each closed as a class.

``datetime.date.replace`` applied to a ``datetime`` (the crawler reached it as
``super(datetime, dt).replace()``) builds a ``datetime`` with the allocation of a
``date``: its ``tzinfo`` is read from past the end of the object, so a script
got whatever object the heap held there (here: a list of the import system's
loader classes), and the host process could crash. Every route to that call is
refused; ``replace`` of the objects themselves works as before. In process the
attack runs in a child interpreter, so that a regression is a failed test, not
a crashed test run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from security_helpers import Probe

SETUP = "import datetime, functools, operator\ndt = datetime.datetime(2020, 1, 2, 3, 4, 5)\n"

DATE_REPLACE_ROUTES = {
    "unbound": "d = datetime.date.replace(dt)",
    "unbound with fields": "d = datetime.date.replace(dt, day=3)",
    "super": "d = super(datetime.datetime, dt).replace()",
    "getattr": "d = getattr(datetime.date, 'replace')(dt)",
    "mro": "d = type(dt).mro()[1].replace(dt)",
    "own subclass of date": "class D(datetime.date):\n    pass\nd = D.replace(dt)",
    "own subclass of datetime": "class E(datetime.datetime):\n    pass\n"
                                "d = datetime.date.replace(E(2020, 1, 2))",
    "methodcaller": "d = operator.methodcaller('replace')(super(datetime.datetime, dt))",
    "attrgetter": "d = operator.attrgetter('replace')(datetime.date)(dt)",
    "map": "d = list(map(datetime.date.replace, [dt]))[0]",
    "partial": "d = functools.partial(datetime.date.replace)(dt)",
    "class attribute": "d = datetime.date.replace(datetime.datetime.min)",
}
"""Each route to ``date.replace`` with a ``datetime`` (a script that gets through
reads ``d.tzinfo``, an object from past the end of ``d``)."""

CHILD = """
import json, sys
from toolscript import Runtime
runtime = Runtime(backend="inprocess")
print(json.dumps(runtime.run(sys.argv[1]).to_dict()))
runtime.close()
"""


def _run(backend_name: str, probe: Probe, code: str) -> dict[str, Any]:
    if backend_name != "inprocess":
        result: dict[str, Any] = probe.run(code).to_dict()
        return result
    child = subprocess.run([sys.executable, "-c", CHILD, code], capture_output=True,
                           text=True, timeout=60, check=False)
    assert child.returncode == 0, f"the host process died ({child.returncode}): {child.stderr}"
    result = json.loads(child.stdout)
    return result


@pytest.mark.parametrize("route", sorted(DATE_REPLACE_ROUTES))
def test_date_replace_on_a_datetime_is_refused(backend_name: str, probe: Probe,
                                               route: str) -> None:
    code = SETUP + DATE_REPLACE_ROUTES[route] + "\n[d.hour, repr(d.tzinfo)]"
    result = _run(backend_name, probe, code)
    assert not result["ok"], f"{route}: not refused: {result}"
    assert result["error"]["type"] == "script_error", result
    assert result["error"]["exception"] in ("TypeError", "AttributeError"), result


def test_replace_still_works(backend_name: str, probe: Probe) -> None:
    """The objects' own ``replace`` methods, ``str.replace`` and ``dataclasses.replace``."""
    code = SETUP + (
        "import dataclasses\n"
        "@dataclasses.dataclass\nclass P:\n    x: int = 1\n"
        "class D(datetime.date):\n    pass\n"
        "[dt.replace(hour=9).isoformat(), datetime.date(2020, 1, 1).replace(day=5).isoformat(),"
        " datetime.date.replace(datetime.date(2020, 1, 1), month=2).isoformat(),"
        " D(2020, 1, 1).replace(day=2).isoformat(), 'abc'.replace('b', 'x'),"
        " str.replace('abc', 'c', 'y'), dataclasses.replace(P(), x=2).x,"
        " getattr(dt, 'replace')(minute=0).minute, datetime.time(1, 2).replace(hour=3).hour]")
    result = _run(backend_name, probe, code)
    assert result["ok"], result
    assert result["value"] == ["2020-01-02T09:04:05", "2020-01-05", "2020-02-01", "2020-01-02",
                               "axc", "aby", 2, 0, 3]


def test_replace_in_a_class_pattern_is_refused_at_compile_time(probe: Probe) -> None:
    """``case date(replace=r)`` would read the attribute with the interpreter's own
    getattr: refused like every guarded name."""
    result = probe.run(SETUP + "match dt:\n    case datetime.date(replace=r):\n        r\n")
    assert result.error is not None and result.error.type == "policy_error", result.to_dict()


CSV_TYPE_ROUTES = {
    "reader": "type(csv.reader(['a']))()",
    "writer": "type(csv.writer(io.StringIO()))()",
    "__class__": "csv.reader(['a']).__class__()",
    "mro": "type(csv.reader(['a'])).mro()[0]()",
    "getattr": "getattr(csv.writer(io.StringIO()), '__class__')()",
}
"""Routes to calling the reader and writer types directly: on the docker image's
Python (3.11.2) that built objects without an input or output, and using one
crashed the sandbox (``sandbox_crashed``, exit code 139)."""


@pytest.mark.parametrize("route", sorted(CSV_TYPE_ROUTES))
def test_csv_types_cannot_be_called(backend_name: str, probe: Probe, route: str) -> None:
    code = f"import csv, io\nr = {CSV_TYPE_ROUTES[route]}\nlist(r) if hasattr(r, 'line_num') " \
           "else r.writerow(['a'])"
    result = _run(backend_name, probe, code)
    assert not result["ok"], f"{route}: not refused: {result}"
    assert result["error"]["type"] == "script_error", result
    assert result["error"]["exception"] == "TypeError", result


def test_csv_readers_and_writers_still_work(backend_name: str, probe: Probe) -> None:
    code = ("import csv, io\nout = io.StringIO()\ncsv.writer(out).writerow(['a', 1])\n"
            "[list(csv.reader(['x,y'])), out.getvalue(), isinstance(csv.reader([]), "
            "type(csv.reader([]))), repr(type(csv.reader([])))]")
    result = _run(backend_name, probe, code)
    assert result["ok"], result
    assert result["value"] == [[["x", "y"]], "a,1\r\n", True, "<class '_csv.reader'>"]
