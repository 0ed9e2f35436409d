"""Options flow steps of "Import from OpenAPI": document, operations, preview.

1. `openapi`: a URL (fetched under the entry's host policy, with or without
   TLS verification) or a pasted JSON/YAML document.
2. `openapi_operations`: the operations (verb, path, summary), grouped by
   tag, ticked to import; a long list gets a search field: a changed
   search shows the matches (ticked operations stay ticked and shown).
3. `openapi_preview`: the tools it will create (name, method, URL,
   description) and what it leaves out; the server URL (editable) and,
   where the document declares an API key or bearer scheme, the secret that
   fills it. Saving appends the tools to the options' tools (the tool
   editor edits them from then on) and reloads the entry. A document from a
   URL is remembered with its tools, for *Refresh* (`flows/openapi_refresh.py`).

Every step checks everything before going on; a failed step saves nothing.
"""

from __future__ import annotations

from typing import Any

from homeassistant.config_entries import ConfigFlowResult, OptionsFlow
from homeassistant.helpers.selector import (
    BooleanSelector,
    SelectOptionDict,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TextSelector,
    TextSelectorConfig,
    TextSelectorType,
)
import probatio

from ..const import CONF_ALLOWED_HOSTS, CONF_OPENAPI_SOURCES, CONF_TOOLS
from ..engine.hosts import HostPolicy
from ..engine.openapi.document import OpenApiError
from ..engine.openapi.mapping import Auth, OpenApiDocument, Operation, trim
from ..runtime import host_policy
from ..tools.entry_tools import secrets_of, tools_of
from ..tools.openapi_import import (
    ERROR_NO_TOOLS,
    OpenApiImportError,
    async_load,
    map_checked,
)
from ..tools.openapi_refresh import imported_from
from .lists import NONE_SHOWN, pick_mode

STEP_OPENAPI = "openapi"
STEP_OPENAPI_OPERATIONS = "openapi_operations"
STEP_OPENAPI_PREVIEW = "openapi_preview"
F_URL = "openapi_url"
F_DOCUMENT = "openapi_document"
F_VERIFY_SSL = "openapi_verify_ssl"
F_SEARCH = "openapi_search"
F_OPERATIONS = "openapi_operations"
F_SERVER_URL = "openapi_server_url"
F_AUTH_SCHEME = "openapi_auth_scheme"
F_AUTH_SECRET = "openapi_auth_secret"  # noqa: S105 - a field key
# A list longer than this gets a search field; at most SHOWN are listed.
SEARCH_FROM = 15
SHOWN = 60


def _matches(op: Operation, words: list[str]) -> bool:
    text = f"{op.tag} {op.key} {op.label}".lower()
    return all(word in text for word in words)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


