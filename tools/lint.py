"""A linter for tool sets: what tool-design guidance warns about, with fixes.

:func:`lint_tools` checks tools (``Tool`` objects or anything with ``name``,
``description`` and ``parameters_schema``) and returns :class:`Finding`
objects; ``toolscript tools --lint MODULE`` prints them. Every finding says
how to fix it. Rules (code: what):

* ``description-short``: the description is too short to say what the tool
  does, when to use it and when not;
* ``param-undescribed``: a parameter has no description (and no enum that
  explains it);
* ``param-format``: a string parameter whose name suggests a format (date,
  email, id, url...) has no format, pattern, enum or example in its text;
* ``bool-pair``: two boolean parameters that should be one enum;
* ``param-dependency``: a parameter that looks like an object the host holds
  (an account, an inbox: a large object model, one holding collections of
  other records, or a class the tool's module keeps or changes as state),
  which should be injected rather than sent by the model;
* ``required-could-default``: a required option (bool, limit, sort...) that
  could have a default;
* ``overlap``: two tools whose descriptions overlap so much that a model
  cannot choose between them;
* ``too-many-tools``: more than about 20 tools without namespacing;
* ``name-provider``: a name that breaks a model provider's naming rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from .dependencies import dependency_reasons, injection_fix, object_type_key

__all__ = ["MAX_TOOLS", "PROVIDER_NAME_RULES", "Finding", "format_findings", "lint_tools"]

Severity = Literal["error", "warning", "info"]

MAX_TOOLS = 20
"""Roughly how many flat tools a model chooses among well."""

MIN_DESCRIPTION_WORDS = 12
OVERLAP_THRESHOLD = 0.6

PROVIDER_NAME_RULES: dict[str, tuple[str, str]] = {
    "openai": (r"^[a-zA-Z0-9_-]{1,64}$", "1-64 characters from a-z, A-Z, 0-9, _ and -"),
    "anthropic": (r"^[a-zA-Z0-9_-]{1,64}$", "1-64 characters from a-z, A-Z, 0-9, _ and -"),
    "gemini": (
        r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$",
        "start with a letter or _, then up to 63 of a-z, A-Z, 0-9, _ . : -",
    ),
    "bedrock": (r"^[a-zA-Z][a-zA-Z0-9_]{0,63}$", "start with a letter, then a-z, A-Z, 0-9, _"),
}
"""Per provider: the tool-name pattern and a readable form of it."""

_RESERVED_NAMES = frozenset({"run_script"})
_FORMAT_HINTS = re.compile(
    r"(^|_)(date|day|time|datetime|timestamp|email|url|uri|phone|id|uuid|iso|currency|"
    r"country|zip|postcode)(_|$)"
)
_EXAMPLE_TEXT = re.compile(
    r"e\.g\.|for example|such as|format|like ['\"]|iso|yyyy|\"[^\"]+\"|'[^']+'", re.IGNORECASE
)
_OPTION_NAMES = re.compile(
    r"^(limit|page|page_size|offset|sort|sort_by|order|order_by|format|verbose|timeout|"
    r"max_\w+|min_\w+|include_\w+|with_\w+|dry_run|lang|language|currency)$"
)
_ANTONYMS = (
    ("include", "exclude"), ("asc", "desc"), ("ascending", "descending"), ("enable", "disable"),
    ("show", "hide"), ("only", "include"), ("is", "not"), ("with", "without"), ("on", "off"),
)
_STOPWORDS = frozenset({
    "a", "an", "the", "and", "or", "of", "to", "for", "in", "on", "by", "with", "from", "this",
    "that", "it", "its", "is", "are", "be", "as", "at", "all", "any", "one", "each", "given",
    "tool", "returns", "return", "get", "use", "when", "not",
})


@dataclass(frozen=True)
class Finding:
    """One problem in a tool set.

    Attributes:
        code: the rule (e.g. ``param-undescribed``).
        severity: ``error`` (breaks a provider), ``warning`` or ``info``.
        tool: the tool concerned ("" for the whole set).
        message: what is wrong.
        fix: how to fix it.
        param: the parameter concerned, if any.
    """

    code: str
    severity: Severity
    tool: str
    message: str
    fix: str
    param: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return asdict(self)

    def __str__(self) -> str:
        where = self.tool + (f".{self.param}" if self.param else "")
        head = f"{self.severity}: {where or '(tool set)'}: [{self.code}] {self.message}"
        return f"{head}\n  fix: {self.fix}"


def lint_tools(tools: Iterable[Any], *, max_tools: int = MAX_TOOLS) -> list[Finding]:
    """Every finding for ``tools``, errors first, then by tool and parameter."""
    items = list(tools)
    findings: list[Finding] = []
    takers = _object_takers(items)
    for t in items:
        findings.extend(_lint_tool(t, takers))
    findings.extend(_overlaps(items))
    findings.extend(_name_twins(items))
    findings.extend(_too_many(items, max_tools))
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(findings, key=lambda f: (order[f.severity], f.tool, f.param or "", f.code))


def format_findings(findings: Sequence[Finding]) -> str:
    """Findings as text, one block each, with a summary line."""
    if not findings:
        return "no findings: the tool set follows the guidance\n"
    counts = {s: sum(1 for f in findings if f.severity == s) for s in ("error", "warning", "info")}
    summary = ", ".join(f"{n} {s}{'s' if n != 1 else ''}" for s, n in counts.items() if n)
    return "\n".join(str(f) for f in findings) + f"\n\n{summary}\n"


# -- per tool ------------------------------------------------------------------------


def _params(t: Any) -> dict[str, dict[str, Any]]:
    schema = getattr(t, "parameters_schema", None) or {}
    props = schema.get("properties") or {}
    return {k: v for k, v in props.items() if isinstance(v, dict)}


def _required(t: Any) -> set[str]:
    schema = getattr(t, "parameters_schema", None) or {}
    return set(schema.get("required") or [])


def _types(schema: dict[str, Any]) -> set[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {str(k) for k in kind}
    return set()


def _object_takers(tools: list[Any]) -> dict[str, set[str]]:
    """Object parameter type -> the names of the tools that take one."""
    out: dict[str, set[str]] = {}
    for t in tools:
        schema = getattr(t, "parameters_schema", None) or {}
        defs = schema.get("$defs") or {}
        annotations = _annotations(t)
        for pname, pschema in _params(t).items():
            key = object_type_key(pschema, defs, annotations.get(pname))
            if key is not None:
                out.setdefault(key, set()).add(str(getattr(t, "name", "?")))
    return out


def _annotations(t: Any) -> dict[str, Any]:
    """Parameter name -> annotation, for ``Tool`` objects ({} for others)."""
    return {p.name: p.annotation for p in getattr(t, "params", ()) if hasattr(p, "annotation")}


def _lint_tool(t: Any, takers: dict[str, set[str]]) -> list[Finding]:
    name = str(getattr(t, "name", "?"))
    out = list(_names(name))
    description = str(getattr(t, "description", "") or "").strip()
    words = re.findall(r"[A-Za-z0-9']+", description.split("\n\n")[0] if description else "")
    if len(words) < MIN_DESCRIPTION_WORDS:
        out.append(Finding(
            "description-short", "warning", name,
            f"the description has {len(words)} word(s): too short to say what the tool does, "
            "when to use it and when not to",
            "write 2-4 sentences in the docstring: what it returns (units, shape), when to call "
            "it, and when to use another tool instead",
        ))
    params = _params(t)
    required = _required(t)
    booleans = []
    for pname, schema in params.items():
        if pname == "idempotency_key":
            continue
        types = _types(schema)
        text = str(schema.get("description") or "")
        has_enum = "enum" in schema or "const" in schema or "$ref" in schema
        if not text and not has_enum:
            out.append(Finding(
                "param-undescribed", "warning", name,
                "the parameter has no description",
                f"document it in the docstring's Args section (`{pname}: what it is, e.g. ...`) "
                f"or with Annotated[T, \"...\"]",
                pname,
            ))
        if (
            "string" in types
            and _FORMAT_HINTS.search(pname)
            and not ({"format", "pattern", "enum", "const"} & set(schema))
            and not _EXAMPLE_TEXT.search(text)
        ):
            out.append(Finding(
                "param-format", "warning", name,
                "a string whose name suggests a format, but neither its schema nor its "
                "description shows the format",
                "add an example to its description (e.g. \"ISO date, e.g. '2026-08-24'\") or a "
                "constraint: Annotated[str, Field(pattern=...)] / Field(format=\"date\")",
                pname,
            ))
        if types == {"boolean"}:
            booleans.append(pname)
        if pname in required and (types == {"boolean"} or _OPTION_NAMES.match(pname)):
            out.append(Finding(
                "required-could-default", "info", name,
                "a required parameter that looks like an option",
                f"give it a default in the signature (e.g. `{pname}: ... = ...`) so the model "
                "only passes it when it matters",
                pname,
            ))
    out.extend(_bool_pairs(name, booleans))
    out.extend(_dependencies(t, name, params, takers))
    return out


def _dependencies(
    t: Any, name: str, params: dict[str, dict[str, Any]], takers: dict[str, set[str]]
) -> list[Finding]:
    """``param-dependency`` findings: parameters that look like host-held objects."""
    schema = getattr(t, "parameters_schema", None) or {}
    defs = schema.get("$defs") or {}
    annotations = _annotations(t)
    func = getattr(t, "func", None)
    out: list[Finding] = []
    for pname, pschema in params.items():
        key = object_type_key(pschema, defs, annotations.get(pname))
        reasons = dependency_reasons(
            pname, pschema, defs, annotation=annotations.get(pname),
            func=func if callable(func) else None,
            shared_with=sorted(takers.get(key, set()) - {name}) if key else (),
        )
        if not reasons:
            continue
        type_name = _type_name(pschema, annotations.get(pname))
        out.append(Finding(
            "param-dependency", "warning", name,
            f"the parameter ({type_name}) looks like an object the host holds, not a value "
            f"a model can send: {'; '.join(reasons)}",
            injection_fix(name, pname, type_name),
            pname,
        ))
    return out


def _type_name(schema: dict[str, Any], annotation: Any) -> str:
    """A readable name for a parameter's type: the class, the ``$ref`` name, or ``object``."""
    if isinstance(annotation, type) and annotation not in (Any, object):
        return annotation.__name__
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return ref.rsplit("/", 1)[-1]
    for branch in schema.get("anyOf") or ():
        if isinstance(branch, dict) and isinstance(branch.get("$ref"), str):
            return str(branch["$ref"]).rsplit("/", 1)[-1]
    return "object"


