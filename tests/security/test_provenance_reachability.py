"""With provenance labels on, a script can hold new classes: the boxes of labelled
values (``x.__class__`` of a labelled str is ``LStr``). Each is in the capability
inventory (:mod:`toolscript.sandbox.inventory`); constructing one gives an
value that depends on
where the class came from, never a way to drop or forge a label. (The full crawler of
``test_reachability.py`` uses ``async`` and ``match``, which the labels pass
refuses, so it runs with labels off.)"""

from __future__ import annotations

from typing import Any

from toolscript.runtime.provenance import Provenance
from toolscript.sandbox import inventory
from toolscript.sandbox.provenance import BOXES

from toolscript import Runtime, tool


@tool(read_only=True, returns="untrusted")
def fetch() -> dict[str, Any]:
    """Untrusted data of every scalar type."""
    return {"s": "text", "i": 7, "f": 1.5, "b": True, "n": None}


@tool
def sink(value: Any) -> str:
    """A consequential action."""
    return "done"


def test_every_box_class_a_script_reaches_is_inventoried() -> None:
    names = {entry.name for entry in inventory.CLASSES}
    with Runtime(tools=[fetch, sink], backend="inprocess",
                 provenance=Provenance(show_untrusted=True),
                 ) as runtime, runtime.session() as session:
        result = session.run(
            "d = fetch()\n"
            "kinds = [d[k].__class__ for k in ['s', 'i', 'f', 'b', 'n']]\n"
            "kinds.append(d['s'].encode().__class__)\n"
            "made = kinds[0]('IBAN000')\n"  # the class came from untrusted data: so does this
            "try:\n    sink(made)\nexcept ToolError as e:\n    refused = e.type\n"
            "[refused] + [k.__qualname__ for k in kinds]")
    assert result.ok, result.error
    refused, *kinds = result.value
    assert refused == "provenance_denied"
    # a labelled bool/None is unboxed for any code the script did not write (here the
    # __class__ guard): the script sees bool and NoneType, never LBool or LNone
    assert set(kinds) == {"LStr", "LInt", "LFloat", "LBytes", "bool", "NoneType"}, result
    for box in BOXES:
        assert f"toolscript.sandbox.provenance.{box.__qualname__}" in names
