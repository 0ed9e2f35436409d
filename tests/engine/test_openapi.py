"""OpenAPI documents -> tools: real documents, the mapping's rules, bad input.

The fixtures are documents real projects publish (each names its source in
a sibling ``.source`` file): the Swagger Petstore in 2.0 and 3.0, the
specification's own examples (``allOf``, callbacks, a 3.1 webhooks-only
document), Sonarr's API (235 operations) and Frigate's, which FastAPI
generated. Every operation of each maps without an error, every tool passes
the project's validator, and the whole mapping is pinned in golden files
(``tests/engine/__snapshots__/test_openapi/``; ``--snapshot-update`` after
an intended change).
"""

from __future__ import annotations

import json
from pathlib import Path
import time
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from custom_components.http_tools_agent.engine.definitions import (
    check_secrets,
    parse_tools,
)
from custom_components.http_tools_agent.engine.openapi.document import (
    MAX_DOCUMENT_BYTES,
    OpenApiError,
    read_document,
)
from custom_components.http_tools_agent.engine.openapi.mapping import (
    Auth,
    OpenApiDocument,
)
from custom_components.http_tools_agent.engine.requests import build_request

FIXTURES = Path(__file__).parents[1] / "fixtures" / "openapi"
# Where each document would be fetched from (relative servers read against it).
DOCUMENTS = {
    "petstore-2.0.yaml": "http://petstore.swagger.io/v2/swagger.yaml",
    "petstore-3.0.yaml": "https://petstore3.swagger.io/api/v3/openapi.yaml",
    "petstore-expanded-3.0.json": None,
    "callback-example-3.0.json": "http://streams.example/openapi.json",
    "sonarr-v3.json": "http://192.168.1.20:8989/api/v3/openapi.json",
    "frigate-api.yaml": None,
}
SECRET = "service_key"


def load(name: str, url: str | None = None) -> OpenApiDocument:
    """Read a fixture as the import does."""
    return OpenApiDocument(read_document((FIXTURES / name).read_bytes(), url))


def everything(doc: OpenApiDocument) -> dict[str, Any]:
    """The whole mapping of a document: what the golden files pin."""
    auth = Auth(doc.auth_schemes[0], SECRET) if doc.auth_schemes else None
    result = doc.to_tools([op.key for op in doc.operations], auth=auth)
    return {
        "title": doc.title,
        "version": doc.source.version,
        "server_url": doc.server_url,
        "auth_schemes": [scheme.label for scheme in doc.auth_schemes],
        "unsupported_auth": list(doc.unsupported_auth),
        "warnings": list(doc.warnings),
        "operations": [f"[{op.tag}] {op.key}: {op.label}" for op in doc.operations],
        "tools": list(result.tools),
        "skipped": [str(s) for s in result.skipped],
        "notes": [str(n) for n in result.notes],
    }


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_real_documents_map_to_valid_tools(
    name: str, snapshot: SnapshotAssertion
) -> None:
    """Each document maps whole; each tool passes the tool validator."""
    doc = load(name, DOCUMENTS[name])
    mapped = everything(doc)
    definitions = parse_tools(mapped["tools"])
    check_secrets(definitions, [SECRET])
    assert len(definitions) + len(mapped["skipped"]) == len(doc.operations)
    assert mapped == snapshot(extension_class=JSONSnapshotExtension)


