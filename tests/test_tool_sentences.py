"""Tools that answer their own sentences, before any model: the demo as
`scripts/demo` writes it, its tools on a real tool server, asked through
its preferred Assist pipeline. A sentence of a tool is matched by Home
Assistant (a sentence trigger), its tool's request is made and its answer
said, and the scripted model is never asked; a change that asks first asks,
and the "yes" (which matches no sentence) runs it through the agent."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from datetime import timedelta
import json
from pathlib import Path
import subprocess
import sys
from typing import Any

from homeassistant.components import conversation
from homeassistant.components.assist_pipeline import PipelineEventType
from homeassistant.components.assist_pipeline.pipeline import (
    KEY_ASSIST_PIPELINE,
    async_get_pipeline,
)
from homeassistant.components.conversation import HOME_ASSISTANT_AGENT
from homeassistant.components.conversation.agent_manager import get_agent_manager
from homeassistant.components.intent.const import TIMER_DATA
from homeassistant.core import Context, HomeAssistant
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import async_fire_time_changed

from custom_components.http_tools_agent.const import DOMAIN
from custom_components.http_tools_agent.engine.speakable import speakable
from dev.tool_server import DemoToolServer, tool_definitions, weather_for

from . import test_demo_setup
from .kit import pipeline_events
from .servers import FakeLLMServer, text_stream
from .test_demo_pipeline import start_demo

ROOT = Path(__file__).parent.parent
TRANSLATIONS = ROOT / "custom_components" / DOMAIN / "translations"

hass_storage = test_demo_setup.hass_storage
load_registries = test_demo_setup.load_registries


@pytest.fixture
async def tools(socket_enabled: None) -> AsyncGenerator[DemoToolServer]:
    """The demo's tool server, on a free port."""
    async with DemoToolServer() as server:
        yield server


@pytest.fixture
def demo_config(
    tmp_path: Path, llm_server: FakeLLMServer, tools: DemoToolServer
) -> Path:
    """A config dir as `scripts/demo` writes it, its entry on the scripted
    model server and the tool server above."""
    subprocess.run(  # noqa: S603 (our own module, fixed arguments)
        [
            sys.executable,
            "-m",
            "dev.demo_setup",
            str(tmp_path),
            llm_server.base_url,
            tools.url,
        ],
        check=True,
        cwd=ROOT,
        capture_output=True,
    )
    return tmp_path


async def ask(
    hass: HomeAssistant, text: str, conversation_id: str | None = None
) -> dict[str, Any]:
    """Ask the demo's (preferred) pipeline as the Assist dialog does; its
    intent-end event's data."""
    events = await pipeline_events(
        hass, text, pipeline=async_get_pipeline(hass), conversation_id=conversation_id
    )
    (end,) = [e for e in events if e.type is PipelineEventType.INTENT_END]
    assert end.data is not None
    return end.data


def said(language: str, key: str, **placeholders: str) -> str:
    """The agent's message `key` in `language`, from its translations."""
    strings = json.loads((TRANSLATIONS / f"{language}.json").read_text("utf-8"))
    message: str = strings["exceptions"][key]["message"]
    return message.format(**placeholders)


def speech(end: dict[str, Any]) -> str:
    text: str = end["intent_output"]["response"]["speech"]["plain"]["speech"]
    return text


def model_asked(llm_server: FakeLLMServer) -> list[str]:
    """The user messages the model was sent (a warm-up carries none)."""
    return [
        str(m.get("content"))
        for request in llm_server.requests
        for m in request["messages"]
        if m.get("role") == "user"
    ]


def weather_words(city: str) -> str:
    condition, temperature = weather_for(city)
    return speakable(f"{city}: {condition}, {temperature}°C").rstrip(".") + "."


def demo_tool(name: str) -> dict[str, Any]:
    (tool,) = [t for t in tool_definitions("http://x") if t["name"] == name]
    return tool


