"""OpenAPI 3 operations as tools: :class:`OpenAPISource`.

Each operation of an OpenAPI 3.x document becomes a
:class:`~toolscript.tools.schematool.SchemaTool`: path, query and header
parameters and a JSON request body become the JSON Schema of its arguments
(the properties of an object body are flattened into arguments when no name
clashes, else the body is one ``body`` argument), summaries and descriptions
are kept, and the call is a real HTTP request made from the host with the
base URL and credentials the user configured. ``$ref``s are inlined (a cycle
ends in ``{}``); a reference to another document or to nothing is refused.
Credentials are read from the environment at call time: they live on the
host and never enter the sandbox.

    from toolscript.runtime.integrations.openapi import BearerAuth, OpenAPISource

    source = OpenAPISource("petstore.json", base_url="https://api.example.com/v1",
                           auth=BearerAuth("PETSTORE_TOKEN"), prefix="pets")
    rt = Runtime(tools=source.tools())

``GET``/``HEAD``/``OPTIONS`` operations (HTTP's safe methods) are read-only:
they run in parallel and pass the ``deny`` policy. The others (``POST``,
``PUT``, ``PATCH``, ``DELETE``, ...) are writes and require approval unless
``requires_approval=`` says otherwise. An HTTP status of 400 or more raises
:class:`HTTPToolError` (the script sees a ``ToolError`` with the status and
the start of the response body).

Credentials never leave the API's origin (scheme, host and port of
``base_url``): a redirect to another origin is refused, or with
``cross_origin_redirects="strip"`` followed with no header but ``Accept`` and
``User-Agent``; once stripped, they stay stripped for the rest of the chain.
A ``429`` or ``503`` answer with a ``Retry-After`` header is retried after
that delay, at most ``retries`` times and only while the wait still ends
within the tool's ``timeout_s``; a longer demand fails at once.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import time
import types
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from http.client import HTTPMessage
from pathlib import Path
from typing import IO, Any, Literal

from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from toolscript.runtime.integrations.selectors import (
    Selector,
    check_names,
    name_set,
    normalize,
    tightened,
)
from toolscript.tools import Tool, check_tool_name
from toolscript.tools.schematool import SchemaTool, python_identifier

from toolscript.errors import ConfigurationError, HTTPToolError, ToolDefinitionError

__all__ = ["ApiKeyAuth", "BearerAuth", "HTTPToolError", "OpenAPISource", "load_document"]

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
READ_ONLY_METHODS = frozenset({"get", "head", "options"})
RETRY_STATUSES = frozenset({429, 503})
REDIRECT_SAFE_HEADERS = frozenset({"accept", "user-agent"})
"""The only headers sent on after a redirect to another origin (``strip`` mode)."""
_DOCUMENT_URI = "urn:toolscript:openapi-document"
"""The base URI the document is registered under for ``$ref`` lookups."""
IGNORED_HEADER_PARAMS = frozenset({"accept", "content-type", "authorization"})
"""Header parameters OpenAPI says to ignore: the source sets these itself."""


def origin(url: str) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` of ``url``, the port filled in for http and https."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or {"http": 80, "https": 443}.get(scheme)
    return scheme, (parts.hostname or "").lower(), port


class _OriginGuard(urllib.request.HTTPRedirectHandler):
    """Follows redirects within the request's origin; another origin is refused
    (``refuse``) or reached with every header but ``Accept``/``User-Agent``
    removed (``strip``)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is None or origin(newurl) == origin(req.full_url):
            return new
        if self.mode != "strip" or origin(newurl)[0] not in ("http", "https"):
            fp.close()
            raise HTTPToolError(
                code,
                "redirect refused",
                f"the API redirected to {newurl[:200]}, another origin; credentials are "
                "never sent there (OpenAPISource(cross_origin_redirects='strip') follows "
                "such redirects without them)",
            )
        for name in list(new.headers):
            if name.lower() not in REDIRECT_SAFE_HEADERS:
                del new.headers[name]
        new.unredirected_hdrs.clear()
        return new


