"""Turn a tool definition and the model's arguments into an HTTP request.

Placeholders take their arguments' values (percent-encoded in the URL, so no
value can change the server, the path's structure, the query or the
fragment; encoded for the body's format, so none can change the body's
structure either); ``{secret:name}`` takes the caller's secret, never an
argument; ``{step.path}`` takes a value of an earlier step's response; a
header, query parameter or body field whose ``{name?}`` placeholders are all
absent is left out. Without a ``body`` template the remaining arguments go
to the query for ``GET``, ``HEAD``, ``OPTIONS``, ``TRACE`` and ``DELETE`` and
to a JSON body (or a form, with ``"body_format": "form"``) for every other
verb. A request that cannot be built raises :class:`RequestBuildError` with
the text the model receives; no partial request is ever built. The rules
are in ``docs/tool-format.md`` ("How a call becomes a request").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import json
import re
from typing import Any
from urllib.parse import quote

from .auth import Credentials
from .definitions import ToolDefinition
from .fields import HEADER_CONTROL_RE, QUERY_METHODS, http_method
from .rendering import (
    ABSENT,
    Renderer,
    RequestBuildError,
    invalid_value,
    missing_argument,
    render_value,
    template_of,
    text_pairs,
)
from .request_bodies import cannot_send_json, form_body, form_pairs, json_value
from .request_fields import body_templates
from .steps import Step
from .templates import (
    Placeholder,
    Reference,
    Secret,
    TemplatePart,
    parse_template,
    parse_url_template,
    url_sections,
)

__all__ = [
    "JSON_CONTENT_TYPE",
    "QUERY_METHODS",
    "PreparedRequest",
    "RequestBuildError",
    "build_request",
    "check_arguments_present",
    "render_value",
]

JSON_CONTENT_TYPE = "application/json"
FORM_CONTENT_TYPE = "application/x-www-form-urlencoded"
TEXT_CONTENT_TYPE = "text/plain; charset=utf-8"
_CONTENT_TYPES = {
    "json": JSON_CONTENT_TYPE,
    "form": FORM_CONTENT_TYPE,
    "text": TEXT_CONTENT_TYPE,
}

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
    # A form or text body, encoded (json_body is None then).
    content: bytes | None = None
    auth: Credentials | None = None

    def body(self) -> bytes | None:
        """The body's bytes (JSON compact UTF-8), ``None`` when there is none."""
        if self.json_body is None:
            return self.content
        return json.dumps(
            self.json_body, ensure_ascii=False, separators=(",", ":")
        ).encode("utf-8")


def _encode(text: str) -> str:
    """Percent-encode everything but RFC 3986 unreserved characters."""
    return quote(text, safe="")


def _encode_literal(text: str) -> str:
    return quote(_LONE_PERCENT_RE.sub("%25", text), safe=_LITERAL_SAFE)


# An encoded value with `..` next to a slash or backslash (`..%2Fadmin`).
_DOT_SEGMENT = re.compile(r"(^|%2F|%5C)\.\.($|%2F|%5C)", re.IGNORECASE)


type _Source = str | Reference | None


def _check_segments(
    pieces: list[tuple[str, _Source]], definition: ToolDefinition
) -> None:
    """Refuse values making a whole path segment '', '.' or '..'."""
    segments: list[tuple[str, _Source]] = [("", None)]
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
            raise invalid_value(
                source, definition, "'.' and '..' are not allowed as a URL path segment"
            )
        if not segment:
            raise invalid_value(
                source, definition, "an empty value cannot fill a URL path segment"
            )


def _split_params(parts: tuple[TemplatePart, ...]) -> list[tuple[TemplatePart, ...]]:
    """A query's parts, one group per ``&``-separated parameter."""
    groups: list[list[TemplatePart]] = [[]]
    for part in parts:
        if not isinstance(part, str):
            groups[-1].append(part)
            continue
        first, *others = part.split("&")
        if first:
            groups[-1].append(first)
        for piece in others:
            groups.append([piece] if piece else [])
    return [tuple(group) for group in groups]