def _names(name: str) -> list[Finding]:
    out: list[Finding] = []
    broken = [p for p, (rule, _) in PROVIDER_NAME_RULES.items() if not re.match(rule, name)]
    if broken:
        rules = "; ".join(f"{p}: {PROVIDER_NAME_RULES[p][1]}" for p in broken)
        out.append(Finding(
            "name-provider", "error" if {"openai", "anthropic"} & set(broken) else "warning",
            name, f"the name breaks the naming rules of {', '.join(broken)} ({rules})",
            "rename it with name=... to a snake_case verb_noun of letters, digits and _, "
            "starting with a letter, at most 64 characters",
        ))
    if name in _RESERVED_NAMES:
        out.append(Finding(
            "name-provider", "error", name,
            "the name is taken by toolscript's own run_script tool in programmatic mode",
            "rename it with name=...",
        ))
    return out


def _bool_pairs(tool: str, booleans: list[str]) -> list[Finding]:
    out: list[Finding] = []
    for i, a in enumerate(booleans):
        for b in booleans[i + 1 :]:
            if _related(a, b):
                out.append(Finding(
                    "bool-pair", "warning", tool,
                    f"boolean parameters {a!r} and {b!r} describe one choice; some "
                    "combinations are contradictory",
                    "replace them with one enum, e.g. `mode: Literal[\"a\", \"b\", \"c\"] = ...`",
                    a,
                ))
    return out


