"""The demo's house: a few lights and fans in areas, exposed to Assist.

Each light or fan is a `template` entity whose on/off state is kept in an
`input_boolean` (hidden): plain Home Assistant configuration, so it loads in
any Home Assistant without code of ours, keeps its state across restarts, and
starts off. (Core's `demo` integration has the nicer lights, but it sets up
all of its thirty platforms, or none: a house of its own is what a newcomer
can read and change.)

- `house_config()`: the configuration (`input_boolean:` and `template:`);
  `scripts/demo` writes it as the package `config/packages/demo_house.yaml`
  (`config/configuration.yaml` includes `packages/`).
- `async_place(hass)`: the areas (Kitchen, Bedroom, Living room), each
  entity in its area and exposed to Assist, the switches hidden: written
  through Home Assistant's own registries, as the UI would.
- `async_write_house(config_dir)`: both, into a config dir before Home
  Assistant starts (`dev/demo_setup.py`).
- `async_set_up_house(hass)`: both, in a running Home Assistant (the
  end-to-end test and the benchmarks).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from homeassistant.components.conversation import DOMAIN as CONVERSATION
from homeassistant.components.homeassistant.exposed_entities import (
    STORAGE_KEY as EXPOSED_ENTITIES_KEY,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers import (
    area_registry as ar,
    category_registry as cr,
    device_registry as dr,
    entity,
    entity_registry as er,
    floor_registry as fr,
    frame,
    label_registry as lr,
)
from homeassistant.helpers.storage import Store
from homeassistant.setup import async_setup_component
from homeassistant.util import slugify
from homeassistant.util.yaml import dump

PACKAGE = Path("packages") / "demo_house.yaml"


@dataclass(frozen=True, slots=True)
class Appliance:
    """A light or a fan of the house."""

    domain: str
    name: str
    area: str
    # A light whose brightness can be set ("Dim the kitchen lights to 30
    # percent."): its level is kept in an `input_number`.
    dimmable: bool = False

    @property
    def object_id(self) -> str:
        """`kitchen_lights`: the entity is `light.kitchen_lights`."""
        return slugify(self.name)

    @property
    def entity_id(self) -> str:
        """The entity's id."""
        return f"{self.domain}.{self.object_id}"

    @property
    def unique_id(self) -> str:
        """The template entity's unique id."""
        return f"demo_house_{self.object_id}"

    @property
    def switch(self) -> str:
        """The input boolean that keeps its state."""
        return f"{self.object_id}_power"

    @property
    def level(self) -> str:
        """The input number that keeps a dimmable light's brightness."""
        return f"{self.object_id}_level"


HOUSE = (
    Appliance("light", "Kitchen Lights", "Kitchen", dimmable=True),
    Appliance("light", "Bed Light", "Bedroom"),
    Appliance("fan", "Ceiling Fan", "Bedroom"),
    Appliance("light", "Living Room Lights", "Living room"),
    Appliance("fan", "Living Room Fan", "Living room"),
)


def _template(appliance: Appliance) -> dict[str, Any]:
    switch = f"input_boolean.{appliance.switch}"

    def action(service: str) -> list[dict[str, Any]]:
        return [{"action": service, "target": {"entity_id": switch}}]

    config: dict[str, Any] = {
        "name": appliance.name,
        "unique_id": appliance.unique_id,
        "state": f"{{{{ is_state('{switch}', 'on') }}}}",
        "turn_on": action("input_boolean.turn_on"),
        "turn_off": action("input_boolean.turn_off"),
    }
    if appliance.dimmable:
        level = f"input_number.{appliance.level}"
        config["level"] = f"{{{{ states('{level}') | int(255) }}}}"
        config["set_level"] = [
            {
                "action": "input_number.set_value",
                "target": {"entity_id": level},
                "data": {"value": "{{ brightness }}"},
            },
            *action("input_boolean.turn_on"),
        ]
    return config


def house_config() -> dict[str, Any]:
    """The house as Home Assistant configuration (a package)."""
    templates: dict[str, list[dict[str, Any]]] = {}
    for appliance in HOUSE:
        templates.setdefault(appliance.domain, []).append(_template(appliance))
    return {
        "input_boolean": {
            a.switch: {"name": f"{a.name} power", "icon": "mdi:power"} for a in HOUSE
        },
        "input_number": {
            a.level: {
                "name": f"{a.name} level",
                "min": 0,
                "max": 255,
                "step": 1,
                "initial": 255,
            }
            for a in HOUSE
            if a.dimmable
        },
        "template": [templates],
    }


async def async_place(hass: HomeAssistant) -> None:
    """Put each appliance in its area, exposed to Assist, and hide the
    switches (what the UI's area and voice-assistant settings store)."""
    areas = ar.async_get(hass)
    entities = er.async_get(hass)
    for appliance in HOUSE:
        area = areas.async_get_area_by_name(appliance.area) or areas.async_create(
            appliance.area
        )
        entry = entities.async_get_or_create(
            appliance.domain,
            "template",
            appliance.unique_id,
            suggested_object_id=appliance.object_id,
        )
        entities.async_update_entity(entry.entity_id, area_id=area.id)
        entities.async_update_entity_options(
            entry.entity_id, CONVERSATION, {"should_expose": True}
        )
        helpers = [("input_boolean", appliance.switch)]
        if appliance.dimmable:
            helpers.append(("input_number", appliance.level))
        for domain, object_id in helpers:
            helper = entities.async_get_or_create(
                domain, domain, object_id, suggested_object_id=object_id
            )
            entities.async_update_entity(
                helper.entity_id, hidden_by=er.RegistryEntryHider.USER
            )
            entities.async_update_entity_options(
                helper.entity_id, CONVERSATION, {"should_expose": False}
            )


async def async_write_house(config_dir: Path) -> None:
    """Write the package and the registries' entries into `config_dir`
    before Home Assistant starts (the registries' own code writes them;
    existing entries are kept)."""
    package = config_dir / PACKAGE
    package.parent.mkdir(parents=True, exist_ok=True)
    package.write_text(
        "# The demo's house (dev/demo_house.py, written by scripts/demo).\n"
        + dump(house_config()),
        encoding="utf-8",
    )
    hass = HomeAssistant(str(config_dir))
    entity.async_setup(hass)
    frame.async_setup(hass)
    dr.async_setup(hass)
    for registry in (lr, cr, fr, ar, dr, er):
        await registry.async_load(hass)
    await async_place(hass)
    await _async_expose_no_new_entities(hass)
    # The registries write on the final-write event of a stop.
    await hass.async_stop(force=True)


async def _async_expose_no_new_entities(hass: HomeAssistant) -> None:
    """Assist gets the house and nothing onboarding adds later: the setting
    "Expose new entities" off (Settings -> Voice assistants -> Expose).
    Onboarding adds Home Assistant's own shopping list, whose list intents
    would otherwise take "What's on my shopping list?" from the demo's
    shopping-list tools."""
    store: Store[dict[str, Any]] = Store(hass, 1, EXPOSED_ENTITIES_KEY)
    data = await store.async_load() or {"assistants": {}, "exposed_entities": {}}
    data.setdefault("assistants", {})[CONVERSATION] = {"expose_new": False}
    data.setdefault("exposed_entities", {})
    await store.async_save(data)


async def async_set_up_house(hass: HomeAssistant) -> None:
    """The house in a running Home Assistant."""
    config = house_config()
    assert await async_setup_component(hass, "homeassistant", {})
    for domain in ("input_boolean", "input_number", "template"):
        assert await async_setup_component(hass, domain, {domain: config[domain]})
    await hass.async_block_till_done()
    await async_place(hass)
