"""OpenAPI operations -> tool definitions (the file format).

:class:`OpenApiDocument` lists a document's operations (verb, path,
summary, first tag) and security schemes; :meth:`OpenApiDocument.to_tools`
turns the chosen operations into tool definitions that the project's
validator accepts, and says what it left out and why. The rules (also in
``docs/openapi.md``):

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
  required header parameters become properties of ``parameters``. A tool
  sends its remaining arguments in the query for GET, HEAD, OPTIONS, TRACE
  and DELETE and in a JSON body for other verbs, so for those a required
  query parameter is written into the URL (``?limit={limit}``) and an
  optional one is left out.
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
  imported operation (noted): optional cookie and header parameters,
  optional query parameters of a body verb, an optional non-JSON body,
  callbacks (a tool makes one request).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
import ipaddress
import re
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

from ..requests import QUERY_METHODS
from ..templates import PLACEHOLDER_NAME_RE
from .document import OpenApiError, OpenApiSource
from .responses import suggested_shape

BASIC = "basic"
# A basic scheme's username: the secret named after the password's.
BASIC_USERNAME_SUFFIX = "_username"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
MAX_NAME = 64
MAX_DESCRIPTION = 300
MAX_PROPERTY_DESCRIPTION = 200
MAX_SCHEMA_DEPTH = 5
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})  # noqa: S104
_KEPT = frozenset(
    {
        "type",
        "description",
        "enum",
        "const",
        "default",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "uniqueItems",
        "items",
        "properties",
        "required",
        "additionalProperties",
        "anyOf",
        "oneOf",
    }
)
_SCHEMA_2_KEYS = (
    "type",
    "format",
    "items",
    "enum",
    "default",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
)
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_HTML = re.compile(r"<[^>]+>")
_EMPHASIS = re.compile(r"\*\*|__|`+")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*", re.MULTILINE)
# "a <b>thing</b>." leaves "thing ."; ".webp" in "include .webp" stays.
_SPACE_BEFORE_MARK = re.compile(r" ([.,;:!?])(?=\s|$)")
_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]+")
_PATH_PARAM = re.compile(r"{([^{}]+)}")


def clean_text(text: object) -> str:
    """Markdown and HTML as one line of plain text."""
    if not isinstance(text, str):
        return ""
    text = _IMAGE.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _HTML.sub(" ", text)
    text = _HEADING.sub("", text)
    text = _EMPHASIS.sub("", text)
    return _SPACE_BEFORE_MARK.sub(r"\1", " ".join(text.split()))


def trim(text: str, limit: int) -> str:
    """``text`` cut at a word to at most ``limit`` characters (``…`` ends it)."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-—") + "…"


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation: how the import lists it and finds it again."""

    key: str  # the operationId when unique, else "GET /path"
    method: str
    path: str
    operation_id: str | None
    summary: str
    tag: str
    deprecated: bool

    @property
    def label(self) -> str:
        """``GET /pets/{petId} — Find pet by ID``."""
        head = f"{self.method} {self.path}"
        return f"{head} — {self.summary}" if self.summary else head


@dataclass(frozen=True, slots=True)
class AuthScheme:
    """A security scheme a tool can fill from a secret."""

    name: str
    location: str  # "header", "query" or "basic" (the `auth` field)
    parameter: str  # the header's or the query parameter's name
    prefix: str = ""  # "Bearer " for a bearer token

    @property
    def label(self) -> str:
        """``api_key: header X-API-Key`` / ``bearer: Authorization: Bearer …``
        / ``basic: HTTP basic``."""
        if self.location == BASIC:
            return f"{self.name}: HTTP basic"
        if self.prefix:
            return f"{self.name}: {self.parameter}: {self.prefix}…"
        return f"{self.name}: {self.location} {self.parameter}"


@dataclass(frozen=True, slots=True)
class Auth:
    """The scheme to fill and the secret that fills it."""

    scheme: AuthScheme
    secret: str


@dataclass(frozen=True, slots=True)
class Skipped:
    """An operation (or a part of one) the import left out, and why."""

    operation: str
    reason: str

    def __str__(self) -> str:
        """``GET /pet/{petId}/uploadImage: its body is multipart/form-data...``."""
        return f"{self.operation}: {self.reason}"


@dataclass(frozen=True, slots=True)
class ImportResult:
    """Tool definitions, the operations skipped and what was left out."""

    tools: tuple[dict[str, Any], ...]
    skipped: tuple[Skipped, ...]
    notes: tuple[Skipped, ...]


class _Skip(Exception):
    """The operation cannot be a tool; the message says why."""


class _Unsupported(Exception):
    """A schema a JSON call cannot carry (a file)."""


def _media_json(media_type: str) -> bool:
    base = media_type.split(";", 1)[0].strip().lower()
    return base == "application/json" or base.endswith(("+json", "/json"))


def _media_form(media_type: str) -> bool:
    base = media_type.split(";", 1)[0].strip().lower()
    return base == "application/x-www-form-urlencoded"


def _is_local(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() in _LOCAL_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _escape_braces(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


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
        tools: list[dict[str, Any]] = []
        skipped: list[Skipped] = []
        notes: list[Skipped] = []
        for op in chosen:
            op_notes: list[Skipped] = []
            try:
                tool = self._tool(op, base, auth, op_notes)
            except _Skip as why:
                skipped.append(Skipped(op.key, str(why)))
                continue
            tool["name"] = _unique(_base_name(op), names)
            names.add(tool["name"])
            if not verify_ssl:
                tool["verify_ssl"] = False
            tools.append(tool)
            notes.extend(op_notes)
        return ImportResult(tuple(tools), tuple(skipped), tuple(notes))

    def _tool(
        self, op: Operation, base: str, auth: Auth | None, notes: list[Skipped]
    ) -> dict[str, Any]:
        source = self.source
        item = source.deref(source.data["paths"][op.path])
        raw = source.deref(item[op.method.lower()])
        query_verb = op.method in QUERY_METHODS
        properties: dict[str, Any] = {}
        required: list[str] = []
        headers: dict[str, str] = {}
        in_url: list[str] = []
        # (schema, required, "json" or "form")
        body: tuple[Any, bool, str] | None = None
        form: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        auth_header = (
            auth.scheme.parameter.lower()
            if auth
            and auth.scheme.location == "header"
            and self._uses(raw, auth.scheme.name)
            else None
        )

        def note(text: str) -> None:
            notes.append(Skipped(op.key, text))

        for param in self._parameters(item, raw):
            name, where = str(param.get("name", "")), param.get("in")
            needed = param.get("required") is True or where == "path"
            if where == "body":
                body = (param.get("schema"), param.get("required") is True, "json")
                continue
            if where == "formData":
                if param.get("type") == "file":
                    raise _Skip("it takes a file (formData): a tool sends no files")
                form["properties"][name] = {
                    k: param[k] for k in _SCHEMA_2_KEYS if k in param
                }
                if needed:
                    form["required"].append(name)
                body = (form, True, "form")
                continue
            if where == "cookie":
                if needed:
                    raise _Skip(f"it needs the cookie '{name}': cookies are not sent")
                note(f"optional cookie '{name}' left out: cookies are not sent")
                continue
            if where == "header":
                if auth_header == name.lower():
                    continue  # the chosen auth fills it
                if not needed:
                    note(f"optional header parameter '{name}' left out")
                    continue
                headers[name] = "{" + name + "}"
            if where == "query" and not query_verb:
                if not needed:
                    note(
                        f"optional query parameter '{name}' left out: a {op.method} "
                        "tool sends its other arguments in the JSON body"
                    )
                    continue
                in_url.append(name)
            if where not in ("path", "query", "header"):
                continue
            if (
                where in ("path", "header") or name in in_url
            ) and not PLACEHOLDER_NAME_RE.fullmatch(name):
                raise _Skip(
                    f"its {where} parameter '{name}' cannot be a placeholder "
                    "(letters, digits, '_' and '-' only)"
                )
            try:
                properties[name] = self._parameter_schema(param)
            except _Unsupported as why:
                raise _Skip(f"its parameter '{name}' is {why}") from None
            if needed:
                required.append(name)
        for name in _PATH_PARAM.findall(op.path):
            if name in properties:
                continue
            if not PLACEHOLDER_NAME_RE.fullmatch(name):
                raise _Skip(f"its path parameter '{name}' cannot be a placeholder")
            properties[name] = {"type": "string"}
            required.append(name)
            note(f"path parameter '{name}' is not described: taken as a string")
        if not source.swagger2:
            body = self._request_body(op, raw.get("requestBody"), note)
        if body is not None:
            self._add_body(op, body, properties, required, note)
        if raw.get("callbacks"):
            note("its callbacks are left out: a tool makes one request")

        url = base + _escape_braces_outside_params(op.path)
        if in_url:
            url += "?" + "&".join(f"{quote(n, safe='')}={{{n}}}" for n in in_url)
        basic: dict[str, str] | None = None
        if auth is not None and self._uses(raw, auth.scheme.name):
            secret = "{secret:" + auth.secret + "}"
            if auth.scheme.location == BASIC:
                user = "{secret:" + auth.secret + BASIC_USERNAME_SUFFIX + "}"
                basic = {"type": BASIC, "username": user, "password": secret}
            elif auth.scheme.location == "header":
                headers[auth.scheme.parameter] = auth.scheme.prefix + secret
            else:
                joiner = "&" if "?" in url else "?"
                url += f"{joiner}{quote(auth.scheme.parameter, safe='')}={secret}"
        parameters: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            parameters["required"] = list(dict.fromkeys(required))
        tool: dict[str, Any] = {
            "name": "",
            "description": self._description(op, raw),
            "parameters": parameters,
            "url": url,
            "method": op.method,
        }
        if headers:
            tool["headers"] = headers
        if body is not None and body[2] == "form" and op.method not in QUERY_METHODS:
            tool["body_format"] = "form"
        if basic is not None:
            tool["auth"] = basic
        if (shape := suggested_shape(source, raw)) is not None:
            tool["response"] = shape
            note(
                "the model reads "
                + (f"'{shape['path']}', " if "path" in shape else "")
                + "each item's "
                + ", ".join(shape["fields"])
                + " (its documented answer; edit `response` to read more)"
            )
        consequential = raw.get("x-openai-isConsequential")
        if isinstance(consequential, bool):
            # ChatGPT Actions' flag: ask before such a call, or never
            # (`engine/confirm.py`); without it the verb decides.
            tool["confirm"] = "always" if consequential else "never"
        return tool

    def _uses(self, raw: Mapping[str, Any], scheme: str) -> bool:
        """Whether the operation's security requirement names ``scheme``.

        A document that states no requirement anywhere gets the auth on
        every operation: its authors declared a scheme and did not say where.
        """
        security = raw.get("security", self.source.data.get("security"))
        if isinstance(security, list):
            return any(isinstance(r, dict) and scheme in r for r in security)
        return not self._states_security

    @cached_property
    def _states_security(self) -> bool:
        data = self.source.data
        if "security" in data:
            return True
        for raw_item in data["paths"].values():
            item = self.source.deref(raw_item)
            for method in METHODS if isinstance(item, dict) else ():
                operation = self.source.deref(item.get(method))
                if isinstance(operation, dict) and "security" in operation:
                    return True
        return False

    def _parameters(
        self, item: Mapping[str, Any], raw: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        """Path-level then operation-level parameters; the operation's win."""
        merged: dict[tuple[str, str], dict[str, Any]] = {}
        for level in (item.get("parameters"), raw.get("parameters")):
            for entry in level if isinstance(level, list) else ():
                param = self.source.deref(entry)
                if isinstance(param, dict) and isinstance(param.get("name"), str):
                    merged[(param["name"], str(param.get("in")))] = param
        return list(merged.values())

    def _parameter_schema(self, param: Mapping[str, Any]) -> dict[str, Any]:
        if "schema" in param:
            schema = self._schema(param["schema"])
        elif isinstance(param.get("content"), dict) and param["content"]:
            media = self.source.deref(next(iter(param["content"].values())))
            schema = self._schema(
                media.get("schema") if isinstance(media, dict) else {}
            )
        else:  # Swagger 2.0: the schema's keywords are on the parameter
            schema = self._schema({k: param[k] for k in _SCHEMA_2_KEYS if k in param})
        description = clean_text(param.get("description"))
        if description and "description" not in schema:
            schema = {
                "description": trim(description, MAX_PROPERTY_DESCRIPTION),
                **schema,
            }
        return schema

    def _request_body(
        self, op: Operation, raw_body: Any, note: Any
    ) -> tuple[Any, bool, str] | None:
        body = self.source.deref(raw_body)
        if not isinstance(body, dict):
            return None
        needed = body.get("required") is True
        content = body.get("content")
        if not isinstance(content, dict):
            content = {}
        for wanted, body_format in ((_media_json, "json"), (_media_form, "form")):
            for media_type, raw_media in content.items():
                if wanted(media_type):
                    media = self.source.deref(raw_media)
                    schema = media.get("schema") if isinstance(media, dict) else None
                    return (schema if schema is not None else {}, needed, body_format)
        kinds = ", ".join(content) or "without a media type"
        if needed:
            raise _Skip(
                f"its request body is {kinds}: files and multipart forms are not "
                "sent, a tool sends JSON or a urlencoded form"
            )
        note(f"its optional {kinds} body is left out")
        return None

    def _add_body(
        self,
        op: Operation,
        body: tuple[Any, bool, str],
        properties: dict[str, Any],
        required: list[str],
        note: Any,
    ) -> None:
        raw_schema, needed, _format = body
        if op.method in QUERY_METHODS:
            if needed:
                raise _Skip(
                    f"its JSON body cannot be sent: a {op.method} tool sends its "
                    "arguments in the query"
                )
            note(f"its optional JSON body is left out (a {op.method} sends none)")
            return
        try:
            schema = self._schema(raw_schema)
        except _Unsupported as why:
            raise _Skip(f"its body is {why}") from None
        kind = schema.get("type", "object")
        if kind != "object" and "properties" not in schema:
            if needed:
                raise _Skip(
                    f"its JSON body is {'an' if str(kind)[0] in 'aeiou' else 'a'} "
                    f"{kind}, not an object: a tool's arguments form one JSON object"
                )
            note(f"its optional JSON body ({kind}) is left out")
            return
        body_required = schema.get("required") or []
        for name, sub in (schema.get("properties") or {}).items():
            if name in properties:
                note(f"body property '{name}' left out: a parameter has that name")
                continue
            properties[name] = sub
            if needed and name in body_required:
                required.append(name)

    def _description(self, op: Operation, raw: Mapping[str, Any]) -> str:
        summary = clean_text(raw.get("summary"))
        text = clean_text(raw.get("description"))
        if summary and text.lower().startswith(summary.lower().rstrip(".")):
            summary = ""
        if summary and text:
            joined = summary + ("" if summary.endswith((".", "!", "?")) else ".")
            joined += " " + text
        else:
            joined = summary or text or f"{op.method} {op.path}"
        if op.deprecated:
            joined = "Deprecated. " + joined
        return trim(joined, MAX_DESCRIPTION)

    # -- schemas ----------------------------------------------------------

    def _schema(
        self, node: Any, depth: int = 0, stack: tuple[str, ...] = ()
    ) -> dict[str, Any]:
        """A schema a model can follow (the module's rules); _Unsupported for files."""
        if isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            if ref in stack or depth > MAX_SCHEMA_DEPTH:
                return _cut(self.source.deref(node))
            stack = (*stack, ref)
        node = self.source.deref(node)
        if not isinstance(node, dict):
            return {}
        if depth > MAX_SCHEMA_DEPTH:
            return _cut(node)
        kind = node.get("type")
        if kind == "file" or (kind == "string" and node.get("format") == "binary"):
            raise _Unsupported("a file")
        out: dict[str, Any] = {}
        for part in node.get("allOf") or []:
            _merge(out, self._schema(part, depth, stack))
        own: dict[str, Any] = {}
        for key, value in node.items():
            if key not in _KEPT:
                continue
            if key == "properties" and isinstance(value, dict):
                own[key] = self._properties(value, depth, stack)
            elif key in ("items", "additionalProperties"):
                if isinstance(value, dict):
                    own[key] = self._schema(value, depth + 1, stack)
            elif key in ("anyOf", "oneOf") and isinstance(value, list):
                branches = [self._schema(b, depth, stack) for b in value]
                branches = [b for b in branches if b.get("type") != "null"]
                if len(branches) == 1:
                    _merge(own, branches[0])
                elif branches:
                    own[key] = branches
            elif key == "description":
                if text := clean_text(value):
                    own[key] = trim(text, MAX_PROPERTY_DESCRIPTION)
            else:
                own[key] = value
        for key, value in own.items():
            if key == "properties":
                out.setdefault("properties", {}).update(value)
            elif key == "required" and isinstance(value, list):
                out["required"] = list(
                    dict.fromkeys([*out.get("required", []), *value])
                )
            else:
                out[key] = value
        return _tidy(out, node)

    def _properties(
        self, properties: Mapping[str, Any], depth: int, stack: tuple[str, ...]
    ) -> dict[str, Any]:
        kept: dict[str, Any] = {}
        for name, sub in properties.items():
            if self.source.deref(sub) is not None and _read_only(
                self.source.deref(sub)
            ):
                continue
            kept[name] = self._schema(sub, depth + 1, stack)
        return kept


