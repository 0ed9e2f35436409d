"""Refresh tools imported from an OpenAPI document's URL.

A real aiohttp server on loopback serves the lights service's document
(`dev/openapi_service.py`, as FastAPI writes it); the test changes what it
serves the way a service's update does: an operation added, one removed,
one changed; then an error, no server at all, the operations gone, and back.
Each refresh goes through the options flow as a user does it: the changes
are shown, nothing is saved until the form is submitted, and a refresh that
fails or finds operations gone raises a repair issue that a good refresh
clears.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
import copy
from dataclasses import dataclass, field
from datetime import timedelta
import json
from typing import Any

from aiohttp import web
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import issue_registry as ir
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.http_tools_agent.const import DOMAIN
from custom_components.http_tools_agent.flows.tool_form import form_values
from custom_components.http_tools_agent.tools.openapi_refresh import issue_id
from dev.loopback import LoopbackServer
from dev.openapi_service import lights_app

from .test_openapi_import import LIST_ROOMS, SET_LIGHTS, choices, open_import, submit

pytestmark = pytest.mark.usefixtures("setup_integration")

GET_LIGHTS = "get_lights_rooms__room__lights_get"
LIGHTS = "/rooms/{room}/lights"


@dataclass
class DocumentServer(LoopbackServer):
    """Serves `document` at `/openapi.json?api_key=…` with `status`, and
    another service's document at `/other.json`."""

    document: dict[str, Any] = field(default_factory=dict)
    status: int = 200

    def routes(self, app: web.Application) -> None:
        """`/openapi.json`, `/other.json`."""

        async def document(request: web.Request) -> web.Response:
            if self.status != 200:
                return web.Response(status=self.status, text="upgrading")
            return web.json_response(self.document)

        async def other(request: web.Request) -> web.Response:
            return web.json_response(lights_app("k", []).openapi())

        app.router.add_get("/openapi.json", document)
        app.router.add_get("/other.json", other)


@pytest.fixture
def extra_options() -> dict[str, Any]:
    """The lights service's key is a secret of the entry."""
    return {"secrets": {"lights_key": "k"}}


@pytest.fixture
async def served(socket_enabled: None) -> AsyncGenerator[DocumentServer]:
    """The lights service's document, as its first version."""
    async with DocumentServer(document=lights_app("k", []).openapi()) as server:
        yield server


def source_url(server: DocumentServer) -> str:
    """The document's URL; the key in its query must never be shown."""
    return f"{server.url}/openapi.json?api_key=d0c-t0ken-1234"


