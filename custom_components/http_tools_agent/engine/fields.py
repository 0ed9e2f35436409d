"""The fields of a tool definition: their rules, and one check per field.

Each check takes the raw JSON value, records what is wrong in
:class:`FieldProblems` (naming the field) and returns the parsed value. The
rules are in ``docs/tool-format.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
import copy
import json
import math
import re
from typing import Any

from .problems import FieldProblems, string_field, type_name
from .schemas import check_schema
from .templates import (
    PLACEHOLDER_NAME_RE,
    Placeholder,
    Reference,
    parse_template,
    parse_url_template,
    template_placeholders,
    url_sections,
)
from .words import words

DEFAULT_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}
DEFAULT_METHOD = "POST"
MAX_TIMEOUT = 300.0
MAX_NAME_LENGTH = 64


def unique_name(base: str, taken: Iterable[str]) -> str:
    """`base` as a tool name none of `taken` has: `name_2`, `name_3`..."""
    used = set(taken)
    name = base[:MAX_NAME_LENGTH]
    number = 2
    while name in used:
        suffix = f"_{number}"
        name = base[: MAX_NAME_LENGTH - len(suffix)] + suffix
        number += 1
    return name


# What one request sends (a logout sends these); with `auth`, the fields of
# one request: at the top, or in each step of `steps`.
SENT_FIELDS = ("url", "method", "headers", "body", "body_format")
REQUEST_FIELDS = (*SENT_FIELDS, "auth")
# Every field of a definition; `pages` (a list over several pages) is read by
# `engine/page_field.py`, `confirm`, `confirm_question` and `pin` (whether a
# call waits for the user's yes) by `engine/confirm.py`.
KNOWN_FIELDS = (
    *words("name description parameters"),
    *REQUEST_FIELDS,
    *words("""
        steps response pages speech sentences timeout enabled verify_ssl
        read_only destructive idempotent confirm confirm_question pin
    """),
)

# Verbs whose leftover arguments go in the query (today's rule, kept).
QUERY_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "DELETE"})
# Verbs that only read (RFC 9110 "safe"): a tool's `read_only` default.
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
BODY_FORMATS = ("json", "form", "text")

NAME_RE = PLACEHOLDER_NAME_RE  # tool names and placeholders: one rule
# RFC 9110 section 5.6.2: token = 1*tchar
TOKEN_RE = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# Control characters forbidden in header values (HTAB is allowed).
HEADER_CONTROL_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def http_method(value: object) -> str | None:
    """``value`` upper-cased when it is an HTTP method, else None.

    Any RFC 9110 token (tchar only) is a method: servers define their own.
    The one rule for parsing definitions and for building requests.
    """
    if isinstance(value, str) and TOKEN_RE.fullmatch(value) is not None:
        return value.upper()
    return None


def parse_name(raw: object, out: FieldProblems) -> str | None:
    """The tool's name."""
    name = string_field(raw, "name", out)
    if name is None:
        return None
    if NAME_RE.fullmatch(name) is None:
        if not name:
            out.add("name", "must not be empty")
        elif len(name) > MAX_NAME_LENGTH:
            out.add("name", f"must be at most {MAX_NAME_LENGTH} characters")
        else:
            out.add(
                "name",
                f"'{name}' may only contain letters, digits, '_' and '-'",
            )
        return None
    return name


def parse_description(raw: object, out: FieldProblems) -> str:
    """What the model reads about the tool (empty when absent)."""
    return string_field(raw, "description", out, default="") or ""


def parse_parameters(raw: object, out: FieldProblems) -> dict[str, Any]:
    """The JSON Schema of the arguments (the default one when it is invalid)."""
    if raw is None:
        return copy.deepcopy(DEFAULT_PARAMETERS)
    if not isinstance(raw, Mapping):
        out.add("parameters", f"must be a JSON Schema object, got {type_name(raw)}")
        return copy.deepcopy(DEFAULT_PARAMETERS)
    before = out.count
    if not all(isinstance(key, str) for key in raw):
        out.add("parameters", "keys must be strings")
    if raw.get("type") != "object":
        out.add("parameters.type", 'must be "object"')
    properties = raw.get("properties", {})
    names: set[str] = set()
    if not isinstance(properties, Mapping):
        out.add(
            "parameters.properties",
            f"must be an object, got {type_name(properties)}",
        )
    else:
        for key, schema in properties.items():
            if not isinstance(key, str) or not key:
                out.add("parameters.properties", "names must be non-empty strings")
                continue
            names.add(key)
            if not isinstance(schema, Mapping):
                out.add(
                    f"parameters.properties.{key}",
                    f"must be an object (a JSON Schema), got {type_name(schema)}",
                )
            else:
                check_schema(schema, f"parameters.properties.{key}", out.add)
    # The other keywords of the top level (additionalProperties, $defs...).
    rest = {k: v for k, v in raw.items() if k not in ("type", "properties", "required")}
    check_schema(rest, "parameters", out.add)
    if "required" in raw:
        required = raw["required"]
        if not isinstance(required, list):
            out.add(
                "parameters.required",
                f"must be a list of strings, got {type_name(required)}",
            )
        else:
            for item in required:
                if not isinstance(item, str):
                    out.add(
                        "parameters.required",
                        f"must contain strings only, got {type_name(item)}",
                    )
                elif item not in names:
                    out.add(
                        "parameters.required",
                        f"'{item}' is not a declared property",
                    )
    try:
        text = json.dumps(raw, allow_nan=False)
    except (TypeError, ValueError) as err:
        out.add("parameters", f"must be JSON-serialisable ({err})")
        return copy.deepcopy(DEFAULT_PARAMETERS)
    if out.count != before:
        return copy.deepcopy(DEFAULT_PARAMETERS)
    parsed: dict[str, Any] = json.loads(text)
    return parsed


