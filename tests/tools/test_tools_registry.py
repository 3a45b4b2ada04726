"""ToolRegistry: names, duplicates, order, sandbox description."""

import pytest
from toolscript.tools import Tool, ToolRegistry, check_tool_name, tool

from toolscript.errors import SchemaError, ToolDefinitionError


@tool(read_only=True)
def get_daily_revenue(store_id: str, date: str) -> dict:
    """Revenue of one store on one day, in yuan.

    More detail on a second paragraph.
    """
    return {}


@tool(requires_approval=True)
def send_email(to: str, subject: str, *, body: str = "") -> None:
    """Send an email."""


def list_stores(city: str | None = None) -> list[str]:
    """All store ids, optionally in one city."""
    return []


def test_plain_functions_are_wrapped_and_order_is_sorted():
    reg = ToolRegistry([send_email, list_stores, get_daily_revenue])
    assert reg.names() == ["get_daily_revenue", "list_stores", "send_email"]
    assert [t.name for t in reg] == reg.names()
    assert len(reg) == 3
    assert "list_stores" in reg and "nope" not in reg
    assert isinstance(reg.get("list_stores"), Tool)
    assert reg.get("list_stores").func is list_stores
    assert reg.get("nope") is None
    assert reg["send_email"] is send_email


def test_unknown_tool_message_suggests_or_lists():
    reg = ToolRegistry([send_email, list_stores, get_daily_revenue])
    assert (
        reg.unknown_tool_message("send_mail")
        == "unknown tool 'send_mail': did you mean 'send_email'?"
    )
    assert reg.unknown_tool_message("zzz") == (
        "unknown tool 'zzz': available tools: get_daily_revenue, list_stores, send_email"
    )
    with pytest.raises(KeyError, match="did you mean 'send_email'"):
        reg["send_mail"]


def test_describe_for_sandbox():
    reg = ToolRegistry([send_email, get_daily_revenue])
    assert reg.describe_for_sandbox() == [
        {
            "name": "get_daily_revenue",
            "params": [
                {"name": "store_id", "kind": "positional_or_keyword", "required": True},
                {"name": "date", "kind": "positional_or_keyword", "required": True},
            ],
            "read_only": True,
            "doc": "Revenue of one store on one day, in yuan.",
        },
        {
            "name": "send_email",
            "params": [
                {"name": "to", "kind": "positional_or_keyword", "required": True},
                {"name": "subject", "kind": "positional_or_keyword", "required": True},
                {"name": "body", "kind": "keyword_only", "required": False},
            ],
            "read_only": False,
            "doc": "Send an email.",
        },
    ]


def test_duplicates_are_refused():
    def get_daily_revenue(x: int) -> int:  # same name, other function
        return x

    with pytest.raises(ToolDefinitionError, match="duplicate tool name 'get_daily_revenue'"):
        ToolRegistry([globals()["get_daily_revenue"], get_daily_revenue])
    with pytest.raises(ToolDefinitionError, match="registered twice"):
        ToolRegistry([send_email, send_email])


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", "1-64 characters"),
        ("a" * 65, "1-64 characters"),
        ("has space", "1-64 characters"),
        ("dot.ted", "1-64 characters"),
        ("naïve", "1-64 characters"),
        ("get-revenue", "valid Python identifier"),
        ("1st", "valid Python identifier"),
        ("class", "Python keyword"),
    ],
)
def test_bad_names_say_why(name, why):
    with pytest.raises(ToolDefinitionError, match=why):
        check_tool_name(name)

    def f(x: int) -> int:
        return x

    with pytest.raises(ToolDefinitionError, match=why):
        Tool.from_function(f, name=name)


def test_good_names():
    for name in ["a", "A_b_9", "x" * 64, "_private"]:
        assert check_tool_name(name) == name


def test_builtin_and_reserved_names_are_refused():
    def f(x: int) -> int:
        return x

    with pytest.raises(ToolDefinitionError, match="shadow the builtin 'print'"):
        ToolRegistry([Tool.from_function(f, name="print")])
    with pytest.raises(ToolDefinitionError, match="sandbox name 'parallel'"):
        ToolRegistry([Tool.from_function(f, name="parallel")], reserved=["parallel"])


def test_plain_function_schema_errors_surface():
    def bad(x) -> None:
        pass

    with pytest.raises(SchemaError, match="parameter 'x' has no type annotation"):
        ToolRegistry([bad])


def test_function_specs_and_empty_registry():
    assert ToolRegistry().names() == []
    assert ToolRegistry().render_stubs() == ""
    specs = ToolRegistry([list_stores]).function_specs()
    assert specs == [
        {
            "name": "list_stores",
            "description": "All store ids, optionally in one city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": ["string", "null"], "default": None}},
                "required": [],
                "additionalProperties": False,
            },
        }
    ]
