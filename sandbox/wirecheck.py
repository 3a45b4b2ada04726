"""The two validating decoders of the wire: one for each direction.

The host reads what a sandbox sends with :func:`sandbox_message` (during a
run) and :func:`ready_message` / :func:`ack_message`; the sandbox reads what
the host sends with :func:`host_message` and, for its calls,
:func:`call_reply` / :func:`batch_reply`. Each checks one message against its
definition in :mod:`.protocol`: exact keys, exact types (``bool`` is not an
``int``), the run's own id. Anything else raises
:class:`~.protocol.ProtocolViolation` with a short message that never echoes
more than a few hundred characters of what was sent. Hand-written checks, not
a schema library: they run on every call.

This module is imported inside the sandbox: standard library only.
"""

from __future__ import annotations

from typing import Any, cast

from .protocol import (
    AckMessage,
    CallManyMessage,
    CallMessage,
    ErrorInfo,
    HostMessage,
    ProtocolViolation,
    ReadyMessage,
    ResultMessage,
)
from .runsources import MAX_READINGS, sources_ok

_CALL_KEYS = frozenset({"type", "id", "run", "tool", "args"})
_LABELLED_CALL_KEYS = _CALL_KEYS | {"labels"}
_CALL_MANY_KEYS = frozenset({"type", "id", "run", "calls"})
_SPEC_KEYS = frozenset({"tool", "args"})
_LABELLED_SPEC_KEYS = _SPEC_KEYS | {"labels"}
_RESULT_KEYS = frozenset({"type", "id", "ok", "value", "stdout", "stdout_truncated", "error"})
_LABELLED_RESULT_KEYS = _RESULT_KEYS | {"labels"}
_READY_REQUIRED = frozenset({"type", "protocol", "pid", "python"})
_READY_KEYS = _READY_REQUIRED | {"audit_hook", "walls"}
_ACKS = frozenset({"configured", "reset_done", "pong"})
_CONFIGURE_KEYS = frozenset({"type", "tools", "modules", "process_limits", "wire",
                             "provenance"})
_RUN_KEYS = frozenset({"type", "id", "code", "limits", "sources"})
_CONTROL = frozenset({"reset", "ping", "shutdown"})
_TOOL_KEYS = frozenset({"name", "params", "read_only", "doc"})
_PROCESS_LIMIT_KEYS = frozenset({"apply", "memory_bytes", "cpu_s_per_run", "open_files",
                                 "file_bytes"})
_WIRE_KEYS = frozenset({"max_bytes", "max_items", "max_depth"})
_REPLY_OK_KEYS = frozenset({"type", "id", "ok", "value"})
_REPLY_ERROR_KEYS = frozenset({"type", "id", "ok", "error"})
_BATCH_KEYS = frozenset({"type", "id", "results"})
_RESULT_OK_KEYS = frozenset({"ok", "value"})
_RESULT_ERROR_KEYS = frozenset({"ok", "error"})
_LABEL_KEY = frozenset({"label"})


def _sources_ok(sources: Any) -> bool:
    """A label on the wire: a list of source names (str)."""
    return type(sources) is list and all(type(name) is str for name in sources)


def _call_labels_ok(labels: Any) -> bool:
    """Per-argument labels of a call: ``{argument: [source, ...]}``."""
    return type(labels) is dict and all(
        type(name) is str and _sources_ok(sources) for name, sources in labels.items())


def _result_labels_ok(labels: Any) -> bool:
    """The ``labels`` of a result: ``{"stdout": [[start, end, sources]...], "value": sources}``."""
    if type(labels) is not dict or labels.keys() != {"stdout", "value"}:
        return False
    spans = labels["stdout"]
    return _sources_ok(labels["value"]) and type(spans) is list and all(
        type(span) is list and len(span) == 3 and _is_int(span[0]) and _is_int(span[1])
        and _sources_ok(span[2]) for span in spans)


def _drop_label(reply: dict[str, Any]) -> tuple[frozenset[str], bool]:
    """The reply's keys without a well-formed ``label``, and whether the label was well-formed."""
    keys = reply.keys()
    if "label" not in keys:
        return frozenset(keys), True
    return frozenset(keys) - _LABEL_KEY, _sources_ok(reply["label"])


def _shape(message: Any) -> str:
    """A short description of what arrived (keys and types, never long values)."""
    if type(message) is not dict:
        return type(message).__name__
    fields = ", ".join(f"{key[:30]}: {type(value).__name__}"
                       for key, value in list(message.items())[:12])
    return "{" + fields + ("" if len(message) <= 12 else ", ...") + "}"


def _bad(what: str, message: Any) -> ProtocolViolation:
    return ProtocolViolation(f"{what}; got {_shape(message)}"[:400])


