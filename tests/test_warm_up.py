"""The first question is answered warm: the agent sends its prompt's start
(system prompt and tools, exactly as a turn sends them) to a local server
ahead, when it starts, when its settings change, when its server is back and
when what Assist's prompt lists changes; the server's cache then holds all
of a turn's prompt before the user's words."""

from __future__ import annotations

import asyncio
from datetime import timedelta
import logging
from typing import Any

from homeassistant.components import conversation
from homeassistant.components.homeassistant.exposed_entities import (
    async_expose_entity,
)
from homeassistant.const import (
    CONF_LLM_HASS_API,
    CONF_PROMPT,
    EVENT_HOMEASSISTANT_STARTED,
)
from homeassistant.core import Context, CoreState, HomeAssistant
from homeassistant.helpers import (
    area_registry as ar,
    device_registry as dr,
    entity_registry as er,
    issue_registry as ir,
    llm,
)
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.http_tools_agent.const import (
    CONF_EXAMPLES,
    CONF_THINKING,
    CONF_WARM_UP,
    DOMAIN,
)
from custom_components.http_tools_agent.server.availability import RECHECK_INTERVAL
from custom_components.http_tools_agent.server.info import (
    KIND_LLAMA_CPP,
    KIND_OPENAI,
    ServerInfo,
)
from custom_components.http_tools_agent.server.warm_up import (
    CHANGE_COOLDOWN,
    WARM_UP_TEXT,
    warm_up_wanted,
)

from .chat_templates import FAMILIES, render
from .house import async_demo_house
from .kit import AGENT_ID, API_ID, converse, load_integration, speech
from .servers import FakeLLMServer, completion, error, text_stream

UNREACHABLE = "I can't reach the language model server"
WITH_ASSIST = {CONF_WARM_UP: "auto", CONF_LLM_HASS_API: [llm.LLM_API_ASSIST, API_ID]}


async def settled(hass: HomeAssistant, seconds: float = 0) -> None:
    """Let `seconds` pass and the warm-ups they start finish."""
    if seconds:
        async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=seconds))
    await hass.async_block_till_done(wait_background_tasks=True)


def system(body: dict[str, Any]) -> str:
    """The system prompt a request sent."""
    message = body["messages"][0]
    assert message["role"] == "system"
    text: str = message["content"]
    return text


@pytest.mark.parametrize(
    "agent_options",
    [
        {
            **WITH_ASSIST,
            CONF_PROMPT: "You are the butler of {{ ha_name }}.\n"
            "It is {{ now().strftime('%H:%M') }}.\n"
            "Answer in one sentence.",
            CONF_EXAMPLES: "generated",
            CONF_THINKING: "off",
        }
    ],
)
async def test_the_warm_up_is_the_start_of_the_first_turn(
    hass: HomeAssistant, llm_server: FakeLLMServer, config_entry: MockConfigEntry
) -> None:
    """With Assist over a small house, the HTTP tools, a prompt template that
    renders the time, examples and the thinking switch: the warm-up sends
    the system prompt, tools and template switches of the first turn, byte
    for byte, and one token is asked for. Rendered with every chat template,
    the first turn's prompt starts with all of the warm-up's but its
    question: the server reads only the user's words."""
    await async_demo_house(hass)
    llm_server.add(completion("Hello"), text_stream("The kitchen lights are on."))
    await load_integration(hass)
    await settled(hass)
    (warm,) = llm_server.requests

    result = await converse(hass, "Turn on the kitchen lights.")

    assert speech(result) == "The kitchen lights are on."
    turn = llm_server.requests[1]
    assert warm["max_tokens"] == 1
    assert warm["messages"][1:] == [{"role": "user", "content": WARM_UP_TEXT}]
    assert "Kitchen Lights" in system(warm)
    assert "get_weather" in system(warm)  # the generated examples
    for key in ("model", "tools", "tool_choice", "chat_template_kwargs"):
        assert warm[key] == turn[key], key
    assert warm["messages"][0] == turn["messages"][0]
    for family in FAMILIES:
        warm_prompt = render(family, warm)
        before_question = warm_prompt[: warm_prompt.rindex(WARM_UP_TEXT)]
        assert render(family, turn).startswith(before_question), family
        assert "intent__HassTurnOn" in before_question, family


