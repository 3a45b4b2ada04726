"""Structured final answers: ``Agent(output_type=...)``.

The model gives its final answer by calling a ``final_answer`` function whose
parameters are the answer's fields (a type that is not an object is wrapped
as ``{"result": ...}``). The arguments are checked against the JSON Schema
(the project's own validator, the same one tool arguments pass) and then
converted to the output type (a pydantic model runs its validators, a
dataclass is built); a problem goes back to the model as an error reply, so it
can fix its answer within the turn budget. A plain-text reply that parses as
a valid JSON answer is accepted too.

``output_type`` may be a pydantic model, a ``TypedDict``, a dataclass, any
other annotation toolscript turns into JSON Schema (``list[str]``, ``int`` ...),
or a JSON Schema given as a dict (the answer is then the checked dict).
"""

from __future__ import annotations

import json
from typing import Any

from toolscript.tools.convert import build_converter
from toolscript.tools.schema import schema_for_type
from toolscript.tools.validation import ArgsValidator

from toolscript.errors import ConfigurationError, SchemaError

from .. import prompts
from ..providers.base import ToolSpec

__all__ = ["OutputInvalid", "OutputSpec"]

_WRAP_KEY = "result"


class OutputInvalid(Exception):
    """Internal: the model's final answer does not fit the output type; the message says why."""


class OutputSpec:
    """How one output type is offered (``final_answer``) and checked.

    Raises:
        ConfigurationError: the type cannot be expressed as JSON Schema, or the
            given schema is not a valid JSON Schema.
    """

    def __init__(self, output_type: Any) -> None:
        self.output_type = output_type
        try:
            if isinstance(output_type, dict):
                schema: dict[str, Any] = dict(output_type)
                self._convert = None
            else:
                schema = _root(schema_for_type(output_type))
                self._convert = build_converter(output_type)
            self.wrapped = schema.get("type") != "object"
            if self.wrapped:
                defs = {k: schema.pop(k) for k in ("$defs",) if k in schema}
                schema = {"type": "object", "properties": {_WRAP_KEY: schema},
                          "required": [_WRAP_KEY], "additionalProperties": False, **defs}
            self.schema = schema
            self._validator = ArgsValidator(schema)
        except SchemaError as exc:
            raise ConfigurationError(f"output_type: {exc}") from exc

    def tool_spec(self) -> ToolSpec:
        """The ``final_answer`` function offered to the model."""
        return ToolSpec(prompts.FINAL_ANSWER_NAME, prompts.FINAL_ANSWER_DESCRIPTION, self.schema)

    def check(self, arguments: Any) -> Any:
        """The output for ``final_answer`` arguments.

        Raises:
            OutputInvalid: naming every problem found.
        """
        if not isinstance(arguments, dict):
            raise OutputInvalid("the arguments must be a JSON object of the answer's fields")
        problems = self._validator.problems(arguments)
        if problems:
            raise OutputInvalid("; ".join(str(p) for p in problems))
        value = arguments[_WRAP_KEY] if self.wrapped else arguments
        if self._convert is None:
            return value
        try:
            return self._convert(value)
        except Exception as exc:  # a model validator that refused the value
            raise OutputInvalid(f"{type(exc).__name__}: {exc}") from None

    def check_text(self, text: str) -> Any:
        """The output for a plain-text answer holding the answer as JSON.

        Raises:
            OutputInvalid: the text is not such JSON.
        """
        stripped = text.strip()
        if stripped.startswith("```"):
            stripped = stripped.strip("`").removeprefix("json").strip()
        try:
            value = json.loads(stripped)
        except ValueError:
            raise OutputInvalid("the reply is not a JSON answer") from None
        if self.wrapped and not (isinstance(value, dict) and set(value) == {_WRAP_KEY}):
            value = {_WRAP_KEY: value}
        return self.check(value)


def _root(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema whose root is a ``$ref`` into its ``$defs``, with the target at the root."""
    ref = schema.get("$ref")
    defs = schema.get("$defs") or {}
    if isinstance(ref, str) and ref.startswith("#/$defs/") and len(schema) <= 2:
        target = defs.get(ref.removeprefix("#/$defs/"))
        if isinstance(target, dict):
            rest = {k: v for k, v in defs.items() if v is not target}
            if f'"{ref}"' in json.dumps([target, rest]):  # recursive: keep the definition
                rest = defs
            return {**target, "$defs": rest} if rest else dict(target)
    return schema
