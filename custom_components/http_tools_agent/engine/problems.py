"""What is wrong with tool definitions: each problem names the tool (its
position and name) and the field, and the error carries them all."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


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