async def test_warm_when_the_agent_starts_and_when_its_settings_change(
    hass: HomeAssistant, llm_server: FakeLLMServer, config_entry: MockConfigEntry
) -> None:
    """Set up: one warm-up. New instructions reload the entry: one more, with
    them. A second reload with nothing new sends the same start again (a
    reload cannot know what the server holds now)."""
    subentry = next(iter(config_entry.subentries.values()))
    hass.config_entries.async_update_subentry(
        config_entry, subentry, data={**subentry.data, CONF_WARM_UP: "auto"}
    )
    llm_server.add(*[completion(".")] * 2)
    await load_integration(hass)
    await settled(hass)
    assert len(llm_server.requests) == 1

    hass.config_entries.async_update_subentry(
        config_entry,
        subentry,
        data={**config_entry.subentries[subentry.subentry_id].data}
        | {CONF_PROMPT: "Answer in Italian."},
    )
    await settled(hass)

    first, second = llm_server.requests
    assert system(first).startswith(llm.DEFAULT_INSTRUCTIONS_PROMPT)
    assert system(second).startswith("Answer in Italian.")
    assert first["tools"] == second["tools"]


@pytest.mark.parametrize("agent_options", [WITH_ASSIST])
async def test_warm_again_when_what_assist_lists_changes(
    hass: HomeAssistant, llm_server: FakeLLMServer, config_entry: MockConfigEntry
) -> None:
    """Assist's prompt lists the exposed entities with their names and
    areas. A light no longer exposed, or renamed, is warmed up again once
    the changes settle; a change the prompt does not show (an empty new
    area) sends nothing."""
    await async_demo_house(hass)
    llm_server.add(*[completion(".")] * 3)
    await load_integration(hass)
    await settled(hass)
    assert "Kitchen Lights" in system(llm_server.requests[0])

    async_expose_entity(hass, "conversation", "light.kitchen_lights", False)
    await settled(hass)
    assert len(llm_server.requests) == 1  # not before the changes settle
    await settled(hass, CHANGE_COOLDOWN + 1)
    assert len(llm_server.requests) == 2
    assert "Kitchen Lights" not in system(llm_server.requests[1])

    ar.async_get(hass).async_create("Garage")
    await settled(hass, CHANGE_COOLDOWN + 1)
    assert len(llm_server.requests) == 2

    er.async_get(hass).async_update_entity("light.bed_light", name="Night light")
    await settled(hass, CHANGE_COOLDOWN + 1)
    assert len(llm_server.requests) == 3
    assert "Night light" in system(llm_server.requests[2])

    # The office light's device moves to the kitchen: the light is listed there.
    office = er.async_get(hass).async_get("light.office_rgbw_lights")
    assert office is not None
    assert office.device_id is not None
    kitchen = ar.async_get(hass).async_create("Kitchen")
    dr.async_get(hass).async_update_device(office.device_id, area_id=kitchen.id)
    await settled(hass, CHANGE_COOLDOWN + 1)
    assert len(llm_server.requests) == 4
    assert "areas: Kitchen" in system(llm_server.requests[3])