def test_petstore_2_choices_a_user_sees() -> None:
    """Swagger 2.0: body, query arrays, the API key header, forms skipped."""
    doc = load("petstore-2.0.yaml", DOCUMENTS["petstore-2.0.yaml"])
    assert doc.server_url == "http://petstore.swagger.io/v2"
    assert [s.label for s in doc.auth_schemes] == ["api_key: header api_key"]
    assert doc.unsupported_auth == ("petstore_auth (oauth2)",)
    result = doc.to_tools(
        ["getPetById", "findPetsByTags", "addPet", "uploadFile", "deletePet"],
        auth=Auth(doc.auth_schemes[0], SECRET),
    )
    tools = {tool["name"]: tool for tool in result.tools}
    assert tools["getPetById"]["url"] == "http://petstore.swagger.io/v2/pet/{petId}"
    assert tools["getPetById"]["headers"] == {"api_key": "{secret:service_key}"}
    assert tools["getPetById"]["parameters"]["required"] == ["petId"]
    assert tools["findPetsByTags"]["description"].startswith("Deprecated. ")
    assert (
        tools["findPetsByTags"]["parameters"]["properties"]["tags"]["type"] == "array"
    )
    pet = tools["addPet"]["parameters"]
    assert pet["required"] == ["name", "photoUrls"]
    assert pet["properties"]["category"]["properties"] == {
        "id": {"type": "integer", "format": "int64"},
        "name": {"type": "string"},
    }
    # deletePet wants OAuth2 only: no key; its optional `api_key` header is
    # the model's to give, and left out without a value.
    assert tools["deletePet"]["headers"] == {"api_key": "{api_key?}"}
    assert tools["deletePet"]["parameters"]["required"] == ["petId"]
    assert not [n for n in result.notes if n.operation == "deletePet"]
    assert [str(s) for s in result.skipped] == [
        "uploadFile: it takes a file (formData): a tool sends no files"
    ]


def test_fastapi_ids_become_function_names() -> None:
    """FastAPI's generated operationIds are cut back to the function name."""
    doc = load("frigate-api.yaml")
    assert doc.operations[0].key == "first_time_login_auth_first_time_login_get"
    result = doc.to_tools(["first_time_login_auth_first_time_login_get"])
    assert result.tools[0]["name"] == "first_time_login"
    assert result.tools[0]["url"] == (
        "https://demo.frigate.video/api/auth/first_time_login"
    )
    skipped = {
        s.operation: s.reason
        for s in doc.to_tools([op.key for op in doc.operations]).skipped
    }
    assert "multipart/form-data" in skipped["register_face_faces__name__register_post"]


def test_large_document_lists_hundreds_and_maps_fast() -> None:
    """Sonarr: 235 operations; a localhost server becomes the document's host."""
    started = time.perf_counter()
    doc = load("sonarr-v3.json", DOCUMENTS["sonarr-v3.json"])
    read = time.perf_counter() - started
    assert len(doc.operations) == 235
    assert doc.server_url == "http://192.168.1.20:8989"
    started = time.perf_counter()
    result = doc.to_tools([op.key for op in doc.operations])
    mapped = time.perf_counter() - started
    assert len(result.tools) == 235
    # Generous bounds for a shared 2-core machine (measured: 0.4 s and 0.03 s).
    assert read < 10
    assert mapped < 2
    # The validator's finding is kept as a warning, not an error.
    assert doc.warnings == (
        "Path parameter 'path' for 'get' operation in '/' was not resolved",
    )


def test_a_mapped_tool_sends_path_query_and_body() -> None:
    """A POST with a path, a required query parameter and a JSON body."""
    doc = load("callback-example-3.0.json", DOCUMENTS["callback-example-3.0.json"])
    tool = parse_tools(list(doc.to_tools(["POST /streams"]).tools))[0]
    request = build_request(tool, {"callbackUrl": "http://me/cb"})
    assert (
        request.url == "http://streams.example/streams?callbackUrl=http%3A%2F%2Fme%2Fcb"
    )
    assert request.json_body == {}