class OpenApiImportSteps(OptionsFlow):
    """The import's steps, mixed into the options flow."""

    _openapi: OpenApiDocument | None = None
    _openapi_url: str | None = None
    _openapi_verify_ssl: bool = True
    _openapi_chosen: list[str]
    _openapi_search: str = ""

    def _policy(self) -> HostPolicy:
        return host_policy(self.config_entry.options.get(CONF_ALLOWED_HOSTS) or [])

    # -- 1. the document --------------------------------------------------

    async def async_step_openapi(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """A URL or a pasted document."""
        errors: dict[str, str] = {}
        placeholders = {"openapi_error": ""}
        if user_input is not None:
            url = str(user_input.get(F_URL) or "").strip()
            document = str(user_input.get(F_DOCUMENT) or "")
            verify_ssl = user_input.get(F_VERIFY_SSL) is not False
            field = F_URL if url or not document.strip() else F_DOCUMENT
            if bool(url) == bool(document.strip()):
                errors[field] = "openapi_source_required"
            else:
                try:
                    self._openapi = await async_load(
                        self.hass,
                        url=url or None,
                        document=document,
                        policy=self._policy(),
                        verify_ssl=verify_ssl,
                    )
                except OpenApiImportError as err:
                    errors[field] = err.reason
                    placeholders["openapi_error"] = err.detail
                else:
                    self._openapi_url = url or None
                    self._openapi_verify_ssl = verify_ssl
                    self._openapi_chosen = []
                    self._openapi_search = ""
                    return await self.async_step_openapi_operations()
        schema = probatio.Schema(
            {
                probatio.Optional(F_URL): TextSelector(
                    TextSelectorConfig(type=TextSelectorType.URL)
                ),
                probatio.Optional(F_DOCUMENT): TextSelector(
                    TextSelectorConfig(multiline=True)
                ),
                probatio.Required(F_VERIFY_SSL, default=True): BooleanSelector(),
            }
        )
        return self.async_show_form(
            step_id=STEP_OPENAPI,
            data_schema=self.add_suggested_values_to_schema(schema, user_input or {}),
            errors=errors,
            description_placeholders=placeholders,
        )

    # -- 2. the operations ------------------------------------------------

    async def async_step_openapi_operations(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Tick the operations to import (search a long list)."""
        document = self._openapi
        assert document is not None
        errors: dict[str, str] = {}
        if user_input is not None:
            ticked = [str(k) for k in user_input.get(F_OPERATIONS) or []]
            search = " ".join(str(user_input.get(F_SEARCH) or "").split())
            # What was ticked and is not listed (filtered out) stays ticked.
            shown = {op.key for op in self._listed(document)}
            kept = [k for k in self._openapi_chosen if k not in shown]
            self._openapi_chosen = [*kept, *(k for k in ticked if k not in kept)]
            if search != self._openapi_search:
                self._openapi_search = search
            elif self._openapi_chosen:
                # The tools follow the document's order, not the ticking's.
                order = {op.key: i for i, op in enumerate(document.operations)}
                self._openapi_chosen.sort(key=lambda key: order.get(key, len(order)))
                return await self.async_step_openapi_preview()
            else:
                errors[F_OPERATIONS] = "no_operation_selected"
        listed = self._listed(document)
        options = [
            SelectOptionDict(value=op.key, label=f"{op.tag or NONE_SHOWN} · {op.label}")
            for op in listed
        ]
        fields: dict[Any, Any] = {}
        many = len(document.operations) > SEARCH_FROM
        if many:
            fields[probatio.Optional(F_SEARCH)] = TextSelector()
        # Optional: the frontend would tick the first one of a required list.
        fields[probatio.Optional(F_OPERATIONS)] = SelectSelector(
            SelectSelectorConfig(
                options=options, multiple=True, mode=SelectSelectorMode.LIST
            )
        )
        suggested: dict[str, Any] = {F_OPERATIONS: list(self._openapi_chosen)}
        if many:
            suggested[F_SEARCH] = self._openapi_search
        matching = sum(
            1
            for op in document.operations
            if _matches(op, self._openapi_search.lower().split())
        )
        return self.async_show_form(
            step_id=STEP_OPENAPI_OPERATIONS,
            data_schema=self.add_suggested_values_to_schema(
                probatio.Schema(fields), suggested
            ),
            errors=errors,
            description_placeholders={
                "title": document.title,
                "version": str(
                    document.source.data.get("openapi")
                    or document.source.data.get("swagger")
                ),
                "count": str(len(document.operations)),
                "shown": str(len(listed)),
                "matching": str(matching),
                "warnings": "; ".join(document.warnings) or NONE_SHOWN,
            },
        )

    def _listed(self, document: OpenApiDocument) -> list[Operation]:
        """The ticked operations, then those matching the search (capped)."""
        words = self._openapi_search.lower().split()
        chosen = set(self._openapi_chosen)
        listed = [op for op in document.operations if op.key in chosen]
        for op in document.operations:
            if len(listed) >= SHOWN:
                break
            if op.key not in chosen and _matches(op, words):
                listed.append(op)
        order = {op.key: index for index, op in enumerate(document.operations)}
        return sorted(listed, key=lambda op: order[op.key])

    # -- 3. the preview ---------------------------------------------------

    async def async_step_openapi_preview(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The tools to create; the server URL and the secret for the auth."""
        document = self._openapi
        assert document is not None
        secrets = secrets_of(self.config_entry.options)
        stored = tools_of(self.config_entry.options)
        taken = [str(t.get("name")) for t in stored]
        errors: dict[str, str] = {}
        placeholders = {"openapi_error": ""}
        values = user_input or {F_SERVER_URL: document.server_url or ""}
        server_url = str(values.get(F_SERVER_URL) or "").strip() or None
        auth: Auth | None = None
        if user_input is not None and (secret := user_input.get(F_AUTH_SECRET)):
            try:
                auth = Auth(document.scheme(user_input.get(F_AUTH_SCHEME)), secret)
            except OpenApiError as err:
                errors[F_AUTH_SCHEME] = "openapi_auth_scheme_required"
                placeholders["openapi_error"] = str(err)
        try:
            imported = await self.hass.async_add_executor_job(
                lambda: map_checked(
                    document,
                    self._openapi_chosen,
                    server_url=server_url,
                    auth=auth,
                    taken=taken,
                    secrets=secrets,
                    policy=self._policy(),
                    verify_ssl=self._openapi_verify_ssl,
                )
            )
        except OpenApiImportError as err:
            errors.setdefault(
                "base" if err.reason == ERROR_NO_TOOLS else F_SERVER_URL, err.reason
            )
            placeholders["openapi_error"] = err.detail
            imported = None
        if user_input is not None and imported is not None and not errors:
            new = [definition.as_dict() for definition in imported.definitions]
            options = {**self.config_entry.options, CONF_TOOLS: [*stored, *new]}
            if self._openapi_url:
                options[CONF_OPENAPI_SOURCES] = imported_from(
                    self.config_entry.options,
                    self._openapi_url,
                    document,
                    imported,
                    server_url=server_url,
                    auth=auth,
                    verify_ssl=self._openapi_verify_ssl,
                )
            return self.async_create_entry(data=options)
        placeholders |= self._preview(imported)
        fields: dict[Any, Any] = {
            probatio.Required(F_SERVER_URL): TextSelector(
                TextSelectorConfig(type=TextSelectorType.URL)
            )
        }
        if len(document.auth_schemes) > 1:
            fields[probatio.Optional(F_AUTH_SCHEME)] = SelectSelector(
                SelectSelectorConfig(
                    options=[
                        SelectOptionDict(value=s.name, label=s.label)
                        for s in document.auth_schemes
                    ],
                    mode=SelectSelectorMode.LIST,
                )
            )
        if document.auth_schemes:
            names = sorted(secrets)
            fields[probatio.Optional(F_AUTH_SECRET)] = SelectSelector(
                SelectSelectorConfig(
                    options=names,
                    # Radio buttons for a few, a drop-down for many.
                    mode=pick_mode(names),
                )
            )
        placeholders["schemes"] = (
            ", ".join(s.label for s in document.auth_schemes) or NONE_SHOWN
        )
        placeholders["unsupported"] = ", ".join(document.unsupported_auth) or NONE_SHOWN
        placeholders["secrets"] = ", ".join(sorted(secrets)) or NONE_SHOWN
        return self.async_show_form(
            step_id=STEP_OPENAPI_PREVIEW,
            data_schema=self.add_suggested_values_to_schema(
                probatio.Schema(fields), values
            ),
            errors=errors,
            description_placeholders=placeholders,
        )

    @staticmethod
    def _preview(imported: Any) -> dict[str, str]:
        """The tools as a Markdown table, the skipped and left-out parts."""
        if imported is None:
            return {"tools": NONE_SHOWN, "skipped": NONE_SHOWN, "notes": NONE_SHOWN}
        rows = ["| Name | Method | URL | Description |", "|---|---|---|---|"]
        rows.extend(
            f"| {_cell(d.name)} | {d.method} | {_cell(d.url)} | "
            f"{_cell(trim(d.description, 80))} |"
            for d in imported.definitions
        )
        result = imported.result
        return {
            "tools": "\n".join(rows),
            "skipped": "; ".join(str(s) for s in result.skipped) or NONE_SHOWN,
            "notes": "; ".join(str(n) for n in result.notes) or NONE_SHOWN,
        }
