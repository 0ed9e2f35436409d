"""`GET/POST /api/http_tools_agent/tools`: the tools endpoint, in Home Assistant.

GET reports the active tools (header values and URL credentials redacted
for users who are not administrators); POST (admin only) replaces them in memory from
the next turn on with the JSON array in the body, the same format as the tools
file and the `set_tools` service, or with a JSON object holding `openapi`
(and optionally `tools`), as `set_tools` takes them. Answers:

- 200 `{ok, count, source, enabled, tools}` (`enabled`: whether the tools are
  offered to the model; with the model switched off the entry still
  answers, so that is `enabled: false` rather than a 503);
- 400 `{ok: false, error}`: empty body, not UTF-8, not a JSON array, no
  definition, an invalid definition (the error names tool and field), or
  a `{secret:name}` the entry does not define, an `openapi` import that
  failed (the error says why), or several loaded entries and no
  `config_entry_id` query parameter;
- 403 POST by a user who is not an administrator;
- 404 `config_entry_id` names no entry of this integration;
- 503 the entry is not loaded (disabled, failed or not set up yet): no
  tool can run.
"""

from __future__ import annotations

from http import HTTPStatus
import json
from typing import Any

from aiohttp import web
from homeassistant.auth.models import User
from homeassistant.const import ATTR_CONFIG_ENTRY_ID
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers.http import KEY_HASS, HomeAssistantView

from .const import DOMAIN, LOGGER
from .engine.definitions import ToolDefinitionError
from .redact import redact_tools
from .runtime import HttpToolsConfigEntry
from .services import (
    NoDefinitionError,
    async_requested_tools,
    parse_tools_input,
    resolve_entry,
    tools_response,
)
from .tools.openapi_import import OpenApiImportError

TOOLS_URL = f"/api/{DOMAIN}/tools"

# Home Assistant's reasons for not finding the entry -> status and a hint.
_UNAVAILABLE = (HTTPStatus.SERVICE_UNAVAILABLE, "tools are unavailable")
_ENTRY_ERRORS = {
    "service_config_entry_not_found": (HTTPStatus.NOT_FOUND, ""),
    "service_config_entry_wrong_domain": (HTTPStatus.NOT_FOUND, ""),
    "service_config_entry_not_loaded": _UNAVAILABLE,
    "service_found_no_config_entry_for_domain": _UNAVAILABLE,
    "service_found_multiple_config_entry_for_domain": (
        HTTPStatus.BAD_REQUEST,
        "pass config_entry_id to pick one",
    ),
}


def _object_body(body: bytes) -> dict[str, Any] | None:
    """The body as a JSON object with an `openapi` key, else None (an array,
    or anything the tool list's own errors describe)."""
    if not body.lstrip().startswith(b"{"):
        return None
    try:
        decoded = json.loads(body)
    except ValueError:
        return None
    return decoded if isinstance(decoded, dict) and "openapi" in decoded else None


class HttpToolsView(HomeAssistantView):
    """Report and replace the active tools of an entry."""

    url = TOOLS_URL
    name = f"api:{DOMAIN}:tools"
    requires_auth = True

    def _error(self, status: HTTPStatus, message: str) -> web.Response:
        return self.json({"ok": False, "error": message}, status)

    def _entry(self, request: web.Request) -> HttpToolsConfigEntry | web.Response:
        hass = request.app[KEY_HASS]
        try:
            return resolve_entry(hass, request.query.get(ATTR_CONFIG_ENTRY_ID))
        except ServiceValidationError as err:
            status, hint = _ENTRY_ERRORS.get(
                err.translation_key or "", (HTTPStatus.BAD_REQUEST, "")
            )
            message = f"{str(err).rstrip('.')}: {hint}" if hint else str(err)
            return self._error(status, message)

    async def get(self, request: web.Request) -> web.Response:
        """Return the active tools and their source."""
        entry = self._entry(request)
        if isinstance(entry, web.Response):
            return entry
        body = tools_response(entry.runtime_data.tools)
        user: User = request["hass_user"]
        if not user.is_admin:
            # Header values and URL credentials are for administrators only.
            body["tools"] = redact_tools(body["tools"])
        return self.json(body)

    async def post(self, request: web.Request) -> web.Response:
        """Replace the active tools with the body's JSON array."""
        user: User = request["hass_user"]
        if not user.is_admin:
            return self._error(
                HTTPStatus.FORBIDDEN, "only an administrator can replace the tools"
            )
        entry = self._entry(request)
        if isinstance(entry, web.Response):
            return entry
        body = await request.read()
        tools = entry.runtime_data.tools
        try:
            if (request_object := _object_body(body)) is not None:
                definitions = await async_requested_tools(
                    request.app[KEY_HASS],
                    entry,
                    request_object.get("tools"),
                    request_object.get("openapi"),
                )
            else:
                definitions = parse_tools_input(body, tools)
        except (ToolDefinitionError, NoDefinitionError) as err:
            return self._error(HTTPStatus.BAD_REQUEST, str(err))
        except OpenApiImportError as err:
            return self._error(
                HTTPStatus.BAD_REQUEST, f"the OpenAPI import failed: {err.detail}"
            )
        tools.set_override(definitions)
        LOGGER.info(
            "Tools of %s replaced through the HTTP API: %s",
            entry.title,
            ", ".join(d.name for d in definitions),
        )
        return self.json(tools_response(tools))
