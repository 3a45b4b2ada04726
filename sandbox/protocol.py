"""The wire protocol between host and sandbox: length-prefixed JSON frames.

A frame is a 4-byte big-endian length followed by that many bytes of UTF-8
JSON encoding one object. Every backend speaks it (the inprocess backend
passes the same message dictionaries without encoding them). The message
types are listed in ``docs/internals.md``.

This module is imported inside the sandbox: standard library only.
"""

from __future__ import annotations

import json
import struct
from typing import Any, BinaryIO

PROTOCOL_VERSION = 1
"""Bumped whenever a message changes shape; images carry it as a label."""

MAX_FRAME_BYTES = 64 * 1024 * 1024
"""Largest frame either side accepts; bigger frames are a protocol error."""

_HEADER = struct.Struct(">I")
_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_decode = json.JSONDecoder().decode


class FrameError(Exception):
    """A frame is malformed, oversized, or the stream ended mid-frame."""


class StreamClosed(FrameError):
    """The peer closed the stream cleanly between frames."""


def encode_frame(message: dict[str, Any]) -> bytes:
    """Encode one message as a frame (raises ``ValueError`` for non-JSON data)."""
    body = _encoder.encode(message).encode("utf-8")
    if len(body) > MAX_FRAME_BYTES:
        raise FrameError(f"message of {len(body)} bytes exceeds the {MAX_FRAME_BYTES} byte limit")
    return _HEADER.pack(len(body)) + body


def decode_body(body: bytes) -> dict[str, Any]:
    """Decode a frame body into a message object."""
    try:
        message = _decode(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise FrameError(f"frame is not UTF-8 JSON: {exc}") from None
    except RecursionError:
        # A peer (a compromised sandbox) can nest arrays deeper than the
        # reader's stack allows; that is a bad frame, not a crash of the reader.
        raise FrameError("frame is nested too deeply") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise FrameError("frame is not a JSON object with a string 'type'")
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


def read_frame(stream: BinaryIO, max_bytes: int = MAX_FRAME_BYTES) -> dict[str, Any]:
    """Read one message from a blocking binary stream."""
    header = _read_exact(stream, _HEADER.size)
    if not header:
        raise StreamClosed("stream closed")
    if len(header) < _HEADER.size:
        raise FrameError("stream ended inside a frame header")
    (size,) = _HEADER.unpack(header)
    if size > max_bytes:
        raise FrameError(f"frame of {size} bytes exceeds the {max_bytes} byte limit")
    body = _read_exact(stream, size)
    if len(body) < size:
        raise FrameError("stream ended inside a frame body")
    return decode_body(body)


def write_frame(stream: BinaryIO, message: dict[str, Any]) -> None:
    """Write one message to a binary stream and flush it."""
    stream.write(encode_frame(message))
    stream.flush()


class FrameDecoder:
    """Incremental decoder for byte chunks from a socket or demultiplexed stream."""

    def __init__(self, max_bytes: int = MAX_FRAME_BYTES) -> None:
        self._buffer = bytearray()
        self._max_bytes = max_bytes

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        """Add bytes; return the messages completed by them, in order."""
        self._buffer += data
        messages = []
        while len(self._buffer) >= _HEADER.size:
            (size,) = _HEADER.unpack_from(self._buffer)
            if size > self._max_bytes:
                raise FrameError(f"frame of {size} bytes exceeds the {self._max_bytes} byte limit")
            end = _HEADER.size + size
            if len(self._buffer) < end:
                break
            messages.append(decode_body(bytes(self._buffer[_HEADER.size : end])))
            del self._buffer[:end]
        return messages

    @property
    def pending(self) -> int:
        """Bytes received that do not yet form a whole frame."""
        return len(self._buffer)
