"""A realistic, deterministic tool set for the conformance corpus.

The functions below are plain Python functions with type hints and Google-style
docstrings, the shape a user registers with ``Runtime(tools=[...])``. Every
result is JSON data (dicts, lists, strings, numbers, booleans, ``None``) and is
a pure function of the arguments: data are derived from SHA-256 hashes of the
arguments, never from ``random``'s global state, so two runs (or two
processes, or two backends) see exactly the same numbers.

Some inputs raise, as real back ends do (business errors, not bugs):

* unknown ids raise ``KeyError`` (``get_store_info``, ``get_daily_revenue``,
  ``get_expenses``, ``get_inventory``, ``get_customer``);
* malformed input raises ``ValueError`` (bad dates or months, unknown
  departments, cities, currencies, order statuses, ticket priorities, e-mail
  addresses);
* ``get_daily_revenue`` raises ``ValueError`` for a date before the store
  opened (ST017 opened 2026-03-16, ST020 opened 2026-06-01) or after
  2026-12-31;
* ``get_customer`` raises ``KeyError`` for the deleted customers C013, C027,
  C044 and for ids beyond C060; ``ValueError`` for ids not shaped ``C`` + digits.

The write tools ``send_email`` and ``create_ticket`` append to the module-level
``OUTBOX`` (clear it with :func:`reset_outbox`) and return ids derived from a
hash of their arguments, so ids do not depend on call history.

Exports: ``ALL_TOOLS`` (every tool, in a stable order), ``WRITE_TOOLS`` (the tools
with side effects; the rest are read-only).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import math
from typing import Any

__all__ = [
    "ALL_TOOLS",
    "OUTBOX",
    "READ_ONLY_TOOLS",
    "WRITE_TOOLS",
    "convert_currency",
    "create_ticket",
    "get_budget",
    "get_customer",
    "get_daily_revenue",
    "get_expenses",
    "get_inventory",
    "get_store_info",
    "get_weather",
    "list_customers",
    "list_employees",
    "list_products",
    "list_stores",
    "reset_outbox",
    "search_orders",
    "send_email",
]

# ---------------------------------------------------------------------------
# deterministic pseudo-randomness


def _h(*parts: object) -> int:
    """A stable 48-bit integer derived from the parts."""
    key = "|".join(str(p) for p in parts).encode()
    return int(hashlib.sha256(key).hexdigest()[:12], 16)


def _u(*parts: object) -> float:
    """A stable float in [0, 1) derived from the parts."""
    return _h(*parts) / float(1 << 48)


def _pick(seq: list[Any] | tuple[Any, ...], *parts: object) -> Any:
    return seq[_h(*parts) % len(seq)]


# ---------------------------------------------------------------------------
# static data

_CITIES = {
    "Shanghai": "East",
    "Hangzhou": "East",
    "Nanjing": "East",
    "Beijing": "North",
    "Tianjin": "North",
    "Shenzhen": "South",
    "Guangzhou": "South",
    "Chengdu": "West",
    "Wuhan": "Central",
    "Xi'an": "West",
}
_CITY_CLIMATE = {  # mean high in January and July, rainy-day share
    "Shanghai": (8, 33, 0.35),
    "Hangzhou": (9, 34, 0.38),
    "Nanjing": (7, 33, 0.33),
    "Beijing": (2, 31, 0.2),
    "Tianjin": (2, 31, 0.2),
    "Shenzhen": (20, 32, 0.4),
    "Guangzhou": (18, 33, 0.42),
    "Chengdu": (10, 30, 0.37),
    "Wuhan": (8, 34, 0.34),
    "Xi'an": (5, 32, 0.22),
}
_STORE_CITIES = [
    "Shanghai",
    "Beijing",
    "Shenzhen",
    "Hangzhou",
    "Chengdu",
    "Guangzhou",
    "Wuhan",
    "Nanjing",
    "Xi'an",
    "Tianjin",
    "Shanghai",
    "Beijing",
    "Shenzhen",
    "Chengdu",
    "Hangzhou",
    "Guangzhou",
    "Shanghai",
    "Wuhan",
    "Nanjing",
    "Beijing",
]
_STORE_SUFFIX = ["Central", "Riverside", "Airport", "Mall", "Station", "Harbour", "Park"]
_FIRST = [
    "Wei",
    "Fang",
    "Min",
    "Jing",
    "Lei",
    "Yan",
    "Hao",
    "Xin",
    "Tao",
    "Li",
    "Ying",
    "Jun",
    "Mei",
    "Qiang",
    "Hui",
    "Lin",
    "Bo",
    "Na",
    "Kai",
    "Rui",
    "Ana",
    "Ben",
    "Chloe",
    "David",
    "Elena",
]
_LAST = [
    "Wang",
    "Li",
    "Zhang",
    "Liu",
    "Chen",
    "Yang",
    "Zhao",
    "Huang",
    "Zhou",
    "Wu",
    "Xu",
    "Sun",
    "Ma",
    "Zhu",
    "Hu",
    "Guo",
    "He",
    "Lin",
    "Gao",
    "Luo",
]
_DEPARTMENTS = ["Sales", "Engineering", "Marketing", "Operations", "Finance", "HR"]
_DEPT_SIZES = {
    "Sales": 14,
    "Engineering": 12,
    "Marketing": 7,
    "Operations": 9,
    "Finance": 5,
    "HR": 3,
}
_TITLES = {
    "Sales": ["Sales Associate", "Account Manager", "Store Manager"],
    "Engineering": ["Software Engineer", "Senior Engineer", "Data Engineer"],
    "Marketing": ["Marketing Specialist", "Brand Manager", "Content Lead"],
    "Operations": ["Logistics Coordinator", "Warehouse Lead", "Ops Analyst"],
    "Finance": ["Accountant", "Financial Analyst", "Controller"],
    "HR": ["HR Partner", "Recruiter", "HR Lead"],
}
_EXPENSE_CATEGORIES = ["travel", "meals", "software", "equipment", "training", "office"]
_EXPENSE_RANGE = {
    "travel": (300, 4200),
    "meals": (40, 680),
    "software": (90, 2400),
    "equipment": (150, 6800),
    "training": (500, 5200),
    "office": (20, 450),
}
_PRODUCTS = [
    ("Espresso Beans 1kg", "coffee", 128.0),
    ("Drip Coffee Pack", "coffee", 59.0),
    ("Cold Brew Bottle", "coffee", 18.5),
    ("Oolong Tea Tin", "tea", 88.0),
    ("Green Tea Bags", "tea", 35.0),
    ("Matcha Powder", "tea", 142.0),
    ("Ceramic Mug", "ware", 45.0),
    ("Travel Tumbler", "ware", 129.0),
    ("Glass Teapot", "ware", 168.0),
    ("Pour-over Kettle", "ware", 299.0),
    ("Burr Grinder", "equipment", 899.0),
    ("Milk Frother", "equipment", 239.0),
    ("Moka Pot", "equipment", 199.0),
    ("Scale with Timer", "equipment", 159.0),
    ("Almond Croissant", "bakery", 22.0),
    ("Butter Cookie Box", "bakery", 68.0),
    ("Mooncake Gift Set", "bakery", 258.0),
    ("Chocolate Bar", "snacks", 26.0),
    ("Roasted Nuts", "snacks", 39.0),
    ("Dried Mango", "snacks", 29.0),
    ("Filter Papers x100", "supplies", 19.9),
    ("Descaler", "supplies", 49.0),
    ("Cleaning Brush", "supplies", 15.0),
    ("Gift Card 100", "gift", 100.0),
]
_WAREHOUSES = ["WH-East", "WH-North", "WH-South"]
_ORDER_STATUSES = ["pending", "shipped", "delivered", "cancelled"]
_TIERS = ["bronze", "silver", "gold", "platinum"]
_DELETED_CUSTOMERS = {"C013", "C027", "C044"}
_NUM_CUSTOMERS = 60
_RATES_TO_CNY = {
    "CNY": 1.0,
    "USD": 7.2,
    "EUR": 7.8,
    "GBP": 9.1,
    "JPY": 0.048,
    "HKD": 0.92,
    "SGD": 5.35,
}
_CONDITIONS = ["sunny", "cloudy", "overcast", "light rain", "heavy rain", "windy"]
_PRIORITIES = ["low", "medium", "high", "urgent"]
_FIRST_DAY = _dt.date(2025, 1, 1)
_LAST_DAY = _dt.date(2026, 12, 31)


def _build_employees() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    n = 0
    for dept in _DEPARTMENTS:
        for j in range(_DEPT_SIZES[dept]):
            n += 1
            eid = f"E{n:03d}"
            first = _FIRST[(n * 7) % len(_FIRST)]
            last = _LAST[(n * 3 + j) % len(_LAST)]
            titles = _TITLES[dept]
            title = titles[-1] if j == 0 else titles[_h("title", eid) % 2]
            hire = _FIRST_DAY - _dt.timedelta(days=_h("hire", eid) % 3000)
            base = {
                "Engineering": 32000,
                "Finance": 26000,
                "Marketing": 22000,
                "Operations": 18000,
                "Sales": 15000,
                "HR": 20000,
            }[dept]
            salary = base + (_h("salary", eid) % 40) * 500 + (6000 if j == 0 else 0)
            rows.append(
                {
                    "employee_id": eid,
                    "name": f"{first} {last}",
                    "department": dept,
                    "title": title,
                    "email": f"{first.lower()}.{last.lower()}{n}@example.com",
                    "hire_date": hire.isoformat(),
                    "monthly_salary": salary,
                    "manager_id": None,
                    "store_id": None,
                }
            )
    # the first employee of each department manages the others
    heads = {r["department"]: r["employee_id"] for r in reversed(rows)}
    for r in rows:
        if r["employee_id"] != heads[r["department"]]:
            r["manager_id"] = heads[r["department"]]
    # sales staff are assigned to stores
    sales = [r for r in rows if r["department"] == "Sales"]
    for i, r in enumerate(sales):
        r["store_id"] = f"ST{(i % 20) + 1:03d}"
    return rows


_EMPLOYEES = _build_employees()
_EMP_BY_ID = {e["employee_id"]: e for e in _EMPLOYEES}


def _build_stores() -> list[dict[str, Any]]:
    stores = []
    sales = [e for e in _EMPLOYEES if e["department"] == "Sales"]
    used: set[tuple[str, str]] = set()
    for i, city in enumerate(_STORE_CITIES, start=1):
        sid = f"ST{i:03d}"
        k = _h("suffix", sid)
        while (city, _STORE_SUFFIX[k % len(_STORE_SUFFIX)]) in used:
            k += 1
        suffix = _STORE_SUFFIX[k % len(_STORE_SUFFIX)]
        used.add((city, suffix))
        opened = _dt.date(2018, 1, 1) + _dt.timedelta(days=_h("opened", sid) % 2200)
        if sid == "ST017":
            opened = _dt.date(2026, 3, 16)
        if sid == "ST020":
            opened = _dt.date(2026, 6, 1)
        stores.append(
            {
                "store_id": sid,
                "name": f"{city} {suffix}",
                "city": city,
                "region": _CITIES[city],
                "opened": opened.isoformat(),
                "size_sqm": 80 + _h("sqm", sid) % 260,
                "manager_id": sales[(i - 1) % len(sales)]["employee_id"],
                "base_revenue": 18000 + (_h("base", sid) % 70) * 500,
                "status": "renovation" if sid == "ST009" else "open",
            }
        )
    return stores


_STORES = _build_stores()
_STORE_BY_ID = {s["store_id"]: s for s in _STORES}

OUTBOX: list[dict[str, Any]] = []


def reset_outbox() -> None:
    """Forget every message and ticket the write tools recorded."""
    OUTBOX.clear()


def _parse_date(date: str) -> _dt.date:
    try:
        d = _dt.date.fromisoformat(date)
    except (TypeError, ValueError):
        raise ValueError(f"invalid date {date!r}; expected YYYY-MM-DD") from None
    return d


def _parse_month(month: str) -> tuple[int, int]:
    parts = month.split("-") if isinstance(month, str) else []
    if len(parts) != 2 or not all(p.isdigit() for p in parts) or len(parts[0]) != 4:
        raise ValueError(f"invalid month {month!r}; expected YYYY-MM")
    y, m = int(parts[0]), int(parts[1])
    if not 1 <= m <= 12:
        raise ValueError(f"invalid month {month!r}; expected YYYY-MM")
    return y, m


# ---------------------------------------------------------------------------
# stores and revenue


def list_stores() -> list[dict]:
    """List every store of the chain.

    Returns:
        One dict per store with store_id, name, city, region and opened (ISO date).
    """
    return [{k: s[k] for k in ("store_id", "name", "city", "region", "opened")} for s in _STORES]


def get_store_info(store_id: str) -> dict:
    """Details of one store.

    Args:
        store_id: Store id such as "ST001".

    Returns:
        store_id, name, city, region, opened, size_sqm, manager_id, status
        ("open" or "renovation").
    """
    s = _STORE_BY_ID.get(store_id)
    if s is None:
        raise KeyError(f"unknown store {store_id}")
    return {k: v for k, v in s.items() if k != "base_revenue"}


def get_daily_revenue(store_id: str, date: str) -> dict:
    """Revenue of one store on one day, in yuan.

    Args:
        store_id: Store id such as "ST001".
        date: Day as YYYY-MM-DD, between the store's opening date and 2026-12-31.

    Returns:
        store_id, date, revenue_yuan (float), transactions (int), avg_ticket (float)
        and closed (bool; a closed day has zero revenue).
    """
    s = _STORE_BY_ID.get(store_id)
    if s is None:
        raise KeyError(f"unknown store {store_id}")
    d = _parse_date(date)
    if d > _LAST_DAY:
        raise ValueError(f"no revenue data after {_LAST_DAY.isoformat()}")
    if d < _dt.date.fromisoformat(s["opened"]):
        raise ValueError(f"{store_id} has no data before its opening date {s['opened']}")
    closed = (s["status"] == "renovation" and d.month in (7, 8)) or _u(
        "closed", store_id, date
    ) < 0.03
    if closed:
        return {
            "store_id": store_id,
            "date": d.isoformat(),
            "revenue_yuan": 0.0,
            "transactions": 0,
            "avg_ticket": 0.0,
            "closed": True,
        }
    weekday_factor = [0.86, 0.9, 0.93, 0.97, 1.12, 1.38, 1.29][d.weekday()]
    season = 1.0 + 0.12 * (d.month in (1, 2, 10, 12)) - 0.06 * (d.month in (3, 6))
    noise = 0.8 + 0.4 * _u("rev", store_id, date)
    revenue = round(s["base_revenue"] * weekday_factor * season * noise, 2)
    ticket = 48 + (_h("ticket", store_id) % 40) + 10 * _u("tk", store_id, date)
    transactions = max(1, int(revenue / ticket))
    return {
        "store_id": store_id,
        "date": d.isoformat(),
        "revenue_yuan": revenue,
        "transactions": transactions,
        "avg_ticket": round(revenue / transactions, 2),
        "closed": False,
    }


# ---------------------------------------------------------------------------
# people, expenses and budgets


def list_employees(department: str | None = None) -> list[dict]:
    """List employees, optionally of one department.

    Args:
        department: One of Sales, Engineering, Marketing, Operations, Finance, HR;
            None lists everyone.

    Returns:
        One dict per employee: employee_id, name, department, title, email,
        hire_date, monthly_salary, manager_id (None for a department head) and
        store_id (None outside Sales).
    """
    if department is not None and department not in _DEPARTMENTS:
        raise ValueError(f"unknown department {department!r}; valid: {', '.join(_DEPARTMENTS)}")
    return [dict(e) for e in _EMPLOYEES if department is None or e["department"] == department]


def get_expenses(employee_id: str, month: str) -> list[dict]:
    """Expense claims filed by one employee in one month.

    Args:
        employee_id: Employee id such as "E007".
        month: Month as YYYY-MM.

    Returns:
        Claims with expense_id, employee_id, date, category, amount, currency
        ("CNY", "USD" or "EUR"), description and approved (bool).
    """
    if employee_id not in _EMP_BY_ID:
        raise KeyError(f"unknown employee {employee_id}")
    y, m = _parse_month(month)
    count = _h("nexp", employee_id, month) % 6
    claims = []
    for i in range(count):
        cat = _pick(_EXPENSE_CATEGORIES, "cat", employee_id, month, i)
        lo, hi = _EXPENSE_RANGE[cat]
        amount = round(lo + (hi - lo) * _u("amt", employee_id, month, i), 2)
        cur_roll = _u("cur", employee_id, month, i)
        currency = "USD" if cur_roll < 0.12 else "EUR" if cur_roll < 0.18 else "CNY"
        if currency != "CNY":
            amount = round(amount / _RATES_TO_CNY[currency], 2)
        day = 1 + _h("day", employee_id, month, i) % 28
        claims.append(
            {
                "expense_id": f"X{_h('xid', employee_id, month, i) % 10**6:06d}",
                "employee_id": employee_id,
                "date": f"{y:04d}-{m:02d}-{day:02d}",
                "category": cat,
                "amount": amount,
                "currency": currency,
                "description": f"{cat} expense #{i + 1}",
                "approved": _u("appr", employee_id, month, i) < 0.8,
            }
        )
    claims.sort(key=lambda c: (c["date"], c["expense_id"]))
    return claims


def get_budget(department: str) -> dict:
    """Annual budget of one department for 2026, in yuan.

    Args:
        department: One of Sales, Engineering, Marketing, Operations, Finance, HR.

    Returns:
        department, year, annual_budget, monthly_budget, spent_ytd, as_of and currency.
    """
    if department not in _DEPARTMENTS:
        raise ValueError(f"unknown department {department!r}; valid: {', '.join(_DEPARTMENTS)}")
    annual = _DEPT_SIZES[department] * 12 * (2500 + _h("budget", department) % 1500)
    spent = round(annual * (0.45 + 0.4 * _u("spent", department)), 2)
    return {
        "department": department,
        "year": 2026,
        "annual_budget": annual,
        "monthly_budget": round(annual / 12, 2),
        "spent_ytd": spent,
        "as_of": "2026-08-31",
        "currency": "CNY",
    }


# ---------------------------------------------------------------------------
# products, inventory, customers, orders


def list_products(category: str | None = None) -> list[dict]:
    """List products of the catalogue.

    Args:
        category: Optional category filter (coffee, tea, ware, equipment, bakery,
            snacks, supplies, gift).

    Returns:
        One dict per product: sku, name, category, price.
    """
    out = []
    for i, (name, cat, price) in enumerate(_PRODUCTS):
        if category is None or cat == category:
            out.append({"sku": f"SKU-{1001 + i}", "name": name, "category": cat, "price": price})
    return out


def get_inventory(sku: str) -> dict:
    """Stock level of one product across warehouses.

    Args:
        sku: Product code such as "SKU-1001".

    Returns:
        sku, name, on_hand (total units), reorder_point, unit_cost, warehouses
        (a dict of warehouse -> units) and last_restock (ISO date).
    """
    idx = None
    if isinstance(sku, str) and sku.startswith("SKU-") and sku[4:].isdigit():
        idx = int(sku[4:]) - 1001
    if idx is None or not 0 <= idx < len(_PRODUCTS):
        raise KeyError(f"unknown sku {sku}")
    name, _cat, price = _PRODUCTS[idx]
    by_wh = {wh: _h("stock", sku, wh) % 120 for wh in _WAREHOUSES}
    return {
        "sku": sku,
        "name": name,
        "on_hand": sum(by_wh.values()),
        "reorder_point": 60 + _h("rop", sku) % 120,
        "unit_cost": round(price * (0.42 + 0.2 * _u("cost", sku)), 2),
        "warehouses": by_wh,
        "last_restock": (
            _dt.date(2026, 8, 31) - _dt.timedelta(days=_h("restock", sku) % 90)
        ).isoformat(),
    }


def _customer_index(customer_id: str) -> int:
    if not (
        isinstance(customer_id, str)
        and len(customer_id) >= 2
        and customer_id[0] == "C"
        and customer_id[1:].isdigit()
    ):
        raise ValueError(f"malformed customer id {customer_id!r}; expected C followed by digits")
    n = int(customer_id[1:])
    if customer_id in _DELETED_CUSTOMERS:
        raise KeyError(f"customer {customer_id} was deleted")
    if not 1 <= n <= _NUM_CUSTOMERS:
        raise KeyError(f"unknown customer {customer_id}")
    return n


def _customer(n: int) -> dict[str, Any]:
    cid = f"C{n:03d}"
    first = _FIRST[_h("cf", cid) % len(_FIRST)]
    last = _LAST[_h("cl", cid) % len(_LAST)]
    city = _pick(list(_CITIES), "ccity", cid)
    since = _dt.date(2019, 1, 1) + _dt.timedelta(days=_h("since", cid) % 2500)
    return {
        "customer_id": cid,
        "name": f"{first} {last}",
        "email": f"{cid.lower()}@mail.example",
        "city": city,
        "tier": _TIERS[min(3, int(4 * _u("tier", cid) ** 1.6))],
        "since": since.isoformat(),
        "lifetime_value": round(200 + 30000 * _u("ltv", cid) ** 2, 2),
    }


def list_customers(tier: str | None = None) -> list[dict]:
    """List active customers (id, name, tier and city), optionally of one tier.

    Args:
        tier: Optional loyalty tier filter: bronze, silver, gold or platinum.

    Returns:
        One dict per customer with customer_id, name, tier and city.
    """
    if tier is not None and tier not in _TIERS:
        raise ValueError(f"unknown tier {tier!r}; valid: {', '.join(_TIERS)}")
    out = []
    for n in range(1, _NUM_CUSTOMERS + 1):
        cid = f"C{n:03d}"
        if cid in _DELETED_CUSTOMERS:
            continue
        c = _customer(n)
        if tier is None or c["tier"] == tier:
            out.append({k: c[k] for k in ("customer_id", "name", "tier", "city")})
    return out


def get_customer(customer_id: str) -> dict:
    """Profile of one customer.

    Args:
        customer_id: Customer id such as "C001".

    Returns:
        customer_id, name, email, city, tier, since (ISO date) and lifetime_value.
        Raises KeyError for unknown or deleted customers, ValueError for a
        malformed id.
    """
    return _customer(_customer_index(customer_id))


def search_orders(customer_id: str, status: str = "any") -> list[dict]:
    """Orders of one customer, newest first.

    Args:
        customer_id: Customer id such as "C001".
        status: "any", "pending", "shipped", "delivered" or "cancelled".

    Returns:
        Orders with order_id, customer_id, date, status, items (list of sku, qty,
        unit_price) and total.
    """
    if status != "any" and status not in _ORDER_STATUSES:
        raise ValueError(f"invalid status {status!r}; valid: any, {', '.join(_ORDER_STATUSES)}")
    n = _customer_index(customer_id)
    orders = []
    for i in range(_h("norders", customer_id) % 7):
        d = _dt.date(2026, 8, 31) - _dt.timedelta(days=_h("odate", customer_id, i) % 240)
        age = (_dt.date(2026, 8, 31) - d).days
        roll = _u("ostat", customer_id, i)
        if roll < 0.08:
            st = "cancelled"
        elif age < 10:
            st = "pending"
        elif age < 21:
            st = "shipped"
        else:
            st = "delivered"
        items = []
        for j in range(1 + _h("nitems", customer_id, i) % 3):
            p = _h("sku", customer_id, i, j) % len(_PRODUCTS)
            items.append(
                {
                    "sku": f"SKU-{1001 + p}",
                    "qty": 1 + _h("qty", customer_id, i, j) % 4,
                    "unit_price": _PRODUCTS[p][2],
                }
            )
        total = round(sum(it["qty"] * it["unit_price"] for it in items), 2)
        orders.append(
            {
                "order_id": f"O{n:03d}{i:02d}",
                "customer_id": customer_id,
                "date": d.isoformat(),
                "status": st,
                "items": items,
                "total": total,
            }
        )
    orders.sort(key=lambda o: (o["date"], o["order_id"]), reverse=True)
    return [o for o in orders if status == "any" or o["status"] == status]


# ---------------------------------------------------------------------------
# weather and currency


def get_weather(city: str, date: str) -> dict:
    """Daily weather of a city.

    Args:
        city: One of the chain's cities (e.g. "Shanghai", "Beijing", "Xi'an").
        date: Day as YYYY-MM-DD.

    Returns:
        city, date, condition, temp_high_c, temp_low_c, precipitation_mm.
    """
    if city not in _CITY_CLIMATE:
        raise ValueError(f"unknown city {city!r}")
    d = _parse_date(date)
    jan, jul, rainy = _CITY_CLIMATE[city]
    # cosine between January (coldest) and July (hottest)
    phase = (d.timetuple().tm_yday - 15) / 365.0
    seasonal = jan + (jul - jan) * (1 - _cos_approx(phase)) / 2
    high = round(seasonal + 6 * (_u("hi", city, date) - 0.5), 1)
    low = round(high - 5 - 5 * _u("lo", city, date), 1)
    wet = _u("wet", city, date) < rainy
    if wet:
        precip = round(0.5 + 30 * _u("mm", city, date) ** 2, 1)
        condition = "heavy rain" if precip > 12 else "light rain"
    else:
        precip = 0.0
        condition = _pick(["sunny", "cloudy", "overcast", "windy"], "cond", city, date)
    return {
        "city": city,
        "date": d.isoformat(),
        "condition": condition,
        "temp_high_c": high,
        "temp_low_c": low,
        "precipitation_mm": precip,
    }


def _cos_approx(turns: float) -> float:
    return math.cos(2 * math.pi * turns)


def convert_currency(amount: float, from_currency: str, to_currency: str) -> float:
    """Convert an amount between currencies at the fixed reference rates.

    Args:
        amount: Amount in from_currency.
        from_currency: ISO code: CNY, USD, EUR, GBP, JPY, HKD or SGD.
        to_currency: ISO code: CNY, USD, EUR, GBP, JPY, HKD or SGD.

    Returns:
        The converted amount rounded to 2 decimals.
    """
    for code in (from_currency, to_currency):
        if code not in _RATES_TO_CNY:
            raise ValueError(f"unsupported currency {code!r}")
    return round(amount * _RATES_TO_CNY[from_currency] / _RATES_TO_CNY[to_currency], 2)


# ---------------------------------------------------------------------------
# write tools


def send_email(to: str, subject: str, body: str) -> dict:
    """Queue an e-mail (a write action).

    Args:
        to: Recipient address.
        subject: Subject line.
        body: Plain-text body.

    Returns:
        message_id, to and status ("queued").
    """
    if "@" not in to or to.startswith("@") or to.endswith("@"):
        raise ValueError(f"invalid e-mail address {to!r}")
    if not subject.strip():
        raise ValueError("subject must not be empty")
    message_id = f"MSG-{_h('mail', to, subject, body) % 16**8:08x}"
    OUTBOX.append({"kind": "email", "id": message_id, "to": to, "subject": subject, "body": body})
    return {"message_id": message_id, "to": to, "status": "queued"}


def create_ticket(title: str, priority: str) -> dict:
    """Open a support ticket (a write action).

    Args:
        title: Short description of the problem.
        priority: "low", "medium", "high" or "urgent".

    Returns:
        ticket_id, title, priority and status ("open").
    """
    if priority not in _PRIORITIES:
        raise ValueError(f"invalid priority {priority!r}; valid: {', '.join(_PRIORITIES)}")
    ticket_id = f"TCK-{_h('ticket', title, priority) % 100000:05d}"
    OUTBOX.append({"kind": "ticket", "id": ticket_id, "title": title, "priority": priority})
    return {"ticket_id": ticket_id, "title": title, "priority": priority, "status": "open"}


READ_ONLY_TOOLS = [
    list_stores,
    get_store_info,
    get_daily_revenue,
    list_employees,
    get_expenses,
    get_budget,
    list_products,
    get_inventory,
    list_customers,
    get_customer,
    search_orders,
    get_weather,
    convert_currency,
]
WRITE_TOOLS = [send_email, create_ticket]
ALL_TOOLS = READ_ONLY_TOOLS + WRITE_TOOLS
