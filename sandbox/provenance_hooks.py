"""Wiring provenance labels (issue 27) into one interpreter: the helper builtins
the labels pass calls, a ``print`` that records which printed characters depend
on untrusted data, tool calls that send each argument's sources and label their
results, and ``parallel`` doing the same for a batch."""

from __future__ import annotations

from typing import Any

from .builtins import BuiltinFunction
from .guards import Guards, SandboxAbort
from .provenance import EMPTY, Label, Provenance, unbox_deep
from .toolcalls import ToolCaller, ToolStub, normalize_parallel


def plain(value: Any) -> Any:
    """``value`` without boxes (what crosses the wire)."""
    return unbox_deep(value)


def _label(reply: dict[str, Any]) -> Label:
    label = reply.get("label")
    return frozenset(label) if type(label) is list else EMPTY


def install(builtins: dict[str, Any], guards: Guards, output: Any,
            caller: ToolCaller) -> Provenance:
    """Add the ``_pv_*_`` helpers to ``builtins`` and label-aware ``print``,
    tool calls and ``parallel``; return the interpreter's :class:`Provenance`."""
    prov = Provenance(guards.owns_function, guards.owns, builtins["type"])

    def tool_call(stub: ToolStub, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        bound = stub.bind(args, kwargs)
        labels = prov.call_labels(bound)
        reply = caller.call_reply(stub.name, {k: plain(v) for k, v in bound.items()}, labels)
        if reply.get("ok"):
            return prov.mark(reply.get("value"), _label(reply))
        failure = caller.failure(stub.name, reply.get("error") or {})
        if not isinstance(failure, SandboxAbort):
            prov.mark(failure, _label(reply))
        raise failure

    prov.tool_type = ToolStub
    prov.tool_call = tool_call

    def parallel(calls: Any, arguments: Any = None, *, return_exceptions: bool = False) -> Any:
        requests = normalize_parallel(calls, arguments)
        if not requests:
            return []
        ambient = prov.ambient()
        batch = []
        for tool, args in requests:
            label = ambient | prov.deep_label(args)
            labels = {name: sorted(label) for name in args} if label else {}
            batch.append({"tool": tool, "args": plain(args), "labels": labels})
        replies = caller.send_batch(batch)
        results: list[Any] = []
        for (tool, _args), reply in zip(requests, replies, strict=True):
            if reply.get("ok"):
                results.append(prov.mark(reply.get("value"), _label(reply)))
                continue
            failure = caller.failure(tool, reply.get("error") or {})
            if isinstance(failure, SandboxAbort) or not return_exceptions:
                raise failure
            results.append(prov.mark(failure, _label(reply)))
        return results

    def labelled_print(*values: Any, sep: Any = " ", end: Any = "\n", file: Any = None,
                       flush: bool = False) -> None:
        label = prov.print_label(values) | prov.deep_label(sep) | prov.deep_label(end)
        start = output.size
        try:
            # boxes print as their plain values (LBool/LNone define their own repr)
            output.print(*values, sep=plain(sep), end=plain(end), file=file, flush=flush)
        finally:
            prov.record_output(start, output.size, label)

    builtins["print"] = BuiltinFunction("print", labelled_print)
    builtins["parallel"] = BuiltinFunction("parallel", parallel)
    builtins.update({
        "_pv_call_": prov.call, "_pv_bin_": prov.binary, "_pv_un_": prov.unary,
        "_pv_cmp_": prov.compare, "_pv_cmpn_": prov.compare_chain, "_pv_sub_": prov.subscript,
        "_pv_slc_": prov.slice, "_pv_at_": prov.attribute, "_pv_aug_": prov.augment,
        "_pv_br_": prov.branch, "_pv_exc_": prov.handler, "_pv_it_": prov.iterate,
        "_pv_mp_": prov.mapping, "_pv_fv_": prov.format_value, "_pv_join_": prov.join,
        "_pv_rv_": prov.report, "_pv_tgt_": prov.target, "_pv_ms_": prov.match_subject,
    })
    return prov