async def test_the_readme_requests_are_answered_without_the_model(
    hass: HomeAssistant,
    demo_config: Path,
    llm_server: FakeLLMServer,
    tools: DemoToolServer,
) -> None:
    """The README's weather, list, add and notify requests: each matched by
    Home Assistant, its tool's request made, the read-out said, and no
    request reaches the model."""
    await start_demo(hass, demo_config)
    warm_ups = len(llm_server.requests)

    weather = await ask(hass, "What's the weather in Rome?")
    listed = await ask(hass, "What's on my shopping list?")
    added = await ask(hass, "Add bread to the demo shopping list.")
    sent = await ask(hass, "Send a notification saying the laundry is done.")

    assert len(llm_server.requests) == warm_ups
    assert all(
        end["processed_locally"] is True for end in (weather, listed, added, sent)
    )
    assert [r.target for r in tools.requests] == [
        "GET /weather/Rome",
        "GET /api/items",
        "POST /api/items",
        "POST /hook",
    ]
    assert speech(weather) == said(
        "en", "tool_result_only", result=weather_words("Rome")
    )
    assert speech(listed) == said(
        "en",
        "tool_result_only",
        result="3 items: apples (3), bananas (6) and milk (1).",
    )
    assert speech(added) == said("en", "tool_result_done", result="bread (1).")
    assert [i["name"] for i in tools.items.values()][-1] == "bread"
    assert tools.hooks == [{"message": "the laundry is done"}]
    assert speech(sent).startswith(said("en", "tool_result_done", result=""))


async def test_each_language_is_answered_in_its_words(
    hass: HomeAssistant,
    demo_config: Path,
    llm_server: FakeLLMServer,
    tools: DemoToolServer,
) -> None:
    """The same question in German, Spanish, French and Italian: matched,
    the city taken from the words, answered in that language's words."""
    await start_demo(hass, demo_config)
    warm_ups = len(llm_server.requests)
    asked = {
        "de": ("Wie ist das Wetter in München?", "München"),
        "es": ("¿Qué tiempo hace en Sevilla?", "Sevilla"),
        "fr": ("Quel temps fait-il à Lyon ?", "Lyon"),
        "it": ("Che tempo fa a Torino?", "Torino"),
    }
    for language, (question, city) in asked.items():
        end = await ask(hass, question)
        assert end["processed_locally"] is True, question
        assert speech(end) == said(
            language, "tool_result_only", result=weather_words(city)
        )
    assert len(llm_server.requests) == warm_ups
    assert [r.target for r in tools.requests] == [
        "GET /weather/München",
        "GET /weather/Sevilla",
        "GET /weather/Lyon",
        "GET /weather/Torino",
    ]


async def test_a_change_that_asks_first_asks_and_the_yes_runs_it(
    hass: HomeAssistant,
    demo_config: Path,
    llm_server: FakeLLMServer,
    tools: DemoToolServer,
) -> None:
    """ "Remove the bread." asks the tool's question and removes nothing; the
    "yes" in the same conversation reaches the agent, which runs exactly
    that call with no model request, and says what was removed."""
    await start_demo(hass, demo_config)
    warm_ups = len(llm_server.requests)
    await ask(hass, "Add bread to the demo shopping list.")
    (bread,) = [i for i in tools.items.values() if i["name"] == "bread"]

    asked = await ask(hass, "Remove the bread.")

    question = demo_tool("remove_item")["confirm_question"]
    assert speech(asked) == question.replace("{name}", "bread")
    assert asked["processed_locally"] is True
    assert bread["id"] in tools.items
    assert not any(r.method == "DELETE" for r in tools.requests)
    conversation_id = asked["intent_output"]["conversation_id"]

    answered = await ask(hass, "yes", conversation_id=conversation_id)

    assert answered["processed_locally"] is False  # the agent took the yes
    assert bread["id"] not in tools.items
    assert [r.target for r in tools.requests][-2:] == [
        "GET /api/items?search=bread",
        f"DELETE /api/items/{bread['id']}",
    ]
    assert speech(answered) == said("en", "tool_result_done", result="bread.")
    assert len(llm_server.requests) == warm_ups


async def test_a_no_removes_nothing(
    hass: HomeAssistant,
    demo_config: Path,
    llm_server: FakeLLMServer,
    tools: DemoToolServer,
) -> None:
    """A "no" to the question runs nothing, and the agent says so."""
    await start_demo(hass, demo_config)
    asked = await ask(hass, "Remove the milk from the demo shopping list.")
    conversation_id = asked["intent_output"]["conversation_id"]

    answered = await ask(hass, "no", conversation_id=conversation_id)

    assert speech(answered) == said("en", "confirm_declined")
    assert "milk" in [i["name"] for i in tools.items.values()]
    assert not any(r.method == "DELETE" for r in tools.requests)


