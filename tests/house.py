"""A small house for the Assist API: core's demo lights and fans."""

from __future__ import annotations

from unittest import mock

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
