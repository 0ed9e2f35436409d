"""Parse and validate declarative HTTP tool definitions.

The file format is a JSON array of objects, one per tool, with the fields of
the operating guide (section 3): ``name``, ``description``, ``parameters``,
``url``, ``method``, ``headers``, plus an optional per-tool ``timeout``.

Decisions where the guide is silent:

- Every problem is collected before raising: :class:`ToolDefinitionError`
  lists them all, each naming the tool's 0-based position (``tool #0``), its
  name when usable, and the field.
- ``name``: letters, digits, ``_`` and ``-``, 1 to 64 characters (what OpenAI
  accepts). Names are case-sensitive; an exact duplicate is an error.
- Unknown fields are rejected, naming the field (with a "did you mean"
  hint): a typo such as ``"metod"`` would otherwise silently send ``POST``.
  Forward compatibility is deliberately loud: a file written for a newer
  version that adds a field changing the request fails to load here instead of
  sending a different request than its author meant.
- JSON ``null`` for an optional field means "absent" (its default applies).
- ``method``: any RFC 9110 token (tchar), upper-cased. An invalid method is
  rejected at parse time (the admin sees it when saving); building the
  request checks it again (:func:`http_method`, the one rule) and answers
  ``Error: invalid HTTP method '<m>' for tool '<name>'`` for definitions
  constructed directly.
- ``timeout``: a number of seconds, ``0 < timeout <= 300``; absent means the
  caller's global default.
- ``parameters``: an object with ``"type": "object"``; ``properties`` (an
  object whose values are objects) and ``required`` (a list of strings naming
  declared properties) are checked; any other JSON Schema keyword is kept as is.
  It must be JSON-serialisable and is deep-copied.
- ``headers``: names must be RFC 9110 tokens, unique case-insensitively;
  values must be strings without control characters (HTAB allowed).
- Placeholders: ``{name}`` in ``url`` and header values, where ``name`` is 1-64
  letters, digits, ``_`` or ``-`` and must be a declared property. Literal
  braces are written ``{{`` and ``}}``; any other ``{`` or ``}`` is an error.
  Property names themselves are not restricted, but only names following that
  rule can be used as placeholders.
- ``url``: absolute ``http``/``https`` URL with a host. Placeholders are
  allowed in the path, query and fragment only, never in the scheme, user
  info, host or port (the model must not be able to choose the server).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
import copy
from dataclasses import dataclass
import difflib
import json
import math
import re
from typing import Any

from .templates import (
    PLACEHOLDER_NAME_RE,
    parse_template,
    parse_url_template,
    template_placeholders,
)

DEFAULT_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}
DEFAULT_METHOD = "POST"
MAX_TIMEOUT = 300.0
MAX_NAME_LENGTH = 64

KNOWN_FIELDS = (
    "name",
    "description",
    "parameters",
    "url",
    "method",
    "headers",
    "timeout",
)

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


@dataclass(frozen=True, slots=True)
class DefinitionProblem:
    """One problem found in the definitions."""

    index: int | None
    tool: str | None
    field: str | None
    message: str

    def __str__(self) -> str:
        """Readable form, e.g. ``tool #2 'get_weather': url: must be ...``."""
        where: list[str] = []
        if self.index is not None:
            who = f"tool #{self.index}"
            if self.tool is not None:
                who += f" '{self.tool}'"
            where.append(who)
        elif self.tool is not None:
            where.append(f"tool '{self.tool}'")
        if self.field is not None:
            where.append(self.field)
        return ": ".join([*where, self.message])


class ToolDefinitionError(ValueError):
    """The definitions are invalid; ``problems`` lists every problem found."""

    def __init__(self, problems: Iterable[DefinitionProblem]) -> None:
        """Keep the problems; the message joins them with ``"; "``."""
        self.problems: list[DefinitionProblem] = list(problems)
        super().__init__("; ".join(str(p) for p in self.problems))


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """One validated HTTP tool."""

    name: str
    description: str
    parameters: dict[str, Any]
    url: str
    method: str
    headers: dict[str, str]
    timeout: float | None

    def as_dict(self) -> dict[str, Any]:
        """Back to the file format; round-trips through :func:`parse_tools`."""
        data: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": copy.deepcopy(self.parameters),
            "url": self.url,
            "method": self.method,
        }
        if self.headers:
            data["headers"] = dict(self.headers)
        if self.timeout is not None:
            data["timeout"] = self.timeout
        return data

    @property
    def placeholders(self) -> frozenset[str]:
        """Names used as placeholders in the URL and in header values."""
        return template_placeholders(self.url) | self.header_placeholders

    @property
    def header_placeholders(self) -> frozenset[str]:
        """Names used in header values only (secrets: callers redact them)."""
        names: frozenset[str] = frozenset()
        for value in self.headers.values():
            names |= template_placeholders(value)
        return names


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


