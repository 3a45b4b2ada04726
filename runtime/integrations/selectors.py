"""Which tools of a source a ``requires_approval=`` / ``read_only=`` argument names.

One rule for every tool source (:class:`~toolscript.runtime.integrations.mcp.MCPToolSource`,
:class:`~toolscript.runtime.integrations.openapi.OpenAPISource`):

* **Names are the source's own names**: the MCP tool's name as the server
  lists it, the OpenAPI ``operationId`` (or, for an operation without one,
  the generated ``{method}_{path}`` name) — the names ``include=`` and
  ``exclude=`` take, never the prefixed name scripts call.
* **A name that is no tool of the source is an error** (``ConfigurationError``
  when the tools are built), with a hint when it is the prefixed form.
* **``requires_approval`` only tightens unless loosening is explicit.** A
  list of names, or a predicate, marks tools that require approval *in
  addition to* the safe default (every write); it never releases the others.
  Releasing is spelled out: ``False`` (no tool of the source asks), or a
  mapping ``{name: False}`` for the named tools only.
* ``read_only`` pins: ``True``/``False`` for all, a list or predicate names
  exactly the read-only tools (the server's hints are then ignored), a
  mapping sets the named tools and leaves the others to the hints.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping

from toolscript.errors import ConfigurationError

__all__ = ["Selector", "check_names", "name_set", "normalize", "pinned", "tightened"]

Selector = bool | Mapping[str, bool] | Iterable[str] | Callable[..., bool] | None
"""What ``requires_approval=`` and ``read_only=`` accept (see the module docs)."""


def normalize(selector: Selector, argument: str) -> Selector:
    """``selector`` in a form that can be read for every tool: a list (or any
    iterable, a generator included) becomes a frozenset, a mapping a dict.

    Raises:
        ConfigurationError: a single string where a list of names belongs.
    """
    if selector is None or isinstance(selector, bool) or callable(selector):
        return selector
    if isinstance(selector, str):
        raise ConfigurationError(f"{argument}= takes a list of tool names, not the string "
                                 f"{selector!r}: write {argument}=[{selector!r}]")
    if isinstance(selector, Mapping):
        return dict(selector)
    return frozenset(selector)


def name_set(value: Iterable[str], argument: str) -> frozenset[str]:
    """``include=`` / ``exclude=`` as a set of names.

    Raises:
        ConfigurationError: the value is not a list (or other iterable) of names.
    """
    names = normalize(value, argument)
    if not isinstance(names, frozenset) or not all(isinstance(n, str) for n in names):
        raise ConfigurationError(f"{argument}= takes a list of tool names, not {value!r}")
    return names


def _named(selector: Selector) -> Mapping[str, bool] | None:
    """The names a normalized selector spells out, with their values (None: none)."""
    if selector is None or isinstance(selector, bool) or callable(selector):
        return None
    if isinstance(selector, Mapping):
        return selector
    return dict.fromkeys(selector, True)


def check_names(selector: Selector, argument: str, known: Collection[str],
                exposed: Mapping[str, str], label: str) -> None:
    """Refuse a selector that names a tool the source does not have.

    Args:
        selector: the ``argument``'s value.
        argument: its name (``"requires_approval"``, ``"include"``...), for the message.
        known: the source's own tool names.
        exposed: other forms of a name (prefixed, identifier) -> own name, for the hint.
        label: the source, for the message.

    Raises:
        ConfigurationError: a name is not in ``known``, or a mapping value is not a bool.
    """
    named = _named(selector)
    if named is None:
        return
    for name, value in named.items():
        if not isinstance(value, bool):
            raise ConfigurationError(f"{label}: {argument}={{{name!r}: {value!r}}}: the "
                                     "value must be True or False")
        if name in known:
            continue
        meant = exposed.get(name) or next(
            (own for own in sorted(known) if own.casefold() == name.casefold()), None)
        hint = "" if meant is None else (
            f"; name tools as the source lists them: {meant!r}, not {name!r}")
        listed = ", ".join(sorted(known)[:20]) or "none"
        raise ConfigurationError(f"{label}: {argument} names {name!r}, which is not a tool "
                                 f"of this source{hint} (its tools: {listed})")


def tightened(selector: Selector, names: Iterable[str], default: bool,
              predicate: Callable[[Callable[..., bool]], bool]) -> bool:
    """Whether a tool requires approval: ``default`` unless the selector adds to it, or
    releases it explicitly (``False``, or ``{name: False}``).

    Args:
        selector: the ``requires_approval=`` value.
        names: the forms of the tool's own name (e.g. operationId and its identifier).
        default: the safe default (True for writes).
        predicate: calls a predicate selector with the tool's arguments.
    """
    if selector is None:
        return default
    if isinstance(selector, bool):
        return selector
    if callable(selector):
        return default or bool(predicate(selector))
    named = _named(selector) or {}
    for name in names:
        if name in named:
            return named[name]
    return default


def pinned(selector: Selector, names: Iterable[str], default: bool,
           predicate: Callable[[Callable[..., bool]], bool]) -> bool:
    """Whether a tool is read-only: the selector decides for the tools it covers
    (a list or predicate covers all of them), ``default`` (the hints) for the rest."""
    if selector is None:
        return default
    if isinstance(selector, bool):
        return selector
    if callable(selector):
        return bool(predicate(selector))
    if isinstance(selector, Mapping):
        for name in names:
            if name in selector:
                return bool(selector[name])
        return default
    named = _named(selector) or {}
    return any(name in named for name in names)