@pytest.mark.parametrize("agent_options", [WITH_ASSIST])
async def test_warm_ups_follow_the_satellite_that_asked(
    hass: HomeAssistant, llm_server: FakeLLMServer, config_entry: MockConfigEntry
) -> None:
    """Assist's prompt says where the asking device is. After a question
    from a satellite in the kitchen, a warm-up sends that satellite's start:
    its next question's system prompt and tools are the warm-up's."""
    await async_demo_house(hass)
    llm_server.add(
        completion("."), text_stream("Hello."), completion("."), text_stream("Hi.")
    )
    await load_integration(hass)
    await settled(hass)
    devices = dr.async_get(hass)
    satellite = devices.async_get_or_create(
        config_entry_id=config_entry.entry_id,
        identifiers={("test", "satellite")},
        name="Kitchen satellite",
    )
    kitchen = ar.async_get(hass).async_create("Kitchen")
    devices.async_update_device(satellite.id, area_id=kitchen.id)

    async def ask(text: str) -> None:
        await conversation.async_converse(
            hass, text, None, Context(), agent_id=AGENT_ID, device_id=satellite.id
        )

    await ask("Hello")
    async_expose_entity(hass, "conversation", "light.bed_light", False)
    await settled(hass, CHANGE_COOLDOWN + 1)
    await ask("Hi")

    first_warm, _, warm, turn = llm_server.requests
    assert "You are in area Kitchen" not in system(first_warm)
    assert "You are in area Kitchen" in system(warm)
    assert warm["messages"][0] == turn["messages"][0]
    assert warm["tools"] == turn["tools"]


@pytest.mark.parametrize("agent_options", [WITH_ASSIST])
async def test_a_change_during_a_warm_up_is_warmed_after_it(
    hass: HomeAssistant, llm_server: FakeLLMServer, config_entry: MockConfigEntry
) -> None:
    """The server still reads the first warm-up when a light is no longer
    exposed: once it is done, the new start is sent."""
    await async_demo_house(hass)
    arrived, release = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        arrived.set()
        await release.wait()

    held = completion(".")
    held.hold_before, held.hold_until = 0, hold
    llm_server.add(held, completion("."))
    await load_integration(hass)
    async with asyncio.timeout(10):
        await arrived.wait()  # the server reads the first warm-up

    async_expose_entity(hass, "conversation", "light.kitchen_lights", False)
    async_fire_time_changed(
        hass, dt_util.utcnow() + timedelta(seconds=CHANGE_COOLDOWN + 1)
    )
    await hass.async_block_till_done()
    release.set()
    await settled(hass)

    first, second = llm_server.requests
    assert "Kitchen Lights" in system(first)
    assert "Kitchen Lights" not in system(second)


@pytest.mark.parametrize(
    "agent_options", [{CONF_WARM_UP: "on", CONF_PROMPT: "{{ 1 | no_such_filter }}"}]
)
async def test_no_warm_up_of_a_prompt_that_cannot_render(
    hass: HomeAssistant, llm_server: FakeLLMServer, config_entry: MockConfigEntry
) -> None:
    """Instructions whose template fails: nothing is sent ahead; the turn
    says what is wrong, as without a warm-up."""
    await load_integration(hass)
    await settled(hass)

    result = await converse(hass, "Hi")

    assert speech(result) == "Sorry, I had a problem with my template"
    assert llm_server.requests == []


@pytest.mark.parametrize("agent_options", [WITH_ASSIST])
async def test_warm_at_setup_and_again_once_started_if_the_prompt_changed(
    hass: HomeAssistant, llm_server: FakeLLMServer, config_entry: MockConfigEntry
) -> None:
    """While Home Assistant starts, the agent warms up as soon as it is set
    up (a question may come before Home Assistant has started). Entities
    keep coming meanwhile, and no change is warmed on its own then: once
    Home Assistant has started, the prompt, which now lists them, is warmed
    again; started once more with nothing new, nothing is sent."""
    hass.set_state(CoreState.starting)
    llm_server.add(*[completion(".")] * 2)
    await load_integration(hass)
    await settled(hass)
    (early,) = llm_server.requests

    hass.states.async_set("light.porch", "off", {"friendly_name": "Porch Light"})
    await settled(hass, CHANGE_COOLDOWN + 1)
    assert len(llm_server.requests) == 1

    hass.set_state(CoreState.running)
    hass.bus.async_fire(EVENT_HOMEASSISTANT_STARTED)
    await settled(hass)

    started = llm_server.requests[1]
    assert "Porch Light" not in system(early)
    assert "Porch Light" in system(started)
    assert (early["max_tokens"], started["max_tokens"]) == (1, 1)


