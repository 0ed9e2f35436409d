"""Services that replace, report, reset and run the active tools.

`set_tools`, `get_tools` and `reset_tools` are admin only. They answer
`{ok, count, source, enabled, tools}`. `set_tools` takes `tools`, an
`openapi` source (a document's URL or text and the operations to import,
`tools/openapi_import.py`), or both. An override lives in memory only:
`reset_tools`, a reload or a restart bring back the configured tools.
`run_tool` (admin) runs one tool as an agent would and answers
`{ok, status, result, elapsed_ms}`. The helpers that pick the entry (Home
Assistant's own rule: `config_entry_id`, optional when the integration has one
entry) and read the tools are shared with the HTTP view.
"""

from __future__ import annotations

import json
from typing import Any, cast

from homeassistant.const import ATTR_CONFIG_ENTRY_ID
from homeassistant.core import (
    HomeAssistant,
    ServiceCall,
    ServiceResponse,
    SupportsResponse,
    callback,
)
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv, llm, service
import probatio

from .const import DOMAIN, LOGGER
from .engine.definitions import (
    ToolDefinition,
    ToolDefinitionError,
    parse_tools,
    parse_tools_json,
)
from .redact import redact_tools
from .runtime import HttpToolsConfigEntry
from .tools.entry_tools import EntryTools
from .tools.llm_api import async_run_tool
from .tools.openapi_import import OpenApiImportError, OpenApiSource, async_import
from .tools.sign_in import is_sign_in

SERVICE_SET_TOOLS = "set_tools"
SERVICE_GET_TOOLS = "get_tools"
SERVICE_RESET_TOOLS = "reset_tools"
SERVICE_RUN_TOOL = "run_tool"
ATTR_TOOLS = "tools"
ATTR_TOOL = "tool"
ATTR_ARGUMENTS = "arguments"
ATTR_OPENAPI = "openapi"

_ENTRY_SCHEMA = {probatio.Optional(ATTR_CONFIG_ENTRY_ID): cv.string}
SET_TOOLS_SCHEMA = probatio.Schema(
    {
        **_ENTRY_SCHEMA,
        probatio.Optional(ATTR_TOOLS): cv.match_all,
        probatio.Optional(ATTR_OPENAPI): cv.match_all,
    }
)
ENTRY_ONLY_SCHEMA = probatio.Schema(_ENTRY_SCHEMA)
RUN_TOOL_SCHEMA = probatio.Schema(
    {
        **_ENTRY_SCHEMA,
        probatio.Required(ATTR_TOOL): cv.string,
        probatio.Optional(ATTR_ARGUMENTS): cv.match_all,
    }
)


class NoDefinitionError(ValueError):
    """The request holds no tool definition (the REST view answers 400)."""


def resolve_entry(hass: HomeAssistant, entry_id: str | None) -> HttpToolsConfigEntry:
    """Return the loaded entry a request is about (the only one when no id).

    Raises ServiceValidationError naming what is wrong.
    """
    if entry_id is None:
        # A sign-in is an entry too, never the one meant.
        servers = [
            entry
            for entry in hass.config_entries.async_entries(
                DOMAIN, include_ignore=False, include_disabled=False
            )
            if not is_sign_in(entry)
        ]
        if len(servers) == 1:
            entry_id = servers[0].entry_id
    entry: HttpToolsConfigEntry = service.async_get_config_entry(hass, DOMAIN, entry_id)
    if is_sign_in(entry):
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="entry_is_sign_in",
            translation_placeholders={"name": entry.title},
        )
    return entry


def parse_tools_input(value: object, tools: EntryTools) -> list[ToolDefinition]:
    """Read tools given as a list or as JSON text (str or bytes), for `tools`.

    Raises ToolDefinitionError naming the tool and field (also for a
    `{secret:name}` the entry does not define), or NoDefinitionError when the
    input is valid but holds no definition.
    """
    if value is None:
        raise NoDefinitionError("the tool list holds no definition")
    if isinstance(value, (str, bytes, bytearray)):
        definitions = parse_tools_json(
            bytes(value) if not isinstance(value, str) else value
        )
    else:
        definitions = parse_tools(value)
    if not definitions:
        raise NoDefinitionError("the tool list holds no definition")
    tools.check_secrets(definitions)
    return definitions


async def async_requested_tools(
    hass: HomeAssistant, entry: HttpToolsConfigEntry, tools: object, openapi: object
) -> list[ToolDefinition]:
    """The tools a request gives: `tools`, an `openapi` import, or both.

    Raises NoDefinitionError, ToolDefinitionError or OpenApiImportError;
    nothing changes.
    """
    entry_tools = entry.runtime_data.tools
    if openapi is None:
        return parse_tools_input(tools, entry_tools)
    given = [] if tools is None else parse_tools_input(tools, entry_tools)
    imported = await async_import(
        hass,
        OpenApiSource.parse(openapi),
        policy=entry.runtime_data.settings.hosts,
        secrets=entry_tools.secrets,
        taken=[d.name for d in given],
    )
    return [*given, *imported]


