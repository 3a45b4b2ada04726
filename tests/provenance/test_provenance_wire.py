"""Labels on the wire (issue 27): the typed messages carry them, both decoders
check their shape, and a malformed label breaks the protocol."""

from __future__ import annotations

import pytest
from toolscript.sandbox.protocol import ProtocolViolation
from toolscript.sandbox.wirecheck import (
    batch_reply,
    call_reply,
    host_message,
    result_message,
    sandbox_message,
)


def test_a_labelled_call_and_batch_are_accepted() -> None:
    call = {"type": "call", "id": 1, "run": "r", "tool": "t", "args": {"a": 1},
            "labels": {"a": ["read_inbox"]}}
    assert sandbox_message(call, "r")["labels"] == {"a": ["read_inbox"]}
    batch = {"type": "call_many", "id": 2, "run": "r",
             "calls": [{"tool": "t", "args": {}, "labels": {}}]}
    assert sandbox_message(batch, "r")["calls"][0]["labels"] == {}


@pytest.mark.parametrize("labels", [["a"], {"a": "read_inbox"}, {"a": [1]}, {1: ["x"]}])
def test_malformed_call_labels_break_the_protocol(labels: object) -> None:
    call = {"type": "call", "id": 1, "run": "r", "tool": "t", "args": {}, "labels": labels}
    with pytest.raises(ProtocolViolation):
        sandbox_message(call, "r")


def test_result_labels_are_checked() -> None:
    result = {"type": "result", "id": "r", "ok": True, "value": 1, "stdout": "hi\n",
              "stdout_truncated": False, "error": None,
              "labels": {"stdout": [[0, 3, ["read_inbox"]]], "value": []}}
    assert result_message(result, "r")["labels"]["stdout"] == [[0, 3, ["read_inbox"]]]
    for bad in ({"stdout": [[0, "3", []]], "value": []}, {"stdout": [], "value": "x"},
                {"stdout": []}):
        with pytest.raises(ProtocolViolation):
            result_message({**result, "labels": bad}, "r")


def test_replies_carry_a_label_and_configure_turns_labels_on() -> None:
    reply = {"type": "reply", "id": 3, "ok": True, "value": "x", "label": ["read_inbox"]}
    assert call_reply(reply, 3)["label"] == ["read_inbox"]
    with pytest.raises(ProtocolViolation):
        call_reply({**reply, "label": "read_inbox"}, 3)
    batch = {"type": "reply", "id": 4, "results": [{"ok": True, "value": 1, "label": []}]}
    assert batch_reply(batch, 4, 1) == [{"ok": True, "value": 1, "label": []}]
    configure = {"type": "configure", "tools": [], "provenance": True}
    assert host_message(configure)["type"] == "configure"
    with pytest.raises(ProtocolViolation):
        host_message({**configure, "provenance": "yes"})
