"""What the user hears after an Assist intent ran: the sentence Home
Assistant's own agent says for it, in the user's language ("Turned on the
lights", "Ho spento le luci in Cucina"), never the intent's result as keys
("response type action_done, data success …"). With the small profile it
is the answer (no request for one); for a capable model only the read-out
when the model says nothing. A failed intent is never said as done. Core's
demo lights are the house; the model is a scripted server through the real
openai client."""

from __future__ import annotations

from typing import Any

from homeassistant.components import conversation
from homeassistant.const import CONF_LLM_HASS_API
from homeassistant.core import Context, HomeAssistant, State
from homeassistant.helpers import (
    area_registry as ar,
    device_registry as dr,
    entity_registry as er,
    floor_registry as fr,
    intent,
    llm,
)
import pytest

from custom_components.http_tools_agent.const import CONF_PROFILE
from custom_components.http_tools_agent.turn.intent_speech import (
    async_intent_speech,
    response_keys,
)

from .house import async_demo_house
from .kit import (
    API_ID,
    agent_with_tools,
    converse,
    speech,
)
from .said import failed
from .servers import (
    FakeLLMServer,
    Reply,
    completion,
    text_stream,
    tool_calls_stream,
)

KITCHEN = "light.kitchen_lights"


async def setup(hass: HomeAssistant, llm_server: FakeLLMServer, profile: str) -> None:
    """The demo house with the kitchen lights in a "Cucina" area, and an
    agent with Assist of the given profile."""
    await async_demo_house(hass)
    area = ar.async_get(hass).async_create("Cucina")
    light = er.async_get(hass).async_get(KITCHEN)
    assert light is not None
    assert light.device_id is not None
    dr.async_get(hass).async_update_device(light.device_id, area_id=area.id)
    await agent_with_tools(
        hass,
        llm_server.base_url,
        agent={CONF_PROFILE: profile, CONF_LLM_HASS_API: [API_ID, llm.LLM_API_ASSIST]},
    )


async def ask(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    profile: str,
    request_text: str,
    *replies: Reply,
    language: str = "en",
) -> conversation.ConversationResult:
    """The house and an agent of `profile`, the model's `replies` scripted,
    `request_text` said in `language`."""
    await setup(hass, llm_server, profile)
    llm_server.add(*replies)
    return await converse(hass, request_text, language=language)


# A capable model that writes nothing after the call, its retries too.
SILENT = (text_stream(""), completion(""), text_stream(""), completion(""))


def state_of(hass: HomeAssistant, entity_id: str) -> str:
    state = hass.states.get(entity_id)
    assert state is not None, entity_id
    return state.state


async def switch(hass: HomeAssistant, service: str) -> None:
    await hass.services.async_call(
        "light", service, {"entity_id": KITCHEN}, blocking=True
    )


@pytest.mark.parametrize(
    ("language", "request_text", "call", "spoken"),
    [
        (
            "en",
            "Turn on the kitchen lights.",
            ("HassTurnOn", {"name": "Kitchen Lights"}),
            "Turned on the light",
        ),
        (
            "en",
            "Turn on the lights in the cucina.",
            ("HassTurnOn", {"area": "Cucina", "domain": ["light"]}),
            "Turned on the lights",
        ),
        (
            "it",
            "Accendi la luce della cucina.",
            ("HassTurnOn", {"name": "Kitchen Lights"}),
            "Ho acceso Kitchen Lights",
        ),
        (
            "it",
            "Accendi le luci in cucina.",
            ("HassTurnOn", {"area": "Cucina", "domain": "light"}),
            "Ho acceso le luci in Cucina",
        ),
    ],
)
async def test_small_profile_says_what_home_assistant_says(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    language: str,
    request_text: str,
    call: tuple[str, dict[str, Any]],
    spoken: str,
) -> None:
    """The intent's response template is the answer: one request, no
    second one for the model's words."""
    await setup(hass, llm_server, "small")
    await switch(hass, "turn_off")
    llm_server.add(tool_calls_stream(call))

    result = await converse(hass, request_text, language=language)

    assert state_of(hass, KITCHEN) == "on"
    assert speech(result) == spoken
    assert len(llm_server.requests) == 1


@pytest.mark.parametrize(
    ("language", "request_text", "spoken"),
    [
        ("en", "Dim the kitchen lights to 30 percent.", "Brightness set"),
        (
            "it",
            "Abbassa la luce della cucina al 30 per cento.",
            "Ho impostato la luminosità di Kitchen Lights al 30",
        ),
    ],
)
async def test_the_response_named_after_the_slot_that_was_set(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    language: str,
    request_text: str,
    spoken: str,
) -> None:
    """HassLightSet with a brightness: its `brightness` response."""
    result = await ask(
        hass,
        llm_server,
        "small",
        request_text,
        tool_calls_stream(
            ("HassLightSet", {"name": "Kitchen Lights", "brightness": 30})
        ),
        language=language,
    )

    assert speech(result) == spoken
    assert len(llm_server.requests) == 1