def _is_int(value: Any) -> bool:
    return type(value) is int


def _is_id(value: Any) -> bool:
    return type(value) is str or type(value) is int


def _is_number(value: Any) -> bool:
    return type(value) is int or type(value) is float


def is_error_info(error: Any) -> bool:
    """True for an ``error`` object: a dict with string ``type`` and ``message``."""
    return (type(error) is dict and type(error.get("type")) is str
            and type(error.get("message")) is str)


# --- the host's decoder: what a sandbox sends --------------------------------------


def sandbox_message(message: dict[str, Any],
                    run: str | int) -> CallMessage | CallManyMessage | ResultMessage:
    """A message a sandbox sent during run ``run``: a call, a batch or the result.

    Raises:
        ProtocolViolation: any other type, a field missing, extra or of the wrong
            type, or a frame that names another run.
    """
    kind = message.get("type")
    if kind == "call":
        keys = message.keys()
        if (not (keys == _CALL_KEYS or (keys == _LABELLED_CALL_KEYS
                                        and _call_labels_ok(message["labels"])))
                or not _is_int(message["id"])
                or type(message["tool"]) is not str or type(message["args"]) is not dict):
            raise _bad("a 'call' needs exactly int 'id', 'run', str 'tool' and object 'args'",
                       message)
        if message["run"] != run:
            raise _bad("a 'call' of another run arrived", message)
        return cast(CallMessage, message)
    if kind == "call_many":
        if (message.keys() != _CALL_MANY_KEYS or not _is_int(message["id"])
                or type(message["calls"]) is not list):
            raise _bad("a 'call_many' needs exactly int 'id', 'run' and a list 'calls'", message)
        if message["run"] != run:
            raise _bad("a 'call_many' of another run arrived", message)
        for spec in message["calls"]:
            if (type(spec) is not dict
                    or not (spec.keys() == _SPEC_KEYS or (spec.keys() == _LABELLED_SPEC_KEYS
                                                          and _call_labels_ok(spec["labels"])))
                    or type(spec["tool"]) is not str or type(spec["args"]) is not dict):
                raise _bad("each call of a 'call_many' is exactly {str 'tool', object 'args'}",
                           spec)
        return cast(CallManyMessage, message)
    if kind == "result":
        return result_message(message, run)
    raise _bad(f"expected 'call', 'call_many' or 'result' during a run, not {str(kind)[:40]!r}",
               message)


def result_message(message: dict[str, Any], run: str | int) -> ResultMessage:
    """The ``result`` of run ``run`` (see :func:`sandbox_message`)."""
    keys = set(message.keys())
    if "sources" in keys:  # the clock readings and seed of the run (:mod:`.runsources`)
        keys.discard("sources")
        if not sources_ok(message["sources"]):
            raise _bad("a 'result''s 'sources' must map known kinds to at most "
                       f"{MAX_READINGS} well-formed readings", message)
    if (not (keys == _RESULT_KEYS or (keys == _LABELLED_RESULT_KEYS
                                      and _result_labels_ok(message["labels"])))
            or type(message["ok"]) is not bool
            or type(message["stdout"]) is not str
            or type(message["stdout_truncated"]) is not bool
            or not (message["error"] is None or is_error_info(message["error"]))):
        raise _bad("a 'result' needs exactly 'id', bool 'ok', 'value', str 'stdout', bool "
                   "'stdout_truncated' and 'error' (null or {str 'type', str 'message'})",
                   message)
    if message["id"] != run:
        raise _bad("a 'result' of another run arrived (a late or forged frame)", message)
    if message["ok"] and message["error"] is not None:
        raise _bad("a 'result' cannot be ok and carry an error", message)
    return cast(ResultMessage, message)


def ready_message(message: dict[str, Any]) -> ReadyMessage:
    """The ``ready`` message a sandbox sends once at start."""
    keys = message.keys()
    if (message.get("type") != "ready" or not keys >= _READY_REQUIRED or not keys <= _READY_KEYS
            or not _is_int(message["protocol"]) or not _is_int(message["pid"])
            or type(message["python"]) is not str
            or type(message.get("audit_hook", False)) is not bool
            or type(message.get("walls", {})) is not dict):
        raise _bad("expected 'ready' with int 'protocol', int 'pid' and str 'python'", message)
    return cast(ReadyMessage, message)


def ack_message(message: dict[str, Any], kind: str) -> AckMessage:
    """An acknowledgement: ``{"type": kind}`` and nothing else."""
    if kind not in _ACKS or message.keys() != {"type"} or message["type"] != kind:
        raise _bad(f"expected {kind!r}", message)
    return cast(AckMessage, message)


# --- the sandbox's decoder: what the host sends ------------------------------------


