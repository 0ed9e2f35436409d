"""What `scripts/demo` writes into a config dir (`dev/demo_setup.py`, run
as the script runs it), loaded by Home Assistant: the house's lights and
fans in their areas, exposed to Assist, and the demo agent offering Assist
beside the HTTP tools, so "turn on the kitchen lights" can work."""

from __future__ import annotations

from collections.abc import Generator
import json
from pathlib import Path
import subprocess
import sys
from typing import Any

from homeassistant.components.homeassistant.const import DATA_EXPOSED_ENTITIES
from homeassistant.const import CONF_LLM_HASS_API
from homeassistant.core import HomeAssistant
from homeassistant.helpers import (
    area_registry as ar,
    category_registry as cr,
    device_registry as dr,
    entity_registry as er,
    floor_registry as fr,
    label_registry as lr,
    llm,
)
from homeassistant.setup import async_setup_component
from homeassistant.util.yaml import load_yaml_dict
import pytest
from pytest_homeassistant_custom_component.common import mock_storage

from custom_components.http_tools_agent.const import (
    CONF_WARM_UP,
    DOMAIN,
    SUBENTRY_AI_TASK,
    SUBENTRY_CONVERSATION,
)
from custom_components.http_tools_agent.tools.llm_api import api_id_for
from dev.demo_house import PACKAGE

from .test_demo_house import assert_the_house

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def demo_model_url() -> str:
    """The model server the demo's entry is written for."""
    return "http://127.0.0.1:8080/v1"


@pytest.fixture
def demo_config(tmp_path: Path, demo_model_url: str) -> Path:
    """A config dir as `scripts/demo` writes it."""
    subprocess.run(  # noqa: S603 (our own module, fixed arguments)
        [
            sys.executable,
            "-m",
            "dev.demo_setup",
            str(tmp_path),
            demo_model_url,
            "http://127.0.0.1:8091",
        ],
        check=True,
        cwd=ROOT,
        capture_output=True,
    )
    return tmp_path


@pytest.fixture
def hass_storage(demo_config: Path) -> Generator[dict[str, Any]]:
    """The test's Home Assistant starts on the demo's storage."""
    stored = {
        path.name: json.loads(path.read_text(encoding="utf-8"))
        for path in (demo_config / ".storage").iterdir()
    }
    with mock_storage(stored) as data:
        yield data


@pytest.fixture
def load_registries() -> bool:
    """The registries are loaded from that storage, as Home Assistant's
    start loads them (the test harness would start them empty)."""
    return False


async def async_load_registries(hass: HomeAssistant) -> None:
    """What Home Assistant's bootstrap does before any integration."""
    dr.async_setup(hass)
    for registry in (lr, cr, fr, ar, dr, er):
        await registry.async_load(hass)


async def test_the_demo_config_dir(demo_config: Path, hass: HomeAssistant) -> None:
    """Home Assistant on the demo's storage and package: the house as in a
    running Home Assistant, and the demo agent offers Assist and this
    server's HTTP tools."""
    await async_load_registries(hass)
    package = load_yaml_dict(demo_config / PACKAGE)
    for domain in ("homeassistant", "llm", "intent"):
        assert await async_setup_component(hass, domain, {})
    for domain in ("input_boolean", "input_number", "template"):
        assert await async_setup_component(hass, domain, {domain: package[domain]})
    await hass.async_block_till_done()

    await assert_the_house(hass)
    # What onboarding adds later (Home Assistant's own shopping list) is not
    # offered to Assist beside the demo's shopping-list tools.
    exposed = hass.data[DATA_EXPOSED_ENTITIES]
    assert not exposed.async_get_expose_new_entities("conversation")
    entries = json.loads((demo_config / ".storage/core.config_entries").read_text())
    (entry,) = [e for e in entries["data"]["entries"] if e["domain"] == DOMAIN]
    agent, task = entry["subentries"]
    assert entry["title"] == "llama-cpp-python · qwen2.5-coder-0.5b"
    assert agent["subentry_type"] == SUBENTRY_CONVERSATION
    assert agent["data"][CONF_LLM_HASS_API] == [
        llm.LLM_API_ASSIST,
        api_id_for(entry["unique_id"]),
    ]
    # An AI task for automations, on the same model with the HTTP tools,
    # that leaves the model's warm prompt to the agent.
    assert task["subentry_type"] == SUBENTRY_AI_TASK
    assert task["data"][CONF_LLM_HASS_API] == [api_id_for(entry["unique_id"])]
    assert task["data"][CONF_WARM_UP] == "off"
