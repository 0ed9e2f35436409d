"""What the agent says itself, rendered from its translations the way it
renders them (`turn/say.py`): the same keys, the same placeholders.

A test compares speech with `said(...)`, never with a copy of the sentence,
so rewording a message in `strings.json` or a translation changes no test,
while a test still fails when the agent says another message, fills it with
other words, says nothing of its own, or a message stops saying what a
placeholder held. No Home Assistant here: the files
are read as the agent's translation loader reads them.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
import string

TRANSLATIONS = (
    Path(__file__).resolve().parents[1]
    / "custom_components"
    / "http_tools_agent"
    / "translations"
)


@functools.cache
def messages(language: str = "en") -> dict[str, str]:
    """The agent's spoken messages in `language` (its `exceptions`)."""
    data = json.loads((TRANSLATIONS / f"{language}.json").read_text(encoding="utf-8"))
    return {key: value["message"] for key, value in data["exceptions"].items()}


def said(key: str, language: str = "en", /, **placeholders: str) -> str:
    """Message `key` in `language` with its placeholders filled; each one
    given must be in the message (a message that stops saying the reason or
    the names a test gives fails that test)."""
    template = messages(language)[key]
    fields = {name for _, name, _, _ in string.Formatter().parse(template) if name}
    assert fields == set(placeholders), (key, language, template, placeholders)
    return template.format(**placeholders)


def failed(
    reason: str, language: str = "en", /, *, action: str | None = None, **fill: str
) -> str:
    """An action said as failed (`action_failed`, or `action_partly_failed`
    with the `action` that did not work), its `reason_…` filled with `fill`."""
    why = said(reason, language, **fill)
    if action is None:
        return said("action_failed", language, reason=why)
    return said("action_partly_failed", language, action=action, reason=why)


def confirm_pin_question(question: str, language: str = "en", /) -> str:
    """A held call's question for a tool with a PIN: how to give it follows."""
    return f"{question} {said('confirm_pin', language)}"


def entry_reason(key: str, /, **placeholders: str) -> str:
    """What an entry's card shows for a setup error: the message without its
    final period (Home Assistant drops it)."""
    return said(key, **placeholders).removesuffix(".")
