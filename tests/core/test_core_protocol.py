"""The wire protocol: framing round trips, size limits, truncated and garbage
frames, the incremental decoder, and a real sandbox server fed bad frames."""

from __future__ import annotations

import io
import json
import struct
import subprocess
import sys

import pytest
from toolscript.sandbox import protocol
from toolscript.sandbox.protocol import (
    FrameDecoder,
    FrameError,
    StreamClosed,
    decode_body,
    encode_frame,
    read_frame,
    write_frame,
)

MESSAGES = [
    {"type": "ready", "protocol": 1, "pid": 123, "python": "3.11.7"},
    {"type": "run", "id": 7, "code": "print('héllo ✓')\n[1, 2]", "limits": {"wall_s": 1.5}},
    {"type": "reply", "id": 2, "ok": True, "value": {"nested": [1, 2.5, None, True, "x" * 1000]}},
    {"type": "call_many", "id": 3, "calls": [{"tool": "a", "args": {}}] * 3},
    {"type": "x", "emoji": "\U0001f600", "nul": "\x00", "big": 2 ** 62},
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: m["type"])
def test_round_trip(message: dict) -> None:
    frame = encode_frame(message)
    (size,) = struct.unpack(">I", frame[:4])
    assert size == len(frame) - 4
    assert read_frame(io.BytesIO(frame)) == message
    assert FrameDecoder().feed(frame) == [message]


def test_stream_of_frames_and_clean_end() -> None:
    stream = io.BytesIO()
    for message in MESSAGES:
        write_frame(stream, message)
    stream.seek(0)
    assert [read_frame(stream) for _ in MESSAGES] == MESSAGES
    with pytest.raises(StreamClosed):
        read_frame(stream)


def test_non_json_data_cannot_be_encoded() -> None:
    with pytest.raises(ValueError):
        encode_frame({"type": "x", "v": float("nan")})
    with pytest.raises(TypeError):
        encode_frame({"type": "x", "v": {1, 2}})


def test_oversized_frames_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    frame = encode_frame({"type": "x", "data": "y" * 100})
    with pytest.raises(FrameError, match="exceeds"):
        read_frame(io.BytesIO(frame), max_bytes=50)
    with pytest.raises(FrameError, match="exceeds"):
        FrameDecoder(max_bytes=50).feed(frame)
    # The header alone is enough to refuse: nothing is buffered for a 4 GiB claim.
    decoder = FrameDecoder()
    with pytest.raises(FrameError):
        decoder.feed(struct.pack(">I", 0xFFFFFFFF))
    monkeypatch.setattr(protocol, "MAX_FRAME_BYTES", 50)
    with pytest.raises(FrameError):
        encode_frame({"type": "x", "data": "y" * 100})


@pytest.mark.parametrize("data", [
    b"\x00\x00",                      # half a header
    struct.pack(">I", 10) + b"{}",    # body shorter than announced
])
def test_truncated_frames(data: bytes) -> None:
    with pytest.raises(FrameError) as info:
        read_frame(io.BytesIO(data))
    assert not isinstance(info.value, StreamClosed)
    decoder = FrameDecoder()
    assert decoder.feed(data) == []
    assert decoder.pending == len(data)


@pytest.mark.parametrize("body", [
    b"not json", b"\xff\xfe\x00", b"[1, 2]", b'"type"', b"{}", b'{"type": 5}', b"",
    b'{"type": "x"} trailing', b"[" * 100_000,
], ids=["text", "not_utf8", "array", "string", "no_type", "type_not_str", "empty",
        "trailing", "deep"])
def test_garbage_bodies(body: bytes) -> None:
    frame = struct.pack(">I", len(body)) + body
    with pytest.raises(FrameError):
        read_frame(io.BytesIO(frame))
    with pytest.raises(FrameError):
        FrameDecoder().feed(frame)
    with pytest.raises(FrameError):
        decode_body(body)


def test_decoder_split_at_every_byte_boundary() -> None:
    data = b"".join(encode_frame(m) for m in MESSAGES)
    for cut in range(len(data) + 1):
        decoder = FrameDecoder()
        got = decoder.feed(data[:cut]) + decoder.feed(data[cut:])
        assert got == MESSAGES, cut
        assert decoder.pending == 0


def test_decoder_one_byte_at_a_time() -> None:
    data = b"".join(encode_frame(m) for m in MESSAGES[:3])
    decoder = FrameDecoder()
    got = []
    for i in range(len(data)):
        got.extend(decoder.feed(data[i:i + 1]))
    assert got == MESSAGES[:3]


def test_decoder_many_frames_in_one_chunk_keeps_the_tail() -> None:
    data = b"".join(encode_frame(m) for m in MESSAGES)
    tail = encode_frame({"type": "late"})
    decoder = FrameDecoder()
    assert decoder.feed(data + tail[:5]) == MESSAGES
    assert decoder.pending == 5
    assert decoder.feed(tail[5:]) == [{"type": "late"}]


def _server() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-I", "-m", "toolscript.sandbox"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={})


@pytest.mark.parametrize("payload", [
    struct.pack(">I", 9) + b"not json!",
    struct.pack(">I", 0xFFFFFFF0),
    encode_frame({"type": "no-such-message"}),
], ids=["garbage", "oversized", "unknown_type"])
def test_real_server_refuses_bad_frames_and_exits(payload: bytes) -> None:
    process = _server()
    assert process.stdout is not None and process.stdin is not None
    ready = read_frame(process.stdout)
    assert ready["type"] == "ready" and ready["protocol"] == protocol.PROTOCOL_VERSION
    assert ready["pid"] == process.pid
    process.stdin.write(payload)
    process.stdin.close()
    try:
        code = process.wait(timeout=20)
    finally:
        process.kill()
    assert process.stderr is not None
    err = process.stderr.read()
    process.stdout.close()
    process.stderr.close()
    assert code == 2
    assert b"toolscript sandbox:" in err


def test_real_server_runs_a_script_over_frames() -> None:
    process = _server()
    assert process.stdout is not None and process.stdin is not None
    assert read_frame(process.stdout)["type"] == "ready"
    write_frame(process.stdin, {"type": "configure", "tools": [
        {"name": "double", "params": [{"name": "x", "kind": "positional_or_keyword",
                                       "required": True}], "read_only": True, "doc": ""}]})
    assert read_frame(process.stdout) == {"type": "configured"}
    write_frame(process.stdin, {"type": "run", "id": 5, "code": "print('hi')\ndouble(21) + 0"})
    call = read_frame(process.stdout)
    assert call["type"] == "call" and call["tool"] == "double" and call["args"] == {"x": 21}
    write_frame(process.stdin, {"type": "reply", "id": call["id"], "ok": True, "value": 42})
    result = read_frame(process.stdout)
    assert result["type"] == "result" and result["id"] == 5
    assert (result["ok"], result["value"], result["stdout"]) == (True, 42, "hi\n")
    write_frame(process.stdin, {"type": "reset"})
    assert read_frame(process.stdout) == {"type": "reset_done"}
    write_frame(process.stdin, {"type": "shutdown"})
    assert process.wait(timeout=20) == 0
    process.communicate()
    json.dumps(result)
