"""load_tools: modules and files, with clear errors."""

import sys
import textwrap
from pathlib import Path

import pytest
from toolscript.tools import Tool, load_tools

from toolscript.errors import SchemaError, ToolLoadError

DECORATED = '''
from __future__ import annotations

from dataclasses import dataclass

from toolscript.tools import tool


@dataclass
class Query:
    city: str
    limit: int = 10


@tool(read_only=True)
def zeta(q: Query) -> list[str]:
    """Last defined first? No: definition order is kept."""
    return [q.city] * q.limit


@tool
def alpha(x: int) -> int:
    return x + 1


alias = alpha  # bound twice: loaded once


def helper(x: int) -> int:  # not a tool
    return x
'''

WITH_TOOLS_LIST = '''
from toolscript.tools import tool

def plain(a: str) -> str:
    """A plain function listed in TOOLS."""
    return a

@tool(read_only=True)
def decorated(b: int) -> int:
    return b

@tool
def not_listed(c: int) -> int:
    return c

TOOLS = [plain, decorated]
'''


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def test_file_path_collects_tools_in_definition_order(tmp_path):
    path = write(tmp_path, "my_tools.py", DECORATED)
    tools = load_tools(str(path))
    assert [t.name for t in tools] == ["zeta", "alpha"]
    zeta = tools[0]
    assert zeta.read_only
    # string annotations and a dataclass defined in the loaded file resolve:
    assert zeta.parameters_schema["$defs"]["Query"]["required"] == ["city"]
    assert zeta.validate_and_invoke({"q": {"city": "x", "limit": 2}}) == ["x", "x"]


def test_tools_list_wins(tmp_path):
    path = write(tmp_path, "listed.py", WITH_TOOLS_LIST)
    tools = load_tools(str(path))
    assert [t.name for t in tools] == ["plain", "decorated"]
    assert all(isinstance(t, Tool) for t in tools)
    assert tools[0].description == "A plain function listed in TOOLS."


def test_dotted_module_name(tmp_path, monkeypatch):
    pkg = tmp_path / "ts_test_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    write(pkg, "store_tools.py", DECORATED)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        tools = load_tools("ts_test_pkg.store_tools")
        assert [t.name for t in tools] == ["zeta", "alpha"]
    finally:
        for name in [m for m in sys.modules if m.startswith("ts_test_pkg")]:
            del sys.modules[name]


def test_sibling_imports_work_from_a_file(tmp_path):
    write(tmp_path, "ts_sibling_helpers.py", "FACTOR = 3\n")
    path = write(
        tmp_path,
        "uses_sibling.py",
        """
        from ts_sibling_helpers import FACTOR
        from toolscript.tools import tool

        @tool
        def triple(x: int) -> int:
            return x * FACTOR
        """,
    )
    try:
        (t,) = load_tools(str(path))
        assert t.invoke({"x": 2}) == 6
        assert str(tmp_path) not in sys.path  # restored
    finally:
        sys.modules.pop("ts_sibling_helpers", None)


def test_missing_file(tmp_path):
    with pytest.raises(ToolLoadError, match=r"tools file '.*nope\.py' does not exist"):
        load_tools(str(tmp_path / "nope.py"))


def test_directory_is_not_a_file(tmp_path):
    with pytest.raises(ToolLoadError, match="is a directory"):
        load_tools(str(tmp_path) + "/")


def test_missing_module():
    with pytest.raises(ToolLoadError, match="no module named 'ts_no_such_module_xyz'"):
        load_tools("ts_no_such_module_xyz")


def test_import_error_carries_the_exception_text(tmp_path):
    path = write(tmp_path, "broken.py", "import json\nraise RuntimeError('database is down')\n")
    with pytest.raises(ToolLoadError) as info:
        load_tools(str(path))
    message = str(info.value)
    assert "RuntimeError: database is down" in message
    assert "broken.py, line 2" in message


def test_syntax_error(tmp_path):
    path = write(tmp_path, "syntax.py", "def f(:\n    pass\n")
    with pytest.raises(ToolLoadError, match=r"SyntaxError: .*syntax\.py, line 1"):
        load_tools(str(path))


def test_missing_dependency_inside_module_is_not_reported_as_missing_module(tmp_path, monkeypatch):
    write(tmp_path, "ts_needs_dep.py", "import ts_absent_dependency_qq\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ToolLoadError, match="ModuleNotFoundError: No module named 'ts_absent"):
        load_tools("ts_needs_dep")


def test_no_tools_found(tmp_path):
    path = write(tmp_path, "empty.py", "def f(x: int) -> int:\n    return x\n")
    with pytest.raises(ToolLoadError, match=r"no tools found in .*empty\.py.*@tool.*TOOLS"):
        load_tools(str(path))


def test_bad_tools_list(tmp_path):
    path = write(tmp_path, "badlist.py", "TOOLS = 'x'\n")
    with pytest.raises(ToolLoadError, match="TOOLS must be a list"):
        load_tools(str(path))
    path = write(tmp_path, "badlist2.py", "TOOLS = [42]\n")
    with pytest.raises(ToolLoadError, match=r"TOOLS\[0\] is 42"):
        load_tools(str(path))


def test_schema_errors_propagate_unchanged(tmp_path):
    path = write(
        tmp_path,
        "badschema.py",
        """
        from toolscript.tools import tool

        @tool
        def f(x) -> None:
            pass
        """,
    )
    with pytest.raises(SchemaError, match="parameter 'x' has no type annotation"):
        load_tools(str(path))