async def import_lights(
    hass: HomeAssistant, entry: MockConfigEntry, server: DocumentServer
) -> None:
    """Import three of the service's operations from its URL, with the key."""
    result = await open_import(hass, entry)
    result = await submit(hass, result, {"openapi_url": source_url(server)})
    result = await submit(
        hass, result, {"openapi_operations": [LIST_ROOMS, GET_LIGHTS, SET_LIGHTS]}
    )
    result = await submit(
        hass,
        result,
        {"openapi_server_url": server.url, "openapi_auth_secret": "lights_key"},
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY


async def open_refresh(hass: HomeAssistant, entry: MockConfigEntry) -> Any:
    """The options menu, then *Refresh tools imported from an OpenAPI URL*."""
    result = await hass.config_entries.options.async_init(entry.entry_id)
    assert "openapi_refresh" in result["menu_options"]
    return await submit(hass, result, {"next_step_id": "openapi_refresh"})


async def edit_tool(
    hass: HomeAssistant, entry: MockConfigEntry, which: str, **changes: Any
) -> None:
    """Change a tool's fields in the tool editor, as a user does."""
    result = await hass.config_entries.options.async_init(entry.entry_id)
    result = await submit(hass, result, {"next_step_id": "edit_tool"})
    result = await submit(hass, result, {"tool": which})
    (tool,) = (t for t in entry.options["tools"] if t["name"] == which)
    values = {k: v for k, v in form_values(tool).items() if v not in (None, "")}
    result = await submit(hass, result, {**values, **changes})
    assert result["type"] is FlowResultType.CREATE_ENTRY, result.get("errors")


def tool(entry: MockConfigEntry, name: str) -> dict[str, Any]:
    """The stored tool `name`."""
    (found,) = (t for t in entry.options["tools"] if t["name"] == name)
    return dict(found)


def names(entry: MockConfigEntry) -> list[str]:
    """The stored tools' names, in order."""
    return [t["name"] for t in entry.options["tools"]]


def version_2(document: dict[str, Any]) -> dict[str, Any]:
    """The service after an update: `get_lights` gone, `set_lights` with a
    new description and parameter, `list_rooms` described anew, a new
    operation for the temperature."""
    doc = copy.deepcopy(document)
    paths = doc["paths"]
    del paths[LIGHTS]["get"]
    post = paths[LIGHTS]["post"]
    post["description"] = "Set the lights of a room, with an optional scene."
    post["parameters"].append(
        {
            "name": "scene",
            "in": "query",
            "required": False,
            "schema": {"type": "string"},
        }
    )
    paths["/rooms"]["get"]["description"] = "Every room of the house."
    paths["/rooms/{room}/temperature"] = {
        "get": {
            "operationId": "get_temperature",
            "summary": "The temperature of a room",
            "tags": ["rooms"],
            "parameters": [
                {
                    "name": "room",
                    "in": "path",
                    "required": True,
                    "schema": {"type": "string"},
                }
            ],
            "security": [{"APIKeyHeader": []}],
            "responses": {"200": {"description": "OK"}},
        }
    }
    return doc


def issue(hass: HomeAssistant, entry: MockConfigEntry, server: DocumentServer) -> Any:
    """The source's repair issue, or None."""
    return ir.async_get(hass).async_get_issue(
        DOMAIN, issue_id(entry.entry_id, source_url(server))
    )


async def test_a_refresh_shows_its_changes_and_applies_them_only_on_confirm(
    hass: HomeAssistant, config_entry: MockConfigEntry, served: DocumentServer
) -> None:
    """Added operations are offered, the removed tool goes, the changed one
    takes the document's values, your own edit stays; all only once the
    form is submitted."""
    await import_lights(hass, config_entry, served)
    imported = ["list_rooms", "get_lights", "set_lights"]
    assert names(config_entry)[-3:] == imported
    (source,) = config_entry.options["openapi_sources"]
    assert source["url"] == source_url(served)
    # Up to date: nothing to confirm.
    result = await open_refresh(hass, config_entry)
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "openapi_up_to_date"

    await edit_tool(hass, config_entry, "list_rooms", description="Rooms, my words.")
    served.document = version_2(served.document)
    before = dict(config_entry.options)

    result = await open_refresh(hass, config_entry)
    assert result["step_id"] == "openapi_changes"
    shown = result["description_placeholders"]
    # The URL's key is hidden, everywhere it is shown.
    assert shown["url"] == f"{served.url}/openapi.json?api_key=**REDACTED**"
    assert shown["removed"] == (
        f"`get_lights` (GET {LIGHTS}: the document no longer has it)"
    )
    assert shown["changed"] == (
        "`list_rooms`: description (your edit kept: description); "
        "`set_lights`: description, parameters, url"
    )
    assert shown["added"] == "1"
    assert choices(result, "openapi_add") == ["get_temperature"]
    # The form is open: nothing changed yet. Closing it keeps everything.
    assert dict(config_entry.options) == before
    hass.config_entries.options.async_abort(result["flow_id"])
    await hass.async_block_till_done()
    assert dict(config_entry.options) == before
    # Operations of imported tools are gone: Repairs says so.
    gone = issue(hass, config_entry, served)
    assert gone.translation_key == "openapi_operations_gone"
    assert "get_lights" in gone.translation_placeholders["tools"]
    assert "d0c-t0ken" not in str(gone.translation_placeholders)

    result = await open_refresh(hass, config_entry)
    result = await submit(hass, result, {"openapi_add": ["get_temperature"]})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert names(config_entry)[-3:] == ["list_rooms", "set_lights", "get_temperature"]
    assert tool(config_entry, "list_rooms")["description"] == "Rooms, my words."
    set_lights = tool(config_entry, "set_lights")
    assert set_lights["description"].endswith("with an optional scene.")
    assert "scene" in set_lights["parameters"]["properties"]
    assert "{scene?}" in set_lights["url"]
    assert set_lights["headers"] == {"X-Lights-Key": "{secret:lights_key}"}
    temperature = tool(config_entry, "get_temperature")
    assert temperature["url"] == f"{served.url}/rooms/{{room}}/temperature"
    assert temperature["headers"] == {"X-Lights-Key": "{secret:lights_key}"}
    assert issue(hass, config_entry, served) is None
    # The tools run: the refreshed ones are the entry's active tools.
    active = config_entry.runtime_data.tools.active.tools
    assert {"set_lights", "get_temperature"} <= {t.name for t in active}
    # And the document now matches.
    result = await open_refresh(hass, config_entry)
    assert result["reason"] == "openapi_up_to_date"


async def test_a_failing_refresh_raises_a_repair_issue_a_good_one_clears(
    hass: HomeAssistant, config_entry: MockConfigEntry, served: DocumentServer
) -> None:
    """An error answer, no server, the operations gone: each is a repair
    issue naming the problem (never the URL's key); the tools stay until
    the user confirms; the service back: the issue goes."""
    await import_lights(hass, config_entry, served)
    tools = list(config_entry.options["tools"])

    served.status = 500
    result = await open_refresh(hass, config_entry)
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "openapi_refresh_failed"
    error = result["description_placeholders"]["openapi_error"]
    assert error == f"{served.url}/openapi.json answered HTTP 500"
    found = issue(hass, config_entry, served)
    assert found.translation_key == "openapi_refresh_failed"
    assert found.translation_placeholders["error"] == error
    assert "d0c-t0ken" not in str(found.translation_placeholders)
    assert config_entry.options["tools"] == tools

    await served.stop()
    result = await open_refresh(hass, config_entry)
    assert result["reason"] == "openapi_refresh_failed"
    assert (
        "127.0.0.1"
        in issue(hass, config_entry, served).translation_placeholders["error"]
    )
    await served.start()

    # The service answers again, without the operations the tools call.
    served.status = 200
    document = served.document
    served.document = {**document, "paths": {"/health": document["paths"]["/health"]}}
    result = await open_refresh(hass, config_entry)
    assert result["step_id"] == "openapi_changes"
    found = issue(hass, config_entry, served)
    assert found.translation_key == "openapi_operations_gone"
    assert found.translation_placeholders["tools"].startswith("list_rooms (GET /rooms")
    hass.config_entries.options.async_abort(result["flow_id"])
    assert config_entry.options["tools"] == tools

    # The service dropped the key the tools were made with.
    schemas = document["components"]["schemas"]
    served.document = {**document, "components": {"schemas": schemas}}
    result = await open_refresh(hass, config_entry)
    assert result["reason"] == "openapi_refresh_failed"
    assert result["description_placeholders"]["openapi_error"] == (
        "the document has no usable security scheme 'APIKeyHeader' (usable: none)"
    )

    # Fixed: the document is whole again; a refresh clears the issue.
    served.document = document
    result = await open_refresh(hass, config_entry)
    assert result["reason"] == "openapi_up_to_date"
    assert issue(hass, config_entry, served) is None
    assert config_entry.options["tools"] == tools


async def test_a_daily_check_raises_and_clears_the_issue_changing_no_tool(
    hass: HomeAssistant, config_entry: MockConfigEntry, served: DocumentServer
) -> None:
    """Once a day the URL is read again in the background: Repairs shows a
    document gone bad without the user opening anything; the tools are
    changed only by a refresh the user confirms."""
    await import_lights(hass, config_entry, served)
    tools = list(config_entry.options["tools"])
    served.document = version_2(served.document)
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(days=1, seconds=1))
    await hass.async_block_till_done(wait_background_tasks=True)
    assert (
        issue(hass, config_entry, served).translation_key == "openapi_operations_gone"
    )
    served.status = 503
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(days=2, seconds=2))
    await hass.async_block_till_done(wait_background_tasks=True)
    found = issue(hass, config_entry, served)
    assert found.translation_key == "openapi_refresh_failed"
    assert found.translation_placeholders["error"].endswith("answered HTTP 503")
    assert config_entry.options["tools"] == tools
    # Nothing gone any more: the issue goes, still nothing changed.
    served.status = 200
    served.document = lights_app("k", []).openapi()
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(days=3, seconds=3))
    await hass.async_block_till_done(wait_background_tasks=True)
    assert issue(hass, config_entry, served) is None
    assert config_entry.options["tools"] == tools