def _encoded(parts: tuple[TemplatePart, ...], renderer: Renderer) -> str:
    """Query or fragment parts: values encoded, the template's text kept."""
    out: list[str] = []
    for part in parts:
        if isinstance(part, Secret):
            out.append(_encode(renderer.secret(part.name)))
        elif isinstance(part, (Placeholder, Reference)):
            out.append(_encode(renderer.text(part)))
        else:
            out.append(_encode_literal(part))
    return "".join(out)


def _build_url(
    definition: ToolDefinition, step: Step, renderer: Renderer
) -> tuple[str, str, bool, str | None]:
    """Return (origin + path, query, has_query, fragment or None)."""
    try:
        template = parse_url_template(step.url)
    except ValueError as err:
        raise RequestBuildError(
            f"Error: invalid URL for tool '{definition.name}': {err}"
        ) from None
    sections = url_sections(template.rest)
    path: list[tuple[str, _Source]] = []
    for part in sections.path:
        if isinstance(part, Secret):
            # A secret is the user's own text: no segment checks, and `:`
            # and `@` stay as RFC 3986 allows them in a path (a Telegram bot
            # token is `123456:ABC...`).
            path.append((quote(renderer.secret(part.name), safe=":@"), None))
        elif isinstance(part, (Placeholder, Reference)):
            source = part.name if isinstance(part, Placeholder) else part
            path.append((_encode(renderer.text(part)), source))
        else:
            path.append((_encode_literal(part), None))
    _check_segments(path, definition)
    query = ""
    has_query = sections.query is not None
    if sections.query is not None:
        groups = _split_params(sections.query)
        kept = [group for group in groups if not renderer.left_out(group)]
        query = "&".join(_encoded(group, renderer) for group in kept)
        # `?title={title?}` with no title: no `?` either.
        has_query = bool(query) or len(kept) == len(groups)
    fragment: str | None = None
    if sections.fragment is not None and not renderer.left_out(sections.fragment):
        fragment = _encoded(sections.fragment, renderer)
    base = template.origin + "".join(text for text, _ in path)
    return base, query, has_query, fragment


def _query_pairs(remaining: Mapping[str, Any], definition: ToolDefinition) -> list[str]:
    return [f"{_encode(k)}={_encode(v)}" for k, v in text_pairs(remaining, definition)]


