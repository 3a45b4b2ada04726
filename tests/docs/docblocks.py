"""The fenced code blocks of README.md and docs/, with their ``docs-test`` directives.

A block may be preceded (on the line just above its fence, blank lines
allowed between) by an HTML comment that tells the docs test how to run it::

    <!-- docs-test: fake-model answer="ST002" -->
    <!-- docs-test: continues -->           (or name=tour ... after=tour)
    <!-- docs-test: synopsis -->
    <!-- docs-test: skip reason="..." -->

The comment is invisible in rendered Markdown. See ``test_docs_blocks.py``
for what each directive means.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<lang>[^`\s]*)\s*$")
_DIRECTIVE = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<body>.*?)\s*-->\s*$")


@dataclass
class Block:
    """One fenced block: where it is, its language tag, its text and directive."""

    path: Path
    line: int
    lang: str
    text: str
    flags: set[str] = field(default_factory=set)
    options: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """``README.md:42``: the test id."""
        return f"{self.path.relative_to(REPO)}:{self.line}"


def doc_files() -> list[Path]:
    """README.md and every Markdown page under docs/ (the generated reference too)."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def _directive(lines: list[str], fence_index: int) -> tuple[set[str], dict[str, str]]:
    index = fence_index - 1
    while index >= 0 and not lines[index].strip():
        index -= 1
    match = _DIRECTIVE.match(lines[index]) if index >= 0 else None
    if match is None:
        return set(), {}
    flags: set[str] = set()
    options: dict[str, str] = {}
    for word in shlex.split(match.group("body")):
        key, sep, value = word.partition("=")
        if sep:
            options[key] = value
        else:
            flags.add(key)
    return flags, options


def blocks_of(path: Path) -> list[Block]:
    """The fenced blocks of one Markdown file, indentation (list items) removed."""
    lines = path.read_text("utf-8").splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if match is None:
            index += 1
            continue
        indent, fence = len(match.group("indent")), match.group("fence")
        end = index + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        body = [line[indent:] if not line[:indent].strip() else line.lstrip()
                for line in lines[index + 1:end]]
        flags, options = _directive(lines, index)
        found.append(Block(path, index + 1, match.group("lang").lower(),
                           "\n".join(body) + "\n", flags, options))
        index = end + 1
    return found


def all_blocks() -> list[Block]:
    """Every fenced block of README.md and docs/."""
    return [block for path in doc_files() for block in blocks_of(path)]


def chain(block: Block, blocks: list[Block]) -> list[Block]:
    """``block`` and the python blocks it follows, earliest first: ``continues``
    follows the python block before it in the same file, ``after=NAME`` the block
    of that file marked ``name=NAME``."""
    same_file = [b for b in blocks if b.path == block.path and b.lang == "python"]
    result = [block]
    while True:
        first = result[0]
        if "after" in first.options:
            named = [b for b in same_file if b.options.get("name") == first.options["after"]]
            if len(named) != 1:
                raise AssertionError(f"{first.id}: no one block name={first.options['after']}")
            result.insert(0, named[0])
        elif "continues" in first.flags:
            position = same_file.index(first)
            if position == 0:
                raise AssertionError(f"{first.id}: 'continues' but no python block before it")
            result.insert(0, same_file[position - 1])
        else:
            return result