async def test_what_no_sentence_says_goes_to_the_model(
    hass: HomeAssistant,
    demo_config: Path,
    llm_server: FakeLLMServer,
    tools: DemoToolServer,
) -> None:
    """A request none of the tools' sentences says reaches the agent and its
    model, as before."""
    await start_demo(hass, demo_config)
    llm_server.add(text_stream("Take one, just in case."))

    end = await ask(hass, "Do I need an umbrella in Rome?")

    assert end["processed_locally"] is False
    assert speech(end) == "Take one, just in case."
    assert "Do I need an umbrella in Rome?" in model_asked(llm_server)[-1]


async def test_the_sentences_follow_the_tools(
    hass: HomeAssistant,
    demo_config: Path,
    llm_server: FakeLLMServer,
    tools: DemoToolServer,
) -> None:
    """Tools replaced by `set_tools` bring their sentences (none here: the
    weather then goes to the model); `reset_tools` brings the demo's back;
    unloading the entry removes them."""
    await start_demo(hass, demo_config)
    manager = get_agent_manager(hass)
    assert "add {name} to [my|the] demo [shopping] list" in manager.trigger_sentences
    weather = {k: v for k, v in demo_tool("get_weather").items() if k != "sentences"}
    weather["url"] = tools.url + "/weather/{city}"
    await hass.services.async_call(
        DOMAIN, "set_tools", {"tools": [weather]}, blocking=True
    )
    assert manager.trigger_sentences == []
    llm_server.add(text_stream("Sunny."))
    end = await ask(hass, "What's the weather in Rome?")
    assert end["processed_locally"] is False

    await hass.services.async_call(DOMAIN, "reset_tools", {}, blocking=True)
    assert (await ask(hass, "What's the weather in Rome?"))["processed_locally"] is True

    (entry,) = hass.config_entries.async_entries(DOMAIN)
    assert await hass.config_entries.async_unload(entry.entry_id)
    assert manager.trigger_sentences == []


async def test_with_another_agent_an_asking_change_runs_nothing(
    hass: HomeAssistant,
    demo_config: Path,
    llm_server: FakeLLMServer,
    tools: DemoToolServer,
) -> None:
    """Through an assistant on Home Assistant's own agent, which cannot take
    the yes to this integration's question: the sentence says to ask our
    agent, and nothing is removed; a sentence that does not ask still runs."""
    await start_demo(hass, demo_config)
    store = hass.data[KEY_ASSIST_PIPELINE].pipeline_store
    theirs = await store.async_create_item(
        {
            "name": "Home Assistant's own",
            "language": "en",
            "conversation_engine": HOME_ASSISTANT_AGENT,
            "conversation_language": "en",
            "stt_engine": None,
            "stt_language": None,
            "tts_engine": None,
            "tts_voice": None,
            "tts_language": None,
            "wake_word_entity": None,
            "wake_word_id": None,
            "prefer_local_intents": False,
        }
    )

    async def ask_theirs(text: str) -> str:
        events = await pipeline_events(hass, text, pipeline=theirs)
        (end,) = [e for e in events if e.type is PipelineEventType.INTENT_END]
        assert end.data is not None
        return speech(end.data)

    assert await ask_theirs("Remove the milk.") == said(
        "en", "sentence_confirm_elsewhere"
    )
    assert "milk" in [i["name"] for i in tools.items.values()]
    assert await ask_theirs("What's the weather in Oslo?") == said(
        "en", "tool_result_only", result=weather_words("Oslo")
    )
    assert [r.target for r in tools.requests] == ["GET /weather/Oslo"]


async def test_a_word_after_the_city_is_not_the_city(
    hass: HomeAssistant,
    demo_config: Path,
    llm_server: FakeLLMServer,
    tools: DemoToolServer,
) -> None:
    """ "How's the weather in Oslo today?": the city is Oslo (the words after
    a wildcard the template names are not part of it)."""
    await start_demo(hass, demo_config)

    end = await ask(hass, "How's the weather in Oslo today?")

    assert speech(end) == said("en", "tool_result_only", result=weather_words("Oslo"))
    assert [r.target for r in tools.requests] == ["GET /weather/Oslo"]


