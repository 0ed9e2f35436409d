"""OpenAPI operations -> tool definitions (the file format).

:class:`OpenApiDocument` lists a document's operations (verb, path,
summary, first tag) and security schemes; :meth:`OpenApiDocument.to_tools`
turns the chosen operations into tool definitions that the project's
validator accepts, and says what it left out and why: an operation by
:mod:`.operation_tools`, its schemas by :mod:`.schemas`, names and
descriptions by :mod:`.text`, what it returns in :mod:`.model`. The rules
(also in ``docs/openapi.md``):

- **Name**: the ``operationId``, with characters other than letters, digits,
  ``_`` and ``-`` turned into ``_``; an id FastAPI generated (function name +
  path + verb) is cut back to the function name; no id: verb + path
  (``get_pets_petId``). At most 64 characters; ``_2``, ``_3``... where a
  name is taken (by the entry's tools or an earlier operation).
- **Description**: the summary, then the description, Markdown and HTML
  removed, cut at a word to 300 characters (a small model reads every
  character of every tool on every turn); ``Deprecated.`` first when the
  operation is; the verb and path when the document says nothing.
- **URL**: the server URL + the path; path parameters are its
  ``{placeholders}``. The server: the first of ``servers`` (3.x; a
  relative one is read against the document's URL, variables take their
  defaults; one on the document's own host is preferred, and a server on
  ``localhost`` in a document fetched from another host is taken as that
  host), or ``schemes`` + ``host`` + ``basePath`` (2.0), or the document's
  own origin.
- **Parameters**: path parameters (always required), query parameters and
  header parameters become properties of ``parameters``. A tool sends its
  remaining arguments in the query for GET, HEAD, OPTIONS, TRACE and DELETE
  and in a JSON body for other verbs, so for those a query parameter is
  written into the URL (``?limit={limit}``, an optional one as
  ``{limit?}``: left out when absent); a header parameter is a header
  (an optional one ``{name?}``).
- **Body**: a JSON request body (``application/json``, ``*+json``; 2.0's
  ``in: body``) or a urlencoded form (``application/x-www-form-urlencoded``,
  2.0's ``formData``: ``"body_format": "form"``) whose schema is an object: its properties join the others,
  required when the body is required and the schema says so; ``readOnly``
  properties (the server fills them) are left out.
- **Schemas**: ``$ref``s resolved, ``allOf`` merged, an ``anyOf``/``oneOf``
  with ``null`` reduced to the other branch, ``nullable`` and ``type``
  lists with ``null`` reduced to the type, 3.0's boolean
  ``exclusiveMinimum``/``exclusiveMaximum`` written as 2020-12's numbers;
  only the keywords that shape a call are kept (``type``, ``description``,
  ``enum``, ``default``, ``format``, bounds, ``items``, ``properties``,
  ``required``...); recursive schemas and nesting deeper than five levels
  become ``{"type": "object"}``.
- **Auth**: an API key in a header or the query, an HTTP bearer token, or
  HTTP basic (``auth``: the secret is the password, ``<secret>_username``
  the username), filled from a secret (``{secret:name}``), on the operations whose
  security requirement (their own, else the document's) names that scheme;
  where the document states no requirement at all, on every operation.
- **The answer**: the documented 2xx JSON schema suggests ``response``
  fields (:mod:`.responses`).
- **Skipped** (with the reason shown): operations whose body is neither JSON
  nor a urlencoded form (multipart, files, octet streams), whose JSON body is not an
  object, that send a required body with a query verb, need a cookie, take
  a file, or whose path parameter cannot be a placeholder. Left out of an
  imported operation (noted): optional cookie parameters, an optional
  non-JSON body, callbacks (a tool makes one request).
"""

from __future__ import annotations

from collections.abc import Iterable
import ipaddress
from typing import Any
from urllib.parse import urljoin, urlsplit

from ..fields import unique_name
from .document import OpenApiError, OpenApiSource
from .model import BASIC, Auth, AuthScheme, ImportResult, Operation, Skipped
from .operation_tools import METHODS, Skip, ToolBuilder
from .text import base_name, clean_text, trim

__all__ = [
    "Auth",
    "AuthScheme",
    "ImportResult",
    "OpenApiDocument",
    "Operation",
    "Skipped",
    "clean_text",
    "trim",
]

_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})  # noqa: S104


