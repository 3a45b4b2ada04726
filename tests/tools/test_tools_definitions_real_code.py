"""Tool definitions written the way agent benchmarks and frameworks write them.

The tools below follow the shapes of real tool suites (a workspace with an
inbox and a calendar, a bank account): plain typed functions whose first
parameter is the environment object, pydantic records with ``datetime``,
``EmailStr`` and enum fields, reST docstrings whose continuation lines are not
indented, ``Annotated[T, Depends("key")]`` dependency markers.  Four
properties are checked, each also end to end through ``Runtime`` on every
backend:

1. an environment parameter registered without ``inject=`` is flagged (a
   warning at registration and a lint finding), a dependency marker injects it;
2. parameter text never leaks into the tool description, in any docstring style;
3. stubs show the JSON the script receives, never a host type;
4. strict validation errors say exactly what to send.
"""

from __future__ import annotations

import datetime as dt
import decimal
import enum
import ipaddress
import pathlib
import re
import uuid
import warnings
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

import pydantic
import pytest
from pydantic import BaseModel, EmailStr, HttpUrl
from toolscript.tools import Field, Tool, lint_tools, render_stub, render_stubs, to_jsonable
from toolscript.tools.argmessages import type_reason
from toolscript.tools.docstrings import parse_docstring

from toolscript.errors import DependencyParameterWarning, SchemaError

# -- a workspace environment, as benchmark suites model it ------------------------------


class Depends:
    """A dependency marker as agent frameworks spell it: ``Depends("env_key")``."""

    def __init__(self, env_dependency: str) -> None:
        self.env_dependency = env_dependency


class FastDepends:
    """FastAPI's spelling: a callable dependency (the class is named ``Depends``)."""


FastDepends.__name__ = "Depends"


class Security(FastDepends):
    """A subclass of a ``Depends`` class (FastAPI's ``Security``)."""

    def __init__(self, dependency: Any = None) -> None:
        self.dependency = dependency


class EmailStatus(enum.StrEnum):
    sent = "sent"
    received = "received"
    draft = "draft"


class Email(BaseModel):
    id_: str = pydantic.Field(description="The unique identifier of the email")
    sender: EmailStr = pydantic.Field(description="The email of the sender")
    recipients: list[EmailStr] = pydantic.Field(description="The recipients of the email")
    cc: list[EmailStr] = pydantic.Field(
        default_factory=list, description="The list of email addresses to include in the CC field"
    )
    bcc: list[EmailStr] = pydantic.Field(
        default_factory=list, description="The list of email addresses to include in the BCC field"
    )
    subject: str = pydantic.Field(description="The subject of the email")
    body: str = pydantic.Field(description="The body of the email")
    attachments: list[str] = pydantic.Field(
        default_factory=list,
        description="The attachments of the email, as the ids of files in the cloud drive",
    )
    status: EmailStatus = EmailStatus.sent
    read: bool = False
    timestamp: dt.datetime = pydantic.Field(description="The timestamp of the email")


class EmailContact(BaseModel):
    email: EmailStr
    name: str


class Inbox(BaseModel):
    account_email: EmailStr
    initial_emails: list[Email]
    emails: dict[str, Email] = {}
    contact_list: list[EmailContact] = []
    trash: dict[str, Email] = {}

    def send(self, recipients: list[str], subject: str, body: str) -> Email:
        """Add a sent email to the inbox."""
        email = Email(
            id_=str(len(self.emails)), sender=self.account_email, recipients=recipients,
            subject=subject, body=body, timestamp=dt.datetime(2026, 8, 24, 9, 30),
        )
        self.emails[email.id_] = email
        return email


class Transaction(BaseModel):
    id: int
    sender: str
    recipient: str
    amount: float
    subject: str
    date: str
    recurring: bool


class BankAccount(BaseModel):
    balance: float
    iban: str
    transactions: list[Transaction]
    scheduled_transactions: list[Transaction]


class Counter(BaseModel):
    """A tiny state object: small and flat, but changed in place by its tool."""

    value: int = 0


