"""Tools rendered as Python stubs for the model's prompt (golden output)."""

import datetime as _dt
import decimal
import enum
import ipaddress
import uuid
from dataclasses import dataclass, field
from typing import Annotated, Literal, NotRequired, TypedDict

import pydantic
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


# -- host types: the stub shows the JSON the script receives ------------------------------


class Slot(TypedDict):
    """A free slot in a calendar."""

    day: _dt.date
    starts: _dt.time
    length: _dt.timedelta
    by_room: dict[str, _dt.datetime]
    prices: list[decimal.Decimal] | None
    window: tuple[_dt.date, _dt.date]


@dataclass
class Booking:
    id: uuid.UUID
    slot: Slot
    host: ipaddress.IPv6Address | None = None


class Account(pydantic.BaseModel):
    created: pydantic.AwareDatetime
    password: pydantic.SecretStr
    owner: pydantic.NameEmail
    last_ip: pydantic.IPvAnyAddress
    homepage: pydantic.AnyUrl | None = None
    level: Channel = Channel.EMAIL


class Opaque:
    """A class with no JSON form."""


class Code(str):
    """A str subclass: JSON sends it as a string."""


HOST_GOLDEN = '''class Account(TypedDict):
    created: str  # ISO 8601 date-time
    password: str  # secret, always sent as '**********'
    owner: str  # name and email, e.g. 'Jane Doe <jane@example.com>'
    last_ip: str  # IP address
    homepage: NotRequired[str | None]  # URL
    level: NotRequired[Literal['email', 'sms']]

class Slot(TypedDict):
    """A free slot in a calendar."""
    day: str  # ISO 8601 date
    starts: str  # ISO 8601 time
    length: str  # ISO 8601 duration, e.g. 'PT1H30M'
    by_room: dict[str, str]  # ISO 8601 date-time
    prices: list[str] | None  # decimal number as text, e.g. '12.50'
    window: tuple[str, str]  # ISO 8601 date

class Booking(TypedDict):
    id: str  # UUID
    slot: Slot
    host: NotRequired[str | None]  # IPv6 address

def book(day: str, account: Account) -> Booking:
    """Book the first free slot of a day."""
'''


def test_host_types_render_as_the_json_strings_a_script_receives():
    @tool
    def book(day: str, account: Account) -> Booking:
        """Book the first free slot of a day."""
        raise NotImplementedError

    stub = render_stub(book)
    assert stub == HOST_GOLDEN
    # Valid Python with only typing names: no host type, and each class after those it uses.
    exec("from typing import Literal, NotRequired, TypedDict\n" + stub, {})


def test_unknown_classes_render_as_any_and_builtin_subclasses_as_their_base():
    @tool
    def lookup(code: str) -> Opaque:
        """Look up."""
        raise NotImplementedError

    @tool
    def normalise(code: str) -> Code:
        """Normalise."""
        return Code(code)

    assert render_stub(lookup).startswith("def lookup(code: str) -> Any:\n")
    assert render_stub(normalise).startswith("def normalise(code: str) -> str:\n")


def test_result_notes_go_on_the_def_line_even_when_it_wraps():
    @tool
    def window_of_the_reservation_for_a_long_named_guest(
        reservation_identifier: str, include_cancelled_reservations: bool = False,
        time_zone_name: str = "UTC",
    ) -> tuple[_dt.datetime, _dt.datetime] | None:
        """When the reservation starts and ends."""
        return None

    stub = render_stub(window_of_the_reservation_for_a_long_named_guest)
    assert ") -> tuple[str, str] | None:  # ISO 8601 date-time\n" in stub
    exec(stub, {})