def _doc(**extra: Any) -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "Lights", "version": "1"},
        "servers": [{"url": "/api"}],
        "paths": {
            "/rooms/{room}/lights": {
                "post": {
                    "operationId": "set_lights",
                    "summary": "Set the **lights** of a [room](http://x).",
                    "parameters": [
                        {
                            "name": "room",
                            "in": "path",
                            "required": True,
                            "schema": {"type": "string"},
                        },
                        {
                            "name": "transition",
                            "in": "query",
                            "required": True,
                            "schema": {
                                "type": "integer",
                                "minimum": 0,
                                "exclusiveMinimum": True,
                            },
                        },
                        {
                            "name": "dry_run",
                            "in": "query",
                            "schema": {"type": "boolean"},
                        },
                        {
                            "name": "session",
                            "in": "cookie",
                            "schema": {"type": "string"},
                        },
                    ],
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {"$ref": "#/components/schemas/Lights"}
                            }
                        },
                    },
                },
            },
        },
        "components": {
            "schemas": {
                "Base": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "integer", "readOnly": True},
                        "brightness": {"type": "integer", "maximum": 255},
                    },
                    "required": ["id", "brightness"],
                },
                "Node": {
                    "type": "object",
                    "properties": {"child": {"$ref": "#/components/schemas/Node"}},
                },
                "Lights": {
                    "allOf": [
                        {"$ref": "#/components/schemas/Base"},
                        {
                            "type": "object",
                            "properties": {
                                "color": {
                                    "anyOf": [{"type": "string"}, {"type": "null"}],
                                    "description": "A colour name",
                                },
                                "tree": {"$ref": "#/components/schemas/Node"},
                            },
                        },
                    ]
                },
            },
        },
        **extra,
    }


def _read(
    data: object, url: str | None = "http://lights.lan/openapi.json"
) -> OpenApiDocument:
    return OpenApiDocument(read_document(json.dumps(data), url))


def test_schema_rules_allof_nullable_readonly_recursion() -> None:
    """allOf merged, null branches dropped, readOnly out, recursion cut."""
    result = _read(_doc()).to_tools(["set_lights"])
    (tool,) = result.tools
    assert tool["url"] == (
        "http://lights.lan/api/rooms/{room}/lights?transition={transition}"
        "&dry_run={dry_run?}"
    )
    assert tool["description"] == "Set the lights of a room."
    assert tool["parameters"] == {
        "type": "object",
        "properties": {
            "room": {"type": "string"},
            "transition": {"type": "integer", "exclusiveMinimum": 0},
            "dry_run": {"type": "boolean"},
            "brightness": {"type": "integer", "maximum": 255},
            "color": {"type": "string", "description": "A colour name"},
            "tree": {"type": "object", "properties": {"child": {"type": "object"}}},
        },
        "required": ["room", "transition", "brightness"],
    }
    assert [n.reason for n in result.notes] == [
        "optional cookie 'session' left out: cookies are not sent",
    ]
    parse_tools(list(result.tools))


