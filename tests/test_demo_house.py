"""The demo's house: lights and fans in their areas, off, exposed to Assist
(its prompt lists them with their areas), and Assist's own intent turns the
kitchen lights on; `tests/test_demo_setup.py` loads what `scripts/demo`
writes."""

from __future__ import annotations

from homeassistant.components.light import intent as light_intent
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import (
    area_registry as ar,
    entity_registry as er,
    intent,
    llm,
)
from homeassistant.setup import async_setup_component

from custom_components.http_tools_agent.const import DOMAIN
from dev.demo_house import HOUSE, async_place, async_set_up_house

LIGHTS_AND_FANS = {a.entity_id for a in HOUSE}


async def async_assist_prompt(hass: HomeAssistant) -> str:
    """What Assist tells a model of the house (no device, no user)."""
    context = llm.LLMContext(
        platform=DOMAIN,
        context=Context(),
        language="en",
        assistant="conversation",
        device_id=None,
    )
    api = await llm.async_get_api(hass, llm.LLM_API_ASSIST, context)
    return api.api_prompt


def area_of(hass: HomeAssistant, entity_id: str) -> str | None:
    """The name of an entity's area."""
    entry = er.async_get(hass).async_get(entity_id)
    assert entry is not None, entity_id
    area = ar.async_get(hass).async_get_area(entry.area_id or "")
    return area.name if area else None


async def assert_the_house(hass: HomeAssistant) -> None:
    """Every light and fan off, in its area, listed by Assist with it; the
    switches that keep their state hidden and not listed; Assist's own
    intent turns the kitchen lights on (what the agent's call does)."""
    for appliance in HOUSE:
        state = hass.states.get(appliance.entity_id)
        assert state is not None, appliance
        assert state.state == "off"
        assert state.name == appliance.name
        assert area_of(hass, appliance.entity_id) == appliance.area
        switch = er.async_get(hass).async_get(f"input_boolean.{appliance.switch}")
        assert switch is not None
        assert switch.hidden_by is er.RegistryEntryHider.USER
    prompt = await async_assist_prompt(hass)
    for appliance in HOUSE:
        assert f"names: {appliance.name}\n  domain: {appliance.domain}\n" in prompt
        assert f"areas: {appliance.area}" in prompt
    assert "power" not in prompt

    response = await intent.async_handle(
        hass,
        "test",
        intent.INTENT_TURN_ON,
        {"area": {"value": "Kitchen"}, "domain": {"value": "light"}},
    )

    assert response.response_type is intent.IntentResponseType.ACTION_DONE
    on = {s.entity_id for s in hass.states.async_all() if s.state == "on"}
    assert on & LIGHTS_AND_FANS == {"light.kitchen_lights"}

    # The kitchen lights dim ("Dim the kitchen lights to 30 percent.").
    response = await intent.async_handle(
        hass,
        "test",
        light_intent.INTENT_SET,
        {"name": {"value": "Kitchen Lights"}, "brightness": {"value": 30}},
    )
    assert response.response_type is intent.IntentResponseType.ACTION_DONE
    await hass.async_block_till_done()
    kitchen = hass.states.get("light.kitchen_lights")
    assert kitchen is not None
    assert kitchen.attributes["brightness"] == round(255 * 30 / 100)


async def test_the_house_in_a_running_home_assistant(hass: HomeAssistant) -> None:
    """What the end-to-end test and the benchmarks set up."""
    assert await async_setup_component(hass, "llm", {})
    assert await async_setup_component(hass, "intent", {})
    await async_set_up_house(hass)
    await assert_the_house(hass)


async def test_placing_twice_changes_nothing(hass: HomeAssistant) -> None:
    """`scripts/demo` writes the house at every start: the same areas and
    entities, no copies."""
    await async_set_up_house(hass)
    areas = len(ar.async_get(hass).areas)
    entities = len(er.async_get(hass).entities)

    await async_place(hass)

    assert len(ar.async_get(hass).areas) == areas == 3
    helpers = sum(2 if a.dimmable else 1 for a in HOUSE)
    assert len(er.async_get(hass).entities) == entities == len(HOUSE) + helpers
