"""Assist's intents that open the house: held for the user's yes when the
agent's *Ask before unlocking and opening* is on (`turn/hold.py`).

An intent call is sensitive when it changes something and Home Assistant's
own target matching (`intent.async_match_targets`, what the intent itself
will use) finds among its targets a lock, an alarm panel, or a cover of the
garage, door or gate class.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from homeassistant.components import conversation
from homeassistant.const import ATTR_DEVICE_CLASS
from homeassistant.core import HomeAssistant, State
from homeassistant.helpers import intent, llm

# The intents that change a target's state (reads and timers never ask).
CHANGING_INTENTS = frozenset(
    {
        intent.INTENT_TURN_ON,
        intent.INTENT_TURN_OFF,
        intent.INTENT_TOGGLE,
        intent.INTENT_SET_POSITION,
        "HassOpenCover",
        "HassCloseCover",
    }
)
SENSITIVE_DOMAINS = frozenset({"lock", "alarm_control_panel"})
SENSITIVE_COVER_CLASSES = frozenset({"garage", "door", "gate"})

type Sensitive = Callable[[llm.ToolInput], bool]


def _names(value: object) -> Collection[str] | None:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(item) for item in value]
    return None


def _opens_the_house(state: State) -> bool:
    if state.domain in SENSITIVE_DOMAINS:
        return True
    return (
        state.domain == "cover"
        and state.attributes.get(ATTR_DEVICE_CLASS) in SENSITIVE_COVER_CLASSES
    )


def sensitive_intents(hass: HomeAssistant) -> Sensitive:
    """Whether a call is an intent on a lock, an alarm panel, or a garage
    door, door or gate cover of this house."""

    def sensitive(call: llm.ToolInput) -> bool:
        name = call.tool_name.rpartition("__")[2]
        if name not in CHANGING_INTENTS:
            return False
        args: dict[str, Any] = call.tool_args
        constraints = intent.MatchTargetsConstraints(
            name=args.get("name") if isinstance(args.get("name"), str) else None,
            area_name=args.get("area") if isinstance(args.get("area"), str) else None,
            floor_name=(
                args.get("floor") if isinstance(args.get("floor"), str) else None
            ),
            domains=_names(args.get("domain")),
            device_classes=_names(args.get("device_class")),
            assistant=conversation.DOMAIN,
        )
        result = intent.async_match_targets(hass, constraints)
        return result.is_match and any(_opens_the_house(s) for s in result.states)

    return sensitive