def test_optional_query_and_header_parameters_are_sent_when_given() -> None:
    """A POST's optional query parameter and an optional header become
    optional placeholders: in the request with a value, left out without;
    one whose name cannot be a placeholder is left out, noted."""
    data = _doc()
    parameters = data["paths"]["/rooms/{room}/lights"]["post"]["parameters"]
    parameters += [
        {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
        {"name": "X.Debug", "in": "header", "schema": {"type": "string"}},
    ]
    result = _read(data).to_tools(["set_lights"])
    (tool,) = parse_tools(list(result.tools))
    needed = {"room": "den", "transition": 2, "brightness": 9}

    bare = build_request(tool, needed)
    given = build_request(tool, {**needed, "dry_run": True, "X-Trace": "t-1"})

    assert bare.url == "http://lights.lan/api/rooms/den/lights?transition=2"
    assert "X-Trace" not in bare.headers
    assert given.url == (
        "http://lights.lan/api/rooms/den/lights?transition=2&dry_run=true"
    )
    assert given.headers["X-Trace"] == "t-1"
    assert given.json_body == {"brightness": 9}
    assert "optional header parameter 'X.Debug' left out: it cannot be a " in (
        " ".join(n.reason for n in result.notes)
    )


@pytest.mark.parametrize(
    ("flag", "confirm"), [(True, "always"), (False, "never"), (None, None)]
)
def test_consequential_operations_ask_first(
    flag: bool | None, confirm: str | None
) -> None:
    """ChatGPT Actions' `x-openai-isConsequential`: true asks the user before
    every call, false never; absent, the verb decides (`confirm` left out)."""
    data = _doc()
    if flag is not None:
        data["paths"]["/rooms/{room}/lights"]["post"]["x-openai-isConsequential"] = flag
    (tool,) = _read(data).to_tools(["set_lights"]).tools
    assert tool.get("confirm") == confirm
    (definition,) = parse_tools([tool])
    assert definition.needs_confirmation is bool(flag)


def test_names_stay_unique_and_valid() -> None:
    """A taken name gets a number; odd ids become valid names."""
    data = _doc()
    data["paths"]["/rooms/{room}/lights"]["post"]["operationId"] = "set lights/all"
    doc = _read(data)
    first = doc.to_tools(["set lights/all"], taken=["set_lights_all"])
    assert first.tools[0]["name"] == "set_lights_all_2"


def test_unknown_operations_are_named() -> None:
    """Asking for operations the document lacks names each one."""
    with pytest.raises(OpenApiError, match="no operation 'getPet', 'GET /nope'"):
        _read(_doc()).to_tools(["getPet", "GET /nope", "set_lights"])


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("#/components/schemas/Nope", "'#/components/schemas/Nope' points to nothing"),
        ("http://127.0.0.1:9/x.json#/Pet", "points outside the document"),
        ("file:///etc/passwd", "points outside the document"),
    ],
)
def test_broken_refs_are_refused_without_fetching(ref: str, message: str) -> None:
    """A $ref to nothing, another file or a URL: an error naming it and where."""
    data = _doc()
    data["components"]["schemas"]["Lights"]["allOf"][0]["$ref"] = ref
    with pytest.raises(OpenApiError, match="broken references") as err:
        _read(data)
    assert message in str(err.value)
    assert "(at components.schemas.Lights.allOf.0)" in str(err.value)
    assert err.value.kind == "broken_ref"


@pytest.mark.parametrize(
    ("raw", "reason", "message"),
    [
        (
            b"<!doctype html><html><body>Login</body></html>",
            "not_openapi",
            "not an OpenAPI document",
        ),
        (b'{"name": "not an API"}', "not_openapi", "no 'openapi' or 'swagger'"),
        (b'{"swagger": "1.2", "paths": {}}', "unsupported_version", "'1.2'"),
        (b"openapi: 3.0.0\npaths: [unclosed", "not_openapi", "neither JSON nor YAML"),
        (b"\xff\xfe{}", "not_openapi", "not UTF-8"),
        (b"   ", "not_openapi", "empty"),
    ],
)
def test_documents_that_are_not_openapi(raw: bytes, reason: str, message: str) -> None:
    """Each says what is wrong."""
    with pytest.raises(OpenApiError, match=message) as err:
        read_document(raw)
    assert err.value.kind == reason


def test_a_webhooks_only_document_has_nothing_to_import() -> None:
    """A 3.1 document with webhooks and no paths: no operations."""
    with pytest.raises(OpenApiError, match="describes no paths"):
        load("webhook-example-3.1.json")


def test_size_limits() -> None:
    """20 MB and a YAML alias bomb are refused before anything else."""
    big = b'{"openapi": "3.0.0", "x": "' + b"a" * (20 * 1024 * 1024) + b'"}'
    with pytest.raises(OpenApiError, match="larger than 10 MiB"):
        read_document(big)
    assert len(big) > MAX_DOCUMENT_BYTES
    bomb = "openapi: 3.0.0\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
    for level in range(1, 8):
        refs = ", ".join([f"*a{level - 1}"] * 10)
        bomb += f"a{level}: &a{level} [{refs}]\n"
    with pytest.raises(OpenApiError, match="YAML aliases") as err:
        read_document(bomb)
    assert err.value.kind == "too_large"