def _is_local(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() in _LOCAL_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class OpenApiDocument:
    """A read document: its operations, security schemes and server."""

    def __init__(self, source: OpenApiSource) -> None:
        """List what the document offers (raises OpenApiError)."""
        self.source = source
        data = source.data
        info = data.get("info")
        title = info.get("title") if isinstance(info, dict) else None
        self.title = clean_text(title) or "API"
        self.operations = self._operations()
        if not self.operations:
            raise OpenApiError("no_operations", "the document describes no operations")
        self.auth_schemes, self.unsupported_auth = self._schemes()
        self.server_url = self._server_url()

    @property
    def warnings(self) -> tuple[str, ...]:
        """Where the document departs from the specification (the validator's)."""
        return self.source.warnings

    # -- listing ----------------------------------------------------------

    def _operations(self) -> tuple[Operation, ...]:
        data = self.source.data
        found: list[tuple[str, str, dict[str, Any]]] = []
        for path, raw_item in data["paths"].items():
            item = self.source.deref(raw_item)
            if not isinstance(item, dict) or not path.startswith("/"):
                continue
            for method in METHODS:
                operation = self.source.deref(item.get(method))
                if isinstance(operation, dict):
                    found.append((method.upper(), path, operation))
        ids = [op.get("operationId") for _, _, op in found]
        order = [
            t["name"]
            for t in data.get("tags") or []
            if isinstance(t, dict) and isinstance(t.get("name"), str)
        ]
        operations: list[Operation] = []
        for method, path, raw in found:
            op_id = raw.get("operationId")
            op_id = op_id.strip() if isinstance(op_id, str) and op_id.strip() else None
            unique = op_id is not None and ids.count(op_id) == 1
            tags = raw.get("tags")
            tag = tags[0] if isinstance(tags, list) and tags else ""
            tag = tag if isinstance(tag, str) else str(tag)
            if tag and tag not in order:
                order.append(tag)
            summary = clean_text(raw.get("summary")) or clean_text(
                raw.get("description")
            )
            operations.append(
                Operation(
                    key=op_id if unique and op_id else f"{method} {path}",
                    method=method,
                    path=path,
                    operation_id=op_id,
                    summary=trim(summary, 80),
                    tag=tag,
                    deprecated=raw.get("deprecated") is True,
                )
            )
        rank = {tag: index for index, tag in enumerate(order)}
        # Grouped by tag (the document's order), untagged last; stable.
        operations.sort(key=lambda op: rank.get(op.tag, len(rank)))
        return tuple(operations)

    def find(self, wanted: Iterable[str]) -> list[Operation]:
        """The operations named by key, ``operationId`` or ``VERB /path``.

        Raises OpenApiError naming every one the document does not have.
        """
        by_key = {op.key: op for op in self.operations}
        by_id = {op.operation_id: op for op in self.operations if op.operation_id}
        by_route = {(op.method, op.path): op for op in self.operations}
        chosen: list[Operation] = []
        unknown: list[str] = []
        for raw in wanted:
            text = " ".join(str(raw).split())
            verb, _, path = text.partition(" ")
            op = (
                by_key.get(text)
                or by_id.get(text)
                or by_route.get((verb.upper(), path.strip()))
            )
            if op is None:
                unknown.append(f"'{text}'")
            elif op not in chosen:
                chosen.append(op)
        if unknown:
            raise OpenApiError(
                "unknown_operation",
                f"the document has no operation {', '.join(unknown)} "
                "(name an operationId or 'VERB /path')",
            )
        if not chosen:
            raise OpenApiError("no_operation_chosen", "no operation was chosen")
        return chosen

    # -- security and server ----------------------------------------------

    def _schemes(self) -> tuple[tuple[AuthScheme, ...], tuple[str, ...]]:
        data = self.source.data
        if self.source.swagger2:
            declared = data.get("securityDefinitions")
        else:
            components = data.get("components")
            declared = (
                components.get("securitySchemes")
                if isinstance(components, dict)
                else None
            )
        usable: list[AuthScheme] = []
        unsupported: list[str] = []
        for name, raw in (declared or {}).items():
            scheme = self.source.deref(raw)
            if not isinstance(scheme, dict):
                continue
            kind = str(scheme.get("type", ""))
            where = scheme.get("in")
            param = scheme.get("name")
            if kind == "apiKey" and where in ("header", "query") and param:
                usable.append(AuthScheme(name, str(where), str(param)))
            elif kind == "http" and str(scheme.get("scheme", "")).lower() == "bearer":
                usable.append(AuthScheme(name, "header", "Authorization", "Bearer "))
            elif (
                kind == "http" and str(scheme.get("scheme", "")).lower() == "basic"
            ) or (
                kind == "basic"  # Swagger 2.0
            ):
                usable.append(AuthScheme(name, BASIC, "Authorization"))
            else:
                detail = f"{kind} in {where}" if kind == "apiKey" else kind
                unsupported.append(f"{name} ({detail or 'unknown'})")
        return tuple(usable), tuple(unsupported)

    def scheme(self, name: str | None) -> AuthScheme:
        """The usable scheme ``name`` (the only one when None); OpenApiError."""
        if name is None and len(self.auth_schemes) == 1:
            return self.auth_schemes[0]
        for scheme in self.auth_schemes:
            if scheme.name == name:
                return scheme
        offered = ", ".join(s.name for s in self.auth_schemes) or "none"
        raise OpenApiError(
            "unknown_auth_scheme",
            f"the document has no usable security scheme '{name or ''}' "
            f"(usable: {offered})",
        )

    def _server_url(self) -> str | None:
        data = self.source.data
        doc = urlsplit(self.source.url) if self.source.url else None
        if self.source.swagger2:
            host = data.get("host") or (doc.netloc if doc else None)
            if not host:
                return None
            schemes = [s for s in data.get("schemes") or [] if s in ("http", "https")]
            scheme = (
                doc.scheme
                if doc and (not schemes or doc.scheme in schemes)
                else (schemes[0] if schemes else "https")
            )
            base = str(data.get("basePath") or "").rstrip("/")
            return self._localised(f"{scheme}://{host}{base}", doc)
        candidates: list[str] = []
        for server in data.get("servers") or [{"url": "/"}]:
            if not isinstance(server, dict) or not isinstance(server.get("url"), str):
                continue
            url = server["url"]
            for var, spec in (server.get("variables") or {}).items():
                if isinstance(spec, dict) and "default" in spec:
                    url = url.replace("{" + str(var) + "}", str(spec["default"]))
            if "{" in url:
                continue
            if not urlsplit(url).scheme:
                if doc is None:
                    continue
                url = urljoin(self.source.url or "", url)
            candidates.append(url.rstrip("/"))
        if not candidates:
            return None
        if doc is not None:
            for url in candidates:
                if urlsplit(url).netloc == doc.netloc:
                    return url
        return self._localised(candidates[0], doc)

    @staticmethod
    def _localised(url: str, doc: Any) -> str | None:
        """A localhost server in a document fetched from another host: that host."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return None
        if (
            doc is not None
            and _is_local(parts.hostname)
            and not _is_local(doc.hostname)
        ):
            return f"{doc.scheme}://{doc.netloc}{parts.path}".rstrip("/")
        return url

    # -- mapping ----------------------------------------------------------

    def to_tools(
        self,
        keys: Iterable[str],
        *,
        server_url: str | None = None,
        auth: Auth | None = None,
        taken: Iterable[str] = (),
        verify_ssl: bool = True,
    ) -> ImportResult:
        """Tool definitions for the operations ``keys`` (see the module's rules).

        ``server_url`` overrides the document's server; ``taken`` are names
        already in use. Raises OpenApiError for an unknown operation or when
        there is no server URL.
        """
        chosen = self.find(keys)
        base = (server_url or self.server_url or "").strip().rstrip("/")
        if not base:
            raise OpenApiError(
                "no_server",
                "the document names no server URL: give the API's URL",
            )
        names = set(taken)
        builder = ToolBuilder(self.source)
        tools: list[dict[str, Any]] = []
        made: list[Operation] = []
        skipped: list[Skipped] = []
        notes: list[Skipped] = []
        for op in chosen:
            op_notes: list[Skipped] = []
            try:
                tool = builder.tool(op, base, auth, op_notes)
            except Skip as why:
                skipped.append(Skipped(op.key, str(why)))
                continue
            tool["name"] = unique_name(base_name(op), names)
            names.add(tool["name"])
            if not verify_ssl:
                tool["verify_ssl"] = False
            tools.append(tool)
            made.append(op)
            notes.extend(op_notes)
        return ImportResult(tuple(tools), tuple(skipped), tuple(notes), tuple(made))
