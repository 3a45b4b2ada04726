"""Durable approvals: runs that pause on a deferred call and resume later.

An approval hook answers :meth:`Decision.defer <toolscript.Decision.defer>`;
the run stops at that call and returns ``status == "paused"`` with its
:class:`~toolscript.runtime.durable.pending.PendingCall` s and a signed
continuation (:mod:`.continuation`). Each call of the run is in its journal
(:mod:`.journal`, kept in a :class:`~toolscript.runtime.durable.store.JournalStore`:
:mod:`.sqlite` by default, :mod:`.postgres` for several hosts);
:meth:`Runtime.resume <toolscript.Runtime.resume>` re-runs the script in a
fresh sandbox, answers the calls made before the pause from the journal and
carries on (:mod:`.durability`).
"""

from __future__ import annotations

from .opening import open_store
from .pending import PendingCall
from .store import JournalEntry, JournalStore, PausedRun

__all__ = ["JournalEntry", "JournalStore", "PausedRun", "PendingCall", "open_store"]
