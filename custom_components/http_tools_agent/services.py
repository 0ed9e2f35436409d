"""Services that replace, report and reset the active tools at runtime.

`set_tools`, `get_tools` and `reset_tools` are admin only. They answer
`{ok, count, source, tools}`. An override lives in memory only: `reset_tools`,
a reload or a restart bring back the configured tools. The helpers that pick
the entry (Home Assistant's own rule: `config_entry_id`, optional when the
integration has one entry) and read the tools are shared with the HTTP view.
"""

from __future__ import annotations

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
from homeassistant.helpers import config_validation as cv, service
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

SERVICE_SET_TOOLS = "set_tools"
SERVICE_GET_TOOLS = "get_tools"
SERVICE_RESET_TOOLS = "reset_tools"
ATTR_TOOLS = "tools"

_ENTRY_SCHEMA = {probatio.Optional(ATTR_CONFIG_ENTRY_ID): cv.string}
SET_TOOLS_SCHEMA = probatio.Schema(
    {**_ENTRY_SCHEMA, probatio.Required(ATTR_TOOLS): cv.match_all}
)
ENTRY_ONLY_SCHEMA = probatio.Schema(_ENTRY_SCHEMA)


class NoDefinitionError(ValueError):
    """The request holds no tool definition (the guide's 400)."""


def resolve_entry(hass: HomeAssistant, entry_id: str | None) -> HttpToolsConfigEntry:
    """Return the loaded entry a request is about (the only one when no id).

    Raises ServiceValidationError naming what is wrong.
    """
    entry: HttpToolsConfigEntry = service.async_get_config_entry(hass, DOMAIN, entry_id)
    return entry


def parse_tools_input(value: object) -> list[ToolDefinition]:
    """Read tools given as a list or as JSON text (str or bytes).

    Raises ToolDefinitionError naming the tool and field, or NoDefinitionError
    when the input is valid but holds no definition.
    """
    if isinstance(value, (str, bytes, bytearray)):
        definitions = parse_tools_json(
            bytes(value) if not isinstance(value, str) else value
        )
    else:
        definitions = parse_tools(value)
    if not definitions:
        raise NoDefinitionError("the tool list holds no definition")
    return definitions


async def _async_set_tools(call: ServiceCall) -> ServiceResponse:
    entry = resolve_entry(call.hass, call.data.get(ATTR_CONFIG_ENTRY_ID))
    try:
        definitions = parse_tools_input(call.data[ATTR_TOOLS])
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
    active = entry.runtime_data.tools.set_override(definitions)
    LOGGER.info(
        "Tools of %s replaced at runtime: %s",
        entry.title,
        ", ".join(d.name for d in definitions),
    )
    return _response(active.as_response())


async def _async_get_tools(call: ServiceCall) -> ServiceResponse:
    entry = resolve_entry(call.hass, call.data.get(ATTR_CONFIG_ENTRY_ID))
    return _response(entry.runtime_data.tools.active.as_response())


async def _async_reset_tools(call: ServiceCall) -> ServiceResponse:
    entry = resolve_entry(call.hass, call.data.get(ATTR_CONFIG_ENTRY_ID))
    active = entry.runtime_data.tools.reset()
    LOGGER.info("Tools of %s reset to the configured ones", entry.title)
    return _response(active.as_response())


def _response(body: dict[str, Any]) -> ServiceResponse:
    # Responses end up in automation traces, which users share: header
    # values (keys, tokens) are hidden, as in diagnostics.
    return cast(ServiceResponse, {**body, "tools": redact_tools(body["tools"])})


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