@dataclass(frozen=True)
class BearerAuth:
    """``Authorization: Bearer <token>`` with the token from environment variable ``env``."""

    env: str

    def headers(self) -> dict[str, str]:
        """The header to send (read from the environment now)."""
        return {"Authorization": f"Bearer {_secret(self.env)}"}


@dataclass(frozen=True)
class ApiKeyAuth:
    """A header (default ``X-API-Key``) whose value comes from environment variable ``env``."""

    env: str
    header: str = "X-API-Key"

    def headers(self) -> dict[str, str]:
        """The header to send (read from the environment now)."""
        return {self.header: _secret(self.env)}


def _secret(env: str) -> str:
    value = os.environ.get(env)
    if not value:
        raise PermissionError(f"the credential variable {env} is not set on the host")
    return value


def load_document(document: Mapping[str, Any] | str | os.PathLike[str]) -> dict[str, Any]:
    """An OpenAPI document from a dict, or a JSON (or YAML, with PyYAML) file.

    Raises:
        ConfigurationError: unreadable, or not an OpenAPI 3 document.
    """
    if isinstance(document, Mapping):
        data: Any = dict(document)
    else:
        path = Path(document)
        try:
            text = path.read_text("utf-8")
        except OSError as exc:
            raise ConfigurationError(f"cannot read the OpenAPI document {path}: {exc}") from exc
        if path.suffix in (".yaml", ".yml"):
            try:
                yaml = importlib.import_module("yaml")
            except ImportError as exc:
                raise ConfigurationError(
                    "reading YAML needs PyYAML (pip install pyyaml); or "
                    "convert the document to JSON"
                ) from exc
            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    if not isinstance(data, dict) or not str(data.get("openapi", "")).startswith("3"):
        raise ConfigurationError("not an OpenAPI 3 document (no 'openapi: 3.x' field)")
    return data


class _Resolver:
    """Inlines the document's ``$ref``s; a cycle becomes ``{}``.

    The lookup (JSON Pointer with ``~0``/``~1`` and percent escapes) is
    ``referencing``'s. Nothing is fetched: a reference to another document,
    or to a place this one does not have, is a broken document.
    """

    def __init__(self, document: Mapping[str, Any]) -> None:
        self._lookup = (
            Registry()
            .with_resource(_DOCUMENT_URI, Resource.opaque(document))
            .resolver(base_uri=_DOCUMENT_URI)
            .lookup
        )

    def __call__(self, node: Any, seen: tuple[str, ...] = ()) -> Any:
        if isinstance(node, list):
            return [self(item, seen) for item in node]
        if not isinstance(node, Mapping):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            if ref in seen:
                return {}
            if not ref.startswith("#"):
                raise ToolDefinitionError(
                    f"$ref {ref[:200]!r} points into another document; OpenAPISource reads "
                    "one document and fetches nothing: bundle it first"
                )
            try:
                target = self._lookup(ref).contents
            except Unresolvable:
                raise ToolDefinitionError(
                    f"$ref {ref[:200]!r} points to nothing in the OpenAPI document"
                ) from None
            return self(target, (*seen, ref))
        return {key: self(value, seen) for key, value in node.items()}


