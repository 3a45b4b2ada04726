"""Host types and the JSON a script receives for them.

A tool may declare ``datetime``, ``Decimal``, ``UUID``, pydantic's
``EmailStr`` or ``HttpUrl``...; a script never sees those objects, only
their JSON form: a string in a known format.  :func:`json_form` names that
form for stubs, so a model reads ``timestamp: str  # ISO 8601 date-time``
instead of a class it cannot use (``e['timestamp'].year`` would raise).

The forms follow pydantic's JSON mode (``model_dump(mode="json")``), which is
how model results are sent, and :func:`~toolscript.tools.json_default`, which
sends the same strings for the same types in dataclasses, TypedDicts and
plain results.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import ipaddress
import pathlib
import sys
import uuid
from dataclasses import dataclass
from typing import Any

__all__ = ["FORMAT_NOTES", "JsonForm", "host_json", "iso_duration", "json_form"]


@dataclass(frozen=True)
class JsonForm:
    """The JSON a script receives for a host type.

    Attributes:
        annotation: the Python annotation of that JSON value (``str``...).
        note: what the value looks like (``ISO 8601 date-time``); "" if nothing to add.
    """

    annotation: str
    note: str = ""


FORMAT_NOTES: dict[str, str] = {
    "date-time": "ISO 8601 date-time",
    "date": "ISO 8601 date",
    "time": "ISO 8601 time",
    "duration": "ISO 8601 duration, e.g. 'PT1H30M'",
    "email": "email",
    "name-email": "name and email, e.g. 'Jane Doe <jane@example.com>'",
    "uri": "URL",
    "uuid": "UUID",
    "decimal": "decimal number as text, e.g. '12.50'",
    "ipv4": "IPv4 address",
    "ipv6": "IPv6 address",
    "ipvanyaddress": "IP address",
    "ipv4network": "IPv4 network, e.g. '10.0.0.0/8'",
    "ipv6network": "IPv6 network, e.g. '2001:db8::/32'",
    "ipvanynetwork": "IP network, e.g. '10.0.0.0/8'",
    "ipv4interface": "IPv4 interface, e.g. '10.0.0.1/24'",
    "ipv6interface": "IPv6 interface, e.g. '2001:db8::1/64'",
    "ipvanyinterface": "IP interface, e.g. '10.0.0.1/24'",
    "path": "file path",
    "binary": "bytes as UTF-8 text",
    "password": "secret, always sent as '**********'",
}
"""JSON Schema ``format`` values (as pydantic writes them) -> what the string looks like."""

# Most specific first: datetime is a subclass of date.
_STDLIB: tuple[tuple[type, str], ...] = (
    (_dt.datetime, "date-time"),
    (_dt.date, "date"),
    (_dt.time, "time"),
    (_dt.timedelta, "duration"),
    (uuid.UUID, "uuid"),
    (decimal.Decimal, "decimal"),
    (ipaddress.IPv4Address, "ipv4"),
    (ipaddress.IPv6Address, "ipv6"),
    (ipaddress.IPv4Network, "ipv4network"),
    (ipaddress.IPv6Network, "ipv6network"),
    (ipaddress.IPv4Interface, "ipv4interface"),
    (ipaddress.IPv6Interface, "ipv6interface"),
    (pathlib.PurePath, "path"),
    (bytes, "binary"),
    (bytearray, "binary"),
)

# pydantic's own string types, by class name anywhere in the MRO (pydantic is
# never imported here).
_PYDANTIC: dict[str, str] = {
    "EmailStr": "email",
    "NameEmail": "name-email",
    "_BaseUrl": "uri",
    "_BaseMultiHostUrl": "uri",
    "AnyUrl": "uri",
    "Url": "uri",
    "MultiHostUrl": "uri",
    "IPvAnyAddress": "ipvanyaddress",
    "IPvAnyNetwork": "ipvanynetwork",
    "IPvAnyInterface": "ipvanyinterface",
    "SecretStr": "password",
    "SecretBytes": "password",
    "AwareDatetime": "date-time",
    "NaiveDatetime": "date-time",
    "PastDatetime": "date-time",
    "FutureDatetime": "date-time",
    "PastDate": "date",
    "FutureDate": "date",
}
_JSON_NAMES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool",
               "array": "list", "object": "dict", "null": "None"}


def json_form(tp: Any) -> JsonForm | None:
    """The JSON form of host class ``tp``, or None if ``tp`` is not a known host type.

    Builtin JSON types, Enums and record types (TypedDict, dataclass, pydantic
    model) are not host types here: stubs render those themselves.
    """
    if not isinstance(tp, type):
        return None
    for host, fmt in _STDLIB:
        if issubclass(tp, host):
            return JsonForm("str", FORMAT_NOTES[fmt])
    for klass in tp.__mro__:
        module = getattr(klass, "__module__", "") or ""
        fmt_name = _PYDANTIC.get(klass.__name__)
        if fmt_name is not None and module.split(".")[0] in ("pydantic", "pydantic_core"):
            return JsonForm("str", FORMAT_NOTES[fmt_name])
    return _pydantic_form(tp)


def _pydantic_form(tp: type) -> JsonForm | None:
    """Ask pydantic (only if already imported) for the JSON Schema of ``tp``'s values."""
    if "pydantic" not in sys.modules or tp.__module__ == "builtins":
        return None
    from pydantic import TypeAdapter  # already imported by the tool's own code

    try:
        schema = TypeAdapter(tp).json_schema(mode="serialization")
    except Exception:  # not a type pydantic knows: no form
        return None
    kind = schema.get("type")
    if not isinstance(kind, str) or kind not in _JSON_NAMES:
        return None
    fmt = schema.get("format")
    note = FORMAT_NOTES.get(fmt, str(fmt)) if isinstance(fmt, str) else ""
    return JsonForm(_JSON_NAMES[kind], note)


_TEXT_TYPES: tuple[type, ...] = (
    uuid.UUID,
    decimal.Decimal,
    ipaddress.IPv4Address,
    ipaddress.IPv6Address,
    ipaddress.IPv4Network,
    ipaddress.IPv6Network,
    ipaddress.IPv4Interface,
    ipaddress.IPv6Interface,
    pathlib.PurePath,
)


def host_json(value: Any) -> str | None:
    """The JSON string pydantic's JSON mode sends for a stdlib host value, else None.

    Covers timedelta (ISO 8601 duration), UUID, Decimal, IP addresses,
    networks and interfaces, paths and UTF-8 bytes (dates and times are
    ``isoformat()`` in :func:`~toolscript.tools.json_default`).

    Raises:
        TypeError: bytes that are not UTF-8 text.
    """
    if isinstance(value, _dt.timedelta):
        return iso_duration(value)
    if isinstance(value, _TEXT_TYPES):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise TypeError("bytes that are not UTF-8 text are not JSON data") from None
    return None


def iso_duration(value: _dt.timedelta) -> str:
    """A timedelta as an ISO 8601 duration, as pydantic writes it: ``P1DT2H3M4.5S``."""
    sign = "-" if value < _dt.timedelta(0) else ""
    value = abs(value)
    days = value.days
    seconds = value.seconds
    micro = value.microseconds
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    out = f"{sign}P" + (f"{days}D" if days else "")
    clock = ""
    if hours:
        clock += f"{hours}H"
    if minutes:
        clock += f"{minutes}M"
    if seconds or micro:
        text = f"{seconds}.{micro:06d}".rstrip("0") if micro else str(seconds)
        clock += f"{text}S"
    if clock or not days:
        out += "T" + (clock or "0S")
    return out
