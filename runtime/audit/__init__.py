"""Audit: the record of every attempted tool call.

- :mod:`~toolscript.runtime.audit.log`: :class:`AuditLog`, the keyed,
  tamper-evident JSON-lines log (an ``audit`` callback for a Runtime);
- :mod:`~toolscript.runtime.audit.chain`: the hash chain and its verification;
- :mod:`~toolscript.runtime.audit.stats`: per-tool statistics read back from a log.

The log's names are importable from here, as ``toolscript.runtime.audit``.
"""

from toolscript.runtime.audit.log import (
    FROM_ENV,
    GENESIS,
    KEY_ENV,
    REDACTED,
    UNLOGGABLE,
    AuditLog,
    Redactor,
    VerifyReport,
    canonical,
    verify,
)

__all__ = [
    "FROM_ENV", "GENESIS", "KEY_ENV", "REDACTED", "UNLOGGABLE", "AuditLog", "Redactor",
    "VerifyReport", "canonical", "verify",
]
