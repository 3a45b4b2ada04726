"""Control task: three small lookups. Little data, so little to save."""

from __future__ import annotations

from typing import Any

from toolscript import tool

from .base import Task, answer, calls, script

_FORECASTS = {"Paris": 24.5, "Berlin": 21.0, "Madrid": 31.5}


@tool(read_only=True)
def get_forecast(city: str) -> dict[str, Any]:
    """Tomorrow's forecast for a city (max temperature in °C).

    Args:
        city: City name, e.g. "Paris".
    """
    return {"city": city, "max_c": _FORECASTS.get(city, 20.0)}


EXPECTED = "Madrid"
_ANSWER = "Madrid will be the warmest tomorrow (31.5 °C)."

TASK = Task(
    name="warmest_city_3",
    prompt="Which of Paris, Berlin and Madrid will be warmest tomorrow?",
    tools=[get_forecast],
    data_heavy=False,
    classic=[
        calls(*[("get_forecast", {"city": c}) for c in ("Paris", "Berlin", "Madrid")]),
        answer(_ANSWER),
    ],
    programmatic=[
        script("max(['Paris', 'Berlin', 'Madrid'], key=lambda c: get_forecast(c)['max_c'])"),
        answer(_ANSWER),
    ],
    expected=EXPECTED,
    check=lambda result, expected: result.steps[0].run.value == expected,
)
