"""Helpers of the host-bounds tests (a uniquely named module)."""

from __future__ import annotations

from typing import Any


def plain_json(value: Any) -> bool:
    """True if ``value`` is made only of exact JSON types (no subclass a script
    could have made, no other object) - what may reach host code from a run."""
    if type(value) in (str, int, float, bool) or value is None:
        return True
    if type(value) is list:
        return all(plain_json(v) for v in value)
    if type(value) is dict:
        return all(type(k) is str and plain_json(v) for k, v in value.items())
    return False