def _read_only(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("readOnly") is True


def _cut(target: Any) -> dict[str, Any]:
    """What stands for a schema nested too deeply (or recursive)."""
    if isinstance(target, dict) and (
        target.get("type") == "object" or "properties" in target
    ):
        return {"type": "object"}
    return {}


def _merge(into: dict[str, Any], part: Mapping[str, Any]) -> None:
    """``allOf``: properties and required add up; other keywords: first wins."""
    for key, value in part.items():
        if key == "properties":
            into.setdefault("properties", {})
            for name, sub in value.items():
                into["properties"].setdefault(name, sub)
        elif key == "required":
            into["required"] = list(dict.fromkeys([*into.get("required", []), *value]))
        else:
            into.setdefault(key, value)


def _tidy(out: dict[str, Any], node: Mapping[str, Any]) -> dict[str, Any]:
    """Types without null, 2020-12 bounds, required only for kept properties."""
    kind = out.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        if len(kinds) == 1:
            out["type"] = kinds[0]
        elif kinds:
            out["type"] = kinds
        else:
            del out["type"]
    for bound, limit in (
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ):
        if isinstance(out.get(bound), bool) and out.pop(bound) and limit in out:
            out[bound] = out.pop(limit)
    if "enum" in out:
        values = (
            [v for v in out["enum"] if v is not None]
            if isinstance(out["enum"], list)
            else []
        )
        if values:
            out["enum"] = values
        else:
            del out["enum"]
    if out.get("default") is None:
        out.pop("default", None)
    if "required" in out:
        if "properties" in out:
            names = out["properties"]
            out["required"] = [r for r in out["required"] if r in names]
        if not out["required"]:
            del out["required"]
    for key in ("format", "pattern"):
        if key in out and not isinstance(out[key], str):
            del out[key]
    return out


def _escape_braces_outside_params(path: str) -> str:
    """The path as a URL template: ``{param}`` kept, other braces literal."""
    out: list[str] = []
    last = 0
    for match in _PATH_PARAM.finditer(path):
        out.append(_escape_braces(path[last : match.start()]))
        out.append(match.group(0))
        last = match.end()
    out.append(_escape_braces(path[last:]))
    return "".join(out)


def _base_name(op: Operation) -> str:
    """A tool name for ``op`` (before making it unique)."""
    base = op.operation_id or ""
    if base:
        # FastAPI's generated id: function name + path + "_" + verb.
        suffix = re.sub(r"\W", "_", op.path) + "_" + op.method.lower()
        if base.endswith(suffix) and len(base) > len(suffix):
            base = base[: -len(suffix)]
    else:
        segments = [s.strip("{}") for s in op.path.split("/") if s]
        base = "_".join([op.method.lower(), *segments])
    name = _NOT_NAME.sub("_", base).strip("_-")
    name = re.sub(r"_{2,}", "_", name)
    return name[:MAX_NAME] or op.method.lower()


def _unique(base: str, taken: set[str]) -> str:
    name = base[:MAX_NAME]
    number = 2
    while name in taken:
        suffix = f"_{number}"
        name = base[: MAX_NAME - len(suffix)] + suffix
        number += 1
    return name
