"""The wire protocol between host and sandbox: length-prefixed JSON frames.

A frame is a 4-byte big-endian length followed by that many bytes of UTF-8
JSON encoding one object. Every backend speaks it (the inprocess backend
passes the same message dictionaries without encoding them). Each message is
defined once, below, as a ``TypedDict``; :mod:`.wirecheck` holds the two
validating decoders (the host's for what a sandbox sends, the sandbox's for
what the host sends). ``docs/internals.md`` lists the messages.

Every frame is bounded before and while it is decoded (:class:`WireBounds`):
in bytes (the header is checked before the body is read), in values (keys
included: counted on the bytes before ``json`` builds any object) and in
nesting depth; ``NaN``, ``Infinity`` and numbers too large for a float are
refused. A peer that breaks a bound or the schema broke the protocol.

This module is imported inside the sandbox: standard library only.
"""

from __future__ import annotations

import json
import math
import re
import struct
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Literal, NotRequired, TypedDict

PROTOCOL_VERSION = 2
"""Bumped whenever a message changes shape; images carry it as a label."""

MAX_FRAME_BYTES = 64 * 1024 * 1024
"""Largest frame either side accepts; bigger frames are a protocol error."""

MAX_FRAME_ITEMS = 1_000_000
"""Default bound on the values (containers, keys and scalars) of one frame."""

MAX_FRAME_DEPTH = 128
"""Nesting bound of one frame: above the 100 levels :mod:`.codec` lets data
have, plus the message's own envelope (``call_many`` → ``calls`` → call → ``args``)."""