@pytest.mark.parametrize("agent_options", [{CONF_WARM_UP: "auto"}])
async def test_a_question_asked_while_home_assistant_starts(
    hass: HomeAssistant, llm_server: FakeLLMServer, config_entry: MockConfigEntry
) -> None:
    """Asked while Home Assistant starts, in a task its start waits for (as
    the Assist dialog's pipeline run is), the first question waits for the
    warm-up, which the server reads slowly here as on a small CPU, and is
    answered warm; meanwhile Home Assistant's start does not wait for it
    (bootstrap's wrap-up and `async_start` wait for such tasks): it is
    `running` before the answer."""
    hass.set_state(CoreState.not_running)
    reading, read = asyncio.Event(), asyncio.Event()

    async def read_slowly() -> None:
        reading.set()
        await read.wait()

    warm_up = completion(".")
    warm_up.hold_before, warm_up.hold_until = 0, read_slowly
    llm_server.add(warm_up, text_stream("Hello, ", "how can I help?"))
    await load_integration(hass)
    async with asyncio.timeout(10):
        await reading.wait()
        asked = hass.async_create_task(converse(hass, "Hello"))

        await hass.async_block_till_done()  # bootstrap's wrap-up
        await hass.async_start()
        assert hass.state is CoreState.running
        assert not asked.done()

    read.set()
    result = await asked
    assert speech(result) == "Hello, how can I help?"
    warm, turn = llm_server.requests
    assert (warm["max_tokens"], turn["stream"]) == (1, True)
    assert turn["messages"][0] == warm["messages"][0]


