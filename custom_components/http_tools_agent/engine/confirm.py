"""Whether a tool's call waits for the user's yes: the `confirm`,
`confirm_question` and `pin` fields of a definition.

- `confirm`: `never`, `always`, or `auto` (the default): a call waits when
  the request deletes (`DELETE`), or the tool is marked destructive;
- `confirm_question`: what the agent asks, a template of the tool's
  parameters (`Delete item {item_id} from the shopping list?`); without
  it the agent builds the question from the tool's name and arguments;
- `pin`: `{secret:name}`, an entry secret the user says or types with the
  yes ("yes 1234"). A tool with a PIN always waits.

A tool of another LLM API the agent is given (an MCP server's, say) has
none of these fields: what it says of itself (its annotations, read as an
`Effect`) and the agent's `AskOthers` setting decide.

The rules are in ``docs/tool-format.md`` and ``docs/turns.md``; the turn
holds such a call in ``turn/hold.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any

from .templates import Placeholder, Secret, parse_template

CONFIRM_MODES = ("auto", "always", "never")
DEFAULT_CONFIRM = "auto"
# What `auto` holds until a tool says itself that it destroys something:
# a DELETE cannot be undone by calling the tool again.
AUTO_CONFIRM_METHODS = frozenset({"DELETE"})
MAX_QUESTION_LENGTH = 200

type Problem = tuple[str, str]  # (field, message)


class Effect(Enum):
    """What a tool of another LLM API says it does (its annotations)."""

    READS = "reads"
    CHANGES = "changes"
    DESTROYS = "destroys"

    @classmethod
    def of(cls, *, read_only: bool, destructive: bool) -> Effect:
        """From Home Assistant's `read_only` and `destructive` (MCP's
        `readOnlyHint` and `destructiveHint`): a tool that only reads
        destroys nothing, whatever else it says (MCP: `destructiveHint`
        means something only when `readOnlyHint` is false). A tool that
        declares nothing is, by Home Assistant's defaults, destructive."""
        if read_only:
            return cls.READS
        return cls.DESTROYS if destructive else cls.CHANGES


class AskOthers(StrEnum):
    """The agent's setting: which calls of other LLM APIs' tools wait for
    the user's yes."""

    DESTRUCTIVE = "destructive"  # those that say they are destructive
    CHANGES = "changes"  # every tool that is not read-only
    NEVER = "never"

    def waits(self, effect: Effect) -> bool:
        """Whether a call of a tool with `effect` waits for the yes."""
        match self:
            case AskOthers.DESTRUCTIVE:
                return effect is Effect.DESTROYS
            case AskOthers.CHANGES:
                return effect is not Effect.READS
            case AskOthers.NEVER:
                return False


DEFAULT_ASK_OTHERS = AskOthers.DESTRUCTIVE


@dataclass(frozen=True, slots=True)
class Confirmation:
    """When a tool's calls wait for a yes, what is asked, and the PIN."""

    mode: str = DEFAULT_CONFIRM
    question: str = ""
    pin: str | None = None  # the name of the entry secret

    def needed(self, method: str, *, destructive: bool = False) -> bool:
        """Whether a call of a tool with `method` waits for the user's yes."""
        if self.pin is not None or self.mode == "always":
            return True
        if self.mode == "never":
            return False
        return destructive or method in AUTO_CONFIRM_METHODS

    def as_dict(self) -> dict[str, Any]:
        """The fields that differ from the defaults, in the file format."""
        data: dict[str, Any] = {}
        if self.mode != DEFAULT_CONFIRM:
            data["confirm"] = self.mode
        if self.question:
            data["confirm_question"] = self.question
        if self.pin is not None:
            data["pin"] = "{secret:" + self.pin + "}"
        return data

    def ask(self, arguments: Mapping[str, Any]) -> str | None:
        """The tool's own question filled with the call's arguments (an
        argument the call lacks is left out); None without a template."""
        if not self.question:
            return None
        words: list[str] = []
        for part in parse_template(self.question):
            if isinstance(part, Placeholder):
                value = arguments.get(part.name)
                words.append("" if value is None else str(value))
            elif isinstance(part, str):
                words.append(part)
        return " ".join("".join(words).split())


def parse_confirmation(
    raw: Mapping[str, Any], declared: set[str] | None
) -> tuple[Confirmation, list[Problem]]:
    """Read the three fields of `raw`; every problem names its field."""
    problems: list[Problem] = []
    mode = raw.get("confirm", DEFAULT_CONFIRM)
    if mode not in CONFIRM_MODES:
        problems.append(("confirm", f"must be one of {', '.join(CONFIRM_MODES)}"))
        mode = DEFAULT_CONFIRM
    question = _question(raw.get("confirm_question"), declared, problems)
    pin = _pin(raw.get("pin"), problems)
    if pin is not None and mode == "never":
        problems.append(("pin", 'a tool with a PIN cannot have confirm "never"'))
    return Confirmation(mode, question, pin), problems


def _question(raw: object, declared: set[str] | None, problems: list[Problem]) -> str:
    if raw is None:
        return ""
    if not isinstance(raw, str):
        problems.append(("confirm_question", "must be a string"))
        return ""
    if len(raw) > MAX_QUESTION_LENGTH:
        problems.append(
            ("confirm_question", f"must be at most {MAX_QUESTION_LENGTH} characters")
        )
        return ""
    try:
        parts = parse_template(raw)
    except ValueError as err:
        problems.append(("confirm_question", str(err)))
        return ""
    for part in parts:
        if isinstance(part, Secret):
            # The question is spoken and kept in the chat log.
            problems.append(("confirm_question", "must not use a secret"))
            return ""
        if (
            isinstance(part, Placeholder)
            and declared is not None
            and part.name not in declared
        ):
            problems.append(
                (
                    "confirm_question",
                    f"placeholder '{{{part.name}}}' names no declared parameter",
                )
            )
            return ""
    return raw.strip()


def _pin(raw: object, problems: list[Problem]) -> str | None:
    if raw is None or raw == "":
        return None
    parts: tuple[object, ...] = ()
    if isinstance(raw, str):
        try:
            parts = parse_template(raw.strip())
        except ValueError:
            parts = ()
    if len(parts) != 1 or not isinstance(parts[0], Secret):
        # Never a PIN written out: it would be in the tools' storage and
        # in every export of the definitions.
        problems.append(("pin", "must be a secret reference, {secret:name}"))
        return None
    return parts[0].name
