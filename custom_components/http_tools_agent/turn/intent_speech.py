"""What Home Assistant's own agent says after an Assist intent succeeded,
in the user's language: "Turned on the lights", "Ho acceso le luci in
cucina".

Home Assistant's default agent picks a response template of the intent
(`home_assistant_intents`: `responses.intents.<intent>.<key>`) by the
sentence the user said, and renders it with the intent's slots, its first
matched state and the states it matched or not. An LLM's call matched no
sentence, so the key is chosen from what the call targeted: the key named
after a slot it set (`brightness`), `lights_area` for lights by area,
`cover` for a cover, else `default`. No usable template (none for the
intent, a slot it needs not set, a word missing): None, and the result is
read out as words (`turn/read_out.py`). A failed intent is never said so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from home_assistant_intents import get_intents, get_languages
from homeassistant.components import conversation
from homeassistant.core import HomeAssistant, State
from homeassistant.exceptions import TemplateError
from homeassistant.helpers import (
    area_registry as ar,
    floor_registry as fr,
    intent,
    template,
)
from homeassistant.util import language as language_util
from homeassistant.util.hass_dict import HassKey

from ..const import DOMAIN, LOGGER
from .outcomes import succeeded

# Each language's response templates, by intent and key (None: the language
# has none), loaded once.
_RESPONSES: HassKey[dict[str, Mapping[str, Mapping[str, str]] | None]] = HassKey(
    f"{DOMAIN}_intent_responses"
)

# Intents whose response says what kind of thing was targeted.
_KINDS = ("cover", "lock", "valve", "scene", "script")
# A light or fan targeted by area or floor, or every one of them.
_GROUPS = {
    ("light", "area"): "lights_area",
    ("light", "floor"): "lights_floor",
    ("fan", "area"): "fans_area",
    ("fan", "floor"): "fans_floor",
}
_ALL = {"light": ("light_all", "lights_all"), "fan": ("fan_all", "fans_all")}
# What HassLightSet set, each with the key of its response.
_SETTINGS = ("brightness", "color", "temperature")
_UNSAID_SLOTS = frozenset({"preferred_area_id", "preferred_floor_id"})


def _load(language: str) -> Mapping[str, Mapping[str, str]] | None:
    """The response templates of `language`'s closest variant (executor)."""
    matches = language_util.matches(language, get_languages())
    if not matches:
        return None
    data = get_intents(matches[0])
    responses = (data or {}).get("responses", {}).get("intents")
    return responses if isinstance(responses, dict) else None


async def async_intent_speech(hass: HomeAssistant, language: str) -> IntentSpeech:
    """The sentences of Assist's intents in `language` (its templates
    loaded off the event loop, once per language)."""
    cache = hass.data.setdefault(_RESPONSES, {})
    if language not in cache:
        cache[language] = await hass.async_add_executor_job(_load, language)
    return IntentSpeech(hass, cache[language] or {})


def _slot_values(
    hass: HomeAssistant, response: intent.IntentResponse
) -> dict[str, Any]:
    """The intent's slots as its templates read them (`slots.name`). The
    handler put the matched area's and floor's ids in their slots: their
    names are said."""
    assert response.intent is not None
    values: dict[str, Any] = {}
    for name, slot in response.intent.slots.items():
        if name in _UNSAID_SLOTS or not isinstance(slot, dict):
            continue
        value = slot.get("text") or slot.get("value")
        if intent.is_blank_slot_value(value):
            continue
        if isinstance(value, str):
            if name == "area" and (area := ar.async_get(hass).async_get_area(value)):
                value = area.name
            elif name == "floor" and (
                floor := fr.async_get(hass).async_get_floor(value)
            ):
                value = floor.name
        values[name] = value
    return values | response.speech_slots


def _domains(response: intent.IntentResponse, slots: Mapping[str, Any]) -> set[str]:
    """The domains the intent acted on: its matched states', else its slot's."""
    found = {state.domain for state in response.matched_states}
    if not found and (domain := slots.get("domain")):
        found = {domain} if isinstance(domain, str) else set(domain)
    return found


def response_keys(
    intent_type: str, slots: Mapping[str, Any], domains: set[str]
) -> list[str]:
    """The response keys that may fit a call, best first."""
    keys: list[str] = []
    one = next(iter(domains)) if len(domains) == 1 else None
    by_name = "name" in slots
    if one in _KINDS:
        if one == "cover" and "device_class" in slots:
            keys.append("cover_device_class")
        keys.append(one)
    if intent_type == "HassGetState":
        if by_name:
            keys.append("one_yesno" if "state" in slots else "one")
        elif "state" in slots:
            keys.append("any")
    for setting in _SETTINGS:
        if setting in slots:
            if not by_name and ("area" in slots or "floor" in slots):
                keys.append(f"{setting}_area")
            keys.append(setting)
    if not by_name and one is not None:
        places = [p for p in ("area", "floor") if p in slots]
        keys.extend(_GROUPS[(one, p)] for p in places if (one, p) in _GROUPS)
        if not places:
            keys.extend(_ALL.get(one, ()))
    keys.extend(name for name in slots if name not in keys)
    keys.append("default")
    return keys


@dataclass(slots=True)
class IntentSpeech:
    """The sentences of Assist's intents in one language."""

    hass: HomeAssistant
    responses: Mapping[str, Mapping[str, str]]
    _said: dict[str, str | None] = field(default_factory=dict)

    def sentence(self, content: conversation.ToolResultContent) -> str | None:
        """What Home Assistant's agent says of this intent's result; None
        when it is no intent that succeeded or has no usable template."""
        if content.tool_call_id not in self._said:
            self._said[content.tool_call_id] = self._sentence(content)
        return self._said[content.tool_call_id]

    def _sentence(self, content: conversation.ToolResultContent) -> str | None:
        response = getattr(content.result.data, "original", None)
        if (
            not isinstance(response, intent.IntentResponse)
            or response.intent is None
            or not succeeded(content)
        ):
            return None
        if plain := response.speech.get("plain", {}).get("speech"):
            return str(plain)  # the intent's handler said it itself
        templates = self.responses.get(response.intent.intent_type)
        if not templates:
            return None
        slots = _slot_values(self.hass, response)
        for key in response_keys(
            response.intent.intent_type, slots, _domains(response, slots)
        ):
            if key in templates and (said := self._render(templates[key], response)):
                return said
        if len(templates) == 1:
            # One sentence for any call ("Added {{ slots.item }}").
            return self._render(next(iter(templates.values())), response)
        return None

    def _render(self, source: str, response: intent.IntentResponse) -> str | None:
        """A response template over the intent's result, as the default
        agent renders it; None when a value it reads is missing."""
        hass = self.hass
        matched, unmatched = response.matched_states, response.unmatched_states
        first = next(iter(matched or unmatched), None)

        def to_state(state: State) -> template.TemplateState:
            return template.TemplateState(hass, state)

        try:
            rendered = template.Template(source, hass).async_render(
                {
                    "slots": _slot_values(hass, response),
                    "state": to_state(first) if first is not None else None,
                    "query": {
                        "matched": [to_state(s) for s in matched],
                        "unmatched": [to_state(s) for s in unmatched],
                    },
                },
                parse_result=False,
                strict=True,
            )
        except TemplateError as err:
            LOGGER.debug("Intent response not rendered: %s", err)
            return None
        words = " ".join(str(rendered).split())
        # A translation table's miss renders "None" ("Turned on None").
        if not words or "None" in words.split():
            return None
        return words
