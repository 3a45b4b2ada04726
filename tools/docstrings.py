"""Docstrings -> a tool description plus per-parameter descriptions.

Four styles are understood, each with its continuation lines indented or not:

* Google: an ``Args:`` (``Arguments``, ``Parameters``, ``Params``,
  ``Keyword Args``, ``Keyword Arguments``, ``Other Parameters``,
  ``Attributes``) section;
* NumPy: a ``Parameters`` (``Other Parameters``, ``Attributes``) section
  underlined with dashes;
* reST: ``:param x:`` fields (``:type x:``, ``:keyword x:``, ``:ivar x:``...);
* epytext: ``@param x:`` fields (``@type x:``, ``@keyword x:``...).

Parsing happens in two steps. First the docstring is cut into blocks, line by
line: a parameter block runs to the next section header (Google, NumPy) or
the next field (reST, epytext), so a continuation line written flush left
belongs to its parameter, as ``docstring_parser`` reads it; a blank line
followed by a paragraph that is not indented ends a field, as in docutils.
Then each parameter block goes, with its continuation lines indented, to
``docstring_parser`` in its own style, which reads the entries (names, types,
descriptions).  Every line therefore ends up in exactly one place: in a
parameter's description or in the tool's description, never both.  A block
``docstring_parser`` cannot read stays in the description rather than being
lost.

The description is the cleaned docstring without its parameter blocks; other
sections (``Returns:``, ``Raises:``, ``Examples``, ``:returns:``...) stay,
because they tell a model what to expect.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Literal

import docstring_parser

__all__ = ["ParsedDocstring", "parse_docstring", "split_intro"]

_Style = Literal["google", "numpy", "rest", "epytext"]

# Google-style headers of sections that document parameters or attributes.
_GOOGLE_PARAM_HEADERS = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|"
    r"Other Parameters|Attributes):\s*$"
)
_NUMPY_PARAM_HEADERS = frozenset({"Parameters", "Other Parameters", "Attributes"})
_SECTION_NAMES = (
    "Returns|Return|Yields|Yield|Raises|Raise|Examples|Example|Notes|Note|Warnings|"
    "Warning|Warns|See Also|References|Todo|Receives|Exceptions|Except"
)
_GOOGLE_SECTION = re.compile(rf"^({_SECTION_NAMES}):\s*$")
_NUMPY_SECTION = re.compile(rf"^({_SECTION_NAMES})\s*$")
_DASHES = re.compile(r"-{3,}")
_PARAM_FIELDS = r"(param|parameter|arg|argument|key|keyword|type|kwtype|ivar|cvar|var|attribute)"
_REST_PARAM_FIELD = re.compile(rf"^:{_PARAM_FIELDS}\b[^:]*:")
_EPYTEXT_PARAM_FIELD = re.compile(rf"^@{_PARAM_FIELDS}\b[^:]*:")
# One entry of a Google section: "name: text", "name (type): text", "*args: text".
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}[A-Za-z_][\w.]*(\s*\([^)]*\))?\s*:(\s|$)")
# One entry of a NumPy section: "name", "name : type", "a, b : int".
_NUMPY_ENTRY = re.compile(
    r"^\*{0,2}[A-Za-z_]\w*(\s*,\s*\*{0,2}[A-Za-z_]\w*)*\s*(:.*)?$"
)
_PARSER_STYLE = {
    "google": docstring_parser.DocstringStyle.GOOGLE,
    "numpy": docstring_parser.DocstringStyle.NUMPYDOC,
    "rest": docstring_parser.DocstringStyle.REST,
    "epytext": docstring_parser.DocstringStyle.EPYDOC,
}


@dataclass(frozen=True)
class ParsedDocstring:
    """The parts of a docstring a tool needs.

    Attributes:
        description: the docstring without its parameter sections ("" if none).
        params: parameter name -> description, for every documented parameter.
        returns: the description of the return value, if documented.
    """

    description: str = ""
    params: dict[str, str] = field(default_factory=dict)
    returns: str | None = None


@dataclass
class _Block:
    """Consecutive lines of a docstring: free text, or one parameter section/field."""

    style: _Style | None
    lines: list[str]


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Parse ``doc`` (Google, NumPy, reST or epytext style) into description and params."""
    if not doc or not doc.strip():
        return ParsedDocstring()
    text = inspect.cleandoc(doc)
    params: dict[str, str] = {}
    kept: list[str] = []
    for block in _split(text.splitlines()):
        found = _block_params(block) if block.style is not None else None
        if not found:
            kept.extend(block.lines)
            continue
        for name, description in found.items():
            params.setdefault(name, description)
    description = _tidy(kept)
    return ParsedDocstring(description, params, _returns(description))


