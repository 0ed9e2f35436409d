"""Import tools from an OpenAPI document: fetch, read, map, check.

Shared by the options flow, the `set_tools` action and the REST endpoint.
A document comes from a URL, fetched with Home Assistant's client session
under the entry's host policy (every redirect too) and the chosen TLS
verification, at most `MAX_DOCUMENT_BYTES` read, or from pasted text.
Reading and mapping run in the executor (`engine.openapi_document`,
`engine.openapi`); the tools they make go through the same validator as
every other source. Errors carry a form error key (`reason`) and a text
naming what is wrong (`detail`), never a secret's value.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial
import json
from typing import Any

import aiohttp
from homeassistant.core import HomeAssistant
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from yarl import URL

from ..engine.definitions import (
    ToolDefinition,
    ToolDefinitionError,
    check_secrets,
    parse_tools,
)
from ..engine.hosts import HostPolicy
from ..engine.openapi.document import (
    MAX_DOCUMENT_BYTES,
    OpenApiError,
    read_document,
    too_large,
)
from ..engine.openapi.mapping import Auth, ImportResult, OpenApiDocument
from ..engine.words import word_set

FETCH_TIMEOUT = 30
MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_ACCEPT = "application/json, application/yaml;q=0.9, text/yaml;q=0.9, */*;q=0.5"
_CHUNK = 65_536

# Form error keys (strings.json: options.error).
ERROR_FETCH = "openapi_fetch_failed"
ERROR_HOST = "openapi_host_not_allowed"
ERROR_URL = "openapi_invalid_url"
ERROR_TOO_LARGE = "openapi_too_large"
ERROR_INVALID = "openapi_invalid"
ERROR_NO_SERVER = "openapi_no_server"
ERROR_NO_TOOLS = "openapi_no_tools"


class OpenApiImportError(Exception):
    """The import cannot go on; `reason` is a form error key."""

    def __init__(self, reason: str, detail: str) -> None:
        """Keep the error key and the text naming the problem."""
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def from_engine(err: OpenApiError) -> OpenApiImportError:
    if err.kind == "too_large":
        return OpenApiImportError(ERROR_TOO_LARGE, str(err))
    if err.kind == "no_server":
        return OpenApiImportError(ERROR_NO_SERVER, str(err))
    return OpenApiImportError(ERROR_INVALID, str(err))


def check_url(url: str, policy: HostPolicy, what: str = "URL") -> URL:
    """An http(s) URL whose host the policy allows; OpenApiImportError."""
    try:
        parsed = URL(url.strip())
    except ValueError:
        parsed = URL()
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise OpenApiImportError(
            ERROR_URL, f"the {what} '{url.strip()}' is not an http or https URL"
        )
    if not policy.allows(parsed.host):
        raise OpenApiImportError(
            ERROR_HOST, f"the host '{parsed.host}' is not in the allowed hosts"
        )
    return parsed


async def _read_capped(response: aiohttp.ClientResponse) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while chunk := await response.content.read(_CHUNK):
        total += len(chunk)
        if total > MAX_DOCUMENT_BYTES:
            raise OpenApiImportError(ERROR_TOO_LARGE, str(too_large()))
        chunks.append(chunk)
    return b"".join(chunks)


async def async_fetch(
    hass: HomeAssistant, url: str, policy: HostPolicy, verify_ssl: bool
) -> bytes:
    """The document at `url` (redirects followed under the host policy)."""
    target = check_url(url, policy)
    session = async_get_clientsession(hass, verify_ssl=verify_ssl)
    try:
        async with asyncio.timeout(FETCH_TIMEOUT):
            for _ in range(MAX_REDIRECTS + 1):
                async with session.get(
                    target, allow_redirects=False, headers={"Accept": _ACCEPT}
                ) as response:
                    location = response.headers.get("Location")
                    if response.status in _REDIRECTS and location:
                        target = check_url(str(target.join(URL(location))), policy)
                        continue
                    if response.status != 200:
                        raise OpenApiImportError(
                            ERROR_FETCH,
                            f"{_shown(target)} answered HTTP {response.status}",
                        )
                    return await _read_capped(response)
    except TimeoutError:
        raise OpenApiImportError(
            ERROR_FETCH, f"{_shown(target)} did not answer within {FETCH_TIMEOUT} s"
        ) from None
    except aiohttp.ClientError as err:
        # aiohttp's texts name the host and port, never the query.
        reason = str(err) or type(err).__name__
        raise OpenApiImportError(ERROR_FETCH, f"{_shown(target)}: {reason}") from None
    raise OpenApiImportError(
        ERROR_FETCH, f"{_shown(target)}: more than {MAX_REDIRECTS} redirects"
    )


def _shown(url: URL) -> str:
    """A URL for an error text: no query or credentials (a key may be there)."""
    return str(url.with_query(None).with_fragment(None).with_user(None))


def _read(raw: bytes | str, url: str | None) -> OpenApiDocument:
    return OpenApiDocument(read_document(raw, url))


async def async_load(
    hass: HomeAssistant,
    *,
    url: str | None,
    document: str | None,
    policy: HostPolicy,
    verify_ssl: bool,
) -> OpenApiDocument:
    """Fetch (or take) the document and read it; OpenApiImportError."""
    if url:
        raw: bytes | str = await async_fetch(hass, url, policy, verify_ssl)
    else:
        raw = document or ""
    try:
        return await hass.async_add_executor_job(_read, raw, url or None)
    except OpenApiError as err:
        raise from_engine(err) from None


@dataclass(frozen=True, slots=True)
class Imported:
    """The checked tools of an import and what it left out."""

    definitions: list[ToolDefinition]
    result: ImportResult


def map_checked(
    document: OpenApiDocument,
    operations: Iterable[str],
    *,
    server_url: str | None,
    auth: Auth | None,
    taken: Iterable[str],
    secrets: Iterable[str],
    policy: HostPolicy,
    verify_ssl: bool,
) -> Imported:
    """Map the operations and run the tool validator on the result.

    Raises OpenApiImportError: no server, an unknown operation, a server
    outside the host policy, nothing importable, or tools the validator
    refuses (a secret the entry lacks).
    """
    base = server_url or document.server_url
    if base:
        check_url(base, policy, "server URL")
    try:
        result = document.to_tools(
            operations,
            server_url=server_url,
            auth=auth,
            taken=taken,
            verify_ssl=verify_ssl,
        )
    except OpenApiError as err:
        raise from_engine(err) from None
    if not result.tools:
        raise OpenApiImportError(
            ERROR_NO_TOOLS,
            "; ".join(str(s) for s in result.skipped) or "no operation was chosen",
        )
    try:
        definitions = parse_tools(list(result.tools))
        check_secrets(definitions, secrets, numbered=False)
    except ToolDefinitionError as err:
        raise OpenApiImportError(
            ERROR_INVALID, f"the tools made are invalid: {err}"
        ) from None
    return Imported(definitions, result)


@dataclass(frozen=True, slots=True)
class OpenApiSource:
    """The `openapi` object of `set_tools` and the REST endpoint."""

    url: str | None
    document: str | None
    operations: list[str]
    server_url: str | None
    verify_ssl: bool
    auth_scheme: str | None
    auth_secret: str | None

    @classmethod
    def parse(cls, raw: object) -> OpenApiSource:
        """Read the object; OpenApiImportError naming the bad key."""
        if not isinstance(raw, Mapping):
            raise OpenApiImportError(ERROR_INVALID, "'openapi' must be an object")
        known = word_set("""
            url document operations server_url verify_ssl auth_scheme
            auth_secret
        """)
        if unknown := sorted(str(k) for k in raw if k not in known):
            raise OpenApiImportError(
                ERROR_INVALID,
                f"'openapi' has unknown keys: {', '.join(unknown)} "
                f"(allowed: {', '.join(sorted(known))})",
            )
        url, document = raw.get("url"), raw.get("document")
        if isinstance(document, Mapping):
            document = _json(document)
        if bool(url) == bool(document):
            raise OpenApiImportError(
                ERROR_INVALID, "'openapi' needs either 'url' or 'document'"
            )
        operations = raw.get("operations")
        if isinstance(operations, str):
            operations = [operations]
        if not isinstance(operations, list) or not operations:
            raise OpenApiImportError(
                ERROR_INVALID,
                "'openapi.operations' must list the operations to import "
                "(operationIds or 'VERB /path')",
            )
        return cls(
            url=_text(url, "url"),
            document=_text(document, "document"),
            operations=[str(op) for op in operations],
            server_url=_text(raw.get("server_url"), "server_url"),
            verify_ssl=raw.get("verify_ssl") is not False,
            auth_scheme=_text(raw.get("auth_scheme"), "auth_scheme"),
            auth_secret=_text(raw.get("auth_secret"), "auth_secret"),
        )


def _json(value: Mapping[str, Any]) -> str:
    return json.dumps(value)


def _text(value: object, key: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise OpenApiImportError(ERROR_INVALID, f"'openapi.{key}' must be text")
    return value


async def async_import(
    hass: HomeAssistant,
    source: OpenApiSource,
    *,
    policy: HostPolicy,
    secrets: Iterable[str],
    taken: Iterable[str] = (),
) -> list[ToolDefinition]:
    """The tools an `openapi` source gives; OpenApiImportError naming what
    is wrong."""
    document = await async_load(
        hass,
        url=source.url,
        document=source.document,
        policy=policy,
        verify_ssl=source.verify_ssl,
    )
    auth: Auth | None = None
    names = set(secrets)
    if source.auth_secret:
        if source.auth_secret not in names:
            raise OpenApiImportError(
                ERROR_INVALID,
                f"'openapi.auth_secret': secret '{source.auth_secret}' is not defined",
            )
        try:
            auth = Auth(document.scheme(source.auth_scheme), source.auth_secret)
        except OpenApiError as err:
            raise from_engine(err) from None
    imported = await hass.async_add_executor_job(
        partial(
            map_checked,
            document,
            source.operations,
            server_url=source.server_url,
            auth=auth,
            taken=list(taken),
            secrets=names,
            policy=policy,
            verify_ssl=source.verify_ssl,
        )
    )
    return imported.definitions