def _tools_ok(tools: Any) -> bool:
    if type(tools) is not list:
        return False
    for tool in tools:
        if (type(tool) is not dict or tool.keys() != _TOOL_KEYS or type(tool["name"]) is not str
                or type(tool["read_only"]) is not bool or type(tool["doc"]) is not str
                or type(tool["params"]) is not list):
            return False
        for param in tool["params"]:
            if (type(param) is not dict or type(param.get("name")) is not str
                    or type(param.get("kind")) is not str
                    or type(param.get("required")) is not bool):
                return False
    return True


def _configure_ok(message: dict[str, Any]) -> bool:
    if not message.keys() <= _CONFIGURE_KEYS or "tools" not in message:
        return False
    modules = message.get("modules")
    if modules is not None and (type(modules) is not list
                                or any(type(name) is not str for name in modules)):
        return False
    if type(message.get("provenance", False)) is not bool:
        return False
    limits = message.get("process_limits", {})
    if type(limits) is not dict or not limits.keys() <= _PROCESS_LIMIT_KEYS or not all(
            _is_number(value) or value is None for key, value in limits.items() if key != "apply"
    ) or type(limits.get("apply", False)) is not bool:
        return False
    wire = message.get("wire", {"max_bytes": 1, "max_items": 1, "max_depth": 1})
    if type(wire) is not dict or wire.keys() != _WIRE_KEYS or not all(
            _is_int(value) and value > 0 for value in wire.values()):
        return False
    return _tools_ok(message["tools"])


def host_message(message: dict[str, Any]) -> HostMessage:
    """A message the host sent between runs: ``configure``, ``run``, ``reset``,
    ``ping`` or ``shutdown``."""
    kind = message.get("type")
    if kind == "run":
        keys = message.keys()
        if (not keys <= _RUN_KEYS or "id" not in keys or not _is_id(message["id"])
                or type(message.get("code")) is not str
                or type(message.get("limits", {})) is not dict
                or not all(_is_number(value) or value is None
                           for value in message.get("limits", {}).values())
                or not sources_ok(message.get("sources", {}))):
            raise _bad("a 'run' needs 'id', str 'code', an optional object 'limits' and "
                       "optional 'sources' (recorded readings)", message)
        return cast(HostMessage, message)
    if kind == "configure":
        if not _configure_ok(message):
            raise _bad("a 'configure' needs 'tools' and optional 'modules', 'process_limits' "
                       "and 'wire' of the documented shapes", message)
        return cast(HostMessage, message)
    if kind in _CONTROL:
        if message.keys() != {"type"}:
            raise _bad(f"{kind!r} takes no fields", message)
        return cast(HostMessage, message)
    raise _bad(f"unknown message type {str(kind)[:40]!r}", message)


def _one_result(reply: Any) -> bool:
    if type(reply) is not dict or type(reply.get("ok")) is not bool:
        return False
    keys, label_ok = _drop_label(reply)
    if not label_ok:
        return False
    if reply["ok"]:
        return keys == _RESULT_OK_KEYS
    return keys == _RESULT_ERROR_KEYS and is_error_info(reply["error"])


def call_reply(message: dict[str, Any], call_id: int) -> dict[str, Any]:
    """The host's reply to call ``call_id``: ``{"type": "reply", "id", "ok": true,
    "value"}`` or ``{..., "ok": false, "error"}``, checked."""
    ok = message.get("ok")
    keys, label_ok = _drop_label(message)
    if (message.get("id") != call_id or message.get("type") != "reply" or not label_ok
            or keys != (_REPLY_OK_KEYS if ok is True else _REPLY_ERROR_KEYS)
            or not (ok is True or (ok is False and is_error_info(message["error"])))):
        raise _bad(f"expected the reply to call {call_id}", message)
    return message


def batch_reply(message: dict[str, Any], call_id: int, count: int) -> list[dict[str, Any]]:
    """The host's reply to batch ``call_id`` of ``count`` calls: one result per call,
    or the one error of a batch refused whole, repeated for each call."""
    if message.get("type") != "reply" or message.get("id") != call_id:
        raise _bad(f"expected the reply to batch {call_id}", message)
    if "results" not in message:
        reply = call_reply(message, call_id)
        if reply["ok"]:
            raise _bad("a batch reply without 'results' must be an error", message)
        return [{"ok": False, "error": reply["error"]}] * count
    results = message["results"]
    if (message.keys() != _BATCH_KEYS or type(results) is not list or len(results) != count
            or not all(_one_result(result) for result in results)):
        raise _bad(f"expected {count} results for batch {call_id}", message)
    return results


def error_info(error: Any) -> ErrorInfo | None:
    """``error`` if it is a well-formed ``error`` object, else None."""
    return cast(ErrorInfo, error) if is_error_info(error) else None
