"""The ``format`` checks argument validation asserts.

``jsonschema``'s own checkers, except ``date-time`` and ``time``: JSON
Schema defines them as RFC 3339, which requires a UTC offset, but the strings
a script actually has do not carry one: ``datetime.isoformat()`` of a naive
value, what toolscript sends for a naive ``datetime`` result, and what
pydantic sends for a naive ``datetime`` field (whose schema says
``format: date-time``).  A script passing back what it received must not be
refused, so here the offset is optional; everything else (a full date, a
``T`` between date and time, valid ranges) is still checked.
"""

from __future__ import annotations

import datetime as _dt
import re

import jsonschema

__all__ = ["FORMAT_CHECKER", "is_date_time", "is_time"]

_DATE_TIME = re.compile(
    r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d{1,6})?([Zz]|[+-]\d\d:\d\d)?"
)
_TIME = re.compile(r"\d\d:\d\d:\d\d(\.\d{1,6})?([Zz]|[+-]\d\d:\d\d)?")


def is_date_time(value: object) -> bool:
    """RFC 3339 date-time with an optional offset (non-strings pass: ``type`` decides)."""
    if not isinstance(value, str):
        return True
    if not _DATE_TIME.fullmatch(value):
        return False
    try:
        _dt.datetime.fromisoformat(value.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return False
    return True


def is_time(value: object) -> bool:
    """RFC 3339 full-time with an optional offset (non-strings pass)."""
    if not isinstance(value, str):
        return True
    if not _TIME.fullmatch(value):
        return False
    try:
        _dt.time.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        return False
    return True


def _checker() -> jsonschema.FormatChecker:
    checker = jsonschema.FormatChecker()
    checker.checkers = dict(jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers)
    checker.checkers["date-time"] = (is_date_time, ())
    checker.checkers["time"] = (is_time, ())
    return checker


FORMAT_CHECKER: jsonschema.FormatChecker = _checker()
"""The format checker of argument validation (see the module docstring)."""
