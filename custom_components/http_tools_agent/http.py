"""`GET/POST /api/http_tools_agent/tools`: the guide's `/api/tools` in Home Assistant.

GET reports the active tools (header values and URL credentials redacted
for users who are not administrators); POST (admin only) replaces them in memory from
the next turn on with the JSON array in the body, the same format as the tools
file and the `set_tools` service. Answers:

- 200 `{ok, count, source, tools}`;
- 400 `{ok: false, error}`: empty body, not UTF-8, not a JSON array, no
  definition, an invalid definition (the error names tool and field), or
  several loaded entries and no `config_entry_id` query parameter;
- 403 POST by a user who is not an administrator;
- 404 `config_entry_id` names no entry of this integration;
- 503 the entry is not loaded (the guide's "LLM disabled").
"""

from __future__ import annotations

from http import HTTPStatus
from typing import TYPE_CHECKING

from aiohttp import web
from homeassistant.auth.models import User
from homeassistant.const import ATTR_CONFIG_ENTRY_ID
from homeassistant.helpers.http import KEY_HASS, HomeAssistantView

from .const import DOMAIN, LOGGER
from .engine.definitions import ToolDefinitionError
from .redact import redact_tools
from .services import (
    EntryLookupError,
    EntryProblem,
    NoDefinitionError,
    parse_tools_input,
    resolve_entry,
)

if TYPE_CHECKING:
    from . import HttpToolsConfigEntry

TOOLS_URL = f"/api/{DOMAIN}/tools"

_ENTRY_STATUS = {
    EntryProblem.NOT_FOUND: HTTPStatus.NOT_FOUND,
    EntryProblem.NOT_LOADED: HTTPStatus.SERVICE_UNAVAILABLE,
    EntryProblem.NONE_LOADED: HTTPStatus.SERVICE_UNAVAILABLE,
    EntryProblem.AMBIGUOUS: HTTPStatus.BAD_REQUEST,
}


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
        except EntryLookupError as err:
            return self._error(_ENTRY_STATUS[err.problem], str(err))

    async def get(self, request: web.Request) -> web.Response:
        """Return the active tools and their source."""
        entry = self._entry(request)
        if isinstance(entry, web.Response):
            return entry
        body = entry.runtime_data.store.active.as_response()
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
        try:
            definitions = parse_tools_input(body)
        except (ToolDefinitionError, NoDefinitionError) as err:
            return self._error(HTTPStatus.BAD_REQUEST, str(err))
        active = entry.runtime_data.store.set_override(definitions)
        LOGGER.info(
            "Tools of %s replaced through the HTTP API: %s",
            entry.title,
            ", ".join(d.name for d in definitions),
        )
        return self.json(active.as_response())