@pytest.mark.parametrize("agent_options", [{CONF_WARM_UP: "auto"}])
async def test_a_failed_warm_up_changes_nothing(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    config_entry: MockConfigEntry,
    hass_client: ClientSessionGenerator,
    issue_registry: ir.IssueRegistry,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A server that refuses the warm-up: a debug line, no repair issue, no
    error or quirk in diagnostics, the agent available; the first question
    is answered as ever."""
    caplog.set_level(logging.DEBUG, logger="custom_components.http_tools_agent")
    llm_server.add(error(500, "boom"), text_stream("Hello!"))
    await load_integration(hass)
    await settled(hass)

    assert speech(await converse(hass, "Hi")) == "Hello!"
    failures = [
        r for r in caplog.records if r.getMessage().startswith("The warm-up of")
    ]
    assert [r.levelno for r in failures] == [logging.DEBUG]
    assert "boom" in failures[0].getMessage()
    assert not [i for i in issue_registry.issues.values() if i.domain == DOMAIN]
    diagnostics = await get_diagnostics_for_config_entry(
        hass, hass_client, config_entry
    )
    assert diagnostics["recent_errors"] == []
    assert diagnostics["model_quirks"] == {}
    state = hass.states.get(AGENT_ID)
    assert state is not None
    assert state.state != "unavailable"


@pytest.mark.parametrize("agent_options", [{CONF_WARM_UP: "auto"}])
async def test_warm_again_when_the_server_is_back(
    hass: HomeAssistant, llm_server: FakeLLMServer, config_entry: MockConfigEntry
) -> None:
    """A server that went away may come back with an empty cache: the same
    start is sent again as soon as the agent sees it answer."""
    llm_server.add(completion("."))
    await load_integration(hass)
    await settled(hass)
    await llm_server.stop()
    assert speech(await converse(hass, "Hello")).startswith(UNREACHABLE)

    await llm_server.start()
    llm_server.add(completion("."))
    await settled(hass, RECHECK_INTERVAL.total_seconds() + 1)

    first, second = llm_server.requests
    assert second["messages"] == first["messages"]
    assert second["max_tokens"] == 1


@pytest.mark.parametrize("agent_options", [{CONF_WARM_UP: "off"}])
async def test_no_warm_up_when_off(
    hass: HomeAssistant, llm_server: FakeLLMServer, config_entry: MockConfigEntry
) -> None:
    """Off: the first question is the first request."""
    llm_server.add(text_stream("Hello!"))
    await load_integration(hass)
    await settled(hass)

    assert speech(await converse(hass, "Hi")) == "Hello!"
    (request,) = llm_server.requests
    assert request["messages"][-1]["content"] == "Hi"


@pytest.mark.parametrize(
    ("setting", "base_url", "kind", "wanted"),
    [
        ("auto", "http://127.0.0.1:8080/v1", KIND_LLAMA_CPP, True),
        ("auto", "http://localhost:11434/v1", "ollama", True),
        ("auto", "http://192.168.1.20:8000/v1", "vllm", True),
        ("auto", "http://llm.local:8080/v1", KIND_LLAMA_CPP, True),
        ("auto", "http://gpu-box:8080/v1", KIND_LLAMA_CPP, True),
        ("auto", "https://api.openai.com/v1", KIND_OPENAI, False),
        ("auto", "https://openrouter.ai/api/v1", "unknown", False),
        ("auto", "http://93.184.215.14/v1", "unknown", False),
        ("on", "https://openrouter.ai/api/v1", "unknown", True),
        ("off", "http://127.0.0.1:8080/v1", KIND_LLAMA_CPP, False),
    ],
)
def test_auto_warms_local_servers_only(
    setting: str, base_url: str, kind: str, wanted: bool
) -> None:
    """`auto` warms servers on this machine or the local network (addresses,
    bare names, `.local`), never a hosted API: it bills the tokens."""
    assert warm_up_wanted(setting, base_url, ServerInfo(kind=kind)) is wanted


@pytest.mark.parametrize("agent_options", [{CONF_WARM_UP: "auto"}])
async def test_a_warm_up_never_cuts_a_turn(
    hass: HomeAssistant, llm_server: FakeLLMServer, config_entry: MockConfigEntry
) -> None:
    """llama-cpp-python ends a streamed answer when another request comes
    in: in the demo, a warm-up sent during the first question after a start
    cut it ("The language model server stopped in the middle of the
    answer."). Here the server comes back while a turn streams: the warm-up
    it calls for waits for the turn, and the answer is heard whole."""
    llm_server.interrupt_requests = True
    llm_server.add(completion("."))
    await load_integration(hass)
    await settled(hass)
    runtime = config_entry.runtime_data

    async def server_back_mid_answer() -> None:
        runtime.availability.async_mark_unavailable("a test")
        runtime.availability.async_mark_available()  # calls for a warm-up
        await asyncio.sleep(0.3)  # time for it to reach the server

    llm_server.add(
        text_stream(
            "The kitchen lights ",
            "are on, and ",
            "the fan is off.",
            hold_before_piece=1,
            hold_until=server_back_mid_answer,
        ),
        completion("."),
    )

    result = await converse(hass, "Is everything fine?")
    await settled(hass)

    assert speech(result) == "The kitchen lights are on, and the fan is off."
    assert llm_server.interrupted == 0
    warm_up, turn, warm_again = llm_server.requests
    assert (turn["stream"], warm_again["max_tokens"]) == (True, 1)
    assert warm_again["messages"] == warm_up["messages"]


@pytest.mark.parametrize("agent_options", [{CONF_WARM_UP: "auto"}])
async def test_a_question_during_the_warm_up_waits_for_it(
    hass: HomeAssistant, llm_server: FakeLLMServer, config_entry: MockConfigEntry
) -> None:
    """Asked while the warm-up is still read (the first question after a
    start), the question is sent when the warm-up is done, and answered."""
    llm_server.interrupt_requests = True
    warm_up = completion(".")
    warm_up.delay = 0.5
    llm_server.add(warm_up, text_stream("Hello, ", "how can I help?"))
    await load_integration(hass)

    result = await converse(hass, "Hello")
    await settled(hass)

    assert speech(result) == "Hello, how can I help?"
    assert llm_server.interrupted == 0
    assert llm_server.requests[0]["max_tokens"] == 1  # the warm-up went first