async def _async_set_tools(call: ServiceCall) -> ServiceResponse:
    entry = resolve_entry(call.hass, call.data.get(ATTR_CONFIG_ENTRY_ID))
    try:
        definitions = await async_requested_tools(
            call.hass, entry, call.data.get(ATTR_TOOLS), call.data.get(ATTR_OPENAPI)
        )
    except OpenApiImportError as err:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="openapi_import_failed",
            translation_placeholders={"error": err.detail},
        ) from None
    except NoDefinitionError:
        raise ServiceValidationError(
            translation_domain=DOMAIN, translation_key="no_tool_definition"
        ) from None
    except ToolDefinitionError as err:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="invalid_tools",
            translation_placeholders={"error": str(err)},
        ) from None
    tools = entry.runtime_data.tools
    tools.set_override(definitions)
    LOGGER.info(
        "Tools of %s replaced at runtime: %s",
        entry.title,
        ", ".join(d.name for d in definitions),
    )
    return _response(tools)


async def _async_get_tools(call: ServiceCall) -> ServiceResponse:
    entry = resolve_entry(call.hass, call.data.get(ATTR_CONFIG_ENTRY_ID))
    return _response(entry.runtime_data.tools)


async def _async_reset_tools(call: ServiceCall) -> ServiceResponse:
    entry = resolve_entry(call.hass, call.data.get(ATTR_CONFIG_ENTRY_ID))
    entry.runtime_data.tools.reset()
    LOGGER.info("Tools of %s reset to the configured ones", entry.title)
    return _response(entry.runtime_data.tools)


def tools_response(tools: EntryTools) -> dict[str, Any]:
    """`{ok, count, source, enabled, tools}` of the active tools."""
    return tools.active.as_response(enabled=tools.enabled)


def _response(tools: EntryTools) -> ServiceResponse:
    # Responses end up in automation traces, which users share: header
    # values (keys, tokens) are hidden, as in diagnostics.
    body = tools_response(tools)
    return cast(ServiceResponse, {**body, "tools": redact_tools(body["tools"])})


def _run_arguments(value: object) -> dict[str, Any]:
    """The arguments of run_tool: an object, or the same as JSON text."""
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except ValueError as err:
            raise ServiceValidationError(
                translation_domain=DOMAIN,
                translation_key="invalid_arguments",
                translation_placeholders={"error": f"not valid JSON ({err})"},
            ) from None
    if not isinstance(value, dict):
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="invalid_arguments",
            translation_placeholders={"error": "they must be an object"},
        )
    return value


async def _async_run_tool(call: ServiceCall) -> ServiceResponse:
    entry = resolve_entry(call.hass, call.data.get(ATTR_CONFIG_ENTRY_ID))
    arguments = _run_arguments(call.data.get(ATTR_ARGUMENTS))
    definition = entry.runtime_data.tools.active.by_name.get(call.data[ATTR_TOOL])
    if definition is not None and definition.confirmation.pin is not None:
        # An automation has no one to ask: it is the user's confirmation
        # (only an admin writes it), except for a tool that asks for a PIN,
        # which only a person gives (docs/security.md).
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="run_tool_needs_pin",
            translation_placeholders={"tool": definition.name},
        )
    context = llm.LLMContext(
        platform=DOMAIN,
        context=call.context,
        language=call.hass.config.language,
        assistant=DOMAIN,  # an action, no assistant
        device_id=None,
    )
    result = await async_run_tool(
        call.hass, entry.runtime_data, call.data[ATTR_TOOL], arguments, context
    )
    response: dict[str, Any] = {
        "ok": result.ok,
        "status": result.status,
        "result": result.text,
        "elapsed_ms": round(result.duration * 1000),
    }
    if result.speech is not None:
        # The tool's own sentence, for an automation to say or send.
        response["speech"] = result.speech
    return response


@callback
def async_setup_services(hass: HomeAssistant) -> None:
    """Register the admin-only tool services."""
    service.async_register_admin_service(
        hass,
        DOMAIN,
        SERVICE_SET_TOOLS,
        _async_set_tools,
        schema=SET_TOOLS_SCHEMA,
        supports_response=SupportsResponse.OPTIONAL,
    )
    service.async_register_admin_service(
        hass,
        DOMAIN,
        SERVICE_GET_TOOLS,
        _async_get_tools,
        schema=ENTRY_ONLY_SCHEMA,
        supports_response=SupportsResponse.ONLY,
    )
    service.async_register_admin_service(
        hass,
        DOMAIN,
        SERVICE_RESET_TOOLS,
        _async_reset_tools,
        schema=ENTRY_ONLY_SCHEMA,
        supports_response=SupportsResponse.OPTIONAL,
    )
    service.async_register_admin_service(
        hass,
        DOMAIN,
        SERVICE_RUN_TOOL,
        _async_run_tool,
        schema=RUN_TOOL_SCHEMA,
        supports_response=SupportsResponse.ONLY,
    )
