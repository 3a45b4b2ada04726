"""The sandbox side of toolscript: wire protocol, policy, interpreter, server.

This package runs inside the sandbox (a subprocess or a container). It imports
only the standard library and RestrictedPython, never ``toolscript.runtime``
or ``toolscript.tools``.
"""

from .protocol import PROTOCOL_VERSION

__all__ = ["PROTOCOL_VERSION"]
