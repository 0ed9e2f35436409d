"""What the small profile's guards check a call against: a change nobody
asked for (`Rules.unasked_changes`), a place the house does not have
(`Rules.invented_places`), a filter nobody asked for
(`Rules.invented_filters`). Each guard is one step of the call gate
(`turn/calls.py`); the words they read are per language (`lexicon/`).
"""

from __future__ import annotations

from collections.abc import Mapping
import re
from typing import Any

from ..lexicon import ACTS, every

UNASKED_ERROR = (
    "Error: not run: the user did not ask for this. Call only the tools the "
    "request needs."
)


def _words_for(act: str) -> tuple[str, ...]:
    return every(lambda lex: lex.acts.get(act, ()))


# What a request asks to do, by the words people use in every language of
# `lexicon/`, and the same for the verb a tool's name starts with.
_ACTS: dict[str, tuple[str, ...]] = {act: _words_for(act) for act in ACTS}
_INTENT_ACTS = {
    "turnon": "turn_on",
    "turnoff": "turn_off",
    "lightset": "update",
    "setposition": "update",
    "fansetspeed": "update",
    "climatesettemperature": "update",
}
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def _acts(words: list[str]) -> set[str]:
    return {
        act
        for word in words
        for act, stems in _ACTS.items()
        if any(
            word == stem or (len(stem) > 3 and word.startswith(stem)) for stem in stems
        )
    }


def tool_act(tool: str) -> str | None:
    """What a tool does by the verb its name starts with (`delete` for
    `delete_item` and `remove_item`, `send` for `send_webhook`)."""
    name = tool.rpartition("__")[2]
    first = re.match(r"[A-Z]?[a-z]+", name)
    acts = _acts([first.group().lower()]) if first else set()
    return next(iter(sorted(acts)), None)


def asks_for(tool: str, request: str) -> bool:
    """Whether the user's words ask for what `tool` does: its verb ("remove"
    for `delete_item`, "accendi" for `HassTurnOn`) or another word of its
    name ("webhook", "light") is among them."""
    name = tool.rpartition("__")[2]
    said = [w.lower() for w in _WORD.findall(request)]
    if (act := _INTENT_ACTS.get(name.lower().removeprefix("hass"))) is not None:
        return act in _acts(said)
    parts = [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", name)]
    if not parts:
        return True
    if _acts(parts[:1]) & _acts(said):
        return True
    nouns = [p for p in parts[1:] if len(p) > 2]
    return any(
        w.startswith(n[:4]) or n.startswith(w[:4])
        for n in nouns
        for w in said
        if len(w) > 2
    )


# --- Invented places ----------------------------------------------------------

PLACE_SLOTS = ("area", "floor")


def without_invented_places(
    name: str,
    arguments: dict[str, Any],
    places: frozenset[str],
    request: str,
) -> dict[str, Any]:
    """An Assist intent's arguments without an `area` or `floor` that is
    neither a place of the house (`places`, lower-cased names and aliases)
    nor in the user's words."""
    if not name.rpartition("__")[2].startswith("Hass"):
        return arguments
    said = request.lower()
    return {
        key: value
        for key, value in arguments.items()
        if key not in PLACE_SLOTS
        or not isinstance(value, str)
        or value.strip().lower() in places
        or value.strip().lower() in said
    }


# --- Invented filters ---------------------------------------------------------


def without_invented_filters(
    arguments: dict[str, Any], schema: Mapping[str, Any], request: str
) -> dict[str, Any]:
    """A reading call's arguments without the optional text ones that are
    none of the user's words (`schema`: the tool's parameters)."""
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    said = request.lower()
    return {
        key: value
        for key, value in arguments.items()
        if key in needed or not isinstance(value, str) or value.strip().lower() in said
    }
