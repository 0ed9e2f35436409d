"""The ``{secret:name}`` references of parsed tools against the secrets an
entry has: a problem per missing one, naming the tool and the field."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .problems import DefinitionProblem, ToolDefinitionError

if TYPE_CHECKING:
    from .definitions import ToolDefinition


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