def _render_header(
    value: str, name: str, definition: ToolDefinition, renderer: Renderer
) -> str | None:
    """The header's value; None when it is left out."""
    try:
        parts: tuple[TemplatePart, ...] = parse_template(value)
    except ValueError as err:
        raise RequestBuildError(
            f"Error: invalid header '{name}' for tool '{definition.name}': {err}"
        ) from None
    if renderer.left_out(parts):
        return None
    out: list[str] = []
    for part in parts:
        if isinstance(part, (Placeholder, Reference)):
            text = renderer.text(part)
            if HEADER_CONTROL_RE.search(text):
                source = part.name if isinstance(part, Placeholder) else part
                raise invalid_value(
                    source,
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


def _credentials(
    step: Step,
    definition: ToolDefinition,
    renderer: Renderer,
    tokens: Mapping[str, str],
) -> Credentials | None:
    if step.auth is None:
        return None
    if step.auth.type == "oauth2":
        token = tokens.get(step.auth.sign_in)
        if not token:  # the caller fetches every token before building
            raise RequestBuildError(
                f"Error: tool '{definition.name}' has no token of the sign-in "
                f"'{step.auth.sign_in}'",
                "not signed in",
            )
        credentials = Credentials("oauth2", "", token)
        renderer.secret_values.extend(credentials.hidden())
        return credentials
    try:
        username = renderer.join(parse_template(step.auth.username))
        password = renderer.join(parse_template(step.auth.password))
    except ValueError:
        raise RequestBuildError(
            f"Error: invalid auth for tool '{definition.name}'"
        ) from None
    if ":" in username:
        raise RequestBuildError(
            f"Error: invalid auth for tool '{definition.name}': the username "
            "must not contain ':'"
        )
    credentials = Credentials(step.auth.type, username, password)
    renderer.secret_values.extend(credentials.hidden())
    return credentials


def check_arguments_present(
    definition: ToolDefinition, arguments: Mapping[str, Any]
) -> None:
    """Raise the missing-argument error of the first required placeholder of
    any step that has no value: a composite call never starts when a later
    step could not be built for want of an argument."""
    for step in definition.requests:
        texts = [step.url, *step.headers.values()]
        texts += [text for _, text in body_templates(step.body)]
        for text in texts:
            try:
                parts = parse_template(text)
            except ValueError:
                continue
            for part in parts:
                if (
                    isinstance(part, Placeholder)
                    and not part.optional
                    and arguments.get(part.name) is None
                ):
                    raise missing_argument(part.name, definition)


def build_request(
    definition: ToolDefinition,
    arguments: Mapping[str, Any],
    secrets: Mapping[str, str] | None = None,
    *,
    step: Step | None = None,
    earlier: Mapping[str, Any] | None = None,
    hidden: frozenset[str] = frozenset(),
    tokens: Mapping[str, str] | None = None,
) -> PreparedRequest:
    """Build the request for one call; raise :class:`RequestBuildError`.

    ``secrets`` fill the ``{secret:name}`` references; arguments never do.
    ``step`` is the request of a composite tool to build (default: the
    first), ``earlier`` the JSON of the steps before it, by name; the values
    read from the ``hidden`` steps (a login's) count as secrets; ``tokens``
    are the access tokens of the sign-ins an oauth2 ``auth`` names.
    """
    step = step if step is not None else definition.requests[0]
    method = http_method(step.method)
    if method is None:  # a definition built by hand: parse_tools refuses it
        raise RequestBuildError(
            f"Error: invalid HTTP method '{step.method}' for tool '{definition.name}'",
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
            raise missing_argument(name, definition)
    renderer = Renderer(definition, arguments, secrets or {}, earlier or {}, hidden)
    base, query, has_query, fragment = _build_url(definition, step, renderer)
    headers: dict[str, str] = {}
    for name, value in step.headers.items():
        if (rendered := _render_header(value, name, definition, renderer)) is not None:
            headers[name] = rendered
    json_body: Any | None = None
    content: bytes | None = None
    body_format = step.body_format
    if step.body is not None:
        if body_format == "text":
            if isinstance(step.body, str):
                parts = template_of(step.body, definition)
                if not renderer.left_out(parts):
                    content = renderer.join(parts).encode("utf-8")
        elif body_format == "form":
            if isinstance(step.body, Mapping):
                content = form_body(form_pairs(step.body, definition, renderer))
        else:
            rendered = json_value(step.body, definition, renderer)
            if rendered is not ABSENT:
                try:
                    json.dumps(rendered, allow_nan=False)
                except TypeError, ValueError:
                    raise cannot_send_json(definition) from None
                json_body = rendered
    elif not definition.steps:
        # No template: what no placeholder used follows the verb.
        remaining = {
            key: value
            for key, value in arguments.items()
            if key not in renderer.consumed
        }
        if method in QUERY_METHODS:
            if pairs := _query_pairs(remaining, definition):
                if query and not query.endswith("&"):
                    query += "&"
                query += "&".join(pairs)
                has_query = True
        elif body_format == "form":
            content = form_body(text_pairs(remaining, definition))
        else:
            try:
                json.dumps(remaining, allow_nan=False)
            except TypeError, ValueError:
                raise cannot_send_json(definition) from None
            json_body = remaining
    if (json_body is not None or content is not None) and not any(
        name.lower() == "content-type" for name in headers
    ):
        headers["Content-Type"] = _CONTENT_TYPES.get(body_format, JSON_CONTENT_TYPE)
    credentials = _credentials(step, definition, renderer, tokens or {})
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
        content=content,
        auth=credentials,
    )
