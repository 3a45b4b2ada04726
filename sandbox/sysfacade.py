"""The ``sys`` facade: read-only facts about the interpreter, nothing of its state.

Scripts written for CPython read ``sys.version_info``, ``sys.maxsize`` or
``sys.float_info``. The facade holds those facts (immutable values and
struct sequences) and ``getrecursionlimit``; ``argv`` is an empty list of
the interpreter's own. ``exit`` is left out (a script ends by raising). No
member reaches ``sys.modules``, the streams, frames, hooks or any setter.
"""

from __future__ import annotations

import sys as _sys
from typing import Any

SYS_VALUES: tuple[str, ...] = (
    "version_info", "version", "platform", "maxsize", "byteorder", "float_info",
    "int_info", "hexversion", "maxunicode",
)
"""Facts copied from the real ``sys``."""


def sys_members() -> dict[str, Any]:
    """The members of one interpreter's ``sys`` facade."""
    members: dict[str, Any] = {
        name: getattr(_sys, name) for name in SYS_VALUES if hasattr(_sys, name)
    }
    members.update(getrecursionlimit=_sys.getrecursionlimit, argv=[])
    return members