def _returns(text: str) -> str | None:
    """The return value's description in ``text``, as ``docstring_parser`` reads it.

    ``text`` is the docstring without its parameter blocks, which a parser
    might not read (continuation lines flush left).
    """
    try:
        parsed = docstring_parser.parse(text)
    except docstring_parser.ParseError:
        return None
    if parsed.returns is not None and parsed.returns.description:
        return " ".join(parsed.returns.description.split())
    return None


# -- step 1: blocks ---------------------------------------------------------------------


def _split(lines: list[str]) -> list[_Block]:
    """Cut cleaned docstring lines into free-text blocks and parameter blocks."""
    blocks: list[_Block] = []
    text: list[str] = []
    i, n = 0, len(lines)
    while i < n:
        end: int | None = None
        style: _Style | None = None
        stripped = lines[i].strip()
        if stripped in _NUMPY_PARAM_HEADERS and i + 1 < n and _DASHES.fullmatch(
            lines[i + 1].strip()
        ):
            style, end = "numpy", _numpy_end(lines, i + 2)
        elif _GOOGLE_PARAM_HEADERS.match(lines[i]):
            style, end = "google", _google_end(lines, i + 1)
        elif _REST_PARAM_FIELD.match(lines[i]):
            style, end = "rest", _field_end(lines, i + 1, ":", _REST_PARAM_FIELD)
        elif _EPYTEXT_PARAM_FIELD.match(lines[i]):
            style, end = "epytext", _field_end(lines, i + 1, "@", _EPYTEXT_PARAM_FIELD)
        if style is None or end is None:
            text.append(lines[i])
            i += 1
            continue
        if text:
            blocks.append(_Block(None, text))
            text = []
        blocks.append(_Block(style, lines[i:end]))
        i = end
    if text:
        blocks.append(_Block(None, text))
    return blocks


def _is_header(lines: list[str], i: int) -> bool:
    """True if line ``i`` starts a Google or NumPy section (any section)."""
    line = lines[i]
    if _GOOGLE_PARAM_HEADERS.match(line) or _GOOGLE_SECTION.match(line):
        return True
    return (
        bool(line.strip())
        and not line[:1].isspace()
        and i + 1 < len(lines)
        and bool(_DASHES.fullmatch(lines[i + 1].strip()))
    )


def _numpy_end(lines: list[str], i: int) -> int:
    """The end of a NumPy parameter section: the next underlined header."""
    while i < len(lines) and not _is_header(lines, i):
        i += 1
    return _trim_blank(lines, i)


def _google_end(lines: list[str], i: int) -> int | None:
    """The end of a Google parameter section starting after its header at ``i - 1``.

    Indented entries run to the first line flush left; entries written flush
    left run to a blank line or the next header.  None if no entry follows.
    """
    n = len(lines)
    first = i
    while first < n and not lines[first].strip():
        first += 1
    if first == n or _is_header(lines, first):
        return None
    if lines[first][:1].isspace():
        j = first
        while j < n and (not lines[j].strip() or lines[j][:1].isspace()):
            j += 1
        return _trim_blank(lines, j)
    if not _GOOGLE_ENTRY.match(lines[first]):
        return None
    j = first
    while j < n and lines[j].strip() and not _is_header(lines, j):
        j += 1
    return j


