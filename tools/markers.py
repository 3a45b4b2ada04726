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

Dependency markers of other frameworks mean the same: ``Annotated[T,
Depends("key")]`` (AgentDojo's ``Depends``, FastAPI's ``Depends``/``Security``,
recognised by class name) fills the parameter from context value ``key``, or
from the parameter's own name when the marker holds no string.

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
        redact: approval hooks see ``"[redacted]"`` instead of the value
            (for secrets such as tokens); the tool still receives it.
    """

    key: str | None = None
    redact: bool = False


@dataclass(frozen=True)
class IdempotencyKeyMarker:
    """Marks the parameter that receives the call's idempotency key."""


Injected = Annotated[T, Inject()]
"""``Injected[T]``: a ``T`` parameter filled from the context key of its own name."""

IdempotencyKey = Annotated[str, IdempotencyKeyMarker()]
"""A ``str`` parameter that receives the call's idempotency key (hidden from the model)."""


_DEPENDS_KEY_ATTRS = ("env_dependency", "dependency", "key", "name")


def find_marker(metadata: list[Any]) -> Inject | IdempotencyKeyMarker | None:
    """The first injection marker in ``Annotated`` metadata, if any.

    Besides :class:`Inject` and :class:`IdempotencyKeyMarker`, a dependency
    marker of another framework counts as ``Inject``: an instance of a class
    named ``Depends`` (or a subclass, such as FastAPI's ``Security``), as in
    ``Annotated[BankAccount, Depends("bank_account")]``.  Its context key is
    its string argument when it has one, else the parameter's name (a
    callable dependency is not called: the host supplies the value).
    """
    for item in metadata:
        if isinstance(item, (Inject, IdempotencyKeyMarker)):
            return item
        if item is Inject:
            return Inject()
        if _is_depends(item):
            return Inject(_depends_key(item))
    return None


def _is_depends(item: Any) -> bool:
    """True for a ``Depends`` marker of any framework (matched by class name)."""
    kind = item if isinstance(item, type) else type(item)
    return any(k.__name__ == "Depends" for k in kind.__mro__)


def _depends_key(item: Any) -> str | None:
    """The context key a ``Depends`` marker names, if it names one."""
    if isinstance(item, type):
        return None
    for attr in _DEPENDS_KEY_ATTRS:
        value = getattr(item, attr, None)
        if isinstance(value, str) and value:
            return value
    return None