def _related(a: str, b: str) -> bool:
    pa, pb = set(a.split("_")), set(b.split("_"))
    for x, y in _ANTONYMS:
        if (x in pa and y in pb) or (y in pa and x in pb):
            return True
    shared = (pa & pb) - {"is", "include", "with", "only", "use"}
    return bool(shared)


# -- across tools ----------------------------------------------------------------------


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOPWORDS and len(w) > 2}


def _namespace(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else ""


def _overlaps(tools: list[Any]) -> list[Finding]:
    """Tools of one namespace whose descriptions overlap. Scales to large catalogs:
    only pairs sharing a word that few tools use are compared (an inverted index),
    and tools of different namespaces are not compared (the namespace tells them
    apart; see :func:`_name_twins`)."""
    out: list[Finding] = []
    bags = [(str(t.name), _words(str(getattr(t, "description", "") or ""))) for t in tools]
    index: dict[tuple[str, str], list[int]] = {}
    for i, (name, words) in enumerate(bags):
        for w in words:
            index.setdefault((_namespace(name), w), []).append(i)
    rare = max(20, len(bags) // 100)
    pairs: set[tuple[int, int]] = set()
    for members in index.values():
        if len(members) <= rare:
            pairs.update((a, b) for k, a in enumerate(members) for b in members[k + 1:])
    for i, j in sorted(pairs):
        (a, wa), (b, wb) = bags[i], bags[j]
        if len(wa) < 3 or len(wb) < 3:
            continue
        score = len(wa & wb) / len(wa | wb)
        if score >= OVERLAP_THRESHOLD:
            out.append(Finding(
                "overlap", "warning", a,
                f"its description overlaps {b!r}'s by {score:.0%}: a model cannot tell "
                "which one to call",
                f"say in each description when to use it instead of the other (e.g. "
                f"\"use {b} for ...\"), or merge the two tools",
            ))
    return out


def _name_twins(tools: list[Any]) -> list[Finding]:
    """The same (or nearly the same: case, ``_``) tool name in several namespaces."""
    groups: dict[str, list[str]] = {}
    for t in tools:
        name = str(t.name)
        if "." in name:
            key = name.rsplit(".", 1)[1].replace("_", "").lower()
            groups.setdefault(key, []).append(name)
    return [Finding(
        "name-twin", "info", names[0],
        f"near-duplicate names across namespaces: {', '.join(names)}",
        "say in each description what sets its namespace's tool apart, so search and the "
        "model pick the right one",
    ) for _key, names in sorted(groups.items())
        if len({_namespace(n) for n in names}) > 1]


def _too_many(tools: list[Any], max_tools: int) -> list[Finding]:
    if len(tools) <= max_tools:
        return []
    prefixes: dict[str, int] = {}
    for t in tools:
        head = re.split(r"[_.:-]", str(t.name), maxsplit=1)[0]
        prefixes[head] = prefixes.get(head, 0) + 1
    grouped = sum(n for n in prefixes.values() if n >= 2)
    if grouped >= 0.8 * len(tools) and len(prefixes) > 1:
        return []
    return [Finding(
        "too-many-tools", "warning", "",
        f"{len(tools)} tools without namespacing; models choose well among about {max_tools}",
        "group tools under namespace prefixes (crm_*, billing_*), split them across agents, or "
        "offer them through run_script stubs in programmatic mode",
    )]