def _field_end(lines: list[str], i: int, mark: str, param_field: re.Pattern[str]) -> int:
    """The end of the reST (``mark`` ':') or epytext ('@') parameter fields from ``i - 1``.

    Consecutive parameter fields (``:param x:``, ``:type x:``...) form one
    block.  Continuation lines, indented or not, run to the next other field
    or header; a blank line followed by a line flush left ends the block.
    """
    n = len(lines)
    while i < n:
        line = lines[i]
        if (line.startswith(mark) and not param_field.match(line)) or _is_header(lines, i):
            break
        if not line.strip():
            j = i
            while j < n and not lines[j].strip():
                j += 1
            if j == n or not lines[j][:1].isspace():
                break
            i = j
            continue
        i += 1
    return i


def _trim_blank(lines: list[str], end: int) -> int:
    """Move ``end`` back over trailing blank lines (they belong to the text)."""
    while end > 0 and not lines[end - 1].strip():
        end -= 1
    return end


# -- step 2: entries -------------------------------------------------------------------


def _block_params(block: _Block) -> dict[str, str]:
    """Parameter name -> description of one parameter block ({} if unreadable)."""
    if block.style is None:
        return {}
    try:
        # A summary line first: the parsers' cleandoc must not dedent the entries.
        source = "Parameters.\n\n" + _normalise(block)
        parsed = docstring_parser.parse(source, _PARSER_STYLE[block.style])
    except docstring_parser.ParseError:
        return {}
    out: dict[str, str] = {}
    for p in parsed.params:
        if not p.arg_name or not p.description:
            continue
        for name in p.arg_name.split(","):
            out.setdefault(name.strip().lstrip("*"), " ".join(p.description.split()))
    return out


def _normalise(block: _Block) -> str:
    """The block as ``docstring_parser`` reads it: continuation lines indented."""
    lines = block.lines
    if block.style == "google":
        body = lines[1:]
        entry_indent = min(
            (len(line) - len(line.lstrip()) for line in body if line.strip()), default=0
        )
        out = ["Args:"]
        for line in body:
            stripped = line.strip()
            if not stripped:
                out.append("")
            elif len(line) - len(line.lstrip()) == entry_indent and _GOOGLE_ENTRY.match(stripped):
                out.append("    " + stripped)
            else:
                out.append("        " + stripped)
        return "\n".join(out)
    if block.style == "numpy":
        out = ["Parameters", "----------"]
        for line in lines[2:]:
            if line.strip() and not line[:1].isspace() and not _NUMPY_ENTRY.match(line):
                out.append("    " + line.strip())
            else:
                out.append(line)
        return "\n".join(out)
    return "\n".join(lines)


def _tidy(lines: list[str]) -> str:
    """Join kept lines, collapsing runs of blank lines and trimming the ends."""
    result: list[str] = []
    for line in lines:
        if not line.strip() and result and not result[-1].strip():
            continue
        result.append(line.rstrip())
    return "\n".join(result).strip()


def split_intro(description: str) -> tuple[str, str]:
    """Split a description into its free text and its trailing sections.

    ``"Summary.\\n\\nReturns:\\n    x"`` -> ``("Summary.", "Returns:\\n    x")``; used
    to place notes and the ``Args:`` section before ``Returns:`` in stubs.
    """
    lines = description.splitlines()
    for i, line in enumerate(lines):
        numpy = (
            _NUMPY_SECTION.match(line)
            and i + 1 < len(lines)
            and _DASHES.fullmatch(lines[i + 1].strip())
        )
        if _GOOGLE_SECTION.match(line) or numpy:
            return "\n".join(lines[:i]).strip(), "\n".join(lines[i:]).strip()
    return description.strip(), ""
