"""The approval inbox: a small local web page over the journal store.

``toolscript approvals serve`` starts :class:`InboxServer` on 127.0.0.1 and
prints an address with a token; the page lists every call that waits for a
person (the arguments exactly as they will run, escaped), and approves or
denies each with a reason. Started with ``--tools``, it resumes a run once
every call of it is decided. :mod:`.guard` says who may use it (token,
same-origin only), :mod:`.page` what it shows.
"""

from __future__ import annotations

from .guard import Guard, new_token
from .page import render_page, shown_json
from .server import InboxServer

__all__ = ["Guard", "InboxServer", "new_token", "render_page", "shown_json"]
