"""Markers for parameters the model never sees: ``Injected`` and ``IdempotencyKey``.

A parameter marked ``Injected`` is filled by the host from the run's
*context* (``Runtime(context=...)``, ``runtime.session(context=...)``), e.g.
the current user or tenant. It is not in the tool's JSON Schema, not in its
Python stub, and a script or model that passes it anyway gets
``invalid_arguments`` (the schema forbids unknown arguments)::

    @tool
    def list_orders(status: str, user_id: Injected[str]) -> list[dict]: ...

    @tool
    def list_invoices(year: int, tenant: Annotated[str, Inject("tenant_id")]): ...

A parameter annotated ``IdempotencyKey`` receives the call's idempotency key
(made idempotent by the runtime; see ``@tool(idempotent=...)``)::

    @tool
    def create_payment(amount: int, key: IdempotencyKey) -> dict:
        return psp.charge(amount, idempotency_key=key)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

__all__ = [
    "IdempotencyKey",
    "IdempotencyKeyMarker",
    "Inject",
    "Injected",
    "find_marker",
]


T = TypeVar("T")


@dataclass(frozen=True)
class Inject:
    """``Annotated[T, Inject("key")]``: fill the parameter from context value ``key``.

    Attributes:
        key: the context key; ``None`` means the parameter's own name.
    """

    key: str | None = None


@dataclass(frozen=True)
class IdempotencyKeyMarker:
    """Marks the parameter that receives the call's idempotency key."""


Injected = Annotated[T, Inject()]
"""``Injected[T]``: a ``T`` parameter filled from the context key of its own name."""

IdempotencyKey = Annotated[str, IdempotencyKeyMarker()]
"""A ``str`` parameter that receives the call's idempotency key (hidden from the model)."""


def find_marker(metadata: list[Any]) -> Inject | IdempotencyKeyMarker | None:
    """The first injection marker in ``Annotated`` metadata, if any."""
    for item in metadata:
        if isinstance(item, (Inject, IdempotencyKeyMarker)):
            return item
        if item is Inject:
            return Inject()
    return None
