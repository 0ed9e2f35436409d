"""Ask before Assist opens the house: with the agent's *Ask before
unlocking and opening* on, an intent on a lock, an alarm panel or a garage
door waits for the user's yes; a window does not. Core's demo locks and
covers are the house; the model is a scripted server through the real
openai client."""

from __future__ import annotations

from homeassistant.const import CONF_LLM_HASS_API
from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm
import pytest

from custom_components.http_tools_agent.const import CONF_CONFIRM_INTENTS

from .house import async_demo_doors
from .kit import API_ID, agent_with_tools, speech
from .servers import FakeLLMServer, text_stream, tool_calls_stream
from .test_confirm import say


def state_of(hass: HomeAssistant, entity_id: str) -> str:
    state = hass.states.get(entity_id)
    assert state is not None, entity_id
    return state.state


async def setup(hass: HomeAssistant, llm_server: FakeLLMServer, ask: bool) -> None:
    await async_demo_doors(hass)
    await agent_with_tools(
        hass,
        llm_server.base_url,
        agent={
            CONF_LLM_HASS_API: [API_ID, llm.LLM_API_ASSIST],
            CONF_CONFIRM_INTENTS: ask,
        },
    )


async def test_an_unlock_waits_for_the_yes(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """ "Unlock the front door" (HassTurnOff on a lock): asked first; the
    lock stays locked until the yes of the same satellite."""
    await setup(hass, llm_server, ask=True)
    assert state_of(hass, "lock.front_door") == "locked"
    llm_server.add(tool_calls_stream(("HassTurnOff", {"name": "Front Door"})))

    asked = await say(hass, "Unlock the front door.")

    assert speech(asked) == "Should I turn off: name Front Door?"
    assert asked.continue_conversation is True
    assert state_of(hass, "lock.front_door") == "locked"

    llm_server.add(text_stream("The front door is unlocked."))
    await say(hass, "yes", asked.conversation_id)
    await hass.async_block_till_done()
    assert state_of(hass, "lock.front_door") == "unlocked"


@pytest.mark.parametrize(
    ("ask", "call", "entity", "after", "held"),
    [
        # The garage door (device class garage) is asked about ...
        (
            True,
            ("HassTurnOn", {"name": "Garage Door"}),
            "cover.garage_door",
            "closed",
            True,
        ),
        # Named by domain (a list or one name), as models write it.
        (
            True,
            ("HassTurnOn", {"name": "Garage Door", "domain": ["cover"]}),
            "cover.garage_door",
            "closed",
            True,
        ),
        (
            True,
            ("HassTurnOff", {"name": "Front Door", "domain": "lock"}),
            "lock.front_door",
            "locked",
            True,
        ),
        # Reading a lock's state asks nothing.
        (
            True,
            ("HassGetState", {"name": "Front Door"}),
            "lock.front_door",
            "locked",
            False,
        ),
        # ... a window is not, and with the option off nothing is.
        (
            True,
            ("HassTurnOn", {"name": "Kitchen Window"}),
            "cover.kitchen_window",
            "open",
            False,
        ),
        (
            False,
            ("HassTurnOff", {"name": "Front Door"}),
            "lock.front_door",
            "unlocked",
            False,
        ),
    ],
)
async def test_what_is_asked_about(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    ask: bool,
    call: tuple[str, dict[str, str]],
    entity: str,
    after: str,
    held: bool,
) -> None:
    await setup(hass, llm_server, ask=ask)
    llm_server.add(tool_calls_stream(call), text_stream("Done."))

    result = await say(hass, "Open it.")
    await hass.async_block_till_done()

    assert result.continue_conversation is held
    assert state_of(hass, entity) in (after, f"{after}ing")
