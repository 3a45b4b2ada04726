"""Opening a journal store from a URL or path (:func:`open_store`)."""

from __future__ import annotations

import os
from pathlib import Path

from toolscript.errors import ConfigurationError

from .store import JournalStore

JOURNAL_ENV = "TOOLSCRIPT_JOURNAL"
"""Environment variable naming the default journal (a path or a store URL)."""


def default_location() -> str:
    """``$TOOLSCRIPT_JOURNAL``, else ``~/.local/state/toolscript/journal.sqlite3``."""
    configured = os.environ.get(JOURNAL_ENV, "").strip()
    if configured:
        return configured
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return str(Path(state) / "toolscript" / "journal.sqlite3")


def open_store(spec: JournalStore | str | os.PathLike[str] | None = None) -> JournalStore:
    """A journal store from a store object, a URL (``sqlite:///path``,
    ``postgresql://...``), a file path, or ``None`` (:func:`default_location`).

    Raises:
        ConfigurationError: an unknown URL scheme, or PostgreSQL without ``psycopg``.
    """
    if spec is not None and not isinstance(spec, (str, os.PathLike)):
        if isinstance(spec, JournalStore):
            return spec
        raise ConfigurationError(
            f"journal must be a JournalStore, a URL or a path, got {type(spec).__name__}")
    text = os.fspath(spec) if spec is not None else default_location()
    if text.startswith(("postgresql://", "postgres://")):
        from .postgres import PostgresJournal

        return PostgresJournal(text)
    if text.startswith("sqlite://"):
        text = text[len("sqlite://"):]
        if text.startswith("//"):  # sqlite:////abs/path, as SQLAlchemy writes it
            text = "/" + text.lstrip("/")
        if not text.startswith("/"):
            raise ConfigurationError("a sqlite journal URL needs an absolute path: "
                                     "sqlite:///path/to/journal.sqlite3")
    elif "://" in text:
        raise ConfigurationError(f"unknown journal URL {text!r}; use sqlite:///path or "
                                 "postgresql://...")
    from .sqlite import SQLiteJournal

    return SQLiteJournal(text)
