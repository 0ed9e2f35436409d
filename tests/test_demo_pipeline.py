"""The demo's Assist pipeline prefers handling commands locally: Home
Assistant, on the storage and package `scripts/demo` writes (`dev/demo_setup.py`),
with the demo's agent on a scripted server, answers "Turn on the kitchen
lights." through the preferred pipeline by its own intent, the model never
asked; what its intents do not take goes to the agent. Its AI task
answers automations on the same model."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from homeassistant.components.ai_task.const import DEFAULT_SYSTEM_PROMPT
from homeassistant.components.assist_pipeline import PipelineEventType
from homeassistant.components.assist_pipeline.pipeline import async_get_pipeline
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util
from homeassistant.util.yaml import load_yaml_dict
import pytest
from pytest_homeassistant_custom_component.common import async_fire_time_changed

from custom_components.http_tools_agent.const import DOMAIN
from custom_components.http_tools_agent.server.warm_up import CHANGE_COOLDOWN
from dev.demo_house import PACKAGE
from dev.demo_setup import AGENT_ENTITY, PIPELINE_NAME

from . import test_demo_setup
from .kit import AI_TASK_ID, pipeline_events
from .servers import FakeLLMServer, text_stream
from .test_demo_house import LIGHTS_AND_FANS
from .test_demo_setup import async_load_registries

# The demo's config dir and storage, as `tests/test_demo_setup.py` writes
# them (its fixtures), with the entry on `demo_model_url` below.
demo_config = test_demo_setup.demo_config
hass_storage = test_demo_setup.hass_storage
load_registries = test_demo_setup.load_registries


@pytest.fixture
def demo_model_url(llm_server: FakeLLMServer) -> str:
    """The demo's entry on the scripted server."""
    return llm_server.base_url


async def start_demo(hass: HomeAssistant, demo_config: Path) -> None:
    """What the demo's Home Assistant loads: the house, the agent, Assist
    pipelines."""
    await async_load_registries(hass)
    package = load_yaml_dict(demo_config / PACKAGE)
    for domain in ("homeassistant", "llm", "intent"):
        assert await async_setup_component(hass, domain, {})
    for domain in ("input_boolean", "input_number", "template"):
        assert await async_setup_component(hass, domain, {domain: package[domain]})
    # The entries from the demo's storage, as Home Assistant's start reads
    # them (the test harness starts with none).
    await hass.config_entries.async_initialize()
    assert await async_setup_component(hass, DOMAIN, {})
    assert await async_setup_component(hass, "assist_pipeline", {})
    # The agent's warm-up (on: its server is on this machine) is sent, and
    # answered, before a test scripts the model's reply; so is the one the
    # house's new entities schedule for `CHANGE_COOLDOWN` later (else, on a
    # slow machine, it takes the reply the test scripts).
    await hass.async_block_till_done(wait_background_tasks=True)
    async_fire_time_changed(
        hass, dt_util.utcnow() + timedelta(seconds=CHANGE_COOLDOWN + 1)
    )
    await hass.async_block_till_done(wait_background_tasks=True)


async def ask(hass: HomeAssistant, text: str) -> dict[str, object]:
    """Ask the preferred pipeline as the Assist dialog does (text in, the
    intent stage); its intent-end event's data."""
    events = await pipeline_events(hass, text, pipeline=async_get_pipeline(hass))
    ends = [e for e in events if e.type is PipelineEventType.INTENT_END]
    assert len(ends) == 1, [(e.type, e.data) for e in events]
    (end,) = ends
    assert end.data is not None
    return end.data


def asked_the_model(llm_server: FakeLLMServer, text: str) -> bool:
    """Whether a chat request carried `text` (a warm-up carries no question)."""
    return any(
        m.get("content") == text
        for request in llm_server.requests
        for m in request["messages"]
    )


async def test_the_kitchen_lights_are_home_assistants_own(
    hass: HomeAssistant, demo_config: Path, llm_server: FakeLLMServer
) -> None:
    """The preferred pipeline is the demo's, on the demo's agent, preferring
    local intents: "Turn on the kitchen lights." is done and answered by
    Home Assistant ("Turned on the light"), only the kitchen lights go on,
    and the model is not asked."""
    await start_demo(hass, demo_config)
    pipeline = async_get_pipeline(hass)
    assert (pipeline.name, pipeline.conversation_engine) == (
        PIPELINE_NAME,
        AGENT_ENTITY,
    )
    assert pipeline.prefer_local_intents

    end = await ask(hass, "Turn on the kitchen lights.")

    assert end["processed_locally"] is True
    output = end["intent_output"]
    assert isinstance(output, dict)
    assert output["response"]["speech"]["plain"]["speech"] == "Turned on the light"
    on = {s.entity_id for s in hass.states.async_all() if s.state == "on"}
    assert on & LIGHTS_AND_FANS == {"light.kitchen_lights"}
    assert not asked_the_model(llm_server, "Turn on the kitchen lights.")


async def test_what_its_intents_do_not_take_goes_to_the_agent(
    hass: HomeAssistant, demo_config: Path, llm_server: FakeLLMServer
) -> None:
    """A question about the weather none of Home Assistant's intents nor
    the tools' own sentences take (`tests/test_tool_sentences.py`): the
    demo's agent answers it, from the model."""
    await start_demo(hass, demo_config)
    # Not a weather report with no call: that is held (`test_honesty.py`).
    answer = "I can look the weather in Rome up for you."
    llm_server.add(text_stream(answer))

    end = await ask(hass, "Do I need an umbrella in Rome?")

    assert end["processed_locally"] is False
    output = end["intent_output"]
    assert isinstance(output, dict)
    assert output["response"]["speech"]["plain"]["speech"] == answer
    assert asked_the_model(llm_server, "Do I need an umbrella in Rome?")


async def test_the_demo_has_an_ai_task_on_its_model(
    hass: HomeAssistant, demo_config: Path, llm_server: FakeLLMServer
) -> None:
    """`ai_task.generate_data` works in the demo as it starts: its AI task
    answers from the demo's model with the HTTP tools offered, and it sent
    no warm-up of its own (the model keeps the agent's prompt warm)."""
    await start_demo(hass, demo_config)
    assert await async_setup_component(hass, "ai_task", {})
    warm_ups = list(llm_server.requests)
    assert warm_ups
    assert not any(
        DEFAULT_SYSTEM_PROMPT in str(m.get("content"))
        for request in warm_ups
        for m in request["messages"]
    )
    llm_server.add(text_stream("Flour, milk and eggs."))

    response = await hass.services.async_call(
        "ai_task",
        "generate_data",
        {
            "task_name": "Pancakes",
            "entity_id": AI_TASK_ID,
            "instructions": "What do I need for pancakes?",
        },
        blocking=True,
        return_response=True,
    )

    assert response is not None
    assert response["data"] == "Flour, milk and eggs."
    task_request = llm_server.requests[-1]
    assert DEFAULT_SYSTEM_PROMPT in task_request["messages"][0]["content"]
    assert "get_weather" in [t["function"]["name"] for t in task_request["tools"]]