async def test_an_enum_slot_is_a_list_and_the_tool_speaks_its_own_sentence(
    hass: HomeAssistant,
    demo_config: Path,
    llm_server: FakeLLMServer,
    tools: DemoToolServer,
) -> None:
    """A slot whose parameter has an enum matches only its values (the value
    said is the argument sent); the tool's own `speech` is the answer. A
    value outside the enum is no match: the model gets the request."""
    await start_demo(hass, demo_config)
    weather = {k: v for k, v in demo_tool("get_weather").items() if k != "sentences"}
    weather["url"] = tools.url + "/weather/{city}"
    weather["parameters"]["properties"]["unit"] = {
        "type": "string",
        "enum": ["celsius", "fahrenheit"],
    }
    weather["speech"] = "In short: {.}"
    weather["sentences"] = {"en": ["weather in {city} in {unit}"]}
    await hass.services.async_call(
        DOMAIN, "set_tools", {"tools": [weather]}, blocking=True
    )

    end = await ask(hass, "Weather in Rome in fahrenheit?")

    condition, temperature = weather_for("Rome")
    assert speech(end) == f"In short: Rome: {condition}, {temperature}°C"
    assert [r.target for r in tools.requests] == ["GET /weather/Rome?unit=fahrenheit"]
    llm_server.add(text_stream("No such unit."))
    assert (await ask(hass, "Weather in Rome in kelvin?"))["processed_locally"] is False
    assert len(tools.requests) == 1


async def test_a_change_that_asks_is_not_left_for_later(
    hass: HomeAssistant,
    demo_config: Path,
    llm_server: FakeLLMServer,
    tools: DemoToolServer,
) -> None:
    """A later time said with a change that asks first: nobody could say
    yes then, so it is no delayed command of Home Assistant's; the agent
    says so and nothing is removed, now or later."""
    await start_demo(hass, demo_config)
    warm_ups = len(llm_server.requests)

    before = await ask(
        hass, "In 5 minutes remove the milk from the demo shopping list."
    )
    after = await ask(
        hass, "Remove the milk from the demo shopping list in ten minutes."
    )
    german = await ask(
        hass, "In zehn Minuten entferne die Milch von der Demo Einkaufsliste."
    )

    assert speech(before) == said("en", "not_later")
    assert speech(after) == said("en", "not_later")
    assert speech(german) == said("de", "not_later")
    assert not hass.data[TIMER_DATA].timers
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(minutes=11))
    await hass.async_block_till_done()
    assert "milk" in [i["name"] for i in tools.items.values()]
    assert not any(r.method == "DELETE" for r in tools.requests)
    assert len(llm_server.requests) == warm_ups


async def test_a_delayed_change_runs_its_tool_when_its_time_comes(
    hass: HomeAssistant,
    demo_config: Path,
    llm_server: FakeLLMServer,
    tools: DemoToolServer,
) -> None:
    """A change that needs no yes may wait: Home Assistant's delayed
    command hands it to the agent in five minutes, and the agent answers it
    with the tool's own sentence, no model asked."""
    await start_demo(hass, demo_config)
    warm_ups = len(llm_server.requests)

    await ask(hass, "In five minutes add bread to the demo shopping list.")

    assert "bread" not in [i["name"] for i in tools.items.values()]
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(minutes=6))
    # The command runs as a background task of Home Assistant's.
    for _ in range(50):
        await hass.async_block_till_done()
        if tools.requests:
            break
        await asyncio.sleep(0.1)
    assert [r.target for r in tools.requests] == ["POST /api/items"]
    assert "bread" in [i["name"] for i in tools.items.values()]
    assert len(llm_server.requests) == warm_ups


async def test_a_sentence_said_to_the_agent_itself_needs_no_model(
    hass: HomeAssistant,
    demo_config: Path,
    llm_server: FakeLLMServer,
    tools: DemoToolServer,
) -> None:
    """Asked of the agent directly (the REST API, `conversation.process`),
    a tool's sentence is answered as through the pipeline."""
    await start_demo(hass, demo_config)
    warm_ups = len(llm_server.requests)
    (agent,) = [
        s.entity_id
        for s in hass.states.async_all("conversation")
        if s.entity_id != HOME_ASSISTANT_AGENT
    ]

    result = await conversation.async_converse(
        hass, "What's the weather in Rome?", None, Context(), "en", agent_id=agent
    )

    assert result.response.speech["plain"]["speech"] == said(
        "en", "tool_result_only", result=weather_words("Rome")
    )
    assert [r.target for r in tools.requests] == ["GET /weather/Rome"]
    assert len(llm_server.requests) == warm_ups
