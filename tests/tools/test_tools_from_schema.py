"""``Tool.from_schema`` builds a ``SchemaTool`` however the tools package is first imported.

``Tool`` does not import its subclass ``SchemaTool`` (no import cycle): the
schema tool module registers itself, and the ``toolscript.tools`` package loads
it. A fresh interpreter that imports only the definition module still gets a
working ``Tool.from_schema``.
"""

from __future__ import annotations

import subprocess
import sys

from toolscript.tools import Tool
from toolscript.tools.schematool import SchemaTool

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


def test_from_schema_returns_a_schema_tool() -> None:
    built = Tool.from_schema(lambda **kw: kw, name="search", description="Search.",
                             input_schema=SCHEMA)
    assert type(built) is SchemaTool
    assert built.name == "search" and built.description == "Search."
    assert built.func(q="x") == {"q": "x"}


def test_from_schema_works_when_only_the_definition_module_is_imported() -> None:
    code = (
        "from toolscript.tools.definition import Tool\n"
        f"built = Tool.from_schema(lambda **kw: kw, name='s', description='S.', "
        f"input_schema={SCHEMA!r})\n"
        "print(type(built).__module__, type(built).__name__)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["toolscript.tools.schematool", "SchemaTool"]
