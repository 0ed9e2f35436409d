"""What is wrong with tool definitions: each problem names the tool (its
position and name) and the field, and the error carries them all; the
checks record them field by field in :class:`FieldProblems`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
import difflib
from typing import Any


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


def type_name(value: object) -> str:
    """The JSON name of ``value``'s type, for problem texts."""
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


class FieldProblems:
    """What is wrong in one definition: (field, message) pairs, in order."""

    def __init__(self) -> None:
        """No problem yet."""
        self.found: list[tuple[str | None, str]] = []

    @property
    def count(self) -> int:
        """How many problems were found so far."""
        return len(self.found)

    def add(self, field: str | None, message: str) -> None:
        """Record a problem of ``field`` (None: the definition as a whole)."""
        self.found.append((field, message))


def string_field(
    raw: object, field: str, out: FieldProblems, *, default: str | None = None
) -> str | None:
    """``raw`` when it is a string; ``default`` when absent (None: required)."""
    if raw is None:
        if default is None:
            out.add(field, "is required")
        return default
    if not isinstance(raw, str):
        out.add(field, f"must be a string, got {type_name(raw)}")
        return None
    return raw


def check_known_fields(
    raw: Mapping[Any, Any],
    allowed: tuple[str, ...],
    out: FieldProblems,
    *,
    prefix: str = "",
) -> None:
    """Refuse fields this version does not know (a typo must not go unseen)."""
    for key in raw:
        if key in allowed:
            continue
        hint = difflib.get_close_matches(str(key), allowed, n=1)
        suffix = f" (did you mean '{hint[0]}'?)" if hint else ""
        out.add(
            f"{prefix}{key}",
            f"unknown field{suffix}; allowed fields: {', '.join(allowed)}",
        )


def object_field(
    raw: object, field: str, allowed: tuple[str, ...], out: FieldProblems
) -> Mapping[Any, Any] | None:
    """``raw`` when it is an object (its unknown fields refused), else None."""
    if not isinstance(raw, Mapping):
        out.add(field, f"must be an object, got {type_name(raw)}")
        return None
    check_known_fields(raw, allowed, out, prefix=f"{field}.")
    return raw
