"""Tools rendered as Python stubs for the model's prompt (golden output)."""

import enum
from dataclasses import dataclass, field
from typing import Annotated, Literal, NotRequired, TypedDict

from toolscript.tools import ToolRegistry, render_stub, render_stubs, tool


class Channel(enum.Enum):
    EMAIL = "email"
    SMS = "sms"


class Revenue(TypedDict):
    """One store's revenue on one day."""

    store_id: str
    revenue_yuan: Annotated[float, "Total, in yuan."]
    note: NotRequired[str]


@dataclass
class Recipient:
    address: str
    channel: Channel = Channel.EMAIL
    tags: list[str] = field(default_factory=list)


@tool(read_only=True)
def get_daily_revenue(store_id: str, date: str) -> Revenue:
    """Revenue of one store on one day, in yuan.

    Args:
        store_id: Store id, e.g. "ST001".
        date: ISO date, e.g. "2026-08-24".

    Returns:
        The revenue record.
    """
    return {"store_id": store_id, "revenue_yuan": 0.0}


@tool(requires_approval=True)
def notify(
    recipients: list[Recipient],
    subject: str,
    *,
    body: Annotated[str, "Plain text body."] = "",
    priority: Literal["low", "high"] = "low",
    attachments: dict[str, int] | None = None,
) -> None:
    """Send a message to several recipients."""


@tool
def ping() -> bool:
    return True


GOLDEN = '''\
class Revenue(TypedDict):
    """One store's revenue on one day."""
    store_id: str
    revenue_yuan: float  # Total, in yuan.
    note: NotRequired[str]

class Recipient(TypedDict):
    address: str
    channel: NotRequired[Literal['email', 'sms']]
    tags: NotRequired[list[str]]

def get_daily_revenue(store_id: str, date: str) -> Revenue:
    """Revenue of one store on one day, in yuan.

    (read-only: safe to run in parallel)

    Args:
        store_id: Store id, e.g. "ST001".
        date: ISO date, e.g. "2026-08-24".

    Returns:
        The revenue record.
    """

def notify(
    recipients: list[Recipient],
    subject: str,
    *,
    body: str = '',
    priority: Literal['low', 'high'] = 'low',
    attachments: dict[str, int] | None = None,
) -> None:
    """Send a message to several recipients.

    (requires approval: each call is checked before it runs)

    Args:
        body: Plain text body.
    """

def ping() -> bool:
    ...
'''


def test_golden_stubs():
    reg = ToolRegistry([ping, notify, get_daily_revenue])
    assert reg.render_stubs() == GOLDEN


def test_order_does_not_depend_on_input_order():
    assert render_stubs([get_daily_revenue, ping, notify]) == render_stubs(
        [notify, get_daily_revenue, ping]
    )


def test_stubs_are_valid_python():
    source = "from typing import Literal, NotRequired, TypedDict\n" + GOLDEN
    namespace: dict = {}
    exec(compile(source, "<stubs>", "exec"), namespace)
    assert namespace["get_daily_revenue"].__doc__.startswith("Revenue of one store")


def test_single_stub_and_triple_quotes_escaped():
    @tool
    def quote(text: str) -> str:
        '''Wrap text in """ quotes."""'''
        return text

    stub = render_stub(quote)
    assert stub.startswith("def quote(text: str) -> str:\n")
    source = stub
    namespace: dict = {}
    exec(compile(source, "<stub>", "exec"), namespace)
    assert '"""' in namespace["quote"].__doc__
