"""OpenAPI operations as tools, calling a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from backend_marks import backend_options
from toolscript.runtime.integrations.openapi import ApiKeyAuth, BearerAuth, OpenAPISource

from toolscript import Runtime
from toolscript.errors import ConfigurationError

DOCUMENT: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Pets", "version": "1"},
    "servers": [{"url": "/v1"}],
    "paths": {
        "/pets": {
            "get": {
                "operationId": "listPets",
                "summary": "List pets.",
                "description": "Newest first.",
                "parameters": [
                    {
                        "name": "limit",
                        "in": "query",
                        "description": "At most this many.",
                        "schema": {"type": "integer", "minimum": 1},
                    },
                    {
                        "name": "tag",
                        "in": "query",
                        "schema": {"type": "array", "items": {"type": "string"}},
                    },
                ],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "array",
                                    "items": {"$ref": "#/components/schemas/Pet"},
                                }
                            }
                        },
                    }
                },
            },
            "post": {
                "operationId": "createPet",
                "summary": "Add a pet.",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/NewPet"}}
                    },
                },
                "responses": {"201": {"description": "created"}},
            },
        },
        "/pets/{pet-id}": {
            "parameters": [
                {"name": "pet-id", "in": "path", "required": True, "schema": {"type": "integer"}}
            ],
            "get": {
                "operationId": "getPet",
                "summary": "One pet.",
                "parameters": [{"name": "X-Trace", "in": "header", "schema": {"type": "string"}}],
            },
            "delete": {"operationId": "deletePet", "summary": "Remove a pet."},
        },
        "/pets/{pet-id}/notes": {
            "put": {
                "operationId": "setNotes",
                "parameters": [
                    {
                        "name": "pet-id",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "integer"},
                    }
                ],
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {"type": "array", "items": {"type": "string"}}
                        }
                    }
                },
            },
        },
    },
    "components": {
        "schemas": {
            "Pet": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "name": {"type": "string"},
                    "tag": {"type": "string", "nullable": True},
                },
            },
            "NewPet": {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string", "description": "The pet's name."},
                    "tag": {"type": "string", "nullable": True},
                },
            },
        }
    },
}


class PetStore(BaseHTTPRequestHandler):
    pets: dict[int, dict[str, Any]]
    seen: list[dict[str, Any]]

    def log_message(self, *args: Any) -> None:
        pass

    def _reply(self, status: int, data: Any) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _handle(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        self.seen.append(
            {
                "method": self.command,
                "path": url.path,
                "query": url.query,
                "body": body,
                "auth": self.headers.get("Authorization"),
                "key": self.headers.get("X-API-Key"),
                "trace": self.headers.get("X-Trace"),
            }
        )
        if self.headers.get("Authorization") != "Bearer tok-123":
            return self._reply(401, {"error": "unauthorized"})
        parts = url.path.strip("/").split("/")
        pets = self.pets
        if parts == ["v1", "pets"] and self.command == "GET":
            query = urllib.parse.parse_qs(url.query)
            limit = int(query.get("limit", ["100"])[0])
            return self._reply(200, sorted(pets.values(), key=lambda p: -p["id"])[:limit])
        if parts == ["v1", "pets"] and self.command == "POST":
            pet = {"id": max(pets, default=0) + 1, **body}
            pets[pet["id"]] = pet
            return self._reply(201, pet)
        if parts[:2] == ["v1", "pets"] and len(parts) >= 3:
            pet_id = int(parts[2])
            if pet_id not in pets:
                return self._reply(404, {"error": f"no pet {pet_id}"})
            if self.command == "GET":
                return self._reply(200, pets[pet_id])
            if self.command == "DELETE":
                del pets[pet_id]
                self.send_response(204)
                self.end_headers()
                return None
            if self.command == "PUT":
                pets[pet_id]["notes"] = body
                return self._reply(200, pets[pet_id])
        return self._reply(404, {"error": "no route"})

    do_GET = do_POST = do_DELETE = do_PUT = _handle


@pytest.fixture
def petstore() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []
    handler = type(
        "Handler", (PetStore,), {"pets": {1: {"id": 1, "name": "Rex", "tag": None}}, "seen": seen}
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        server.shutdown()
        server.server_close()


def test_operations_become_tools_with_schemas_and_descriptions(petstore):
    base_url, _ = petstore
    tools = {t.name: t for t in OpenAPISource(DOCUMENT, base_url=base_url, prefix="pets").tools()}
    assert list(tools) == [
        "pets_listPets",
        "pets_createPet",
        "pets_getPet",
        "pets_deletePet",
        "pets_setNotes",
    ]
    listing = tools["pets_listPets"]
    assert listing.read_only and listing.description == "List pets.\n\nNewest first."
    assert listing.parameters_schema["properties"]["limit"] == {
        "type": "integer",
        "minimum": 1,
        "description": "At most this many.",
    }
    assert listing.returns_schema["items"]["properties"]["tag"]["type"] == ["string", "null"]
    create = tools["pets_createPet"]
    assert not create.read_only
    assert all(t.blocking for t in tools.values())  # HTTP: in process, a timeout is answered
    assert create.parameters_schema["required"] == ["name"]  # flattened body
    assert tools["pets_getPet"].parameters_schema["required"] == ["pet_id"]
    assert tools["pets_setNotes"].parameters_schema["properties"]["body"]["type"] == "array"
    with Runtime(list(tools.values()), backend="inprocess") as rt:
        stubs = rt.render_stubs()
    assert (
        "def pets_listPets(limit: int = ..., tag: list[str] = ...) -> list[dict[str, Any]]:"
        in stubs
    )


def test_scripts_call_the_endpoint_with_auth_from_the_environment(
    petstore, monkeypatch, backend_name
):
    base_url, seen = petstore
    monkeypatch.setenv("PETS_TOKEN", "tok-123")
    monkeypatch.setenv("PETS_KEY", "k-9")
    source = OpenAPISource(
        DOCUMENT, base_url=base_url, auth=BearerAuth("PETS_TOKEN"), headers={"X-API-Key": "fixed"}
    )
    options = backend_options(backend_name)
    with Runtime(source.tools(), backend=backend_name, backend_options=options,
                 approve=lambda request: True) as rt:
        result = rt.run(
            "new = createPet(name='Tom', tag='cat')\n"
            "setNotes(new['id'], body=['likes fish'])\n"
            "one = getPet(pet_id=new['id'], X_Trace='t-1')\n"
            "names = [p['name'] for p in listPets(limit=5, tag=['cat', 'dog'])]\n"
            "deletePet(1)\n"
            "try:\n"
            "    getPet(1)\n"
            "except ToolError as exc:\n"
            "    missing = exc.message\n"
            "[new, one, names, missing]\n"
        )
        assert result.ok, result.error
        new, one, names, missing = result.value
        assert new == {"id": 2, "name": "Tom", "tag": "cat"}
        assert one["notes"] == ["likes fish"]
        assert names == ["Tom", "Rex"]
        assert "HTTPToolError: HTTP 404" in missing and "no pet 1" in missing
        invalid = rt.run("listPets(limit=0)")
        assert invalid.error.details["tool_error_type"] == "invalid_arguments"
    assert all(r["auth"] == "Bearer tok-123" and r["key"] == "fixed" for r in seen)
    assert seen[0]["body"] == {"name": "Tom", "tag": "cat"}
    assert seen[2]["path"] == "/v1/pets/2" and seen[2]["trace"] == "t-1"
    assert seen[3]["query"] == "limit=5&tag=cat&tag=dog"
    # The token never reached the sandbox: it is not in any record or result.
    assert "tok-123" not in json.dumps(result.to_dict(), default=str)

    keyed = OpenAPISource(
        DOCUMENT, base_url=base_url, auth=ApiKeyAuth("PETS_KEY"), include=["listPets"]
    )
    with Runtime(keyed.tools(), backend="inprocess") as rt:
        denied = rt.run("listPets()")
    assert "HTTP 401" in denied.error.message and seen[-1]["key"] == "k-9"


def test_configuration_errors(tmp_path, monkeypatch):
    with pytest.raises(ConfigurationError, match="base_url"):
        OpenAPISource(DOCUMENT)
    with pytest.raises(ConfigurationError, match="OpenAPI 3"):
        OpenAPISource({"swagger": "2.0"}, base_url="http://x")
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(DOCUMENT))
    source = OpenAPISource(
        path, base_url="http://127.0.0.1:9", auth=BearerAuth("NOT_SET_ENV"), include=["getPet"]
    )
    monkeypatch.delenv("NOT_SET_ENV", raising=False)
    with Runtime(source.tools(), backend="inprocess") as rt:
        result = rt.run("getPet(1)")
    assert "NOT_SET_ENV is not set" in result.error.message
