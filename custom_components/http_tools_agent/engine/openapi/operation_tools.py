"""One OpenAPI operation as a tool definition (``docs/openapi.md`` has the
rules): its parameters, its body, its auth, its description, what it left
out; `Skip` says why an operation cannot be a tool."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any
from urllib.parse import quote

from ..requests import QUERY_METHODS
from ..templates import PLACEHOLDER_NAME_RE
from .document import OpenApiSource
from .model import BASIC, BASIC_USERNAME_SUFFIX, Auth, Operation, Skipped
from .responses import suggested_shape
from .schemas import SCHEMA_2_KEYS, SchemaReader, Unsupported
from .text import (
    MAX_DESCRIPTION,
    MAX_PROPERTY_DESCRIPTION,
    PATH_PARAM,
    clean_text,
    trim,
    url_template,
)

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


class Skip(Exception):
    """The operation cannot be a tool; the message says why."""


def _media_json(media_type: str) -> bool:
    base = media_type.split(";", 1)[0].strip().lower()
    return base == "application/json" or base.endswith(("+json", "/json"))


def _media_form(media_type: str) -> bool:
    base = media_type.split(";", 1)[0].strip().lower()
    return base == "application/x-www-form-urlencoded"


class ToolBuilder:
    """Builds the tools of one document's operations."""

    def __init__(self, source: OpenApiSource) -> None:
        """Read operations of ``source``."""
        self.source = source
        self._schemas = SchemaReader(source)

    def tool(
        self, op: Operation, base: str, auth: Auth | None, notes: list[Skipped]
    ) -> dict[str, Any]:
        source = self.source
        item = source.deref(source.data["paths"][op.path])
        raw = source.deref(item[op.method.lower()])
        query_verb = op.method in QUERY_METHODS
        properties: dict[str, Any] = {}
        required: list[str] = []
        headers: dict[str, str] = {}
        # Query parameters of a body verb, each required or not.
        in_url: dict[str, bool] = {}
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
                    raise Skip("it takes a file (formData): a tool sends no files")
                form["properties"][name] = {
                    k: param[k] for k in SCHEMA_2_KEYS if k in param
                }
                if needed:
                    form["required"].append(name)
                body = (form, True, "form")
                continue
            if where == "cookie":
                if needed:
                    raise Skip(f"it needs the cookie '{name}': cookies are not sent")
                note(f"optional cookie '{name}' left out: cookies are not sent")
                continue
            if where == "header" and auth_header == name.lower():
                continue  # the chosen auth fills it
            if where not in ("path", "query", "header"):
                continue
            # A path or header parameter is a placeholder, and so is a query
            # parameter of a body verb (its other arguments go in the body).
            if (where != "query" or not query_verb) and not (
                PLACEHOLDER_NAME_RE.fullmatch(name)
            ):
                why = "cannot be a placeholder (letters, digits, '_' and '-' only)"
                if needed:
                    raise Skip(f"its {where} parameter '{name}' {why}")
                note(f"optional {where} parameter '{name}' left out: it {why}")
                continue
            if where == "header":
                # An optional one is left out when the model gives no value.
                headers[name] = "{" + name + ("}" if needed else "?}")
            elif where == "query" and not query_verb:
                in_url[name] = needed
            try:
                properties[name] = self._parameter_schema(param)
            except Unsupported as why:
                raise Skip(f"its parameter '{name}' is {why}") from None
            if needed:
                required.append(name)
        for name in PATH_PARAM.findall(op.path):
            if name in properties:
                continue
            if not PLACEHOLDER_NAME_RE.fullmatch(name):
                raise Skip(f"its path parameter '{name}' cannot be a placeholder")
            properties[name] = {"type": "string"}
            required.append(name)
            note(f"path parameter '{name}' is not described: taken as a string")
        if not source.swagger2:
            body = self._request_body(op, raw.get("requestBody"), note)
        if body is not None:
            self._add_body(op, body, properties, required, note)
        if raw.get("callbacks"):
            note("its callbacks are left out: a tool makes one request")

        url = base + url_template(op.path)
        if in_url:
            url += "?" + "&".join(
                f"{quote(n, safe='')}={{{n}{'' if needed else '?'}}}"
                for n, needed in in_url.items()
            )
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
            schema = self._schemas.schema(param["schema"])
        elif isinstance(param.get("content"), dict) and param["content"]:
            media = self.source.deref(next(iter(param["content"].values())))
            schema = self._schemas.schema(
                media.get("schema") if isinstance(media, dict) else {}
            )
        else:  # Swagger 2.0: the schema's keywords are on the parameter
            schema = self._schemas.schema(
                {k: param[k] for k in SCHEMA_2_KEYS if k in param}
            )
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
            raise Skip(
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
                raise Skip(
                    f"its JSON body cannot be sent: a {op.method} tool sends its "
                    "arguments in the query"
                )
            note(f"its optional JSON body is left out (a {op.method} sends none)")
            return
        try:
            schema = self._schemas.schema(raw_schema)
        except Unsupported as why:
            raise Skip(f"its body is {why}") from None
        kind = schema.get("type", "object")
        if kind != "object" and "properties" not in schema:
            if needed:
                raise Skip(
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