def test_server_url_rules() -> None:
    """Relative servers, a pasted document, variables, the document's host."""
    pasted = _read(_doc(), url=None)
    assert pasted.server_url is None
    with pytest.raises(OpenApiError, match="names no server URL"):
        pasted.to_tools(["set_lights"])
    assert (
        pasted.to_tools(["set_lights"], server_url="http://10.0.0.2/api/")
        .tools[0]["url"]
        .startswith("http://10.0.0.2/api/rooms/{room}/lights")
    )
    several = _read(
        _doc(
            servers=[
                {"url": "https://cloud.example/v1"},
                {
                    "url": "{scheme}://lights.lan/api",
                    "variables": {"scheme": {"default": "http"}},
                },
            ]
        )
    )
    assert several.server_url == "http://lights.lan/api"


def _edge_document() -> dict[str, Any]:
    """What real documents hold now and then, in one 3.1 document."""
    ok = {"200": {"description": "ok"}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "Edges", "version": "1"},
        "servers": [
            {"url": "{region}.example/api"},
            {"url": "https://api.example/v1/"},
        ],
        "security": [{"bearer": []}],
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "basic": {"type": "http", "scheme": "basic"},
                "session": {"type": "apiKey", "in": "cookie", "name": "sid"},
            },
        },
        "paths": {
            "/things/{id}": {
                "parameters": [
                    {
                        "name": "id",
                        "in": "path",
                        "required": True,
                        "schema": {"type": ["integer", "null"]},
                    }
                ],
                "put": {
                    "operationId": "put_thing",
                    "description": "# Put\n\nReplace a ![logo](x.png) <b>thing</b>.",
                    "parameters": [
                        {
                            "name": "X-Request-Id",
                            "in": "header",
                            "required": True,
                            "schema": {"type": "string"},
                        },
                        {
                            "name": "filter",
                            "in": "query",
                            "required": True,
                            "content": {
                                "application/json": {"schema": {"type": "object"}}
                            },
                        },
                    ],
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/merge-patch+json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "kind": {
                                            "oneOf": [
                                                {"type": "string"},
                                                {"type": "integer"},
                                            ]
                                        },
                                        "level": {
                                            "type": ["number", "null"],
                                            "enum": [1, 2, None],
                                        },
                                        "tags": {"type": "null"},
                                    },
                                    "required": ["kind", "gone"],
                                }
                            },
                        },
                    },
                    "responses": ok,
                },
                "delete": {
                    "operationId": "drop",
                    "security": [],
                    "responses": ok,
                    "requestBody": {
                        "content": {"application/json": {"schema": {"type": "object"}}}
                    },
                },
            },
            "/login": {
                "post": {
                    "operationId": "login",
                    "parameters": [
                        {
                            "name": "sid",
                            "in": "cookie",
                            "required": True,
                            "schema": {"type": "string"},
                        }
                    ],
                    "responses": ok,
                }
            },
            "/files/{file.name}": {"get": {"operationId": "file", "responses": ok}},
            "/upload": {
                "post": {
                    "operationId": "upload",
                    "responses": ok,
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "data": {"type": "string", "format": "binary"}
                                    },
                                }
                            }
                        },
                    },
                }
            },
            "/search": {
                "get": {
                    "operationId": "search",
                    "responses": ok,
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    },
                }
            },
        },
    }