async def test_two_intents_each_say_their_sentence(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """Two calls in one round: both sentences, each ending as a sentence."""
    result = await ask(
        hass,
        llm_server,
        "small",
        "Turn off the kitchen lights and turn on the bed light.",
        tool_calls_stream(
            ("HassTurnOff", {"name": "Kitchen Lights"}),
            ("HassTurnOn", {"name": "Bed Light"}),
        ),
    )

    assert speech(result) == "Turned off the light. Turned on the light."
    assert state_of(hass, KITCHEN) == "off"


@pytest.mark.parametrize(
    ("language", "request_text"),
    [("en", "Turn on the garage heater."), ("it", "Accendi la stufa del garage.")],
)
async def test_a_failed_intent_is_never_said_as_done(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    language: str,
    request_text: str,
) -> None:
    """No device of that name: not "Turned on", whatever the model writes."""
    result = await ask(
        hass,
        llm_server,
        "small",
        request_text,
        tool_calls_stream(("HassTurnOn", {"name": "Garage Heater"})),
        *[text_stream("Turned on the garage heater.")] * 4,
        language=language,
    )

    assert speech(result) == failed("reason_no_device", language)
    assert "Turned on" not in speech(result)


@pytest.mark.parametrize(
    ("request_text", "ran"),
    [
        ("Kitchen lights off.", True),
        ("Lights off in the kitchen, please.", True),
        # Words about a person, and a question: no change asked for.
        ("I'm off to bed.", False),
        ("Kitchen lights off?", False),
    ],
)
async def test_a_thing_switched_without_a_verb_is_a_change_asked_for(
    hass: HomeAssistant, llm_server: FakeLLMServer, request_text: str, ran: bool
) -> None:
    """The small profile runs no change a request does not ask for; "Kitchen
    lights off." asks for one without a verb, and gets it."""
    await setup(hass, llm_server, "small")
    await switch(hass, "turn_on")
    llm_server.add(
        tool_calls_stream(("HassTurnOff", {"name": "Kitchen Lights"})),
        *[text_stream("The kitchen lights are off.")] * 4,
    )

    result = await converse(hass, request_text)

    assert state_of(hass, KITCHEN) == ("off" if ran else "on")
    if ran:
        assert speech(result) == "Turned off the light"


async def test_a_capable_model_still_answers(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """A capable model's answer stands; the template is no answer of its."""
    result = await ask(
        hass,
        llm_server,
        "capable",
        "Turn off the kitchen lights.",
        tool_calls_stream(("HassTurnOff", {"name": "Kitchen Lights"})),
        text_stream("The kitchen is dark now."),
    )

    assert speech(result) == "The kitchen is dark now."
    assert len(llm_server.requests) == 2


@pytest.mark.parametrize(
    ("language", "request_text", "spoken"),
    [
        ("en", "Turn off the lights in the cucina.", "Turned off the lights."),
        ("it", "Spegni le luci della cucina.", "Ho spento le luci in Cucina."),
    ],
)
async def test_the_read_out_of_a_silent_model(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    language: str,
    request_text: str,
    spoken: str,
) -> None:
    """A capable model that says nothing after the intent: the agent says
    Home Assistant's sentence, not "Done: response type action_done …"."""
    result = await ask(
        hass,
        llm_server,
        "capable",
        request_text,
        tool_calls_stream(("HassTurnOff", {"area": "Cucina", "domain": "light"})),
        *SILENT,
        language=language,
    )

    assert speech(result) == spoken
    assert state_of(hass, KITCHEN) == "off"


async def test_a_language_without_templates_names_what_was_done(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """No response templates in the user's language: the names of what the
    intent acted on, never its keys."""
    # Words of no language the agent knows: the pipeline's language stands.
    result = await ask(
        hass,
        llm_server,
        "capable",
        "Kitchen lights off.",
        tool_calls_stream(("HassTurnOff", {"name": "Kitchen Lights"})),
        *SILENT,
        language="tlh",
    )

    assert speech(result) == "Done: Kitchen Lights."
    assert "response" not in speech(result)


@pytest.mark.parametrize(
    ("intent", "slots", "domains", "first"),
    [
        ("HassTurnOn", {"name": "Garage Door"}, {"cover"}, "cover"),
        ("HassTurnOn", {"device_class": "garage"}, {"cover"}, "cover_device_class"),
        ("HassTurnOff", {"floor": "Upstairs"}, {"light"}, "lights_floor"),
        ("HassTurnOff", {"domain": "light"}, {"light"}, "light_all"),
        ("HassTurnOn", {"area": "Kitchen"}, {"fan"}, "fans_area"),
        ("HassGetState", {"name": "Front Door", "state": "locked"}, set(), "one_yesno"),
        ("HassGetState", {"name": "Front Door"}, set(), "one"),
        ("HassGetState", {"state": "on", "domain": "light"}, {"light"}, "any"),
        ("HassLightSet", {"area": "Kitchen", "color": "red"}, {"light"}, "color_area"),
    ],
)
def test_the_response_key_follows_what_the_call_targeted(
    intent: str, slots: dict[str, Any], domains: set[str], first: str
) -> None:
    """A call matched no sentence: its response is chosen by what it set."""
    assert response_keys(intent, slots, domains)[0] == first


def intent_result(
    hass: HomeAssistant,
    intent_type: str,
    slots: dict[str, Any],
    states: list[State],
    language: str,
    *,
    failed: bool = False,
) -> conversation.ToolResultContent:
    """An intent's result as the chat log holds it, as Assist's tool gives
    it (`failed`: it matched no device)."""
    call = intent.Intent(
        hass,
        "test",
        intent_type,
        {name: {"value": value} for name, value in slots.items()},
        None,
        Context(),
        language,
    )
    response = call.create_response()
    response.async_set_states(states)
    if failed:
        response.async_set_error(
            intent.IntentResponseErrorCode.NO_VALID_TARGETS, "No device"
        )
    return conversation.ToolResultContent(
        agent_id="conversation.agent",
        tool_call_id=f"call_{intent_type}",
        tool_name=f"assist__{intent_type}",
        result=llm.ToolResult(data=llm.IntentResponseDict(response)),
    )


@pytest.mark.parametrize(
    ("language", "intent_type", "slots", "domain", "said"),
    [
        # The one sentence of an intent, whatever the call set.
        ("en", "HassShoppingListAddItem", {"item": "milk"}, None, "Added milk"),
        (
            "it",
            "HassListAddItem",
            {"item": "latte", "name": "Spesa"},
            None,
            "Aggiunto latte",
        ),
        # The floor's name, not the id the intent's handler put in its slot.
        (
            "it",
            "HassTurnOff",
            {"floor": "piano_terra", "domain": "light"},
            None,
            "Ho spento le luci in Piano terra",
        ),
        # With no state matched, the call's domain says what was targeted.
        (
            "en",
            "HassTurnOff",
            {"domain": ["light"]},
            None,
            "Turned off all of the lights",
        ),
        # A template that needs a slot the call did not set is no sentence...
        ("it", "HassTurnOn", {"domain": "light"}, "light", None),
        # ... nor one that says "None" of a kind it has no word for.
        ("en", "HassTurnOn", {"name": "Note"}, "input_text", None),
        # No templates for the intent at all.
        ("en", "HassNoSuchIntent", {"name": "Note"}, None, None),
    ],
)
async def test_the_sentence_of_one_result(
    hass: HomeAssistant,
    language: str,
    intent_type: str,
    slots: dict[str, Any],
    domain: str | None,
    said: str | None,
) -> None:
    """What Home Assistant's agent says of one intent's result, or None
    (the read-out then names what it acted on)."""
    assert fr.async_get(hass).async_create("Piano terra").floor_id == "piano_terra"
    states = [State(f"{domain}.thing", "on")] if domain else []
    content = intent_result(hass, intent_type, slots, states, language)

    speech_of = await async_intent_speech(hass, language)

    assert speech_of.sentence(content) == said


async def test_the_handlers_own_words_come_first(hass: HomeAssistant) -> None:
    """An intent whose handler said something itself is said so."""
    content = intent_result(hass, "HassGetCurrentTime", {}, [], "en")
    content.result.data.original.async_set_speech("It is 10:02")  # type: ignore[attr-defined]

    speech_of = await async_intent_speech(hass, "en")

    assert speech_of.sentence(content) == "It is 10:02"


async def test_a_failed_intent_has_no_sentence(hass: HomeAssistant) -> None:
    """An error response is never said with the intent's success words."""
    content = intent_result(
        hass, "HassTurnOn", {"name": "Bed Light"}, [], "en", failed=True
    )

    speech_of = await async_intent_speech(hass, "en")

    assert speech_of.sentence(content) is None
