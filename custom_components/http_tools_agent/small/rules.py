"""The rules for small models: what the `small` profile adds to the guide's loop.

A capable model gets the guide's loop (`entity.py`): every call of every
round runs, after the argument checks, the turn's call cap and the repeat
rule (`turn/calls.py`), and the model decides what comes next. A small
model (below 2 B parameters, `server/profiles.py`) does things a model that plans
does not; each rule below guards against one of them, measured with
Qwen2.5-Coder-0.5B on llama-cpp-python (bench/RESULTS.md: P4 on the tuning
and the held-out requests, and what each rule costs a model that is right,
P9). `SMALL_RULES` is the set the profile applies; `PLAIN` applies none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import re
from typing import Any


@dataclass(frozen=True, slots=True)
class Rules:
    """Which small-model rules a turn applies."""

    # Once a round's calls all succeeded, the next request asks for the
    # answer (the instruction rides on the last tool result: `answer_nudge`)
    # and only a call of a tool the turn used, for more of what the user
    # named, still runs (`MoreOf`); then a closing request without tools.
    # Offered any call after a result, the 0.5B model calls other tools.
    answer_request: bool = False
    # A reply that says an action was done ("Eggs have been added") when the
    # user asked for one and no tool that changes something ran is not
    # spoken: asked once more, then the agent says nothing was done
    # (`honesty.claims_action`).
    claims_need_calls: bool = False
    # A call that changes something and that nothing in the user's words
    # of this turn asks for runs not (`asks_for`): "Add milk to the list."
    # drew the add, the weather for Paris, the list and a notification to
    # the family; "What is 2 plus 2?" a call to every tool. Alone in its
    # reply or beside others: a change is asked for or it does not run, and
    # a question asks for none ("Is the bed light on?" drew HassTurnOn).
    unasked_changes: bool = False
    # In a turn in which no tool ran, a reply that states what a tool would
    # have returned (the shape of an earlier result with other values, or
    # a number about what a reading tool tells) is not spoken: asked once
    # more, then nothing was done (`honesty.makes_up_result`). The 0.5B
    # model answered "And in Paris?" with "Paris: sunny, 18°C." after
    # Rome's result, no call made.
    results_need_calls: bool = False
    # An Assist intent's `area` or `floor` that is no area or floor of the
    # house and not in the user's words is left out of the call (`places`):
    # the 0.5B model turned "Turn on the kitchen lights." into HassTurnOn
    # with an invented floor, which matched no device.
    invented_places: bool = False
    # A reading call's optional text argument that is none of the user's
    # words is left out: a filter nobody asked for finds nothing. "What's on
    # my shopping list?" drew `list_items` with `{"search": "shoes"}`.
    invented_filters: bool = False
    # A change refused for an id nobody read (`lookup.guessed_ids`)
    # reads the collection first (its `GET` tool), and the agent changes the
    # one item whose name the user said: "remove the bread" drew
    # `delete_item` with an id the 0.5B model invented (the apples went).
    reads_first: bool = False


PLAIN = Rules()
SMALL_RULES = Rules(
    answer_request=True,
    claims_need_calls=True,
    unasked_changes=True,
    results_need_calls=True,
    invented_places=True,
    invented_filters=True,
    reads_first=True,
)


# --- The request for the answer ---------------------------------------------

# The request for the answer says the question again: after the results, a
# small model then calls for the part they leave out more often (asked so,
# Qwen2.5-0.5B called for Milan after Tokyo; without the question, not).
ANSWER_NUDGE = (
    "If that asks for more than these results, call the tool again for the "
    "rest; else answer the user's question now in plain text using the tool "
    "results above."
)


def answer_nudge(question: str) -> str:
    """The instruction of the request for the answer."""
    return f'The user asked: "{question}". {ANSWER_NUDGE}'


@dataclass(frozen=True, slots=True)
class MoreOf:
    """The calls that run on the request for the answer: a tool the turn
    already called, again, for something else the user named.

    Asked "Rome and Paris?", a small model calls the weather for Rome only;
    asked for the answer, or to call for what the results leave out, it
    calls Paris, then recites the other tools. Those other calls never run,
    and neither does a call whose text is not the user's (an invented city)
    or is all asked for already: every text argument must be words of the
    user's request, and one of them new for that tool.
    """

    # Per tool the turn called, the text values its calls had (lower-cased).
    asked: Mapping[str, frozenset[str]]
    request: str  # the user's words, lower-cased

    def allows(self, name: str, arguments: Mapping[str, Any]) -> bool:
        """Whether this call asks for more of what the user asked."""
        texts = texts_of(arguments)
        return (
            name in self.asked
            and bool(texts)
            and all(text in self.request for text in texts)
            and not texts <= self.asked[name]
        )


def texts_of(arguments: Mapping[str, Any]) -> frozenset[str]:
    """A call's text arguments, lower-cased (as `MoreOf` compares them)."""
    return frozenset(
        v.strip().lower()
        for v in arguments.values()
        if isinstance(v, str) and v.strip()
    )


# --- Unasked changes ----------------------------------------------------------

UNASKED_ERROR = (
    "Error: not run: the user did not ask for this. Call only the tools the "
    "request needs."
)

# What a request asks to do, by the words people use (English, Italian,
# Spanish), and the same for the verb a tool's name starts with.
_ACTS: dict[str, tuple[str, ...]] = {
    "add": (
        "add",
        "put",
        "insert",
        "create",
        "new",
        "aggiung",
        "mett",
        "inser",
        "crea",
        "añad",
        "agreg",
        "pon",
        "mete",
    ),
    "delete": (
        "delete",
        "remove",
        "erase",
        "take",
        "rid",
        "drop",
        "clear",
        "elimin",
        "rimuov",
        "cancell",
        "togli",
        "borr",
        "quit",
        "suprim",
        "del",
    ),
    "update": (
        "update",
        "change",
        "set",
        "modify",
        "edit",
        "make",
        "increase",
        "decrease",
        "dim",
        "brighten",
        "aggiorn",
        "cambi",
        "impost",
        "modific",
        "actualiz",
        "patch",
    ),
    "send": (
        "send",
        "notify",
        "tell",
        "let",
        "message",
        "ping",
        "trigger",
        "alert",
        "post",
        "mand",
        "invia",
        "avvis",
        "notific",
        "dì",
        "di'",
        "envía",
        "envia",
        "avis",
        "dile",
    ),
    "get": (
        "get",
        "read",
        "list",
        "show",
        "check",
        "fetch",
        "find",
        "search",
        "legg",
        "mostr",
        "elenc",
        "cerc",
        "lee",
        "muestr",
        "busc",
    ),
    "turn_on": (
        "on",
        "accend",
        "encend",
        "encien",
        "prend",
        "open",
        "apri",
        "abr",
        "start",
    ),
    "turn_off": ("off", "spegn", "apag", "close", "chiud", "cierr", "stop"),
}
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
