"""Turn a tool definition and the model's arguments into an HTTP request.

Placeholders take their arguments' values (percent-encoded in the URL, so no
value can change the server, the path's structure, the query or the
fragment); ``{secret:name}`` takes the caller's secret, never an argument
(also percent-encoded in the URL); the remaining arguments go to the query for ``GET``, ``HEAD``,
``OPTIONS``, ``TRACE`` and ``DELETE`` and to a JSON body for every other
verb. A request that cannot be built raises :class:`RequestBuildError` with
the text the model receives; no partial request is ever built. The rules are
in ``docs/tool-format.md`` ("How a call becomes a request").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import json
import math
import re
from typing import Any
from urllib.parse import quote

from .definitions import ToolDefinition
from .fields import HEADER_CONTROL_RE, http_method
from .templates import (
    Placeholder,
    Secret,
    TemplatePart,
    parse_template,
    parse_url_template,
)

QUERY_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "DELETE"})
JSON_CONTENT_TYPE = "application/json"

_LONE_PERCENT_RE = re.compile(r"%(?![0-9A-Fa-f]{2})")
# Characters kept literal in the template's own text: reserved + "%" (+ "~").
_LITERAL_SAFE = "!#$&'()*+,/:;=?@[]~%"


@dataclass(frozen=True, slots=True)
class PreparedRequest:
    """An HTTP request ready to send."""

    method: str
    url: str
    headers: dict[str, str]
    json_body: Any | None
    # The secret values in the request: never to appear in a text.
    secret_values: tuple[str, ...] = ()

    def body(self) -> bytes | None:
        """The body as compact UTF-8 JSON, ``None`` when there is none."""
        if self.json_body is None:
            return None
        return json.dumps(
            self.json_body, ensure_ascii=False, separators=(",", ":")
        ).encode("utf-8")


class RequestBuildError(Exception):
    """The request cannot be built; ``text`` is what the model receives."""

    def __init__(self, text: str, reason: str | None = None) -> None:
        """Keep the model-facing text (it starts with ``Error: ``).

        ``reason`` is the short form for logs and diagnostics; by default the
        text without its ``Error: `` prefix.
        """
        super().__init__(text)
        self.text = text
        self.reason = reason if reason is not None else text.removeprefix("Error: ")


class _InvalidValue(ValueError):
    """A value that cannot be rendered."""


def render_value(value: Any) -> str:
    """Render an argument as text for a URL or a header value."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _InvalidValue("numbers must be finite")
        if value.is_integer():
            return str(int(value))
        return repr(value)
    try:
        return json.dumps(
            value, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        )
    except TypeError, ValueError:
        raise _InvalidValue("the value cannot be sent as text") from None


def _encode(text: str) -> str:
    """Percent-encode everything but RFC 3986 unreserved characters."""
    return quote(text, safe="")


def _encode_literal(text: str) -> str:
    return quote(_LONE_PERCENT_RE.sub("%25", text), safe=_LITERAL_SAFE)


def _invalid(name: str, definition: ToolDefinition, why: str) -> RequestBuildError:
    return RequestBuildError(
        f"Error: invalid value for argument '{name}' in tool '{definition.name}': {why}"
    )


def _missing(name: str, definition: ToolDefinition) -> RequestBuildError:
    return RequestBuildError(
        f"Error: missing required argument '{name}' for tool '{definition.name}'"
    )


class _Renderer:
    """Render placeholders, remembering which arguments were consumed."""

    def __init__(
        self,
        definition: ToolDefinition,
        arguments: Mapping[str, Any],
        secrets: Mapping[str, str],
    ):
        self.definition = definition
        self.arguments = arguments
        self.secrets = secrets
        self.consumed: set[str] = set()
        self.secret_values: list[str] = []

    def secret(self, name: str) -> str:
        """The secret ``name``: only the caller's secrets, never an argument."""
        value = self.secrets.get(name)
        if not isinstance(value, str) or not value:
            raise RequestBuildError(
                f"Error: secret '{name}' of tool '{self.definition.name}' "
                "is not defined",
                f"secret '{name}' is not defined",
            )
        if HEADER_CONTROL_RE.search(value):
            raise RequestBuildError(
                f"Error: secret '{name}' of tool '{self.definition.name}' "
                "contains control characters",
                f"secret '{name}' contains control characters",
            )
        self.secret_values.append(value)
        return value

    def value(self, name: str) -> str:
        value = self.arguments.get(name)
        if value is None:
            raise _missing(name, self.definition)
        self.consumed.add(name)
        try:
            return render_value(value)
        except _InvalidValue as err:
            raise _invalid(name, self.definition, str(err)) from None


# An encoded value with `..` next to a slash or backslash (`..%2Fadmin`).
_DOT_SEGMENT = re.compile(r"(^|%2F|%5C)\.\.($|%2F|%5C)", re.IGNORECASE)


def _check_segments(
    pieces: list[tuple[str, str | None]], definition: ToolDefinition
) -> None:
    """Refuse values making a whole path segment '', '.' or '..'."""
    segments: list[tuple[str, str | None]] = [("", None)]
    for text, source in pieces:
        if source is not None:
            current, _ = segments[-1]
            segments[-1] = (current + text, source)
            continue
        first, *others = text.split("/")
        current, current_source = segments[-1]
        segments[-1] = (current + first, current_source)
        segments.extend((chunk, None) for chunk in others)
    for segment, source in segments:
        if source is None:
            continue
        if segment in (".", "..") or _DOT_SEGMENT.search(segment):
            # `..%2F` is safe by RFC 3986, but servers that decode %2F before
            # normalising the path would climb out of it.
            raise _invalid(
                source, definition, "'.' and '..' are not allowed as a URL path segment"
            )
        if not segment:
            raise _invalid(
                source, definition, "an empty value cannot fill a URL path segment"
            )