class _Collector:
    """Collect problems for one tool."""

    def __init__(self, problems: list[DefinitionProblem], index: int) -> None:
        self.problems = problems
        self.index = index
        self.tool: str | None = None
        self.count = 0

    def add(self, field: str | None, message: str) -> None:
        self.problems.append(DefinitionProblem(self.index, self.tool, field, message))
        self.count += 1


def _parse_name(raw: object, out: _Collector) -> str | None:
    if raw is None:
        out.add("name", "is required")
        return None
    if not isinstance(raw, str):
        out.add("name", f"must be a string, got {_type_name(raw)}")
        return None
    if NAME_RE.fullmatch(raw) is None:
        if not raw:
            out.add("name", "must not be empty")
        elif len(raw) > MAX_NAME_LENGTH:
            out.add("name", f"must be at most {MAX_NAME_LENGTH} characters")
        else:
            out.add(
                "name",
                f"'{raw}' may only contain letters, digits, '_' and '-'",
            )
        return None
    return raw


def _parse_parameters(raw: object, out: _Collector) -> dict[str, Any]:
    if raw is None:
        return copy.deepcopy(DEFAULT_PARAMETERS)
    if not isinstance(raw, Mapping):
        out.add("parameters", f"must be a JSON Schema object, got {_type_name(raw)}")
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
            f"must be an object, got {_type_name(properties)}",
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
                    f"must be an object (a JSON Schema), got {_type_name(schema)}",
                )
    if "required" in raw:
        required = raw["required"]
        if not isinstance(required, list):
            out.add(
                "parameters.required",
                f"must be a list of strings, got {_type_name(required)}",
            )
        else:
            for item in required:
                if not isinstance(item, str):
                    out.add(
                        "parameters.required",
                        f"must contain strings only, got {_type_name(item)}",
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


def _declared(parameters: Mapping[str, Any]) -> set[str]:
    properties = parameters.get("properties")
    if isinstance(properties, Mapping):
        return {key for key in properties if isinstance(key, str)}
    return set()


def _check_placeholders(
    names: frozenset[str], declared: set[str], field: str, out: _Collector
) -> None:
    for name in sorted(names - declared):
        out.add(field, f"placeholder '{{{name}}}' names no declared parameter")


def _parse_url(raw: object, declared: set[str] | None, out: _Collector) -> str | None:
    if raw is None:
        out.add("url", "is required")
        return None
    if not isinstance(raw, str):
        out.add("url", f"must be a string, got {_type_name(raw)}")
        return None
    if not raw.strip():
        out.add("url", "must not be empty")
        return None
    if raw != raw.strip():
        out.add("url", "must not start or end with whitespace")
        return None
    if HEADER_CONTROL_RE.search(raw) or "\t" in raw:
        out.add("url", "must not contain control characters")
        return None
    try:
        parse_url_template(raw)
    except ValueError as err:
        out.add("url", str(err))
        return None
    if declared is not None:
        _check_placeholders(template_placeholders(raw), declared, "url", out)
    return raw


def _parse_method(raw: object, out: _Collector) -> str | None:
    if raw is None:
        return DEFAULT_METHOD
    if not isinstance(raw, str):
        out.add("method", f"must be a string, got {_type_name(raw)}")
        return None
    method = http_method(raw)
    if method is None:
        out.add("method", f"'{raw}' is not a valid HTTP method (RFC 9110 token)")
    return method


def _parse_headers(
    raw: object, declared: set[str] | None, out: _Collector
) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        out.add("headers", f"must be an object, got {_type_name(raw)}")
        return {}
    headers: dict[str, str] = {}
    seen: dict[str, str] = {}
    for key, value in raw.items():
        if not isinstance(key, str) or TOKEN_RE.fullmatch(key) is None:
            out.add("headers", f"'{key}' is not a valid header name")
            continue
        field = f"headers.{key}"
        if key.lower() in seen:
            out.add(field, f"duplicates header '{seen[key.lower()]}'")
            continue
        seen[key.lower()] = key
        if not isinstance(value, str):
            out.add(field, f"must be a string, got {_type_name(value)}")
            continue
        if HEADER_CONTROL_RE.search(value):
            out.add(field, "must not contain control characters (CR, LF, NUL...)")
            continue
        try:
            parse_template(value)
        except ValueError as err:
            out.add(field, str(err))
            continue
        if declared is not None:
            _check_placeholders(template_placeholders(value), declared, field, out)
        headers[key] = value
    return headers


def _parse_timeout(raw: object, out: _Collector) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        out.add("timeout", f"must be a number of seconds, got {_type_name(raw)}")
        return None
    value = float(raw)
    if not math.isfinite(value) or value <= 0 or value > MAX_TIMEOUT:
        out.add("timeout", f"must be greater than 0 and at most {MAX_TIMEOUT:g} s")
        return None
    return value


def _parse_one(
    raw: object, index: int, problems: list[DefinitionProblem]
) -> ToolDefinition | None:
    out = _Collector(problems, index)
    if not isinstance(raw, Mapping):
        out.add(None, f"must be an object, got {_type_name(raw)}")
        return None
    name = raw.get("name")
    out.tool = name if isinstance(name, str) and NAME_RE.fullmatch(name) else None
    parsed_name = _parse_name(name, out)
    for key in raw:
        if key in KNOWN_FIELDS:
            continue
        hint = difflib.get_close_matches(str(key), KNOWN_FIELDS, n=1)
        suffix = f" (did you mean '{hint[0]}'?)" if hint else ""
        allowed = ", ".join(KNOWN_FIELDS)
        out.add(str(key), f"unknown field{suffix}; allowed fields: {allowed}")
    description = raw.get("description")
    if description is None:
        description = ""
    elif not isinstance(description, str):
        out.add("description", f"must be a string, got {_type_name(description)}")
        description = ""
    before = out.count
    parameters = _parse_parameters(raw.get("parameters"), out)
    declared = _declared(parameters) if out.count == before else None
    url = _parse_url(raw.get("url"), declared, out)
    method = _parse_method(raw.get("method"), out)
    headers = _parse_headers(raw.get("headers"), declared, out)
    timeout = _parse_timeout(raw.get("timeout"), out)
    if out.count or parsed_name is None or url is None or method is None:
        return None
    return ToolDefinition(
        name=parsed_name,
        description=description,
        parameters=parameters,
        url=url,
        method=method,
        headers=headers,
        timeout=timeout,
    )


def parse_tools(data: object) -> list[ToolDefinition]:
    """Validate a list of tool definitions (the file format, already decoded).

    ``[]`` is valid. Raises :class:`ToolDefinitionError` listing every problem.
    """
    if not isinstance(data, (list, tuple)):
        raise ToolDefinitionError(
            [
                DefinitionProblem(
                    None,
                    None,
                    None,
                    "tool definitions must be a JSON array of objects, "
                    f"got {_type_name(data)}",
                )
            ]
        )
    problems: list[DefinitionProblem] = []
    definitions: list[ToolDefinition] = []
    first_index: dict[str, int] = {}
    for index, raw in enumerate(data):
        definition = _parse_one(raw, index, problems)
        name = raw.get("name") if isinstance(raw, Mapping) else None
        if isinstance(name, str) and NAME_RE.fullmatch(name):
            if name in first_index:
                problems.append(
                    DefinitionProblem(
                        index,
                        name,
                        "name",
                        f"duplicate name (already used by tool #{first_index[name]})",
                    )
                )
                continue
            first_index[name] = index
        if definition is not None:
            definitions.append(definition)
    if problems:
        raise ToolDefinitionError(problems)
    return definitions


def parse_tools_json(raw: str | bytes) -> list[ToolDefinition]:
    """Decode JSON text (UTF-8 when bytes, BOM tolerated) and validate it."""

    def fail(message: str) -> ToolDefinitionError:
        return ToolDefinitionError([DefinitionProblem(None, None, None, message)])

    if isinstance(raw, (bytes, bytearray, memoryview)):
        try:
            text = bytes(raw).decode("utf-8-sig")
        except UnicodeDecodeError as err:
            raise fail(
                f"tool definitions are not valid UTF-8 (byte {err.start})"
            ) from None
    else:
        text = raw.removeprefix("\ufeff")
    if not text.strip():
        raise fail("tool definitions are empty: expected a JSON array")

    def reject_constant(value: str) -> object:
        raise ValueError(f"{value} is not valid JSON")

    try:
        data = json.loads(text, parse_constant=reject_constant)
    except json.JSONDecodeError as err:
        raise fail(
            f"tool definitions are not valid JSON: {err.msg} "
            f"(line {err.lineno}, column {err.colno})"
        ) from None
    except ValueError as err:
        raise fail(f"tool definitions are not valid JSON: {err}") from None
    except RecursionError:
        raise fail("tool definitions are not valid JSON: nested too deeply") from None
    if not isinstance(data, list):
        raise fail(f"tool definitions must be a JSON array, got {_type_name(data)}")
    return parse_tools(data)
