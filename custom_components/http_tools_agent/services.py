"""Services that replace, report and reset the active tools at runtime.

`set_tools`, `get_tools` and `reset_tools` are admin only. They answer
`{ok, count, source, tools}`. An override lives in memory only: `reset_tools`,
a reload or a restart bring back the configured tools. The helpers that pick
the entry and read the tools are shared with the HTTP view.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any, cast

from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import ATTR_CONFIG_ENTRY_ID
from homeassistant.core import (
    HomeAssistant,
    ServiceCall,
    ServiceResponse,
    SupportsResponse,
    callback,
)
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
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

if TYPE_CHECKING:
    from . import HttpToolsConfigEntry

SERVICE_SET_TOOLS = "set_tools"
SERVICE_GET_TOOLS = "get_tools"
SERVICE_RESET_TOOLS = "reset_tools"
ATTR_TOOLS = "tools"

_ENTRY_SCHEMA = {probatio.Optional(ATTR_CONFIG_ENTRY_ID): cv.string}
SET_TOOLS_SCHEMA = probatio.Schema(
    {**_ENTRY_SCHEMA, probatio.Required(ATTR_TOOLS): cv.match_all}
)
ENTRY_ONLY_SCHEMA = probatio.Schema(_ENTRY_SCHEMA)


class EntryProblem(StrEnum):
    """Why no entry could be picked (also the translation keys)."""

    NOT_FOUND = "entry_not_found"
    NOT_LOADED = "entry_not_loaded"
    NONE_LOADED = "no_entry_loaded"
    AMBIGUOUS = "entry_required"


class EntryLookupError(Exception):
    """No single loaded entry matches the request."""

    def __init__(self, problem: EntryProblem, placeholders: dict[str, str]) -> None:
        """Keep the problem and what names it."""
        self.problem = problem
        self.placeholders = placeholders
        super().__init__(problem.value)

    def __str__(self) -> str:
        """English text for the HTTP view and the log."""
        match self.problem:
            case EntryProblem.NOT_FOUND:
                return (
                    f"no {DOMAIN} config entry with id "
                    f"'{self.placeholders['entry_id']}'"
                )
            case EntryProblem.NOT_LOADED:
                return (
                    f"the config entry '{self.placeholders['title']}' is not "
                    "loaded: tools are unavailable"
                )
            case EntryProblem.NONE_LOADED:
                return f"no {DOMAIN} config entry is loaded: tools are unavailable"
            case EntryProblem.AMBIGUOUS:
                return (
                    f"{self.placeholders['count']} {DOMAIN} config entries are "
                    "loaded: pass config_entry_id to pick one"
                )


class NoDefinitionError(ValueError):
    """The request holds no tool definition (the guide's 400)."""


def resolve_entry(hass: HomeAssistant, entry_id: str | None) -> HttpToolsConfigEntry:
    """Return the loaded entry a request is about.

    Without an id, the only loaded entry is used; with several loaded entries
    the caller must name one.
    """
    if entry_id:
        entry = hass.config_entries.async_get_entry(entry_id)
        if entry is None or entry.domain != DOMAIN:
            raise EntryLookupError(EntryProblem.NOT_FOUND, {"entry_id": entry_id})
        if entry.state is not ConfigEntryState.LOADED:
            raise EntryLookupError(EntryProblem.NOT_LOADED, {"title": entry.title})
        return cast("HttpToolsConfigEntry", entry)
    loaded = hass.config_entries.async_loaded_entries(DOMAIN)
    if not loaded:
        raise EntryLookupError(EntryProblem.NONE_LOADED, {})
    if len(loaded) > 1:
        raise EntryLookupError(EntryProblem.AMBIGUOUS, {"count": str(len(loaded))})
    return cast("HttpToolsConfigEntry", loaded[0])


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


def _entry_for_call(call: ServiceCall) -> HttpToolsConfigEntry:
    try:
        return resolve_entry(call.hass, call.data.get(ATTR_CONFIG_ENTRY_ID))
    except EntryLookupError as err:
        # A missing id or one naming nothing is the caller's mistake; an entry
        # that is not loaded is the guide's 503 (tools unavailable).
        error_cls = (
            HomeAssistantError
            if err.problem in (EntryProblem.NOT_LOADED, EntryProblem.NONE_LOADED)
            else ServiceValidationError
        )
        raise error_cls(
            translation_domain=DOMAIN,
            translation_key=err.problem.value,
            translation_placeholders=err.placeholders,
        ) from None


async def _async_set_tools(call: ServiceCall) -> ServiceResponse:
    entry = _entry_for_call(call)
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
    active = entry.runtime_data.store.set_override(definitions)
    LOGGER.info(
        "Tools of %s replaced at runtime: %s",
        entry.title,
        ", ".join(d.name for d in definitions),
    )
    return _response(active.as_response())


async def _async_get_tools(call: ServiceCall) -> ServiceResponse:
    entry = _entry_for_call(call)
    return _response(entry.runtime_data.store.active.as_response())


async def _async_reset_tools(call: ServiceCall) -> ServiceResponse:
    entry = _entry_for_call(call)
    active = entry.runtime_data.store.reset()
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