def _build_url(
    definition: ToolDefinition, renderer: _Renderer
) -> tuple[str, str, bool, str | None]:
    """Return (origin + path, query, has_query, fragment or None)."""
    try:
        template = parse_url_template(definition.url)
    except ValueError as err:
        raise RequestBuildError(
            f"Error: invalid URL for tool '{definition.name}': {err}"
        ) from None
    state = "path"
    path: list[tuple[str, str | None]] = []
    query: list[str] = []
    fragment: list[str] = []
    has_query = False
    for part in template.rest:
        if isinstance(part, (Placeholder, Secret)):
            is_value = isinstance(part, Placeholder)
            raw = renderer.value(part.name) if is_value else renderer.secret(part.name)
            encoded = _encode(raw)
            if state == "path":
                # A secret is the user's own text: no segment checks.
                path.append((encoded, part.name if is_value else None))
            elif state == "query":
                query.append(encoded)
            else:
                fragment.append(encoded)
            continue
        text = part
        if state == "path":
            cut = min(
                (pos for pos in (text.find("?"), text.find("#")) if pos != -1),
                default=-1,
            )
            if cut == -1:
                path.append((_encode_literal(text), None))
                continue
            path.append((_encode_literal(text[:cut]), None))
            if text[cut] == "?":
                state, has_query = "query", True
            else:
                state = "fragment"
            text = text[cut + 1 :]
        if state == "query":
            cut = text.find("#")
            if cut == -1:
                query.append(_encode_literal(text))
                continue
            query.append(_encode_literal(text[:cut]))
            state = "fragment"
            text = text[cut + 1 :]
        fragment.append(_encode_literal(text))
    _check_segments(path, definition)
    base = template.origin + "".join(text for text, _ in path)
    frag = "".join(fragment) if state == "fragment" else None
    return base, "".join(query), has_query, frag


def _query_pairs(remaining: Mapping[str, Any], definition: ToolDefinition) -> list[str]:
    pairs: list[str] = []
    for key, value in remaining.items():
        values = value if isinstance(value, (list, tuple)) else [value]
        for item in values:
            if item is None:
                continue
            try:
                text = render_value(item)
            except _InvalidValue as err:
                raise _invalid(key, definition, str(err)) from None
            pairs.append(f"{_encode(key)}={_encode(text)}")
    return pairs


def _render_header(
    value: str, name: str, definition: ToolDefinition, renderer: _Renderer
) -> str:
    try:
        parts: tuple[TemplatePart, ...] = parse_template(value)
    except ValueError as err:
        raise RequestBuildError(
            f"Error: invalid header '{name}' for tool '{definition.name}': {err}"
        ) from None
    out: list[str] = []
    for part in parts:
        if isinstance(part, Placeholder):
            text = renderer.value(part.name)
            if HEADER_CONTROL_RE.search(text):
                raise _invalid(
                    part.name,
                    definition,
                    "header values cannot contain control characters (CR, LF, NUL)",
                )
            out.append(text)
        elif isinstance(part, Secret):
            out.append(renderer.secret(part.name))
        elif HEADER_CONTROL_RE.search(part):
            raise RequestBuildError(
                f"Error: invalid header '{name}' for tool '{definition.name}': "
                "header values cannot contain control characters (CR, LF, NUL)"
            )
        else:
            out.append(part)
    return "".join(out)


def build_request(
    definition: ToolDefinition,
    arguments: Mapping[str, Any],
    secrets: Mapping[str, str] | None = None,
) -> PreparedRequest:
    """Build the request for one call; raise :class:`RequestBuildError`.

    ``secrets`` fill the ``{secret:name}`` references; arguments never do.
    """
    method = http_method(definition.method)
    if method is None:  # a definition built by hand: parse_tools refuses it
        raise RequestBuildError(
            f"Error: invalid HTTP method '{definition.method}' "
            f"for tool '{definition.name}'",
            "invalid HTTP method",
        )
    if not isinstance(arguments, Mapping) or not all(
        isinstance(key, str) for key in arguments
    ):
        raise RequestBuildError(
            f"Error: arguments for tool '{definition.name}' must be a JSON object"
        )
    required = definition.parameters.get("required")
    for name in required if isinstance(required, list) else ():
        if isinstance(name, str) and arguments.get(name) is None:
            raise _missing(name, definition)
    renderer = _Renderer(definition, arguments, secrets or {})
    base, query, has_query, fragment = _build_url(definition, renderer)
    headers = {
        name: _render_header(value, name, definition, renderer)
        for name, value in definition.headers.items()
    }
    remaining = {
        key: value for key, value in arguments.items() if key not in renderer.consumed
    }
    json_body: Any | None = None
    if method in QUERY_METHODS:
        pairs = _query_pairs(remaining, definition)
        if pairs:
            if query and not query.endswith("&"):
                query += "&"
            query += "&".join(pairs)
            has_query = True
    else:
        try:
            json.dumps(remaining, allow_nan=False)
        except TypeError, ValueError:
            raise RequestBuildError(
                f"Error: arguments for tool '{definition.name}' cannot be sent as JSON"
            ) from None
        json_body = remaining
        if not any(name.lower() == "content-type" for name in headers):
            headers["Content-Type"] = JSON_CONTENT_TYPE
    url = base
    if has_query:
        url += "?" + query
    if fragment is not None:
        url += "#" + fragment
    return PreparedRequest(
        method=method,
        url=url,
        headers=headers,
        json_body=json_body,
        secret_values=tuple(renderer.secret_values),
    )