def test_edges_of_real_documents() -> None:
    """Bearer, a header parameter, content parameters, oneOf, null types,
    public operations, cookies, files, names that cannot be placeholders."""
    doc = _read(_edge_document(), url=None)
    assert doc.server_url == "https://api.example/v1"
    assert [s.label for s in doc.auth_schemes] == [
        "bearer: Authorization: Bearer …",
        "basic: HTTP basic",
    ]
    assert doc.unsupported_auth == ("session (apiKey in cookie)",)
    result = doc.to_tools(
        [op.key for op in doc.operations], auth=Auth(doc.scheme("bearer"), "token")
    )
    put, drop = result.tools
    assert put["description"] == "Put Replace a thing."
    assert put["url"] == "https://api.example/v1/things/{id}?filter={filter}"
    assert put["headers"] == {
        "X-Request-Id": "{X-Request-Id}",
        "Authorization": "Bearer {secret:token}",
    }
    assert put["parameters"] == {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "X-Request-Id": {"type": "string"},
            "filter": {"type": "object"},
            "kind": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "level": {"type": "number", "enum": [1, 2]},
            "tags": {"type": "null"},
        },
        "required": ["id", "X-Request-Id", "filter", "kind"],
    }
    # `security: []`: public, no token; its optional body is left out.
    assert "headers" not in drop
    assert [str(s) for s in result.skipped] == [
        "login: it needs the cookie 'sid': cookies are not sent",
        "file: its path parameter 'file.name' cannot be a placeholder",
        "upload: its body is a file",
        "search: its JSON body cannot be sent: a GET tool sends its arguments in the query",
    ]
    assert [str(n) for n in result.notes] == [
        "drop: its optional JSON body is left out (a DELETE sends none)"
    ]
    parse_tools(list(result.tools))
    with pytest.raises(OpenApiError, match="no usable security scheme 'session'"):
        doc.scheme("session")


def test_swagger_2_without_host_takes_the_documents() -> None:
    """A 2.0 document without `host` is served by the host it came from."""
    data = {
        "swagger": "2.0",
        "info": {"title": "Two", "version": "1"},
        "basePath": "/api/",
        "paths": {"/ping": {"get": {"responses": {"200": {"description": "ok"}}}}},
    }
    doc = _read(data, url="https://nas.lan:5001/swagger.json")
    assert doc.server_url == "https://nas.lan:5001/api"
    assert doc.to_tools(["GET /ping"]).tools[0]["name"] == "get_ping"
    assert _read(data, url=None).server_url is None


def test_basic_scheme_form_body_and_the_documented_answer() -> None:
    """HTTP basic becomes `auth` (the secret the password, `<secret>_username`
    the username); a urlencoded body a form; the documented answer's list
    of objects suggests the plain fields the model reads."""
    document = {
        "openapi": "3.0.3",
        "info": {"title": "Notes", "version": "1"},
        "servers": [{"url": "https://notes.example"}],
        "components": {
            "securitySchemes": {"login": {"type": "http", "scheme": "basic"}}
        },
        "security": [{"login": []}],
        "paths": {
            "/notes": {
                "get": {
                    "operationId": "listNotes",
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "properties": {
                                            "count": {"type": "integer"},
                                            "results": {
                                                "type": "array",
                                                "items": {
                                                    "type": "object",
                                                    "properties": {
                                                        "id": {"type": "integer"},
                                                        "title": {"type": "string"},
                                                        "tags": {
                                                            "type": "array",
                                                            "items": {"type": "string"},
                                                        },
                                                        "owner": {"type": "object"},
                                                    },
                                                },
                                            },
                                        },
                                    }
                                }
                            },
                        }
                    },
                },
                "post": {
                    "operationId": "addNote",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/x-www-form-urlencoded": {
                                "schema": {
                                    "type": "object",
                                    "properties": {"text": {"type": "string"}},
                                    "required": ["text"],
                                }
                            }
                        },
                    },
                    "responses": {"201": {"description": "created"}},
                },
            }
        },
    }
    doc = _read(document, url=None)
    result = doc.to_tools(
        ["listNotes", "addNote"], auth=Auth(doc.scheme(None), "notes")
    )
    listed, added = result.tools
    auth = {
        "type": "basic",
        "username": "{secret:notes_username}",
        "password": "{secret:notes}",
    }
    assert listed["auth"] == added["auth"] == auth
    assert listed["response"] == {"path": "results", "fields": ["id", "title"]}
    assert added["body_format"] == "form"
    assert added["parameters"]["required"] == ["text"]
    (definition,) = parse_tools([{**added, "name": "add_note"}])
    assert definition.body_format == "form"
