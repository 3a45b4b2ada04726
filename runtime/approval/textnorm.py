"""Normalised text for comparisons an attacker would dodge with look-alikes.

``"CEO@Corp.Example "``, ``"ceo@corp.example."``, ``"ceo\\u200b@corp.example"``
and ``"сео@corp.example"`` (Cyrillic ``с``, ``е``, ``о``) all read as the same
address to a person, and none of them equals ``"ceo@corp.example"``. Policy
rules compare strings in both forms, exact and :func:`normalize`-d (see
:mod:`toolscript.runtime.approval.policies`). The normal form:

1. Unicode NFKC (full-width and mathematical letters, ligatures, compatibility
   forms become plain ones);
2. invisible characters removed: format characters (zero-width space and
   joiners, bidi controls, soft hyphen, BOM), control characters, variation
   selectors, the combining grapheme joiner and Hangul fillers;
3. common Cyrillic and Greek look-alikes of Latin letters folded to those
   letters (a deliberately small table of letters that look the same in
   ordinary fonts; not the whole Unicode confusables list);
4. case folded (``str.casefold``), NFKC again;
5. whitespace and trailing dots stripped from both ends.
"""

from __future__ import annotations

import functools
import unicodedata

__all__ = ["normalize"]

_LOOKALIKES = {
    # Cyrillic capitals
    "А": "A", "В": "B", "Е": "E", "Ё": "E", "К": "K", "М": "M", "Н": "H", "О": "O",
    "Р": "P", "С": "C", "Т": "T", "Х": "X", "У": "Y", "І": "I", "Ї": "I", "Ј": "J",
    "Ѕ": "S", "Ԛ": "Q", "Ԝ": "W", "Һ": "H", "Ӏ": "I",
    # Cyrillic small letters
    "а": "a", "е": "e", "ё": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x",
    "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h",
    "ӏ": "l", "к": "k",
    # Greek capitals
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
    "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Greek small letters
    "α": "a", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "υ": "u", "χ": "x",
    # Latin look-alikes and dots
    "ı": "i", "ɑ": "a", "ɡ": "g", "。": ".", "｡": ".",
}
_FOLD = str.maketrans(_LOOKALIKES)

_INVISIBLE_MARKS = {"\u034f", "\u115f", "\u1160", "\u3164", "\uffa0"}


def _visible(char: str) -> bool:
    if char in _INVISIBLE_MARKS or "\ufe00" <= char <= "\ufe0f":
        return False
    category = unicodedata.category(char)
    return category not in ("Cf", "Cc") or char in "\t\n\r "


def normalize(text: str) -> str:
    """``text`` in the normal form described in the module docstring."""
    return _cached(text) if len(text) <= 256 else _normalize(text)


@functools.lru_cache(maxsize=4096)
def _cached(text: str) -> str:
    return _normalize(text)


def _normalize(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text)
    folded = "".join(c for c in folded if _visible(c))
    folded = folded.translate(_FOLD).casefold()
    folded = unicodedata.normalize("NFKC", folded)
    previous = None
    while previous != folded:
        previous = folded
        folded = folded.strip().rstrip(".")
    return folded
