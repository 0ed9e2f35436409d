"""Import from OpenAPI: the options flow, `set_tools` and the REST endpoint.

A real FastAPI service runs on loopback (`dev/openapi_service.py`, under
uvicorn) and serves its own `/openapi.json`. Its tools are imported the way a
user does it, then a conversation turn calls one of them through the agent
and the service receives exactly that request. Bad input gets an error in
the form, naming the problem, and nothing is saved.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
import json
from pathlib import Path
from typing import Any

from aiohttp import web
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.exceptions import ServiceValidationError
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.http_tools_agent.const import CONF_ALLOWED_HOSTS, DOMAIN
from custom_components.http_tools_agent.engine.hosts import HostPolicy
from custom_components.http_tools_agent.engine.openapi.document import read_document
from custom_components.http_tools_agent.engine.openapi.mapping import (
    Auth,
    OpenApiDocument,
)
from custom_components.http_tools_agent.rest_view import TOOLS_URL
from custom_components.http_tools_agent.tools import openapi_import
from dev.loopback import LoopbackServer, free_port
from dev.openapi_service import API_KEY_HEADER, LightsService, lights_app

from .kit import call_service, converse, speech, tool_names
from .servers import FakeLLMServer, text_stream, tool_calls_stream

pytestmark = pytest.mark.usefixtures("setup_integration")

SET_LIGHTS = "set_lights_rooms__room__lights_post"
LIST_ROOMS = "list_rooms_rooms_get"
FIXTURES = Path(__file__).parent / "fixtures" / "openapi"
PETSTORE_2 = (FIXTURES / "petstore-2.0.yaml").read_text()


@pytest.fixture
async def service(socket_enabled: None) -> AsyncGenerator[LightsService]:
    """The FastAPI lights service on 127.0.0.1."""
    async with LightsService() as lights:
        yield lights


@pytest.fixture
def extra_options(service: LightsService) -> dict[str, Any]:
    """The service's key is a secret of the entry."""
    return {"secrets": {"lights_key": service.api_key}}


class BigDocument(LoopbackServer):
    """Serves a 20 MB document and one redirect to another host."""

    def routes(self, app: web.Application) -> None:
        """`/big.json` and `/elsewhere`."""

        async def big(request: web.Request) -> web.StreamResponse:
            response = web.StreamResponse(headers={"Content-Type": "application/json"})
            await response.prepare(request)
            await response.write(b'{"openapi": "3.0.0", "x": "')
            for _ in range(20):
                await response.write(b"a" * 1024 * 1024)
            await response.write(b'"}')
            return response

        async def elsewhere(request: web.Request) -> web.Response:
            raise web.HTTPFound("http://192.168.1.20/openapi.json")

        async def loop(request: web.Request) -> web.Response:
            raise web.HTTPFound("/loop")

        async def moved(request: web.Request) -> web.Response:
            raise web.HTTPMovedPermanently("/v2/openapi.yaml")

        async def yaml_document(request: web.Request) -> web.Response:
            return web.Response(text=PETSTORE_2, content_type="application/yaml")

        async def slow(request: web.Request) -> web.Response:
            await asyncio.sleep(2)
            return web.Response(text="{}")

        app.router.add_get("/big.json", big)
        app.router.add_get("/elsewhere", elsewhere)
        app.router.add_get("/loop", loop)
        app.router.add_get("/moved", moved)
        app.router.add_get("/v2/openapi.yaml", yaml_document)
        app.router.add_get("/slow", slow)


async def open_import(hass: HomeAssistant, entry: MockConfigEntry) -> Any:
    """The options menu, then *Import tools from an OpenAPI document*."""
    result = await hass.config_entries.options.async_init(entry.entry_id)
    assert "openapi" in result["menu_options"]
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"next_step_id": "openapi"}
    )
    assert result["step_id"] == "openapi"
    return result


async def submit(hass: HomeAssistant, result: Any, data: dict[str, Any]) -> Any:
    """Submit a step; let a reload finish."""
    result = await hass.config_entries.options.async_configure(result["flow_id"], data)
    await hass.async_block_till_done()
    return result


