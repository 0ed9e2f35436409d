"""Refresh tools imported from an OpenAPI document's URL; repair issues.

The entry's options remember each document URL tools were imported from
(`CONF_OPENAPI_SOURCES`, `engine/openapi/refresh.py` says what and why).
A refresh fetches the document again under the entry's host policy and
says what changed; nothing is applied until the user confirms (the options
flow's *Refresh*). A refresh that fails, or finds operations of the tools
gone, raises one repair issue per URL; a refresh that succeeds with nothing
gone clears it. Once a day each URL is checked the same way in the
background: it raises or clears the issue, and never changes a tool.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
import hashlib
from typing import TYPE_CHECKING, Any

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.event import async_track_time_interval

from ..const import CONF_OPENAPI_SOURCES, DOMAIN, LOGGER
from ..engine.hosts import HostPolicy
from ..engine.openapi.document import OpenApiError
from ..engine.openapi.mapping import Auth, OpenApiDocument
from ..engine.openapi.refresh import Refresh, Source, plan_refresh, recorded
from ..redact import redact_url
from .entry_tools import tools_of
from .openapi_import import Imported, OpenApiImportError, async_load, from_engine

if TYPE_CHECKING:
    from ..runtime import HttpToolsConfigEntry

# How often the document URLs are checked in the background.
CHECK_EVERY = timedelta(days=1)
ISSUE_FAILED = "openapi_refresh_failed"
ISSUE_GONE = "openapi_operations_gone"


def sources_of(options: Mapping[str, Any]) -> list[Source]:
    """The document URLs the entry imported tools from."""
    sources = (Source.from_dict(raw) for raw in options.get(CONF_OPENAPI_SOURCES) or [])
    return [source for source in sources if source is not None]


def with_source(options: Mapping[str, Any], source: Source) -> list[dict[str, Any]]:
    """The stored sources with `source` in place of the one of its URL (a
    new URL last); a source that follows no tool any more is forgotten."""
    stored = sources_of(options)
    urls = [s.url for s in stored]
    if source.url in urls:
        stored[urls.index(source.url)] = source
    else:
        stored.append(source)
    return [s.as_dict() for s in stored if s.tools]


def renamed_in(options: Mapping[str, Any], old: str, new: str) -> list[dict[str, Any]]:
    """The stored sources once the tool `old` is called `new`."""
    return [s.renamed(old, new).as_dict() for s in sources_of(options)]


def imported_from(
    options: Mapping[str, Any],
    url: str,
    document: OpenApiDocument,
    imported: Imported,
    *,
    server_url: str | None,
    auth: Auth | None,
    verify_ssl: bool,
) -> list[dict[str, Any]]:
    """The stored sources once an import from `url` made `imported`.

    A second import from the same URL joins the first; its settings (server
    URL, secret, TLS check) then apply to all the URL's tools.
    """
    previous = next((s for s in sources_of(options) if s.url == url), Source(url))
    source = Source(
        url,
        verify_ssl=verify_ssl,
        # Only a server URL the user changed is kept: else the document's own.
        server_url=server_url if server_url != document.server_url else None,
        auth_scheme=auth.scheme.name if auth else None,
        auth_secret=auth.secret if auth else None,
        tools=previous.tools,
    )
    tools = [definition.as_dict() for definition in imported.definitions]
    return with_source(
        options, recorded(source, document, tools, imported.result.operations)
    )


def shown_url(url: str) -> str:
    """A source URL for a form or an issue: credential-like query values hidden."""
    return redact_url(url)


def issue_id(entry_id: str, url: str) -> str:
    """One repair issue per entry and document URL."""
    digest = hashlib.sha256(url.encode()).hexdigest()[:12]
    return f"openapi_{entry_id}_{digest}"


async def async_check(
    hass: HomeAssistant,
    source: Source,
    tools: Iterable[Mapping[str, Any]],
    policy: HostPolicy,
) -> Refresh:
    """Fetch the document again and say what changed; OpenApiImportError."""
    document = await async_load(
        hass, url=source.url, document=None, policy=policy, verify_ssl=source.verify_ssl
    )
    listed = [dict(t) for t in tools if isinstance(t, Mapping)]
    try:
        return await hass.async_add_executor_job(plan_refresh, document, source, listed)
    except OpenApiError as err:
        raise from_engine(err) from None


@callback
def async_report(
    hass: HomeAssistant,
    entry_id: str,
    entry_title: str,
    source: Source,
    *,
    error: OpenApiImportError | None = None,
    refresh: Refresh | None = None,
) -> None:
    """Raise the source's issue for a failed refresh or gone operations, or
    clear it when the refresh found nothing gone."""
    issue = issue_id(entry_id, source.url)
    placeholders = {"url": shown_url(source.url), "server": entry_title}
    if error is not None:
        LOGGER.warning(
            "OpenAPI document %s could not be refreshed: %s",
            placeholders["url"],
            error.detail,
        )
        reported = ISSUE_FAILED
        placeholders["error"] = error.detail
    elif refresh is not None and refresh.removed:
        reported = ISSUE_GONE
        placeholders["tools"] = ", ".join(
            f"{r.name} ({r.operation}: {r.reason})" for r in refresh.removed
        )
    else:
        ir.async_delete_issue(hass, DOMAIN, issue)
        return
    ir.async_create_issue(
        hass,
        DOMAIN,
        issue,
        is_fixable=False,
        severity=ir.IssueSeverity.WARNING,
        translation_key=reported,
        translation_placeholders=placeholders,
    )


@callback
def async_delete_issues(
    hass: HomeAssistant, entry_id: str, keep: Iterable[str] = ()
) -> None:
    """Delete the entry's refresh issues (but those of the URLs `keep`)."""
    kept = {issue_id(entry_id, url) for url in keep}
    prefix = f"openapi_{entry_id}_"
    for domain, issue in list(ir.async_get(hass).issues):
        if domain == DOMAIN and issue.startswith(prefix) and issue not in kept:
            ir.async_delete_issue(hass, DOMAIN, issue)


async def async_check_sources(hass: HomeAssistant, entry: HttpToolsConfigEntry) -> None:
    """Check every document URL of the entry: raise or clear its issue."""
    options = entry.options
    policy = entry.runtime_data.settings.hosts
    for source in sources_of(options):
        try:
            refresh = await async_check(hass, source, tools_of(options), policy)
        except OpenApiImportError as err:
            async_report(hass, entry.entry_id, entry.title, source, error=err)
        else:
            async_report(hass, entry.entry_id, entry.title, source, refresh=refresh)
    # A URL the entry no longer follows has no issue.
    async_delete_issues(hass, entry.entry_id, keep=[s.url for s in sources_of(options)])


@callback
def async_check_daily(hass: HomeAssistant, entry: HttpToolsConfigEntry) -> None:
    """Check the entry's document URLs once a day while it is loaded."""

    async def _check(now: datetime) -> None:
        await async_check_sources(hass, entry)

    entry.async_on_unload(
        async_track_time_interval(
            hass, _check, CHECK_EVERY, name="http_tools_agent OpenAPI check"
        )
    )
