"""The checks of a request's body, its format and its authentication: one
function per field, each problem naming its place (``body.params.on``,
``steps[1].auth.password``). The rules are in ``docs/tool-format.md``
("Request bodies", "Authentication").
"""

from __future__ import annotations

from collections.abc import Mapping
import json
from typing import Any

from .auth import AUTH_FIELDS, AUTH_TYPES, Auth
from .fields import BODY_FORMATS, HEADER_CONTROL_RE, QUERY_METHODS, check_template
from .problems import FieldProblems, object_field, string_field, type_name
from .templates import PLACEHOLDER_NAME_RE, Secret, parse_template


def body_templates(body: Any, where: str = "body") -> list[tuple[str, str]]:
    """Every string of a body template with its place (``body.params.on``)."""
    found: list[tuple[str, str]] = []
    stack: list[tuple[str, Any]] = [(where, body)]
    while stack:
        place, node = stack.pop()
        if isinstance(node, str):
            found.append((place, node))
        elif isinstance(node, Mapping):
            stack.extend((f"{place}.{key}", value) for key, value in node.items())
        elif isinstance(node, list):
            stack.extend((f"{place}[{i}]", value) for i, value in enumerate(node))
    found.reverse()
    return found


def _scalar(value: object) -> bool:
    return isinstance(value, (str, bool, int, float))


def parse_body(
    raw: object,
    raw_format: object,
    method: str | None,
    declared: set[str] | None,
    out: FieldProblems,
    *,
    prefix: str = "",
    earlier: tuple[str, ...] | None = None,
    leftovers: bool = True,
) -> tuple[Any, str]:
    """The body template and its format (``json`` when absent).

    ``leftovers``: without a template the leftover arguments make the body
    (a single request); a step sends only what its templates name.
    """
    field, format_field = f"{prefix}body", f"{prefix}body_format"
    body_format = "json"
    if raw_format is not None:
        if not isinstance(raw_format, str) or raw_format not in BODY_FORMATS:
            allowed = ", ".join(f'"{name}"' for name in BODY_FORMATS)
            out.add(format_field, f"must be one of {allowed}")
        else:
            body_format = raw_format
    if raw is None:
        if body_format == "text":
            out.add(field, 'is required with "body_format": "text" (the text to send)')
        elif raw_format is not None and not leftovers:
            out.add(field, "is required with body_format: a step sends only its body")
        elif raw_format is not None and method in QUERY_METHODS:
            out.add(
                format_field,
                f"a {method} request sends its arguments in the query: give a "
                "`body` template to send a body",
            )
        return None, body_format
    try:
        text = json.dumps(raw, allow_nan=False)
    except (TypeError, ValueError) as err:
        out.add(field, f"must be JSON ({err})")
        return None, body_format
    except RecursionError:
        out.add(field, "is nested too deeply")
        return None, body_format
    before = out.count
    if body_format == "text" and not isinstance(raw, str):
        out.add(
            field, f'must be a string with "body_format": "text", got {type_name(raw)}'
        )
    if body_format == "form":
        if not isinstance(raw, Mapping):
            out.add(
                field,
                f'must be an object with "body_format": "form", got {type_name(raw)}',
            )
        else:
            for key, value in raw.items():
                values = value if isinstance(value, list) else [value]
                if not all(_scalar(item) for item in values):
                    out.add(
                        f"{field}.{key}",
                        "a form field is a string, a number, a boolean or a list "
                        "of them",
                    )
    for place, template in body_templates(raw, field):
        if HEADER_CONTROL_RE.search(template.replace("\r", "").replace("\n", "")):
            out.add(place, "must not contain control characters other than line breaks")
            continue
        try:
            parse_template(template)
        except ValueError as err:
            out.add(place, str(err))
            continue
        check_template(template, declared, earlier, place, out)
    if out.count != before:
        return None, body_format
    return json.loads(text), body_format


def _credential(raw: object, field: str, out: FieldProblems) -> str | None:
    """A username or password template: fixed text and secrets only."""
    text = string_field(raw, field, out)
    if text is None:
        return None
    if HEADER_CONTROL_RE.search(text) or "\t" in text:
        out.add(field, "must not contain control characters")
        return None
    try:
        parts = parse_template(text)
    except ValueError as err:
        out.add(field, str(err))
        return None
    if any(not isinstance(part, (str, Secret)) for part in parts):
        out.add(
            field,
            "takes fixed text and {secret:name} only: the model never chooses "
            "credentials",
        )
        return None
    return text


def parse_auth(raw: object, out: FieldProblems, *, prefix: str = "") -> Auth | None:
    """The request's HTTP authentication (basic, digest or oauth2), or None."""
    field = f"{prefix}auth"
    if raw is None:
        return None
    before = out.count
    raw = object_field(raw, field, AUTH_FIELDS, out)
    if raw is None:
        return None
    kind = raw.get("type")
    if kind not in AUTH_TYPES:
        allowed = ", ".join(f'"{name}"' for name in AUTH_TYPES)
        out.add(f"{field}.type", f"must be one of {allowed}")
    elif kind == "oauth2":
        return _parse_oauth2(raw, field, out)
    if "sign_in" in raw and kind in AUTH_TYPES:
        out.add(f"{field}.sign_in", 'belongs to "type": "oauth2"')
    username = _credential(raw.get("username"), f"{field}.username", out)
    password = _credential(raw.get("password"), f"{field}.password", out)
    if username is not None and ":" in "".join(
        part for part in parse_template(username) if isinstance(part, str)
    ):
        out.add(f"{field}.username", "must not contain ':' (RFC 7617)")
    if out.count != before or username is None or password is None:
        return None
    return Auth("basic" if kind == "basic" else "digest", username, password)


def _parse_oauth2(
    raw: Mapping[Any, Any], field: str, out: FieldProblems
) -> Auth | None:
    """``{"type": "oauth2", "sign_in": name}``: the token comes from the
    sign-in, so a username or password has no place."""
    before = out.count
    for other in ("username", "password"):
        if other in raw:
            out.add(
                f"{field}.{other}",
                'has no place with "type": "oauth2": the token comes from the sign-in',
            )
    name = string_field(raw.get("sign_in"), f"{field}.sign_in", out)
    if name is not None and PLACEHOLDER_NAME_RE.fullmatch(name) is None:
        out.add(
            f"{field}.sign_in",
            "must be the name of a sign-in: 1-64 letters, digits, '_' or '-'",
        )
    if out.count != before or name is None:
        return None
    return Auth("oauth2", sign_in=name)


def sent_as_dict(
    url: str, method: str, headers: Mapping[str, str], body: Any, body_format: str
) -> dict[str, Any]:
    """What one request sends, back in the file format (defaults left out)."""
    data: dict[str, Any] = {"url": url, "method": method}
    if headers:
        data["headers"] = dict(headers)
    if body is not None:
        data["body"] = body
    if body_format != "json":
        data["body_format"] = body_format
    return data
