"""Tool definitions: parse and validate the file format.

A JSON array of objects, one per tool: ``name``, ``description``,
``parameters``, ``url``, ``method``, ``headers`` (the operating guide's
fields, section 3), ``timeout``, ``enabled`` and ``verify_ssl``. Every problem
is collected before raising, each naming the tool and the field. The rules
are in ``docs/tool-format.md``; :mod:`.fields` checks each field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
import copy
from dataclasses import dataclass
import json
from typing import Any

from .fields import (
    NAME_RE,
    FieldProblems,
    check_known_fields,
    declared_properties,
    parse_description,
    parse_flag,
    parse_headers,
    parse_method,
    parse_name,
    parse_parameters,
    parse_timeout,
    parse_url,
    type_name,
)
from .templates import template_placeholders, template_secrets


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
    # Offered to the model; a disabled tool is kept and reported, not offered.
    enabled: bool = True
    # False: the request accepts any TLS certificate (LAN devices).
    verify_ssl: bool = True

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
        if not self.enabled:
            data["enabled"] = False
        if not self.verify_ssl:
            data["verify_ssl"] = False
        return data

    @property
    def placeholders(self) -> frozenset[str]:
        """Names used as placeholders in the URL and in header values."""
        return template_placeholders(self.url) | self.header_placeholders

    @property
    def secret_references(self) -> dict[str, frozenset[str]]:
        """The ``{secret:name}`` names each field uses (``url``, ``headers.X``)."""
        found = {"url": template_secrets(self.url)}
        for key, value in self.headers.items():
            found[f"headers.{key}"] = template_secrets(value)
        return {field: names for field, names in found.items() if names}

    @property
    def secret_names(self) -> frozenset[str]:
        """Every secret the tool's request needs."""
        names: frozenset[str] = frozenset()
        for used in self.secret_references.values():
            names |= used
        return names

    @property
    def header_placeholders(self) -> frozenset[str]:
        """Names used in header values only (secrets: callers redact them)."""
        names: frozenset[str] = frozenset()
        for value in self.headers.values():
            names |= template_placeholders(value)
        return names


def _parse_one(
    raw: object, index: int, problems: list[DefinitionProblem]
) -> ToolDefinition | None:
    if not isinstance(raw, Mapping):
        message = f"must be an object, got {type_name(raw)}"
        problems.append(DefinitionProblem(index, None, None, message))
        return None
    name = raw.get("name")
    tool = name if isinstance(name, str) and NAME_RE.fullmatch(name) else None
    out = FieldProblems()
    parsed_name = parse_name(name, out)
    check_known_fields(raw, out)
    description = parse_description(raw.get("description"), out)
    before = out.count
    parameters = parse_parameters(raw.get("parameters"), out)
    declared = declared_properties(parameters) if out.count == before else None
    url = parse_url(raw.get("url"), declared, out)
    method = parse_method(raw.get("method"), out)
    headers = parse_headers(raw.get("headers"), declared, out)
    timeout = parse_timeout(raw.get("timeout"), out)
    enabled = parse_flag(raw.get("enabled"), "enabled", out)
    verify_ssl = parse_flag(raw.get("verify_ssl"), "verify_ssl", out)
    problems.extend(DefinitionProblem(index, tool, f, m) for f, m in out.found)
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
        enabled=enabled,
        verify_ssl=verify_ssl,
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
                    f"got {type_name(data)}",
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
        raise fail(f"tool definitions must be a JSON array, got {type_name(data)}")
    return parse_tools(data)


def missing_secrets(
    definitions: Iterable[ToolDefinition],
    available: Iterable[str],
    *,
    numbered: bool = True,
) -> list[DefinitionProblem]:
    """One problem per ``{secret:name}`` that ``available`` does not hold.

    Each names the tool (its position when ``numbered``) and the field.
    """
    known = set(available)
    problems: list[DefinitionProblem] = []
    for index, definition in enumerate(definitions):
        for field, names in definition.secret_references.items():
            problems.extend(
                DefinitionProblem(
                    index if numbered else None,
                    definition.name,
                    field,
                    f"secret '{name}' is not defined",
                )
                for name in sorted(names - known)
            )
    return problems


def check_secrets(
    definitions: Iterable[ToolDefinition],
    available: Iterable[str],
    *,
    numbered: bool = True,
) -> None:
    """Raise :class:`ToolDefinitionError` when a referenced secret is missing."""
    if problems := missing_secrets(definitions, available, numbered=numbered):
        raise ToolDefinitionError(problems)