@dataclass(frozen=True, slots=True)
class WireBounds:
    """What decoding one frame may cost: its bytes, its values and its depth.

    The host sizes them from ``Limits`` (``max_message_bytes``,
    ``max_message_items``) and tells the sandbox in ``configure``, so the
    sandbox refuses an oversized call or result itself, as a catchable error,
    before it would break the protocol.
    """

    max_bytes: int = MAX_FRAME_BYTES
    max_items: int = MAX_FRAME_ITEMS
    max_depth: int = MAX_FRAME_DEPTH
    small: int = field(init=False, repr=False, compare=False)
    """Bodies of at most this many bytes cannot break the value or depth bound."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "small", min(self.max_items, 2 * self.max_depth))


DEFAULT_BOUNDS = WireBounds()

_HEADER = struct.Struct(">I")
_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a finite number")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text[:40]} does not fit a float")
    return value


_decode = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float).decode
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_SPACE = b" \t\n\r"
_NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(b'[]{}"')))
_UNIFY = bytes.maketrans(b"[{]}", b"(())")


class FrameError(Exception):
    """Internal: a frame is malformed, oversized, or the stream ended mid-frame."""


class StreamClosed(FrameError):
    """Internal: the peer closed the stream cleanly between frames."""


class ProtocolViolation(FrameError):
    """Internal: a well-formed frame whose message breaks the schema or belongs to another run."""


def encode_frame(message: dict[str, Any]) -> bytes:
    """Encode one message as a frame (raises ``ValueError`` for non-JSON data)."""
    body = _encoder.encode(message).encode("utf-8")
    if len(body) > MAX_FRAME_BYTES:
        raise FrameError(f"message of {len(body)} bytes exceeds the {MAX_FRAME_BYTES} byte limit")
    return _HEADER.pack(len(body)) + body


def count_items(body: bytes | bytearray | memoryview) -> int:
    """The values (containers, keys and scalars) of a JSON text, counted on its bytes.

    Exact for valid JSON (for anything else the decoder fails anyway): every
    value but the first follows a ``,``, ``:``, ``[`` or ``{``, except that an
    empty container has nothing after its opening bracket. Strings are cut
    out first, so the punctuation inside them does not count.
    """
    bare = _STRING.sub(b'""', body)  # one copy at most of the body (no second for spaces)
    if any(bare.find(space) >= 0 for space in (b" ", b"\n", b"\t", b"\r")):
        bare = bare.translate(None, _SPACE)
    opens = bare.count(b"[") + bare.count(b"{")
    return (1 + bare.count(b",") + bare.count(b":") + opens
            - bare.count(b"[]") - bare.count(b"{}"))


def _upper_items(body: bytes | bytearray, start: int, end: int) -> tuple[int, int]:
    """An upper bound of the values and of the containers, from punctuation counts."""
    opens = body.count(b"[", start, end) + body.count(b"{", start, end)
    return 1 + opens + body.count(b",", start, end) + body.count(b":", start, end), opens


def nests_deeper(body: bytes | memoryview, limit: int) -> bool | None:
    """Whether the containers of a JSON text nest more than ``limit`` deep, told from
    its bytes (C-speed passes), or None when a string holds a bracket (then the
    decoded value is walked).

    Escaped backslashes, then escaped quotes, are cut, so every quote left
    delimits a string; of the brackets and quotes, one pass removes each string
    without a bracket (``""``). A quote left over means some string held a
    bracket (its opening quote cannot pair with a neighbour); else what is left
    are the structure's brackets, as ``(`` and ``)``, and each pass that removes
    every ``()`` removes one level.
    """
    bare = bytes(body).replace(b"\\\\", b"").replace(b'\\"', b"")
    bare = bare.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    if bare.find(b'"') >= 0:
        return None
    shape = bare.translate(_UNIFY)
    for _ in range(limit):
        if not shape:
            return False
        shape = shape.replace(b"()", b"")
    return bool(shape)


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether decoded JSON data nests containers more than ``limit`` deep (one
    comprehension per level, no recursion, stops at the limit)."""
    level = [value]
    depth = 1
    while level:
        if depth > limit:
            return True
        level = [child for item in level
                 for child in (item.values() if type(item) is dict else item)
                 if type(child) is list or type(child) is dict]
        depth += 1
    return False


def check_size(body: bytes | bytearray, bounds: WireBounds = DEFAULT_BOUNDS,
               start: int = 0, end: int | None = None) -> int:
    """Refuse ``body[start:end]`` if it breaks the byte or value bound, before decoding.

    Also refuses it if it nests deeper than ``bounds.max_depth``, when that can be
    told from the bytes; returns how many containers it may hold when it cannot
    (the caller then checks the depth of the decoded value), else 0.
    """
    stop = len(body) if end is None else end
    size = stop - start
    if size > bounds.max_bytes:
        raise FrameError(f"frame of {size} bytes exceeds the {bounds.max_bytes} byte limit")
    if size <= bounds.small:
        return 0
    upper, opens = _upper_items(body, start, stop)
    if upper > bounds.max_items:
        # Each string has one opening quote that no backslash precedes, and two
        # quotes in all: a cheap lower bound first, so that the exact count
        # below never cuts out more than about 2 * max_items strings.
        unescaped = body.count(b'"', start, stop) - body.count(b'\\"', start, stop)
        if unescaped // 2 > bounds.max_items:
            raise FrameError(f"frame holds more than {unescaped // 2} values, more than the "
                             f"limit of {bounds.max_items}")
        view = memoryview(body)[start:stop]
        try:
            items = count_items(view)
        finally:
            view.release()
        if items > bounds.max_items:
            raise FrameError(f"frame holds {items} values, more than the limit of "
                             f"{bounds.max_items}")
    if opens <= bounds.max_depth:
        return 0
    view = memoryview(body)[start:stop]
    try:
        deeper = nests_deeper(view, bounds.max_depth)
    finally:
        view.release()
    if deeper is None:
        return opens
    if deeper:
        raise FrameError(f"frame is nested more than {bounds.max_depth} levels deep")
    return 0


def _decode_checked(text: str | memoryview, opens: int, bounds: WireBounds) -> Any:
    try:
        message = _decode(text if isinstance(text, str) else str(text, "utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise FrameError(f"frame is not UTF-8 JSON of finite numbers: {exc}") from None
    except RecursionError:
        # A peer (a compromised sandbox) can nest arrays deeper than the
        # reader's stack allows; that is a bad frame, not a crash of the reader.
        raise FrameError("frame is nested too deeply") from None
    if opens > bounds.max_depth and _deeper_than(message, bounds.max_depth):
        raise FrameError(f"frame is nested more than {bounds.max_depth} levels deep")
    if type(message) is not dict or type(message.get("type")) is not str:
        raise FrameError("frame is not a JSON object with a string 'type'")
    return message


def decode_body(body: bytes, bounds: WireBounds = DEFAULT_BOUNDS) -> dict[str, Any]:
    """Decode a frame body into a message object, within ``bounds``."""
    opens = check_size(body, bounds) if len(body) > bounds.small else 0
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FrameError(f"frame is not UTF-8 JSON of finite numbers: {exc}") from None
    message: dict[str, Any] = _decode_checked(text, opens, bounds)
    return message


def _read_exact(stream: BinaryIO, size: int) -> bytes:
    chunks = []
    remaining = size
    while remaining:
        chunk = stream.read(remaining)
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_frame(stream: BinaryIO, max_bytes: int | None = None,
               bounds: WireBounds = DEFAULT_BOUNDS) -> dict[str, Any]:
    """Read one message from a blocking binary stream (``max_bytes`` narrows ``bounds``)."""
    if max_bytes is not None:
        bounds = WireBounds(max_bytes, bounds.max_items, bounds.max_depth)
    header = _read_exact(stream, _HEADER.size)
    if not header:
        raise StreamClosed("stream closed")
    if len(header) < _HEADER.size:
        raise FrameError("stream ended inside a frame header")
    (size,) = _HEADER.unpack(header)
    if size > bounds.max_bytes:
        raise FrameError(f"frame of {size} bytes exceeds the {bounds.max_bytes} byte limit")
    body = _read_exact(stream, size)
    if len(body) < size:
        raise FrameError("stream ended inside a frame body")
    return decode_body(body, bounds)


def write_frame(stream: BinaryIO, message: dict[str, Any]) -> None:
    """Write one message to a binary stream and flush it."""
    stream.write(encode_frame(message))
    stream.flush()


class FrameDecoder:
    """Incremental decoder for byte chunks from a socket or demultiplexed stream.

    ``bounds`` may be replaced between frames (a pooled sandbox's handle takes
    the bounds of the session that gets it).
    """

    def __init__(self, max_bytes: int | None = None,
                 bounds: WireBounds = DEFAULT_BOUNDS) -> None:
        self._buffer = bytearray()
        if max_bytes is not None:
            bounds = WireBounds(max_bytes, bounds.max_items, bounds.max_depth)
        self.bounds = bounds

    def feed(self, data: bytes | memoryview) -> list[dict[str, Any]]:
        """Add bytes; return the messages completed by them, in order."""
        buffer = self._buffer
        buffer += data
        bounds = self.bounds
        messages = []
        while len(buffer) >= _HEADER.size:
            (size,) = _HEADER.unpack_from(buffer)
            if size > bounds.max_bytes:
                raise FrameError(f"frame of {size} bytes exceeds the {bounds.max_bytes} byte limit")
            end = _HEADER.size + size
            if len(buffer) < end:
                break
            opens = check_size(buffer, bounds, _HEADER.size, end) if size > bounds.small else 0
            view = memoryview(buffer)[_HEADER.size:end]
            try:
                text = str(view, "utf-8")  # one copy, straight from the buffer
            except UnicodeDecodeError as exc:
                raise FrameError(f"frame is not UTF-8 JSON of finite numbers: {exc}") from None
            finally:
                view.release()
            del buffer[:end]
            messages.append(_decode_checked(text, opens, bounds))
            del text
        return messages

    @property
    def pending(self) -> int:
        """Bytes received that do not yet form a whole frame."""
        return len(self._buffer)


# --- the messages ---------------------------------------------------------------------
# One definition per message; :mod:`.wirecheck` decodes each direction against these.


class ErrorInfo(TypedDict):
    """An ``error`` object: a stable ``type``, a ``message``, and any detail fields."""

    type: str
    message: str


class ReadyMessage(TypedDict):
    """sandbox -> host, once at start: its protocol version and the walls it put up."""

    type: Literal["ready"]
    protocol: int
    pid: int
    python: str
    audit_hook: NotRequired[bool]
    walls: NotRequired[dict[str, Any]]


class CallMessage(TypedDict):
    """sandbox -> host during run ``run``: one tool call; answered by a :class:`ReplyMessage`."""

    type: Literal["call"]
    id: int
    run: str | int
    tool: str
    args: dict[str, Any]
    labels: NotRequired[dict[str, list[str]]]
    """Provenance on: per argument, the untrusted sources it depends on (sorted names)."""


class CallSpec(TypedDict):
    """One call of a ``call_many`` batch."""

    tool: str
    args: dict[str, Any]
    labels: NotRequired[dict[str, list[str]]]


class CallManyMessage(TypedDict):
    """sandbox -> host: a ``parallel()`` batch; answered by a :class:`BatchReplyMessage`."""

    type: Literal["call_many"]
    id: int
    run: str | int
    calls: list[CallSpec]


class ResultMessage(TypedDict):
    """sandbox -> host: the outcome of run ``id`` (the ``id`` of its ``run`` message)."""

    type: Literal["result"]
    id: str | int
    ok: bool
    value: Any
    stdout: str
    stdout_truncated: bool
    error: ErrorInfo | None
    labels: NotRequired[ResultLabels]
    """Provenance on: what the printed text and the value depend on."""
    sources: NotRequired[dict[str, list[Any]]]
    """The clock readings and seed the run used, by kind (``sandbox/runsources.py``)."""


class ResultLabels(TypedDict):
    """Which printed characters (``[start, end, sources]`` spans of ``stdout``) and
    whether the value or error (``value``: sources) depend on untrusted data."""

    stdout: list[list[Any]]
    value: list[str]


class AckMessage(TypedDict):
    """sandbox -> host: ``configured``, ``reset_done`` or ``pong``."""

    type: Literal["configured", "reset_done", "pong"]


class ToolInfo(TypedDict):
    """One tool a script may call, as ``configure`` describes it."""

    name: str
    params: list[dict[str, Any]]
    read_only: bool
    doc: str


class ProcessLimits(TypedDict, total=False):
    """The rlimits a process sandbox sets on itself (``apply`` false: none)."""

    apply: bool
    memory_bytes: int
    cpu_s_per_run: float
    open_files: int
    file_bytes: int


class FrameLimits(TypedDict):
    """The host's :class:`WireBounds` of the frames it accepts (``configure``)."""

    max_bytes: int
    max_items: int
    max_depth: int


class ConfigureMessage(TypedDict):
    """host -> sandbox: the tools, modules and limits of the session."""

    type: Literal["configure"]
    tools: list[ToolInfo]
    modules: NotRequired[list[str] | None]
    process_limits: NotRequired[ProcessLimits]
    wire: NotRequired[FrameLimits]
    provenance: NotRequired[bool]
    """Provenance labels on (issue 27): scripts compile with the labels pass."""


class RunMessage(TypedDict):
    """host -> sandbox: run ``code``; ``id`` is fresh and unpredictable for each run."""

    type: Literal["run"]
    id: str | int
    code: str
    limits: NotRequired[dict[str, Any]]
    sources: NotRequired[dict[str, list[Any]]]
    """A resumed run: the original run's readings, served first (``sandbox/runsources.py``)."""


class ControlMessage(TypedDict):
    """host -> sandbox: ``reset``, ``ping`` or ``shutdown``."""

    type: Literal["reset", "ping", "shutdown"]


class ReplyMessage(TypedDict):
    """host -> sandbox: the answer to call ``id``: ``ok`` and ``value`` or ``error``."""

    type: Literal["reply"]
    id: int
    ok: bool
    value: NotRequired[Any]
    error: NotRequired[ErrorInfo]
    label: NotRequired[list[str]]
    """Provenance on: the untrusted sources the value (or error) depends on."""


class BatchReplyMessage(TypedDict):
    """host -> sandbox: the answers to batch ``id``, one per call in order (``results``),
    or one ``error`` for the whole batch when the host refused it before any call."""

    type: Literal["reply"]
    id: int
    results: NotRequired[list[dict[str, Any]]]
    ok: NotRequired[bool]
    error: NotRequired[ErrorInfo]


SandboxMessage = ReadyMessage | CallMessage | CallManyMessage | ResultMessage | AckMessage
"""What a sandbox may send."""

HostMessage = ConfigureMessage | RunMessage | ControlMessage
"""What the host sends between runs (replies are read by the call that waits for them)."""