@dataclass
class Preferences:
    """A small dataclass the module keeps as its state."""

    language: str = "en"
    currency: str = "EUR"


PREFERENCES = Preferences()


class Address(BaseModel):
    """A value a model does send: small, flat, read-only."""

    city: str
    zip_code: str


@dataclass
class LineItem:
    sku: str
    qty: int


@dataclass
class Order:
    """Input with one list of line items: still a value, not a store."""

    customer: str
    lines: list[LineItem] = field(default_factory=list)


def make_inbox() -> Inbox:
    """A fresh inbox with one received email."""
    first = Email(
        id_="0", sender="lily@example.com", recipients=["me@example.com"], subject="Hi",
        body="Lunch?", status=EmailStatus.received, timestamp=dt.datetime(2026, 8, 23, 12, 5),
    )
    return Inbox(account_email="me@example.com", initial_emails=[first], emails={"0": first})


def make_account() -> BankAccount:
    """A fresh account with one transaction."""
    tx = Transaction(id=1, sender="me", recipient="shop", amount=20.0, subject="book",
                     date="2026-08-01", recurring=False)
    return BankAccount(balance=100.0, iban="DE00", transactions=[tx], scheduled_transactions=[])


def get_unread_emails(inbox: Inbox) -> list[Email]:
    """Returns all the unread emails in the inbox. Each email has a sender, a subject, and a body.

    The emails are marked as read after this function is called.
    """
    unread = [e for e in inbox.emails.values() if not e.read]
    for email in unread:
        email.read = True
    return unread


def send_email(
    inbox: Annotated[Inbox, Depends("inbox")],
    recipients: list[str],
    subject: str,
    body: str,
    cc: list[str] | None = None,
) -> Email:
    """Sends an email with the given `body` to the given `address`. Returns a dictionary with the email details.

    :param recipients: The list with the email addresses of the recipients.
    :param subject: The subject of the email.
    :param body: The body of the email.
    :param cc: The list of email addresses to include in the CC field. If `null`, no email
    addresses are included. Use it only for people who must not reply,
    if the email address is unknown.
    """  # noqa: E501
    return inbox.send(recipients + (cc or []), subject, body)


def search_emails(
    inbox: Annotated[Inbox, Depends("inbox")], query: str, sender: str | None = None
) -> list[Email]:
    """Searches for emails in the inbox that contain the given query in the subject or body.

    :param query: The query to search for in the email subject or body. If empty, all emails
    are returned.
    :param sender: The email address of the sender. If `null`, all emails are searched. Use
    `search_contacts_by_name` if the email address is unknown.
    """
    return [
        e for e in inbox.emails.values()
        if (query in e.subject or query in e.body) and (sender is None or e.sender == sender)
    ]


def get_balance(account: BankAccount) -> float:
    """Get the balance of the account."""
    return account.balance


def send_money(account: BankAccount, recipient: str, amount: float, subject: str) -> dict:
    """Sends a transaction to the recipient.

    :param recipient: IBAN of the recipient
    :param amount: Amount of the transaction
    :param subject: Subject of the transaction
    """
    tx = Transaction(id=len(account.transactions) + 1, sender=account.iban, recipient=recipient,
                     amount=amount, subject=subject, date="2026-08-24", recurring=False)
    account.transactions.append(tx)
    account.balance -= amount
    return {"message": f"Transaction to {recipient} for {amount} sent."}


def increment(counter: Counter, by: int = 1) -> int:
    """Add ``by`` to the counter and return its new value."""
    counter.value += by
    return counter.value


def reset_preferences() -> None:
    """Not a tool: the module changes its own state."""
    PREFERENCES.language = "en"


def get_language(prefs: Preferences) -> str:
    """The display language."""
    return prefs.language


def get_count(counter: Counter) -> int:
    """The counter's value (read only, but ``increment`` changes counters)."""
    return counter.value


def ship(to: Address, parcels: int = 1) -> str:
    """Ship parcels to an address."""
    return f"{parcels} to {to.city}"