def declared_properties(parameters: Mapping[str, Any]) -> set[str]:
    """The property names ``parameters`` declares."""
    properties = parameters.get("properties")
    if isinstance(properties, Mapping):
        return {key for key in properties if isinstance(key, str)}
    return set()


def _check_placeholders(
    names: frozenset[str], declared: set[str], field: str, out: FieldProblems
) -> None:
    for name in sorted(names - declared):
        out.add(field, f"placeholder '{{{name}}}' names no declared parameter")


def check_references(
    text: str, earlier: tuple[str, ...] | None, field: str, out: FieldProblems
) -> None:
    """Refuse step references to no earlier step (``earlier`` None: the tool
    has no steps)."""
    try:
        parts = parse_template(text)
    except ValueError:
        return
    for part in parts:
        if not isinstance(part, Reference) or (
            earlier is not None and part.step in earlier
        ):
            continue
        if earlier is None:
            out.add(
                field,
                f"'{{{part.text}}}' reads a step's response, but the tool has no steps",
            )
        elif earlier:
            names = ", ".join(f"'{name}'" for name in earlier)
            out.add(
                field,
                f"'{{{part.text}}}' names no earlier step (before this one: {names})",
            )
        else:
            out.add(
                field,
                f"'{{{part.text}}}' names no earlier step (this is the first step)",
            )


def check_template(
    text: str,
    declared: set[str] | None,
    earlier: tuple[str, ...] | None,
    field: str,
    out: FieldProblems,
) -> None:
    """A template's placeholders (against ``declared`` when known) and step
    references (against ``earlier``)."""
    if declared is not None:
        _check_placeholders(template_placeholders(text), declared, field, out)
    check_references(text, earlier, field, out)


def parse_url(
    raw: object,
    declared: set[str] | None,
    out: FieldProblems,
    *,
    field: str = "url",
    earlier: tuple[str, ...] | None = None,
) -> str | None:
    """The URL template; its placeholders checked when ``declared`` is known,
    its step references against the ``earlier`` steps."""
    url = string_field(raw, field, out)
    if url is None:
        return None
    if not url.strip():
        out.add(field, "must not be empty")
        return None
    if url != url.strip():
        out.add(field, "must not start or end with whitespace")
        return None
    if HEADER_CONTROL_RE.search(url) or "\t" in url:
        out.add(field, "must not contain control characters")
        return None
    try:
        template = parse_url_template(url)
    except ValueError as err:
        out.add(field, str(err))
        return None
    for part in url_sections(template.rest).path:
        if isinstance(part, (Placeholder, Reference)) and part.optional:
            what = part.name if isinstance(part, Placeholder) else part.text
            out.add(
                field,
                f"'{{{what}?}}': an optional placeholder cannot stand in the path "
                "(only in the query, headers and body)",
            )
    check_template(url, declared, earlier, field, out)
    return url


def parse_method(
    raw: object, out: FieldProblems, *, field: str = "method"
) -> str | None:
    """The HTTP method, upper-cased."""
    text = string_field(raw, field, out, default=DEFAULT_METHOD)
    if text is None:
        return None
    method = http_method(text)
    if method is None:
        out.add(field, f"'{text}' is not a valid HTTP method (RFC 9110 token)")
    return method


def parse_headers(
    raw: object,
    declared: set[str] | None,
    out: FieldProblems,
    *,
    prefix: str = "",
    earlier: tuple[str, ...] | None = None,
) -> dict[str, str]:
    """The headers; placeholders in values checked when ``declared`` is known."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        out.add(f"{prefix}headers", f"must be an object, got {type_name(raw)}")
        return {}
    headers: dict[str, str] = {}
    seen: dict[str, str] = {}
    for key, value in raw.items():
        if not isinstance(key, str) or TOKEN_RE.fullmatch(key) is None:
            out.add(f"{prefix}headers", f"'{key}' is not a valid header name")
            continue
        field = f"{prefix}headers.{key}"
        if key.lower() in seen:
            out.add(field, f"duplicates header '{seen[key.lower()]}'")
            continue
        seen[key.lower()] = key
        if not isinstance(value, str):
            out.add(field, f"must be a string, got {type_name(value)}")
            continue
        if HEADER_CONTROL_RE.search(value):
            out.add(field, "must not contain control characters (CR, LF, NUL...)")
            continue
        try:
            parse_template(value)
        except ValueError as err:
            out.add(field, str(err))
            continue
        check_template(value, declared, earlier, field, out)
        headers[key] = value
    return headers


def parse_timeout(raw: object, out: FieldProblems) -> float | None:
    """The tool's own timeout in seconds (None: the global one)."""
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        out.add("timeout", f"must be a number of seconds, got {type_name(raw)}")
        return None
    value = float(raw)
    if not math.isfinite(value) or value <= 0 or value > MAX_TIMEOUT:
        out.add("timeout", f"must be greater than 0 and at most {MAX_TIMEOUT:g} s")
        return None
    return value


def parse_flag(raw: object, field: str, out: FieldProblems) -> bool:
    """A boolean field that defaults to true (``enabled``, ``verify_ssl``)."""
    if raw is None:
        return True
    if not isinstance(raw, bool):
        out.add(field, f"must be true or false, got {type_name(raw)}")
        return True
    return raw


def parse_optional_flag(raw: object, field: str, out: FieldProblems) -> bool | None:
    """A boolean field whose default is derived (None: absent)."""
    if raw is None or isinstance(raw, bool):
        return raw
    out.add(field, f"must be true or false, got {type_name(raw)}")
    return None