async def test_two_urls_and_a_tool_renamed_in_the_editor(
    hass: HomeAssistant, config_entry: MockConfigEntry, served: DocumentServer
) -> None:
    """With tools from two URLs the refresh asks which (keys hidden); a tool
    renamed in the tool editor is still followed under its new name."""
    await import_lights(hass, config_entry, served)
    result = await open_import(hass, config_entry)
    result = await submit(hass, result, {"openapi_url": f"{served.url}/other.json"})
    result = await submit(hass, result, {"openapi_operations": ["health_health_get"]})
    result = await submit(hass, result, {"openapi_server_url": served.url})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await edit_tool(hass, config_entry, "list_rooms", name="rooms")
    served.document = version_2(served.document)

    result = await open_refresh(hass, config_entry)
    assert result["step_id"] == "openapi_refresh"
    (field,) = result["data_schema"].schema.values()
    assert [(o["value"], o["label"]) for o in field.config["options"]] == [
        ("0", f"{served.url}/openapi.json?api_key=**REDACTED**"),
        ("1", f"{served.url}/other.json"),
    ]
    result = await submit(hass, result, {"openapi_source": "0"})
    shown = result["description_placeholders"]
    assert shown["changed"].startswith("`rooms`: description; `set_lights`:")
    assert shown["untracked"] == "—"
    result = await submit(hass, result, {})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert tool(config_entry, "rooms")["description"].endswith(
        "Every room of the house."
    )
    # Nothing ticked: the new operation is not added.
    assert "get_temperature" not in names(config_entry)
    result = await open_refresh(hass, config_entry)
    result = await submit(hass, result, {"openapi_source": "1"})
    assert result["reason"] == "openapi_up_to_date"
    # The other URL's one tool deleted: its refresh forgets the URL.
    result = await hass.config_entries.options.async_init(config_entry.entry_id)
    result = await submit(hass, result, {"next_step_id": "delete_tool"})
    result = await submit(hass, result, {"tools_to_delete": ["health"]})
    result = await open_refresh(hass, config_entry)
    result = await submit(hass, result, {"openapi_source": "1"})
    assert result["description_placeholders"]["untracked"] == "`health`"
    result = await submit(hass, result, {})
    assert [s["url"] for s in config_entry.options["openapi_sources"]] == [
        source_url(served)
    ]