def place_order(order: Order) -> int:
    """Place an order and return the number of items."""
    return sum(line.qty for line in order.lines)


def quietly(func: Any, **options: Any) -> Tool:
    """Register ``func`` and fail the test if it warns."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DependencyParameterWarning)
        return Tool(func, **options)


# -- 1. environment objects -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("func", "param", "reason"),
    [
        (get_unread_emails, "inbox", r"JSON Schema is \d+\.\d KB"),
        (get_unread_emails, "inbox", r"collections of other records \(initial_emails: list of "
                                     r"Email, emails: dict of Email"),
        (get_balance, "account", r"transactions: list of Transaction, scheduled_transactions"),
        (send_money, "account", r"changes it in place \(.*account.transactions.append\(...\)"),
        (send_money, "account", r"changes it in place \(.*account\.balance = \.\.\."),
        (increment, "counter", r"changes it in place \(counter.value = ...\)"),
        (get_language, "prefs", r"module keeps Preferences objects as state and changes them "
                                r"\(PREFERENCES.language = \.\.\.\)"),
        (get_count, "counter", r"module keeps Counter objects as state and changes them "
                               r"\(increment: counter.value = \.\.\.\)"),
    ],
)
def test_registration_warns_about_environment_parameters(func, param, reason):
    with pytest.warns(DependencyParameterWarning) as caught:
        t = Tool(func)
    message = str(caught[0].message)
    assert f"tool {func.__name__!r}: parameter {param!r}" in message
    assert re.search(reason, message), message
    assert f"Tool({func.__name__}, inject={{{param!r}: {param!r}}})" in message
    assert f"Runtime(context={{{param!r}: ...}})" in message
    assert caught[0].filename == __file__  # points at the tool's own definition
    assert param in t.parameters_schema["required"]  # a warning, not a change of behaviour


def test_values_a_model_sends_do_not_warn():
    for func in (ship, place_order):
        quietly(func)

    def search(filters: Filters, limit: int = 10) -> list[str]:
        """Search."""
        return []

    quietly(search)


class Filters(TypedDict, total=False):
    city: str
    tags: list[str]


@dataclass
class Room:
    """A meeting room.

    Attributes:
    name: The room's name,
      as shown on the door.
    seats: How many people fit.
    """

    name: str
    seats: int


def test_inject_and_dependency_markers_remove_the_parameter():
    plain = quietly(get_unread_emails, inject={"inbox": "inbox"})
    marked = quietly(send_email)
    assert "inbox" not in plain.parameters_schema["properties"]
    assert "inbox" not in marked.parameters_schema["properties"]
    assert [(p.name, p.key) for p in marked.host_supplied.injected] == [("inbox", "inbox")]
    assert "Inbox" not in render_stub(marked) and "$defs" not in marked.parameters_schema

    def with_fastapi_marker(inbox: Annotated[Inbox, Security(make_inbox)], q: str) -> int:
        """Count."""
        return 0

    def with_marker_class(account: Annotated[BankAccount, FastDepends], q: str) -> int:
        """Count."""
        return 0

    fast = quietly(with_fastapi_marker)
    bare = quietly(with_marker_class)
    assert [(p.name, p.key) for p in fast.host_supplied.injected] == [("inbox", "inbox")]
    assert [(p.name, p.key) for p in bare.host_supplied.injected] == [("account", "account")]


def test_lint_reports_environment_parameters_with_the_fix():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DependencyParameterWarning)
        tools = [Tool(f) for f in (get_unread_emails, get_balance, send_money, ship,
                                   place_order, send_email)]
    findings = [f for f in lint_tools(tools) if f.code == "param-dependency"]
    assert sorted((f.tool, f.param) for f in findings) == [
        ("get_balance", "account"), ("get_unread_emails", "inbox"), ("send_money", "account"),
    ]
    by_tool = {f.tool: f for f in findings}
    assert "other tools take the same records too (send_money)" in by_tool["get_balance"].message
    assert by_tool["get_balance"].severity == "warning"
    assert "inject={'account': 'account'}" in by_tool["get_balance"].fix
    assert "Injected[BankAccount]" in by_tool["get_balance"].fix


def test_environment_end_to_end(make_runtime):
    inbox = make_inbox()
    account = make_account()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DependencyParameterWarning)
        tools = [
            Tool(send_email),  # Annotated[Inbox, Depends("inbox")]
            Tool(search_emails),
            Tool(get_unread_emails, inject={"inbox": "inbox"}),
            Tool(send_money, inject={"account": "bank"}),
            Tool(get_balance, inject={"account": "bank"}),
        ]
    rt = make_runtime(tools, context={"inbox": inbox, "bank": account})
    code = (
        "unread = get_unread_emails()\n"
        "sent = send_email(['bob@example.com'], 'Re: ' + unread[0]['subject'], 'Yes!')\n"
        "send_money('GB29', 30.0, 'lunch')\n"
        "found = search_emails('Yes')\n"
        "try:\n"
        "    send_email(['x@example.com'], 's', 'b', inbox={})\n"
        "    refused = None\n"
        "except ToolArgumentError as e:\n"
        "    refused = str(e)\n"
        "[len(unread), sent['sender'], [e['id_'] for e in found], get_balance(), refused]"
    )
    result = rt.run(code)
    assert result.ok, result.error
    count, sender, found, balance, refused = result.value
    assert (count, sender, found, balance) == (1, "me@example.com", ["1"], 70.0)
    assert "unexpected argument 'inbox'" in refused
    assert inbox.emails["0"].read and len(account.transactions) == 2  # the host objects changed
    stubs = rt.render_stubs()
    assert "inbox:" not in stubs and "account:" not in stubs and "class Inbox" not in stubs


# -- 2. docstrings ---------------------------------------------------------------------------

DOCSTRINGS = {
    "google": (
        '''Search the orders of one customer.

        Results are sorted by date.

        Args:
            customer: The customer id, e.g. "C042".
            status (str): Only orders in this status,
                e.g. "shipped".
            limit: At most this many orders.

        Returns:
            A list of orders.
        ''',
        "Search the orders of one customer.\n\nResults are sorted by date.\n\n"
        "Returns:\n    A list of orders.",
    ),
    "google-flat-continuation": (
        '''Search the orders of one customer.

        Results are sorted by date.

        Args:
            customer: The customer id, e.g. "C042".
            status: Only orders in this status,
            e.g. "shipped".
            limit: At most this many orders.

        Returns:
            A list of orders.
        ''',
        "Search the orders of one customer.\n\nResults are sorted by date.\n\n"
        "Returns:\n    A list of orders.",
    ),
    "google-flat-entries": (
        '''Search the orders of one customer.

        Results are sorted by date.

        Arguments:
        customer: The customer id, e.g. "C042".
        status: Only orders in this status,
          e.g. "shipped".
        limit: At most this many orders.
        ''',
        "Search the orders of one customer.\n\nResults are sorted by date.",
    ),
    "numpy": (
        '''Search the orders of one customer.

        Results are sorted by date.

        Parameters
        ----------
        customer : str
            The customer id, e.g. "C042".
        status : str
            Only orders in this status,
            e.g. "shipped".
        limit : int
            At most this many orders.

        Returns
        -------
        list
            A list of orders.
        ''',
        "Search the orders of one customer.\n\nResults are sorted by date.\n\n"
        "Returns\n-------\nlist\n    A list of orders.",
    ),
    "numpy-flat": (
        '''Search the orders of one customer.

        Results are sorted by date.

        Parameters
        ----------
        customer : str
        The customer id, e.g. "C042".
        status : str
        Only orders in this status,
        e.g. "shipped".
        limit : int
        At most this many orders.
        ''',
        "Search the orders of one customer.\n\nResults are sorted by date.",
    ),
    "rest": (
        '''Search the orders of one customer.

        Results are sorted by date.

        :param customer: The customer id, e.g. "C042".
        :type customer: str
        :param status: Only orders in this status,
            e.g. "shipped".
        :param limit: At most this many orders.
        :returns: A list of orders.
        ''',
        "Search the orders of one customer.\n\nResults are sorted by date.\n\n"
        ":returns: A list of orders.",
    ),
    "rest-flat": (
        '''Search the orders of one customer.

        Results are sorted by date.

        :param customer: The customer id, e.g. "C042".
        :param status: Only orders in this status,
        e.g. "shipped".
        :param limit: At most this many orders.

        Use list_customers first to find the id.
        ''',
        "Search the orders of one customer.\n\nResults are sorted by date.\n\n"
        "Use list_customers first to find the id.",
    ),
    "epytext": (
        '''Search the orders of one customer.

        Results are sorted by date.

        @param customer: The customer id, e.g. "C042".
        @type customer: str
        @param status: Only orders in this status,
            e.g. "shipped".
        @param limit: At most this many orders.
        @return: A list of orders.
        ''',
        "Search the orders of one customer.\n\nResults are sorted by date.\n\n"
        "@return: A list of orders.",
    ),
    "epytext-flat": (
        '''Search the orders of one customer.

        Results are sorted by date.

        @param customer: The customer id, e.g. "C042".
        @param status: Only orders in this status,
        e.g. "shipped".
        @param limit: At most this many orders.
        ''',
        "Search the orders of one customer.\n\nResults are sorted by date.",
    ),
}
PARAMS = {
    "customer": 'The customer id, e.g. "C042".',
    "status": 'Only orders in this status, e.g. "shipped".',
    "limit": "At most this many orders.",
}


@pytest.mark.parametrize("style", sorted(DOCSTRINGS))
def test_docstring_styles_golden(style):
    doc, description = DOCSTRINGS[style]
    parsed = parse_docstring(doc)
    assert parsed.description == description
    assert parsed.params == PARAMS

    def search_orders(customer: str, status: str = "open", limit: int = 20) -> list[dict]:
        return []

    search_orders.__doc__ = doc
    t = quietly(search_orders)
    assert t.description == description
    assert [p.description for p in t.params] == list(PARAMS.values())


def test_returns_is_read_in_every_style():
    for style in ("google", "numpy", "rest", "epytext"):
        assert parse_docstring(DOCSTRINGS[style][0]).returns == "A list of orders.", style


def test_flush_left_rest_continuation_stays_with_its_parameter():
    t = quietly(search_emails, inject={"inbox": "inbox"})
    assert t.description == (
        "Searches for emails in the inbox that contain the given query in the subject or body."
    )
    sender = t.parameters_schema["properties"]["sender"]["description"]
    assert sender.endswith("Use `search_contacts_by_name` if the email address is unknown.")
    assert "unknown" not in t.description


def test_dataclass_attributes_flush_left_describe_fields():
    def book(room: Room) -> bool:
        """Book a room."""
        return True

    props = quietly(book).parameters_schema["$defs"]["Room"]["properties"]
    assert props["name"]["description"] == "The room's name, as shown on the door."
    assert props["seats"]["description"] == "How many people fit."


def test_docstrings_end_to_end(make_runtime):
    inbox = make_inbox()
    rt = make_runtime([Tool(send_email), Tool(search_emails)], context={"inbox": inbox})
    result = rt.run("[send_email.__doc__, len(search_emails('Lunch', sender='lily@example.com'))]")
    assert result.ok, result.error
    assert result.value == [
        "Sends an email with the given `body` to the given `address`. Returns a dictionary with "
        "the email details.",
        1,
    ]
    stubs = rt.render_stubs()
    intro = stubs.split("def send_email(")[1].split("Args:")[0]
    assert "if the email address is unknown" not in intro
    assert ("cc: The list of email addresses to include in the CC field. If `null`, no email "
            "addresses are included. Use it only for people who must not reply, if the email "
            "address is unknown.") in stubs
    specs = {s["name"]: s for s in rt.tools.function_specs()}
    assert specs["send_email"]["description"].endswith("with the email details.")


# -- 3. stubs show JSON, not host types --------------------------------------------------------


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Invoice(BaseModel):
    id: uuid.UUID
    customer_email: EmailStr
    portal: HttpUrl
    total: decimal.Decimal
    issued: dt.date
    due_at: dt.datetime
    reminder_time: dt.time
    grace: dt.timedelta
    priority: Priority
    server: ipaddress.IPv4Address
    pdf: pathlib.Path
    note: bytes = b""


class Meeting(TypedDict):
    title: str
    starts: dt.datetime
    attendees: list[EmailStr]


@dataclass
class Refund:
    amount: decimal.Decimal
    window: dt.timedelta
    source: ipaddress.IPv6Address
    when: dt.date | None = None


def get_invoice(invoice_id: str) -> Invoice:
    """The invoice with this id."""
    return Invoice(
        id=uuid.UUID(int=7), customer_email="ann@example.com", portal="https://pay.example.com/7",
        total=decimal.Decimal("12.50"), issued=dt.date(2026, 8, 1),
        due_at=dt.datetime(2026, 8, 31, 17, 0), reminder_time=dt.time(9, 0),
        grace=dt.timedelta(days=3, hours=12), priority=Priority.HIGH,
        server=ipaddress.IPv4Address("10.0.0.7"), pdf=pathlib.Path("/invoices/7.pdf"),
        note=b"thanks",
    )


def next_meeting() -> Meeting:
    """The next meeting."""
    return {"title": "Sync", "starts": dt.datetime(2026, 8, 24, 10, 0),
            "attendees": ["ann@example.com"]}


def plan_refund(invoice: Invoice) -> Refund:
    """Plan a refund of an invoice (the model sends the invoice it got)."""
    return Refund(amount=invoice.total, window=dt.timedelta(days=14),
                  source=ipaddress.IPv6Address("2001:db8::1"))


def last_login(user: str) -> dt.datetime:
    """When the user last logged in."""
    return dt.datetime(2026, 8, 23, 22, 15, 30)


def test_stub_renders_json_forms_of_host_types():
    stubs = render_stubs([quietly(f) for f in (get_invoice, next_meeting, plan_refund,
                                               last_login)])
    for line in [
        "    id: str  # UUID",
        "    customer_email: str  # email",
        "    portal: str  # URL",
        "    total: str  # decimal number as text, e.g. '12.50'",
        "    issued: str  # ISO 8601 date",
        "    due_at: str  # ISO 8601 date-time",
        "    reminder_time: str  # ISO 8601 time",
        "    grace: str  # ISO 8601 duration, e.g. 'PT1H30M'",
        "    priority: Literal[1, 2]",
        "    server: str  # IPv4 address",
        "    pdf: str  # file path",
        "    note: NotRequired[str]  # bytes as UTF-8 text",
        "    starts: str  # ISO 8601 date-time",
        "    attendees: list[str]  # email",
        "    window: str  # ISO 8601 duration, e.g. 'PT1H30M'",
        "    source: str  # IPv6 address",
        "    when: NotRequired[str | None]  # ISO 8601 date",
        "def last_login(user: str) -> str:  # ISO 8601 date-time",
        "def plan_refund(invoice: Invoice) -> Refund:",
    ]:
        assert line in stubs.splitlines(), line
    for host in ("datetime", "Decimal", "UUID", "EmailStr", "HttpUrl", "timedelta", "IPv4Address",
                 "Path", "bytes", "Priority"):
        assert not re.search(rf"[:\[|] *{host}\b", stubs), host
    namespace: dict[str, Any] = {}
    exec("from typing import Any, Literal, NotRequired, TypedDict\n" + stubs, namespace)


def _stub_fields(stubs: str, cls: str) -> dict[str, str]:
    """``field -> rendered type`` of one ``class X(TypedDict)`` in stubs."""
    body = stubs.split(f"class {cls}(TypedDict):\n")[1].split("\n\n")[0]
    out = {}
    for line in body.splitlines():
        match = re.match(r"    (\w+): ([^#]+?)(  #.*)?$", line)
        if match:
            out[match.group(1)] = match.group(2)
    return out


def test_stubs_end_to_end_script_receives_what_the_stub_says(make_runtime):
    tools = [quietly(f) for f in (get_invoice, next_meeting, plan_refund, last_login)]
    rt = make_runtime(tools)
    code = (
        "inv = get_invoice('7')\n"
        "meet = next_meeting()\n"
        "ref = plan_refund(inv)\n"
        "types = {}\n"
        "for name, rec in [('Invoice', inv), ('Meeting', meet), ('Refund', ref)]:\n"
        "    types[name] = {k: type(v).__name__ for k, v in rec.items()}\n"
        "[types, inv['due_at'][:10], inv['total'], ref['window'], last_login('ann')[:4]]"
    )
    result = rt.run(code)
    assert result.ok, result.error
    types, due_day, total, window, year = result.value
    assert (due_day, total, window, year) == ("2026-08-31", "12.50", "P14D", "2026")
    stubs = rt.render_stubs()
    for cls, received in types.items():
        shown = _stub_fields(stubs, cls)
        for name, kind in received.items():
            rendered = shown[name].removeprefix("NotRequired[").removesuffix("]")
            expected = {"str": "str", "int": "Literal", "list": "list", "NoneType": "None"}[kind]
            assert expected in rendered, (cls, name, kind, rendered)


# -- 4. strict validation, stated --------------------------------------------------------------


class Currency(enum.Enum):
    EUR = "EUR"
    USD = "USD"


def transfer(
    iban: str, amount: int, currency: Currency = Currency.EUR, note: str | None = None,
    express: bool = False,
) -> dict:
    """Transfer money.

    :param iban: IBAN of the recipient
    :param amount: Amount in cents
    """
    return {"iban": iban, "amount": amount, "currency": currency.value}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"iban": "GB29", "amount": "50"},
         "argument 'amount': expected an integer, got the string '50' — write 50"),
        ({"iban": "GB29", "amount": 5.0},
         "argument 'amount': expected an integer, got the float 5.0 — write 5"),
        ({"iban": "GB29", "amount": 5.5},
         "argument 'amount': expected an integer, got the float 5.5 — an integer has no "
         "fraction: send a whole number"),
        ({"iban": 4029, "amount": 5},
         "argument 'iban': expected a string, got the integer 4029 — write '4029'"),
        ({"iban": "GB29", "amount": 5, "express": "yes"},
         "argument 'express': expected a boolean (True or False), got the string 'yes' — "
         "write True"),
        ({"iban": "GB29", "amount": 5, "currency": "eur"},
         "argument 'currency': expected one of 'EUR', 'USD', got 'eur' — write 'EUR'"),
        ({"iban": "GB29", "amount": 5, "note": 7},
         "argument 'note': expected a string or None, got the integer 7 — write '7'"),
        ({"iban": "GB29", "amount": 5, "ammount": 5},
         "unexpected argument 'ammount': did you mean 'amount'? (accepted arguments: amount, "
         "currency, express, iban, note)"),
        ({"iban": "GB29"}, "missing required argument 'amount' (an integer)"),
    ],
)
def test_validation_messages_say_what_to_send(args, message):
    t = quietly(transfer)
    problems = t.problems(args)
    assert [str(p) for p in problems] == [message]


def test_nested_record_fields_get_the_same_wording():
    problems = quietly(ship).problems({"to": {"city": "Lyon", "zip": "69001"}})
    assert [str(p) for p in problems] == [
        "missing required field 'to.zip_code' (a string)",
        "unexpected field 'to.zip': did you mean 'zip_code'? (accepted fields: city, zip_code)",
    ]


def test_validation_end_to_end(make_runtime):
    rt = make_runtime([quietly(transfer)])
    code = (
        "out = []\n"
        "for kwargs in [{'amount': '50'}, {'amount': 5.0}, {'amount': 5, 'ammount': 5},\n"
        "               {'amount': 5, 'currency': 'usd'}]:\n"
        "    try:\n"
        "        transfer('GB29', **kwargs)\n"
        "    except ToolArgumentError as e:\n"
        "        out.append(str(e))\n"
        "out.append(transfer('GB29', 50)['amount'])\n"
        "out"
    )
    result = rt.run(code)
    assert result.ok, result.error
    first, second, third, fourth, done = result.value
    assert "expected an integer, got the string '50' — write 50" in first
    assert "expected an integer, got the float 5.0 — write 5" in second
    assert "did you mean 'amount'? (accepted arguments: amount, currency, express, iban, " in third
    assert "got 'usd' — write 'USD'" in fourth
    assert done == 50
    assert [r.error.type for r in result.tool_calls[:4]] == ["invalid_arguments"] * 4
    with rt.session() as session:
        record = session.call_tool("transfer", {"iban": "GB29", "amount": "50"})
        assert record.error is not None and "— write 50" in record.error.message


def test_host_type_parameters_are_refused_with_the_fix():
    def remind(at: dt.datetime) -> None:
        """Remind."""

    with pytest.raises(SchemaError, match=r"ISO 8601 date-time.*datetime.fromisoformat\(value\)"):
        Tool(remind)


def test_host_values_in_plain_results_are_sent_as_pydantic_sends_them():
    values = [
        dt.timedelta(days=3, hours=12), dt.timedelta(seconds=-90.5), dt.timedelta(0),
        decimal.Decimal("12.50"), uuid.UUID(int=7), ipaddress.IPv4Address("10.0.0.7"),
        ipaddress.IPv6Network("2001:db8::/32"), ipaddress.IPv4Interface("10.0.0.1/24"),
        pathlib.Path("/invoices/7.pdf"), b"thanks",
    ]
    adapter = pydantic.TypeAdapter(list[Any])
    assert to_jsonable(values) == adapter.dump_python(values, mode="json")


def test_a_script_can_send_back_the_date_times_it_received():
    def reschedule(at: Annotated[str, Field(format="date-time")],
                   daily: Annotated[str, Field(format="time")] = "09:00:00") -> str:
        """Move the meeting."""
        return at

    t = quietly(reschedule)
    naive = dt.datetime(2026, 8, 24, 9, 30).isoformat()  # what a script's datetime gives
    assert t.problems({"at": naive}) == []
    assert t.problems({"at": naive + "Z", "daily": "17:45:00.250"}) == []
    assert [str(p) for p in t.problems({"at": "2026-02-30T09:00:00"})] == [
        "argument 'at': '2026-02-30T09:00:00' is not a 'date-time'"
    ]
    assert t.problems({"at": "2026-08-24"}) != []  # a date is not a date-time


@pytest.mark.parametrize(
    ("value", "types", "reason"),
    [
        ("9.50", "number", "expected a number, got the string '9.50' — write 9.5"),
        ("007", "integer", "expected an integer, got the string '007' — write 7"),
        (1, "boolean", "expected a boolean (True or False), got the integer 1 — write True"),
        (True, "integer", "expected an integer, got the boolean True"),
        ('{"a": 1}', "object", "expected a dict, got the string '{\"a\": 1}' — write the dict "
                               "itself, not its JSON text"),
        ('["a"]', "array", "expected a list, got the string '[\"a\"]' — write the list itself, "
                           "not its JSON text"),
        ("a", "array", "expected a list, got the string 'a' — for one item, write ['a']"),
        (10**80, "string", "— write the same value as a string"),
    ],
)
def test_type_mismatch_wording(value, types, reason):
    assert type_reason(value, types).endswith(reason)


HOME = Address(city="Lyon", zip_code="69001")


def ship_home(to: Address = HOME) -> str:
    """Ship to an address, by default the office."""
    return to.city


def test_a_module_level_default_is_a_value_not_state():
    quietly(ship_home)
