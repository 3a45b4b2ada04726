"""The token-economy task set (see ``benchmarks/token_economy.py``)."""

from __future__ import annotations

from .base import Task
from .expenses import TASK as EXPENSES
from .inventory import TASK as INVENTORY
from .store_revenue import TASK as STORE_REVENUE
from .weather import TASK as WEATHER

TASKS: list[Task] = [STORE_REVENUE, EXPENSES, INVENTORY, WEATHER]

__all__ = ["TASKS", "Task"]