async def test_diagnostics_show_the_source_without_its_key(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    config_entry: MockConfigEntry,
    served: DocumentServer,
) -> None:
    """What the entry remembers is in the diagnostics, keys hidden."""
    await import_lights(hass, config_entry, served)
    assert await async_setup_component(hass, "diagnostics", {})
    diagnostics = await get_diagnostics_for_config_entry(
        hass, hass_client, config_entry
    )
    (remembered,) = diagnostics["options"]["openapi_sources"]
    assert remembered["url"] == f"{served.url}/openapi.json?api_key=**REDACTED**"
    assert [t["name"] for t in remembered["tools"]] == [
        "list_rooms",
        "get_lights",
        "set_lights",
    ]
    assert remembered["tools"][0]["imported"]["headers"] == {
        "X-Lights-Key": "**REDACTED**"
    }
    assert "d0c-t0ken" not in json.dumps(diagnostics)


async def test_a_new_operation_needing_a_removed_secret_is_an_error(
    hass: HomeAssistant, config_entry: MockConfigEntry, served: DocumentServer
) -> None:
    """The tools were deleted, then their secret: a new operation that
    needs it is refused, naming the secret, and nothing is saved."""
    await import_lights(hass, config_entry, served)
    result = await hass.config_entries.options.async_init(config_entry.entry_id)
    result = await submit(hass, result, {"next_step_id": "delete_tool"})
    result = await submit(
        hass, result, {"tools_to_delete": ["list_rooms", "get_lights", "set_lights"]}
    )
    result = await hass.config_entries.options.async_init(config_entry.entry_id)
    result = await submit(hass, result, {"next_step_id": "secrets"})
    result = await submit(hass, result, {"remove_secrets": ["lights_key"]})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    served.document = version_2(served.document)
    before = dict(config_entry.options)

    result = await open_refresh(hass, config_entry)
    assert result["description_placeholders"]["untracked"] == (
        "`list_rooms`, `get_lights`, `set_lights`"
    )
    result = await submit(hass, result, {"openapi_add": ["get_temperature"]})
    assert result["errors"] == {"base": "invalid_tools"}
    assert (
        "secret 'lights_key' is not defined"
        in (result["description_placeholders"]["tools_error"])
    )
    assert dict(config_entry.options) == before
