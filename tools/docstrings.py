"""Docstrings -> a tool description plus per-parameter descriptions.

Parameter descriptions come from Google-style ``Args:`` sections, NumPy-style
``Parameters`` sections and reST ``:param x:`` fields (parsed by
``docstring_parser``).  The description is the cleaned docstring with those
parameter sections removed; other sections (``Returns:``, ``Raises:``,
``Examples``...) stay, because they tell a model what to expect.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

import docstring_parser

__all__ = ["ParsedDocstring", "parse_docstring", "split_intro"]

# Google-style headers of sections that document parameters or attributes.
_GOOGLE_PARAM_HEADERS = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|"
    r"Other Parameters|Attributes):\s*$"
)
_NUMPY_PARAM_HEADERS = {"Parameters", "Other Parameters", "Attributes"}
_SECTION_NAMES = (
    "Returns|Return|Yields|Yield|Raises|Raise|Examples|Example|Notes|Note|Warnings|"
    "Warning|Warns|See Also|References|Todo|Receives"
)
_GOOGLE_SECTION = re.compile(rf"^({_SECTION_NAMES}):\s*$")
_NUMPY_SECTION = re.compile(rf"^({_SECTION_NAMES})\s*$")
_REST_FIELD = re.compile(r"^:(param|parameter|arg|argument|key|keyword|type|ivar|var)\b[^:]*:")


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


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Parse ``doc`` (Google, NumPy or reST style) into description and params."""
    if not doc or not doc.strip():
        return ParsedDocstring()
    text = inspect.cleandoc(doc)
    params: dict[str, str] = {}
    returns: str | None = None
    try:
        parsed = docstring_parser.parse(text)
    except docstring_parser.ParseError:
        parsed = None
    if parsed is not None:
        for p in parsed.params:
            name = p.arg_name.lstrip("*")
            if p.description and name not in params:
                params[name] = " ".join(p.description.split())
        if parsed.returns is not None and parsed.returns.description:
            returns = " ".join(parsed.returns.description.split())
    return ParsedDocstring(_strip_param_sections(text), params, returns)


def _strip_param_sections(text: str) -> str:
    """Remove parameter sections from a cleaned docstring, keep everything else."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        stripped = line.strip()
        # NumPy: "Parameters" underlined with dashes; the section runs to the next
        # underlined header.
        if (
            stripped in _NUMPY_PARAM_HEADERS
            and i + 1 < n
            and re.fullmatch(r"-{3,}", lines[i + 1].strip())
        ):
            i += 2
            while i < n and not (
                i + 1 < n
                and lines[i].strip()
                and not lines[i].startswith(" ")
                and re.fullmatch(r"-{3,}", lines[i + 1].strip())
            ):
                i += 1
            continue
        # Google: "Args:" at column 0, followed by indented (or blank) lines.
        if _GOOGLE_PARAM_HEADERS.match(line):
            i += 1
            while i < n and (not lines[i].strip() or lines[i][:1] in (" ", "\t")):
                i += 1
            continue
        # reST: ":param x: ..." fields and their indented continuation lines.
        if _REST_FIELD.match(stripped) and not line[:1].isspace():
            i += 1
            while i < n and lines[i][:1] in (" ", "\t") and lines[i].strip():
                i += 1
            continue
        out.append(line)
        i += 1
    # Collapse runs of blank lines left behind and trim the ends.
    result: list[str] = []
    for line in out:
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
            and re.fullmatch(r"-{3,}", lines[i + 1].strip())
        )
        if _GOOGLE_SECTION.match(line) or numpy:
            return "\n".join(lines[:i]).strip(), "\n".join(lines[i:]).strip()
    return description.strip(), ""
