"""Options flow steps of "Refresh tools imported from an OpenAPI URL".

1. `openapi_refresh`: which document URL (skipped when there is one).
2. `openapi_changes`: the document fetched again; what changed (operations
   added, offered to tick; tools whose operation is gone; tools the document
   now maps differently, with the fields you edited kept). Nothing is saved
   until the form is submitted; closing it changes nothing. A document that
   cannot be fetched or read ends the flow with the reason.

Each check raises or clears the URL's repair issue
(`tools/openapi_refresh.py`); applying a refresh clears it.
"""

from __future__ import annotations

from typing import Any

from homeassistant.config_entries import ConfigFlowResult
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.selector import (
    SelectOptionDict,
    SelectSelector,
    SelectSelectorConfig,
)
import probatio

from ..const import CONF_OPENAPI_SOURCES, CONF_TOOLS, DOMAIN
from ..engine.definitions import ToolDefinitionError, check_secrets, parse_tools
from ..engine.openapi.refresh import Refresh, Source, apply_refresh
from ..tools.entry_tools import secrets_of, tools_of
from ..tools.openapi_import import OpenApiImportError
from ..tools.openapi_refresh import (
    async_check,
    async_report,
    issue_id,
    shown_url,
    sources_of,
    with_source,
)
from .lists import NONE_SHOWN, pick_mode
from .openapi import OpenApiImportSteps

STEP_OPENAPI_REFRESH = "openapi_refresh"
STEP_OPENAPI_CHANGES = "openapi_changes"
F_SOURCE = "openapi_source"
F_ADD = "openapi_add"


def _names(names: list[str]) -> str:
    return ", ".join(f"`{name}`" for name in names) or NONE_SHOWN


class OpenApiRefreshSteps(OpenApiImportSteps):
    """The refresh's steps, mixed into the options flow."""

    _refresh_source: Source | None = None
    _refresh: Refresh | None = None

    async def async_step_openapi_refresh(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Pick the document URL to refresh."""
        sources = sources_of(self.config_entry.options)
        if user_input is not None or len(sources) == 1:
            index = int((user_input or {}).get(F_SOURCE) or 0)
            self._refresh_source = sources[index]
            self._refresh = None
            return await self.async_step_openapi_changes()
        # Indexes, not URLs, as values: a URL may carry a key in its query.
        options = [str(index) for index in range(len(sources))]
        labels = [
            SelectOptionDict(value=value, label=shown_url(source.url))
            for value, source in zip(options, sources, strict=True)
        ]
        schema = probatio.Schema(
            {
                probatio.Required(F_SOURCE): SelectSelector(
                    SelectSelectorConfig(options=labels, mode=pick_mode(options))
                )
            }
        )
        return self.async_show_form(step_id=STEP_OPENAPI_REFRESH, data_schema=schema)

    async def async_step_openapi_changes(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """What changed; applied only when the form is submitted."""
        source = self._refresh_source
        assert source is not None
        entry = self.config_entry
        url = shown_url(source.url)
        if self._refresh is None:
            try:
                refresh = await async_check(
                    self.hass, source, tools_of(entry.options), self._policy()
                )
            except OpenApiImportError as err:
                async_report(self.hass, entry.entry_id, entry.title, source, error=err)
                return self.async_abort(
                    reason="openapi_refresh_failed",
                    description_placeholders={"url": url, "openapi_error": err.detail},
                )
            async_report(
                self.hass, entry.entry_id, entry.title, source, refresh=refresh
            )
            if not refresh.has_changes:
                return self.async_abort(
                    reason="openapi_up_to_date", description_placeholders={"url": url}
                )
            self._refresh = refresh
        refresh = self._refresh
        errors: dict[str, str] = {}
        placeholders = self._changes(refresh) | {"url": url, "tools_error": ""}
        if user_input is not None:
            add = [str(key) for key in user_input.get(F_ADD) or []]
            tools, updated = apply_refresh(refresh, tools_of(entry.options), add)
            try:
                check_secrets(parse_tools(tools), secrets_of(entry.options))
            except ToolDefinitionError as err:
                # A secret the tools use was removed since the import.
                errors["base"] = "invalid_tools"
                placeholders["tools_error"] = str(err)
            else:
                options = {
                    **entry.options,
                    CONF_TOOLS: tools,
                    CONF_OPENAPI_SOURCES: with_source(entry.options, updated),
                }
                ir.async_delete_issue(
                    self.hass, DOMAIN, issue_id(entry.entry_id, source.url)
                )
                return self.async_create_entry(data=options)
        offers = [o for o in refresh.added if o.tool is not None]
        fields: dict[Any, Any] = {}
        if offers:
            values = [o.operation.key for o in offers]
            # Optional: nothing new is added unless ticked.
            fields[probatio.Optional(F_ADD)] = SelectSelector(
                SelectSelectorConfig(
                    options=[
                        SelectOptionDict(
                            value=o.operation.key,
                            label=f"{o.operation.label} → {(o.tool or {})['name']}",
                        )
                        for o in offers
                    ],
                    multiple=True,
                    mode=pick_mode(values),
                )
            )
        return self.async_show_form(
            step_id=STEP_OPENAPI_CHANGES,
            data_schema=probatio.Schema(fields),
            errors=errors,
            description_placeholders=placeholders,
        )

    @staticmethod
    def _changes(refresh: Refresh) -> dict[str, str]:
        """The changes as the form's description shows them."""
        changed = []
        for change in refresh.changed:
            line = f"`{change.name}`: {', '.join(change.fields)}"
            if change.kept:
                line += f" (your edit kept: {', '.join(change.kept)})"
            changed.append(line)
        return {
            "removed": "; ".join(
                f"`{r.name}` ({r.operation}: {r.reason})" for r in refresh.removed
            )
            or NONE_SHOWN,
            "changed": "; ".join(changed) or NONE_SHOWN,
            "added": str(sum(1 for o in refresh.added if o.tool is not None)),
            "not_importable": "; ".join(
                f"{o.operation.label}: {o.reason}"
                for o in refresh.added
                if o.tool is None
            )
            or NONE_SHOWN,
            "untracked": _names(list(refresh.untracked)),
        }