def choices(result: Any, key: str) -> list[str]:
    """The values a select field of the form offers."""
    for marker, selector in result["data_schema"].schema.items():
        if str(marker) == key:
            return [
                o if isinstance(o, str) else o["value"]
                for o in selector.config["options"]
            ]
    raise KeyError(key)


async def test_import_from_url_then_a_turn_calls_the_service(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    llm_server: FakeLLMServer,
    service: LightsService,
) -> None:
    """URL -> tick two operations -> pick the secret -> save; the agent then
    calls one with a path parameter, a query parameter and a JSON body."""
    before = [t["name"] for t in config_entry.options["tools"]]
    result = await open_import(hass, config_entry)
    result = await submit(hass, result, {"openapi_url": f"{service.url}/openapi.json"})
    assert result["step_id"] == "openapi_operations"
    placeholders = result["description_placeholders"]
    assert (placeholders["title"], placeholders["count"]) == ("Lights", "5")
    # Grouped by tag, in the document's order.
    assert choices(result, "openapi_operations") == [
        LIST_ROOMS,
        "get_lights_rooms__room__lights_get",
        SET_LIGHTS,
        "delete_scene_rooms__room__scenes__scene__delete",
        "health_health_get",
    ]

    result = await submit(
        hass, result, {"openapi_operations": [SET_LIGHTS, LIST_ROOMS]}
    )
    assert result["step_id"] == "openapi_preview"
    preview = result["description_placeholders"]
    assert (
        f"| set_lights | POST | {service.url}/rooms/{{room}}/lights" in preview["tools"]
    )
    assert "| list_rooms | GET |" in preview["tools"]
    assert preview["schemes"] == f"APIKeyHeader: header {API_KEY_HEADER}"
    assert choices(result, "openapi_auth_secret") == ["lights_key"]

    result = await submit(
        hass,
        result,
        {"openapi_server_url": service.url, "openapi_auth_secret": "lights_key"},
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    tools = config_entry.options["tools"]
    assert [t["name"] for t in tools] == [*before, "list_rooms", "set_lights"]
    assert tools[-1]["headers"] == {API_KEY_HEADER: "{secret:lights_key}"}
    # What people say is theirs to write: the import proposes no sentences.
    assert not any("sentences" in t for t in tools[-2:])
    assert (
        tools[-1]["url"]
        == f"{service.url}/rooms/{{room}}/lights?transition={{transition}}"
    )

    llm_server.add(
        tool_calls_stream(
            (
                "set_lights",
                {
                    "room": "kitchen",
                    "transition": 2,
                    "brightness": 180,
                    "color": "warm",
                },
            )
        ),
        text_stream("The kitchen lights are on."),
    )
    answer = await converse(hass, "Kitchen lights to 180, warm, over two seconds.")
    assert speech(answer) == "The kitchen lights are on."
    (request,) = service.requests
    assert (request.method, request.path, request.query) == (
        "POST",
        "/rooms/kitchen/lights",
        "transition=2",
    )
    assert json.loads(request.body) == {"brightness": 180, "color": "warm"}
    assert request.headers[API_KEY_HEADER.lower()] == service.api_key
    # The service's answer reached the model.
    assert llm_server.requests[-1]["messages"][-1]["content"] == (
        '{"room":"kitchen","transition":2,"brightness":180,"color":"warm"}'
    )

    # Ordinary tools from now on: the tool editor lists them.
    result = await hass.config_entries.options.async_init(config_entry.entry_id)
    result = await submit(hass, result, {"next_step_id": "edit_tool"})
    assert {"list_rooms", "set_lights"} <= set(choices(result, "tool"))


@pytest.mark.parametrize(
    ("make_input", "field", "error", "fragment"),
    [
        (
            lambda s, big: {"openapi_url": f"{s.url}/docs"},
            "openapi_url",
            "openapi_invalid",
            "not an OpenAPI document",
        ),
        (
            lambda s, big: {"openapi_url": f"{big.url}/big.json"},
            "openapi_url",
            "openapi_too_large",
            "larger than 10 MiB",
        ),
        (
            lambda s, big: {"openapi_url": f"http://127.0.0.1:{free_port()}/x.json"},
            "openapi_url",
            "openapi_fetch_failed",
            "127.0.0.1",
        ),
        (
            lambda s, big: {"openapi_url": f"{s.url}/missing.json?api_key=k3y"},
            "openapi_url",
            "openapi_fetch_failed",
            "/missing.json answered HTTP 404",
        ),
        (
            lambda s, big: {"openapi_document": _broken_document()},
            "openapi_document",
            "openapi_invalid",
            "$ref '#/components/schemas/LightChanges' points to nothing",
        ),
        (
            lambda s, big: {"openapi_url": f"{big.url}/loop"},
            "openapi_url",
            "openapi_fetch_failed",
            "more than 5 redirects",
        ),
        (
            lambda s, big: {"openapi_url": f"{big.url}/slow"},
            "openapi_url",
            "openapi_fetch_failed",
            "did not answer within 0.5 s",
        ),
        (
            lambda s, big: {"openapi_url": "lights.lan/openapi.json"},
            "openapi_url",
            "openapi_invalid_url",
            "'lights.lan/openapi.json' is not an http or https URL",
        ),
        (lambda s, big: {}, "openapi_url", "openapi_source_required", ""),
        (
            lambda s, big: {
                "openapi_url": f"{s.url}/openapi.json",
                "openapi_document": "{}",
            },
            "openapi_url",
            "openapi_source_required",
            "",
        ),
    ],
)
async def test_bad_documents_are_form_errors(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    service: LightsService,
    make_input: Any,
    field: str,
    error: str,
    fragment: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each is an error under its field, naming the problem; nothing saved."""
    monkeypatch.setattr(openapi_import, "FETCH_TIMEOUT", 0.5)
    options = dict(config_entry.options)
    async with BigDocument() as big:
        result = await open_import(hass, config_entry)
        result = await submit(hass, result, make_input(service, big))
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "openapi"
    assert result["errors"] == {field: error}
    assert fragment in result["description_placeholders"]["openapi_error"]
    assert "k3y" not in result["description_placeholders"]["openapi_error"]
    assert dict(config_entry.options) == options


def _broken_document() -> str:
    document = lights_app("k", []).openapi()
    body = document["paths"]["/rooms/{room}/lights"]["post"]["requestBody"]
    body["content"]["application/json"]["schema"]["$ref"] += "s"
    return json.dumps(document)


async def test_host_policy_bounds_the_document_and_the_tools(
    hass: HomeAssistant, config_entry: MockConfigEntry, service: LightsService
) -> None:
    """A URL, a redirect or a server outside the allowed hosts: refused."""
    hass.config_entries.async_update_entry(
        config_entry,
        options={**config_entry.options, CONF_ALLOWED_HOSTS: ["192.168.1.0/24"]},
    )
    await hass.async_block_till_done()
    options = dict(config_entry.options)
    result = await open_import(hass, config_entry)
    result = await submit(hass, result, {"openapi_url": f"{service.url}/openapi.json"})
    assert result["errors"] == {"openapi_url": "openapi_host_not_allowed"}
    assert result["description_placeholders"]["openapi_error"] == (
        "the host '127.0.0.1' is not in the allowed hosts"
    )
    assert service.requests == []

    hass.config_entries.async_update_entry(
        config_entry, options={**options, CONF_ALLOWED_HOSTS: ["127.0.0.1"]}
    )
    await hass.async_block_till_done()
    async with BigDocument() as big:
        result = await open_import(hass, config_entry)
        result = await submit(hass, result, {"openapi_url": f"{big.url}/elsewhere"})
    assert result["errors"] == {"openapi_url": "openapi_host_not_allowed"}
    assert "'192.168.1.20'" in result["description_placeholders"]["openapi_error"]

    # A pasted document whose server is outside: the preview refuses to save.
    result = await open_import(hass, config_entry)
    document = json.dumps(lights_app("k", []).openapi())
    result = await submit(hass, result, {"openapi_document": document})
    result = await submit(hass, result, {"openapi_operations": [LIST_ROOMS]})
    assert result["errors"] == {"openapi_server_url": "openapi_no_server"}
    result = await submit(hass, result, {"openapi_server_url": "http://10.0.0.9:8000"})
    assert result["errors"] == {"openapi_server_url": "openapi_host_not_allowed"}
    result = await submit(hass, result, {"openapi_server_url": service.url})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert config_entry.options["tools"][-1]["name"] == "list_rooms"


async def test_a_long_list_is_searched(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    """Sonarr's 235 operations: a search lists the matches; ticks stay."""
    result = await open_import(hass, config_entry)
    document = (FIXTURES / "sonarr-v3.json").read_text()
    result = await submit(hass, result, {"openapi_document": document})
    assert result["description_placeholders"]["count"] == "235"
    assert len(choices(result, "openapi_operations")) == 60
    result = await submit(hass, result, {"openapi_search": "calendar get"})
    listed = choices(result, "openapi_operations")
    assert listed == [
        "GET /api/v3/calendar",
        "GET /api/v3/calendar/{id}",
        "GET /feed/v3/calendar/sonarr.ics",
    ]
    # Tick one and search again: the ticked one stays, listed with the matches.
    result = await submit(
        hass,
        result,
        {"openapi_search": "system status", "openapi_operations": [listed[0]]},
    )
    assert choices(result, "openapi_operations") == [
        "GET /api/v3/calendar",
        "GET /api/v3/system/status",
    ]
    result = await submit(
        hass,
        result,
        {
            "openapi_search": "system status",
            "openapi_operations": ["GET /api/v3/calendar", "GET /api/v3/system/status"],
        },
    )
    assert result["step_id"] == "openapi_preview"
    tools = result["description_placeholders"]["tools"]
    assert (
        "| get_api_v3_calendar | GET | http://localhost:8989/api/v3/calendar |" in tools
    )
    assert "| get_api_v3_system_status | GET |" in tools
    # Nothing ticked is an error on the list.
    result = await open_import(hass, config_entry)
    result = await submit(hass, result, {"openapi_document": document})
    result = await submit(hass, result, {})
    assert result["errors"] == {"openapi_operations": "no_operation_selected"}


async def test_set_tools_and_rest_import_from_openapi(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    service: LightsService,
) -> None:
    """An automation loads a service's tools; bad input changes nothing."""
    source = {
        "url": f"{service.url}/openapi.json",
        "operations": ["GET /rooms", SET_LIGHTS],
        "auth_secret": "lights_key",
    }
    response = await call_service(hass, "set_tools", {"openapi": source})
    assert (response["source"], tool_names(response)) == (
        "request",
        ["list_rooms", "set_lights"],
    )

    for bad, fragment in (
        ({**source, "operations": ["getRooms"]}, "no operation 'getRooms'"),
        ({**source, "auth_secret": "nope"}, "secret 'nope' is not defined"),
        ({"operations": ["GET /rooms"]}, "either 'url' or 'document'"),
        ({**source, "url": f"{service.url}/docs"}, "not an OpenAPI document"),
    ):
        with pytest.raises(ServiceValidationError) as err:
            await call_service(hass, "set_tools", {"openapi": bad})
        assert err.value.translation_key == "openapi_import_failed"
        assert fragment in str(err.value)
        assert str(err.value).startswith("The tools were not changed")
    active = await call_service(hass, "get_tools")
    assert tool_names(active) == ["list_rooms", "set_lights"]

    client = await hass_client()
    reply = await client.post(
        TOOLS_URL,
        json={
            "tools": [
                {"name": "rooms", "url": f"{service.url}/rooms", "method": "GET"}
            ],
            "openapi": {**source, "operations": ["health_health_get"]},
        },
    )
    assert reply.status == 200
    assert [t["name"] for t in (await reply.json())["tools"]] == ["rooms", "health"]
    reply = await client.post(TOOLS_URL, json={"openapi": {"url": source["url"]}})
    assert reply.status == 400
    assert "must list the operations" in (await reply.json())["error"]
    assert tool_names(await call_service(hass, "get_tools")) == ["rooms", "health"]
    assert DOMAIN in hass.config.components


async def test_swagger_2_yaml_after_a_redirect_two_schemes_and_nothing_importable(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    """A YAML 2.0 document behind a redirect; a secret needs its scheme when
    there are two; operations that cannot be tools are an error, not a save."""
    options = dict(config_entry.options)
    async with BigDocument() as big:
        result = await open_import(hass, config_entry)
        result = await submit(hass, result, {"openapi_url": f"{big.url}/moved"})
        assert result["description_placeholders"]["title"] == "OpenAPI Petstore"
        result = await submit(hass, result, {"openapi_operations": ["uploadFile"]})
        assert result["errors"] == {"base": "openapi_no_tools"}
        assert result["description_placeholders"]["openapi_error"] == (
            "uploadFile: it takes a file (formData): a tool sends no files"
        )
    result = await open_import(hass, config_entry)
    document = (FIXTURES / "sonarr-v3.json").read_text()
    result = await submit(hass, result, {"openapi_document": document})
    result = await submit(hass, result, {"openapi_search": "system status"})
    result = await submit(
        hass,
        result,
        {
            "openapi_search": "system status",
            "openapi_operations": ["GET /api/v3/system/status"],
        },
    )
    assert choices(result, "openapi_auth_scheme") == ["X-Api-Key", "apikey"]
    data = {
        "openapi_server_url": "http://sonarr.lan:8989",
        "openapi_auth_secret": "lights_key",
    }
    result = await submit(hass, result, data)
    assert result["errors"] == {"openapi_auth_scheme": "openapi_auth_scheme_required"}
    assert dict(config_entry.options) == options
    result = await submit(hass, result, {**data, "openapi_auth_scheme": "apikey"})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert config_entry.options["tools"][-1]["url"] == (
        "http://sonarr.lan:8989/api/v3/system/status?apikey={secret:lights_key}"
    )


def test_a_tool_needing_an_undefined_secret_is_refused() -> None:
    """The validator runs on what the mapping made (secrets included)."""
    document = OpenApiDocument(read_document(json.dumps(lights_app("k", []).openapi())))
    auth = Auth(document.auth_schemes[0], "missing")
    with pytest.raises(openapi_import.OpenApiImportError) as err:
        openapi_import.map_checked(
            document,
            [LIST_ROOMS],
            server_url="http://127.0.0.1:9",
            auth=auth,
            taken=[],
            secrets=[],
            policy=HostPolicy(),
            verify_ssl=False,
        )
    assert err.value.detail == (
        "the tools made are invalid: tool 'list_rooms': headers.X-Lights-Key: "
        "secret 'missing' is not defined"
    )


@pytest.mark.parametrize(
    ("openapi", "fragment"),
    [
        ("http://x/openapi.json", "'openapi' must be an object"),
        ({"url": "http://x", "operations": ["a"], "tags": ["x"]}, "unknown keys: tags"),
        ({"url": 5, "operations": ["a"]}, "'openapi.url' must be text"),
        (
            {"document": {"openapi": "3.0.0"}, "operations": "GET /x"},
            "the document describes no paths",
        ),
    ],
)
async def test_set_tools_openapi_object_errors(
    hass: HomeAssistant, openapi: Any, fragment: str
) -> None:
    """A malformed `openapi` object names the key that is wrong."""
    with pytest.raises(ServiceValidationError, match=fragment):
        await call_service(hass, "set_tools", {"openapi": openapi})


async def test_set_tools_auth_scheme_must_exist(
    hass: HomeAssistant, service: LightsService
) -> None:
    """An `auth_scheme` the document does not declare is named."""
    with pytest.raises(
        ServiceValidationError, match="no usable security scheme 'nope'"
    ):
        await call_service(
            hass,
            "set_tools",
            {
                "openapi": {
                    "url": f"{service.url}/openapi.json",
                    "operations": [LIST_ROOMS],
                    "auth_secret": "lights_key",
                    "auth_scheme": "nope",
                }
            },
        )