def _schema_31(schema: Any) -> Any:
    """OpenAPI 3.0's ``nullable: true`` as JSON Schema (``type: [T, "null"]``)."""
    if isinstance(schema, list):
        return [_schema_31(s) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    out = {
        k: _schema_31(v)
        for k, v in schema.items()
        if k not in ("nullable", "example", "xml", "discriminator")
    }
    if schema.get("nullable") is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


@dataclass
class _Operation:
    method: str
    path: str
    params: dict[str, tuple[str, str]]  # argument name -> (location, wire name)
    body_mode: str  # "", "whole" (argument 'body') or "flat" (object properties)
    body_props: tuple[str, ...]
    body_arg: str = "body"


_Row = tuple[str, Mapping[str, Any], str, Mapping[str, Any], tuple[str, ...]]
"""One operation: path, path item, method, operation, its own names."""


class OpenAPISource:
    """The operations of one OpenAPI 3 document as tools.

    Args:
        document: a dict, or the path of a JSON (or YAML) file.
        base_url: where requests go (default: the document's first server URL).
        auth: a :class:`BearerAuth`, :class:`ApiKeyAuth`, or any object with a
            ``headers() -> dict`` method, asked at every call.
        headers: extra fixed headers.
        prefix: namespace of the tool names (``{prefix}_{operation}``).
        include: operationIds (or tool names without prefix) to keep.
        requires_approval: default None: every operation that is not
            read-only (``POST``, ``PUT``, ``PATCH``, ``DELETE``, ...). A list
            of names or a predicate on ``(method, path)`` *adds* operations
            to that default, never removes one; ``False`` (all) or
            ``{name: False}`` releases explicitly. Names, here and in
            ``include``, are operationIds (or, for an operation without one,
            the generated ``{method}_{path}`` name), never the prefixed tool
            name; a name that is no operation of the document is a
            ``ConfigurationError`` from :meth:`tools`
            (:mod:`~toolscript.runtime.integrations.selectors`).
        timeout_s: the tools' call timeout; a retry waits only when the wait
            fits in it, and each request's socket timeout is what is left.
        retries: how often a ``429``/``503`` with ``Retry-After`` is retried.
        cross_origin_redirects: ``"refuse"`` (default) or ``"strip"`` (follow
            without credentials or any header but ``Accept``/``User-Agent``).
    """

    def __init__(
        self,
        document: Mapping[str, Any] | str | os.PathLike[str],
        *,
        base_url: str | None = None,
        auth: Any = None,
        headers: Mapping[str, str] | None = None,
        prefix: str = "",
        include: Iterable[str] | None = None,
        requires_approval: Selector = None,
        timeout_s: float = 30.0,
        retries: int = 3,
        cross_origin_redirects: Literal["refuse", "strip"] = "refuse",
    ) -> None:
        self.document = load_document(document)
        servers = self.document.get("servers") or []
        url = base_url or (servers[0].get("url") if servers else None)
        if not url or not urllib.parse.urlsplit(url).scheme:
            raise ConfigurationError("give base_url=: the document names no absolute server URL")
        self.base_url = url.rstrip("/")
        self.auth = auth
        self.headers = dict(headers or {})
        self.prefix = prefix
        self.include = None if include is None else set(name_set(include, "include"))
        self.requires_approval = normalize(requires_approval, "requires_approval")
        self.timeout_s = timeout_s
        self.retries = max(0, int(retries))
        if cross_origin_redirects not in ("refuse", "strip"):
            raise ConfigurationError("cross_origin_redirects must be 'refuse' or 'strip'")
        self._opener = urllib.request.build_opener(_OriginGuard(cross_origin_redirects))
        self._resolve = _Resolver(self.document)

    # --- tools -------------------------------------------------------------------
    def tools(self) -> list[Tool]:
        """One tool per operation, in document order.

        Raises:
            ToolDefinitionError: two operations map to the same tool name, or a
                ``$ref`` points to another document or to nothing.
        """
        tools: list[Tool] = []
        names: set[str] = set()
        operations = list(self._operations())
        self._check_names(operations)
        for path, item, method, operation, own in operations:
            if self.include is not None and not set(own) & self.include:
                continue
            name = f"{self.prefix}_{own[-1]}" if self.prefix else own[-1]
            if name in names:
                raise ToolDefinitionError(f"two operations map to the tool name {name!r}")
            names.add(check_tool_name(name))
            tools.append(self._tool(name, method, path, item, operation, own))
        return tools

    def _operations(self) -> Iterator[_Row]:
        """``(path, item, method, operation, own names)`` of every operation; the own
        names are its operationId and the identifier made of it (or of method and path)."""
        for path, item in (self.document.get("paths") or {}).items():
            item = self._resolve(item)
            for method in METHODS:
                operation = item.get(method)
                if not isinstance(operation, Mapping):
                    continue
                operation_id = operation.get("operationId")
                base = python_identifier(operation_id or f"{method}_{path.strip('/')}")
                own = (operation_id, base) if isinstance(operation_id, str) else (base,)
                yield path, item, method, operation, own

    def _check_names(self, operations: list[_Row]) -> None:
        """Refuse ``include`` / ``requires_approval`` names that are no operation."""
        known = {name for *_, own in operations for name in own}
        exposed = {f"{self.prefix}_{own[-1]}": own[0] for *_, own in operations if self.prefix}
        label = "OpenAPISource"
        check_names(None if self.include is None else frozenset(self.include), "include",
                    known, exposed, label)
        check_names(self.requires_approval, "requires_approval", known, exposed, label)

    def _tool(
        self,
        name: str,
        method: str,
        path: str,
        item: Mapping[str, Any],
        operation: Mapping[str, Any],
        own: tuple[str, ...] = (),
    ) -> Tool:
        properties: dict[str, Any] = {}
        required: list[str] = []
        op = _Operation(method, path, {}, "", ())
        merged = {
            (p.get("in"), p.get("name")): p
            for p in [*(item.get("parameters") or []), *(operation.get("parameters") or [])]
            if isinstance(p, Mapping)
        }
        for (location, wire), param in merged.items():
            if location not in ("path", "query", "header") or not isinstance(wire, str):
                continue
            if location == "header" and wire.lower() in IGNORED_HEADER_PARAMS:
                continue
            arg = python_identifier(wire, set(properties))
            schema = dict(_schema_31(param.get("schema") or {}))
            if param.get("description"):
                schema["description"] = param["description"]
            properties[arg] = schema
            op.params[arg] = (location, wire)
            if param.get("required") or location == "path":
                required.append(arg)
        body = self._json_body(operation)
        if body is not None:
            schema, body_required = body
            props = schema.get("properties") if schema.get("type", "object") == "object" else None
            if (
                isinstance(props, Mapping)
                and props
                and not set(props) & set(properties)
                and all(str(p).isidentifier() for p in props)
            ):
                op.body_mode, op.body_props = "flat", tuple(props)
                properties.update(props)
                if body_required:
                    required.extend(r for r in schema.get("required") or [] if r in props)
            else:
                op.body_mode = "whole"
                op.body_arg = python_identifier("body", set(properties))
                properties[op.body_arg] = schema
                if body_required:
                    required.append(op.body_arg)
        input_schema = {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        }
        summary = operation.get("summary") or ""
        details = operation.get("description") or ""
        description = inspect.cleandoc("\n\n".join(t for t in (summary, details) if t))

        def call(**args: Any) -> Any:
            return self.request(op, args)

        return SchemaTool(
            call,
            name=name,
            description=description or f"{method.upper()} {path}",
            input_schema=input_schema,
            output_schema=self._output_schema(operation),
            read_only=method in READ_ONLY_METHODS,
            requires_approval=self._needs_approval(own, method, path),
            timeout_s=self.timeout_s,
            blocking=True,  # an HTTP request: a hung server must not end an inprocess run
        )

    def _needs_approval(self, own: tuple[str, ...], method: str, path: str) -> bool:
        return tightened(self.requires_approval, own, method not in READ_ONLY_METHODS,
                         lambda predicate: bool(predicate(method, path)))

    def _json_body(self, operation: Mapping[str, Any]) -> tuple[dict[str, Any], bool] | None:
        body = operation.get("requestBody")
        if not isinstance(body, Mapping):
            return None
        for media, content in (body.get("content") or {}).items():
            if "json" in media and isinstance(content, Mapping):
                schema = _schema_31(content.get("schema") or {})
                if body.get("description") and "description" not in schema:
                    schema = {**schema, "description": body["description"]}
                return dict(schema), bool(body.get("required"))
        return None

    def _output_schema(self, operation: Mapping[str, Any]) -> dict[str, Any] | None:
        responses = operation.get("responses") or {}
        for status in ("200", "201", "default"):
            response = responses.get(status)
            if isinstance(response, Mapping):
                for media, content in (response.get("content") or {}).items():
                    if "json" in media and isinstance(content, Mapping) and content.get("schema"):
                        return dict(_schema_31(content["schema"]))
        return None

    # --- calls -------------------------------------------------------------------
    def request(self, op: _Operation, args: Mapping[str, Any]) -> Any:
        """Make the HTTP request of one operation and decode the response.

        Raises:
            HTTPToolError: the endpoint answered with status >= 400 (after the
                retries a ``Retry-After`` allowed), or redirected to another
                origin while ``cross_origin_redirects="refuse"``.
            PermissionError: a credential variable is not set.
            ValueError: a path parameter is ``.`` or ``..``.
        """
        deadline = time.monotonic() + self.timeout_s
        path = op.path
        query: list[tuple[str, str]] = []
        headers = {"Accept": "application/json", "User-Agent": "toolscript"}
        for arg, value in args.items():
            if arg not in op.params:
                continue
            location, wire = op.params[arg]
            if location == "path":
                text = _text(value)
                if text in (".", ".."):
                    raise ValueError(f"the path parameter {wire!r} cannot be {text!r}")
                path = path.replace("{" + wire + "}", urllib.parse.quote(text, safe=""))
            elif location == "query":
                values = value if isinstance(value, list) else [value]
                query.extend((wire, _text(v)) for v in values)
            else:
                headers[wire] = _text(value)
        headers.update(self.headers)
        if self.auth is not None:
            headers.update(self.auth.headers())
        data = None
        if op.body_mode == "whole" and op.body_arg in args:
            data = json.dumps(args[op.body_arg]).encode()
        elif op.body_mode == "flat":
            payload = {k: v for k, v in args.items() if k in op.body_props}
            data = json.dumps(payload).encode()
        if data is not None:
            headers["Content-Type"] = "application/json"
        url = self.base_url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(
                url, data=data, headers=headers, method=op.method.upper()
            )
            remaining = max(deadline - time.monotonic(), 0.001)
            try:
                with self._opener.open(request, timeout=remaining) as response:
                    return _decode(response.read(), response.headers.get("Content-Type", ""))
            except urllib.error.HTTPError as exc:
                body = exc.read().decode("utf-8", "replace")
                delay, note = _retry_delay(exc, deadline, attempt < self.retries)
                if delay is None:
                    raise HTTPToolError(exc.code, str(exc.reason) + note, body) from None
            time.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def _retry_delay(
    exc: urllib.error.HTTPError, deadline: float, may_retry: bool
) -> tuple[float | None, str]:
    """The wait before retrying a 429/503 that sent ``Retry-After`` (None: do not
    retry) and a note for the error message when a retry was refused."""
    if exc.code not in RETRY_STATUSES or exc.headers is None:
        return None, ""
    from toolscript.runtime.providers.retry import retry_after_seconds

    # retry_after_seconds reads ``error.response.headers``; an HTTPError is its own response.
    asked = retry_after_seconds(types.SimpleNamespace(response=exc))  # type: ignore[arg-type]
    if asked is None:
        return None, ""
    if not may_retry:
        return None, " (still failing after the retries)"
    if time.monotonic() + asked >= deadline:
        return None, f" (Retry-After {asked:.0f} s does not fit in the tool's timeout)"
    return max(0.0, asked), ""


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def _decode(raw: bytes, content_type: str) -> Any:
    if not raw:
        return None
    text = raw.decode("utf-8", "replace")
    if "json" in content_type:
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text
