"""A small house for the Assist API: core's demo lights and fans; its doors
(locks, covers, the alarm panel) for the confirmation tests."""

from __future__ import annotations

from unittest import mock

from homeassistant.components import conversation
from homeassistant.components.homeassistant.exposed_entities import (
    async_expose_entity,
)
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component


async def async_demo_house(hass: HomeAssistant) -> None:
    """Core's demo lights and fans (only those of its platforms), exposed to
    Assist as Home Assistant exposes lights and fans by default."""
    assert await async_setup_component(hass, "homeassistant", {})
    with mock.patch(
        "homeassistant.components.demo.COMPONENTS_WITH_CONFIG_ENTRY_DEMO_PLATFORM",
        [Platform.LIGHT, Platform.FAN],
    ):
        assert await async_setup_component(hass, "demo", {})
        await hass.async_block_till_done()


async def async_demo_doors(hass: HomeAssistant) -> None:
    """Core's demo locks, covers (the garage door among them) and alarm
    panel, exposed to Assist (locks are not by default)."""
    assert await async_setup_component(hass, "homeassistant", {})
    with mock.patch(
        "homeassistant.components.demo.COMPONENTS_WITH_CONFIG_ENTRY_DEMO_PLATFORM",
        [Platform.LOCK, Platform.COVER, Platform.ALARM_CONTROL_PANEL],
    ):
        assert await async_setup_component(hass, "demo", {})
        await hass.async_block_till_done()
    for state in hass.states.async_all(["lock", "cover", "alarm_control_panel"]):
        async_expose_entity(hass, conversation.DOMAIN, state.entity_id, True)
