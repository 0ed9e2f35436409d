"""Say only what happened, in every turn of a conversation.

Replays through the real openai client of what Qwen2.5-0.5B wrote (the
sequence of issue 20): a follow-up that narrates a call is asked again, and
the retry's call runs; a second narration ends in "nothing was done", never
the narration; a confirmation of an action no tool did is not spoken (the
small profile); the agent's own read-outs sound like an answer in three
languages and never reach later requests as words the model wrote.
"""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.http_tools_agent.const import (
    CONF_HISTORY,
    CONF_PROFILE,
)
from custom_components.http_tools_agent.turn.honesty import (
    NARRATION_OPENERS,
    NARRATION_TRIGGER,
    SpokenCheck,
    Withheld,
    asks_for_action,
    claims_action,
    echoes_instruction,
    makes_up_result,
    narrates_call,
)
from custom_components.http_tools_agent.turn.request import RETRY_NUDGES
from dev.tool_server import DEMO_TOOLS, DemoToolServer, weather_for

from .kit import (
    agent_with_tools,
    converse,
    run_at_once,
    speech,
)
from .markup import assert_clean
from .said import said
from .servers import FakeLLMServer, completion, text_stream, tool_calls_stream

NAMES = [*DEMO_TOOLS, "intent__HassTurnOn"]


@pytest.mark.parametrize(
    "text",
    [
        "Done. The tool delete_item called with id 3.",
        "Done. The tool get weather returned: Oslo.",
        "I'll call the get_weather tool for Oslo.",
        "Calling the function now.",
        "I used the add_item tool to add eggs.",
        "Ho chiamato lo strumento add_item.",
        "Uso la herramienta delete_item con id 3.",
        "HassTurnOn(name='kitchen light')",
        "delete_item with id 3",
    ],
)
def test_narrations(text: str) -> None:
    assert narrates_call(text, NAMES)


@pytest.mark.parametrize(
    "text",
    [
        "Rome: sunny, 16 °C.",
        "I can tell you the weather and manage your shopping list.",
        "On your list: apples (3), bananas (6), milk (1).",
        "Il tempo a Roma è soleggiato.",
        "Hola, ¿en qué puedo ayudarte?",
        # Asked "Who are you?", a model lists what it can do.
        "I can use get_weather and list_items for you.",
    ],
)
def test_answers_are_no_narrations(text: str) -> None:
    assert not narrates_call(text, NAMES)


@pytest.mark.parametrize(
    "text",
    [
        "The batteries have been added to the inventory.",
        "I've removed milk from your list.",
        "Done, item 3 deleted.",
        "The kitchen light is now on.",
        "La luce della cucina è accesa.",
        "Ho aggiunto le uova alla lista.",
        "He borrado el artículo 1.",
        "The user has added 3 bread items to their shopping list.",
        "Added bananas back.",
        "La luz está encendida.",
        "The milk is now in the shopping list.",
        "Eggs are now on your list.",
    ],
)
def test_claims(text: str) -> None:
    assert claims_action(text)


@pytest.mark.parametrize(
    "text",
    [
        "Rome: sunny, 16 °C.",
        "Your list has apples, bananas and milk.",
        "I can't delete that item.",
        "Che tempo fa? Sole.",
    ],
)
def test_answers_are_no_claims(text: str) -> None:
    assert not claims_action(text)


def test_actions_and_questions() -> None:
    assert asks_for_action("Add eggs to the list.")
    assert asks_for_action("Accendi la luce della cucina.")
    assert asks_for_action("Borra el artículo 1.")
    assert not asks_for_action("What's the weather in Rome?")
    assert not asks_for_action("Is the kitchen light on?")
    assert not asks_for_action("Cosa c'è nella lista della spesa?")


def test_instruction_echoes() -> None:
    assert echoes_instruction('The user\'s question is "Add coffee to the list."')
    assert echoes_instruction("The tool response provides the weather.")
    assert not echoes_instruction("Rome is sunny.")


def test_sentences_are_held_until_whole_and_checked() -> None:
    """Words are spoken sentence by sentence; from a narration on, nothing."""
    check = SpokenCheck(
        lambda s: Withheld.NARRATION if narrates_call(s, NAMES) else None
    )
    spoken = check.feed("Sure, I can help you with that. I will ")
    spoken += check.feed("call the delete_item tool. Then ")
    spoken += check.feed("it is gone.")
    spoken += check.finish()

    assert spoken == "Sure, I can help you with that. "
    assert check.reason is Withheld.NARRATION
    assert check.withheld == "I will call the delete_item tool. Then it is gone."


def test_a_short_sentence_waits_for_the_next() -> None:
    """ "Done." alone says too little: it is judged with what follows."""
    check = SpokenCheck(
        lambda s: Withheld.NARRATION if narrates_call(s, NAMES) else None
    )
    spoken = check.feed("Done. ") + check.feed("The tool get_weather returned: Oslo.")
    spoken += check.finish()

    assert spoken == ""
    assert check.withheld == "Done. The tool get_weather returned: Oslo."


def test_a_plain_answer_is_spoken_as_it_comes_when_only_narration_is_checked() -> None:
    """A capable model's answer reaches the chat as it streams: with the
    narration trigger, words are held only once a sentence could be one."""
    check = SpokenCheck(
        lambda s: Withheld.NARRATION if narrates_call(s, NAMES) else None,
        NARRATION_TRIGGER,
        (*NARRATION_OPENERS, *NAMES),
    )
    first = check.feed("Rome is sun")
    second = check.feed("ny today, 20 degrees")
    rest = check.feed(" and calm.") + check.finish()

    assert first == "Rome is sun"
    assert second == "ny today, 20 degrees"
    assert first + second + rest == "Rome is sunny today, 20 degrees and calm."
    assert check.reason is None


def test_a_narration_is_still_held_whole_with_the_trigger() -> None:
    """The words a narration opens with hold it, so no fragment of it is
    spoken ("Sure, I will call the")."""
    check = SpokenCheck(
        lambda s: Withheld.NARRATION if narrates_call(s, NAMES) else None,
        NARRATION_TRIGGER,
        (*NARRATION_OPENERS, *NAMES),
    )
    spoken = check.feed("Sure, I wi") + check.feed("ll cal")
    spoken += check.feed("l the delete_item tool.") + check.finish()

    assert spoken == ""
    assert check.reason is Withheld.NARRATION
    assert "delete_item" in check.withheld


def test_a_word_that_may_become_a_tool_name_waits() -> None:
    """ "delete" may be the start of "delete_item(": it is not spoken until
    the next characters say it is not."""
    check = SpokenCheck(
        lambda s: Withheld.NARRATION if narrates_call(s, NAMES) else None,
        NARRATION_TRIGGER,
        (*NARRATION_OPENERS, "delete_item"),
    )
    assert check.feed("Rome: delete") == "Rome: "
    assert check.feed("d for good.") == "deleted for good."


# --- turns -------------------------------------------------------------------


async def setup(
    hass: HomeAssistant, llm_server: FakeLLMServer, items: DemoToolServer, **agent: Any
) -> MockConfigEntry:
    return await agent_with_tools(
        hass,
        llm_server.base_url,
        run_at_once(items.tools(list(DEMO_TOOLS), sentences=False)),
        agent=agent,
    )


def last_user(body: dict[str, Any]) -> str:
    text: str = next(m for m in reversed(body["messages"]) if m["role"] == "user")[
        "content"
    ]
    return text


@pytest.mark.parametrize("profile", ["small", "capable"])
async def test_a_narrated_call_is_asked_again_and_the_call_runs(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    items: DemoToolServer,
    chat_contents: list[dict[str, Any]],
    profile: str,
) -> None:
    """Turn 1 reads the list; turn 2 narrates the delete (the model copied a
    read-out): it is not spoken, the request is asked again saying why, and
    the call the model then makes runs."""
    await setup(hass, llm_server, items, **{CONF_PROFILE: profile})
    llm_server.add(
        tool_calls_stream(("list_items", {})),
        # Small: the agent reads the list out itself (`Rules.own_answer`).
        *(
            ()
            if profile == "small"
            else (text_stream("On your list: apples (3), bananas (6), milk (1)."),)
        ),
        text_stream("Done. The tool delete_item ", "called with id 3."),
        tool_calls_stream(("delete_item", {"id": "3"})),
        text_stream("Item 3 is gone."),
    )
    first = await converse(hass, "What's on my shopping list?")

    result = await converse(
        hass, "Delete item 3.", conversation_id=first.conversation_id
    )

    assert [r.target for r in items.requests] == [
        "GET /api/items",
        "DELETE /api/items/3",
    ]
    # Asked again, saying why (small: "Done." is also a claim of a delete
    # no tool did).
    retry = llm_server.requests[2 if profile == "small" else 3]
    assert last_user(retry).startswith("Delete item 3.\n\n")
    assert last_user(retry).removeprefix("Delete item 3.\n\n") in (
        RETRY_NUDGES[Withheld.NARRATION],
        RETRY_NUDGES[Withheld.CLAIM],
    )
    assert "called with" not in speech(result)
    shown = " ".join(c.get("content") or "" for c in chat_contents)
    assert "delete_item" not in shown
    if profile == "small":
        # The delete asked for, said by what it did (`Rules.own_answer`).
        assert speech(result) == said("removed", name="milk")
    else:
        assert speech(result) == "Item 3 is gone."


async def test_a_second_narration_says_nothing_was_done(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    items: DemoToolServer,
    chat_contents: list[dict[str, Any]],
) -> None:
    entry = await setup(hass, llm_server, items, **{CONF_PROFILE: "small"})
    llm_server.add(
        text_stream("Done. The tool get_weather called with city Oslo."),
        text_stream("The tool get_weather called with city Oslo."),
    )

    result = await converse(hass, "What's the weather in Oslo?")

    assert items.requests == []
    # A question: never an action's wording.
    assert speech(result) == said("no_result")
    assert all("get_weather" not in (c.get("content") or "") for c in chat_contents)
    assert entry.runtime_data.model_quirks["narrated_call"] == 2


@pytest.mark.parametrize(
    ("language", "request_text", "spoken_in"),
    [
        ("it", "Aggiungi le uova.", "it"),
        ("es", "Añade los huevos.", "es"),
        # Asked in Italian of an English pipeline: said in Italian.
        ("en", "Aggiungi le uova alla lista.", "it"),
    ],
)
async def test_nothing_done_in_the_users_language(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    items: DemoToolServer,
    language: str,
    request_text: str,
    spoken_in: str,
) -> None:
    await setup(hass, llm_server, items, **{CONF_PROFILE: "small"})
    llm_server.add(
        text_stream("Ho chiamato lo strumento add_item."),
        text_stream("Ho chiamato lo strumento add_item."),
    )

    result = await converse(hass, request_text, language=language)

    assert speech(result) == said("nothing_done", spoken_in)


async def test_a_claim_without_a_call_is_asked_again_under_the_small_rules(
    hass: HomeAssistant, llm_server: FakeLLMServer, items: DemoToolServer
) -> None:
    """ "Add an item called batteries." -> "The batteries have been added to
    the inventory." with no request: not spoken; asked again, the model
    calls, the item is added."""
    entry = await setup(hass, llm_server, items, **{CONF_PROFILE: "small"})
    llm_server.add(
        text_stream("The batteries have been added to the inventory."),
        tool_calls_stream(("add_item", {"name": "batteries"})),
    )

    result = await converse(hass, "Add an item called batteries.")

    assert [r.target for r in items.requests] == ["POST /api/items"]
    assert last_user(llm_server.requests[1]).endswith(RETRY_NUDGES[Withheld.CLAIM])
    # The add asked for, read out (`Rules.own_answer`): no request after it.
    assert speech(result) == said("tool_result_done", result="batteries (1).")
    assert len(llm_server.requests) == 2
    assert entry.runtime_data.model_quirks["claim_without_call"] == 1


async def test_a_claim_twice_says_nothing_was_done(
    hass: HomeAssistant, llm_server: FakeLLMServer, items: DemoToolServer
) -> None:
    await setup(hass, llm_server, items, **{CONF_PROFILE: "small"})
    llm_server.add(
        text_stream("Done, item 3 deleted."),
        text_stream("Item 3 has been deleted."),
    )

    result = await converse(hass, "Delete item 3.")

    assert items.requests == []
    assert speech(result) == said("nothing_done")


async def test_after_a_read_nothing_done_never_says_no_tool_ran(
    hass: HomeAssistant, llm_server: FakeLLMServer, items: DemoToolServer
) -> None:
    """The list was read, then the model claimed the delete twice: a tool
    did run, so the agent says only that it did not do it."""
    await setup(hass, llm_server, items, **{CONF_PROFILE: "small"})
    llm_server.add(
        tool_calls_stream(("list_items", {})),
        text_stream("Done, the milk is deleted."),
        text_stream("The milk has been deleted."),
        text_stream("The milk has been deleted."),
    )

    result = await converse(hass, "Delete the milk.")

    assert [r.target for r in items.requests] == ["GET /api/items"]
    assert speech(result) == said("not_done")


@pytest.mark.parametrize("profile", ["small", "capable"])
@pytest.mark.parametrize(
    ("request_text", "read", "target"),
    [
        ("Add coffee to the list.", ("list_items", {}), "GET /api/items"),
        # A thing switched without a verb asks for a change too.
        (
            "Lights on in the kitchen, please.",
            ("get_weather", {"city": "kitchen"}),
            "GET /weather/kitchen",
        ),
    ],
)
async def test_a_change_asked_for_and_not_run_is_never_a_read_out_of_other_results(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    items: DemoToolServer,
    profile: str,
    request_text: str,
    read: tuple[str, dict[str, Any]],
    target: str,
) -> None:
    """ "Add coffee to the list." drew only the list's read and no answer:
    the agent says the add was not done, never "apples (3), bananas (6),
    milk (1)." as if that answered it; nor "kitchen: windy, 25°C." for
    lights asked for."""
    await setup(hass, llm_server, items, **{CONF_PROFILE: profile})
    # Each empty streamed answer is asked for again, unstreamed: empty too.
    empty = (text_stream(" "), completion(" ", [], "stop"))
    llm_server.add(tool_calls_stream(read), *empty, *empty, *empty)

    result = await converse(hass, request_text)

    assert [r.target for r in items.requests] == [target]
    assert speech(result) == said("not_done")


async def test_a_capable_models_claims_are_its_own(
    hass: HomeAssistant, llm_server: FakeLLMServer, items: DemoToolServer
) -> None:
    """The claim rule is a small-model rule: a capable model's words stand."""
    await setup(hass, llm_server, items, **{CONF_PROFILE: "capable"})
    llm_server.add(text_stream("I have added it already, earlier today."))

    result = await converse(hass, "Add eggs.")

    assert speech(result) == "I have added it already, earlier today."


async def test_a_json_reply_is_not_spoken(
    hass: HomeAssistant, llm_server: FakeLLMServer, items: DemoToolServer
) -> None:
    """A follow-up answered with a bare JSON object: no speech; the agent
    reads the result instead."""
    await setup(hass, llm_server, items, **{CONF_PROFILE: "small"})
    llm_server.add(
        tool_calls_stream(("add_item", {"name": "apples and pears", "qty": 2})),
        text_stream('{"id": "1234567890", "qty": 2, "name": "Apples and Pears"}'),
        text_stream('{"id": "1234567890", "qty": 2, "name": "Apples and Pears"}'),
    )

    result = await converse(hass, "Add two apples and pears.")

    assert [r.target for r in items.requests] == ["POST /api/items"]
    assert speech(result) == "Done: apples and pears (2)."
    assert_clean(speech(result), "{")


async def test_the_instruction_restated_is_not_spoken(
    hass: HomeAssistant, llm_server: FakeLLMServer, items: DemoToolServer
) -> None:
    await setup(hass, llm_server, items, **{CONF_PROFILE: "small"})
    llm_server.add(
        tool_calls_stream(("add_item", {"name": "coffee"})),
        text_stream(
            'The user\'s question is "Add coffee to the list." The tool response '
            "provides the new item."
        ),
        text_stream('The user asked: "Add coffee to the list."'),
    )

    result = await converse(hass, "Add coffee to the list.")

    assert speech(result) == "Done: coffee (1)."


@pytest.mark.parametrize(
    ("language", "asked", "weather", "listed"),
    [
        (
            "en",
            "My list?",
            "Rome: +14°C.",
            "3 items: apples (3), bananas (6) and milk (1).",
        ),
        (
            "it",
            "Cosa c'è nella lista?",
            "Rome: +14°C.",
            "3 elementi: apples (3), bananas (6) e milk (1).",
        ),
        (
            "es",
            "¿Qué hay en mi lista?",
            "Rome: +14°C.",
            "3 elementos: apples (3), bananas (6) y milk (1).",
        ),
    ],
)
async def test_read_outs_sound_like_an_answer(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    items: DemoToolServer,
    language: str,
    asked: str,
    weather: str,
    listed: str,
) -> None:
    """A model that ran tools but writes no answer: the agent reads the
    results, as an answer in the user's language, short enough to speak."""
    await setup(hass, llm_server, items, **{CONF_PROFILE: "small"})
    # Asked for the answer, then to close: no words, streamed or not.
    silence = [text_stream(), completion(""), text_stream(), completion("")]
    spoken = []
    for question, call in (
        ("Rome?", ("get_weather", {"city": "Rome"})),
        (asked, ("list_items", {})),
        ("Add eggs.", ("add_item", {"name": "eggs"})),
        ("Kiwi?", ("list_items", {"search": "kiwi"})),
    ):
        llm_server.add(tool_calls_stream(call), *silence)
        spoken.append(speech(await converse(hass, question, language=language)))
        llm_server.replies.clear()

    assert spoken[1:] == [
        listed,
        said("tool_result_done", language, result="eggs (1)."),
        said("tool_result_empty", language),
    ]
    assert spoken[0].startswith("Rome:")


async def test_the_agents_words_never_reach_the_model_as_its_own(
    hass: HomeAssistant, llm_server: FakeLLMServer, items: DemoToolServer
) -> None:
    """A read-out stands in later requests as the results in words; an
    agent's message of a turn without calls leaves that turn out (with
    every earlier turn sent: the small profile sends none by default)."""
    await setup(hass, llm_server, items, **{CONF_PROFILE: "small", CONF_HISTORY: "all"})
    llm_server.add(
        tool_calls_stream(("list_items", {})),
        text_stream(),
        completion(""),
        text_stream(),
        completion(""),
    )
    first = await converse(hass, "What's on my shopping list?")
    assert speech(first) == "3 items: apples (3), bananas (6) and milk (1)."
    llm_server.replies.clear()
    llm_server.add(text_stream(), completion(""))
    second = await converse(hass, "Hello?", conversation_id=first.conversation_id)
    assert speech(second) == said("empty_answer")
    llm_server.replies.clear()
    llm_server.add(text_stream("Bye!"))

    await converse(hass, "Bye.", conversation_id=first.conversation_id)

    sent = llm_server.requests[-1]["messages"]
    texts = [m.get("content") or "" for m in sent if m["role"] == "assistant"]
    assert "3 items: apples (3), bananas (6) and milk (1)." in texts
    assert not any("model gave no answer" in t for t in texts)
    assert [m["content"] for m in sent if m["role"] == "user"] == [
        "What's on my shopping list?",
        "Bye.",
    ]


async def test_a_json_object_for_an_answer_is_asked_again(
    hass: HomeAssistant, llm_server: FakeLLMServer, items: DemoToolServer
) -> None:
    """A follow-up answered with a JSON object and no call (issue 20's
    `{"id": "1234567890", …}`): not spoken; asked once more for words."""
    await setup(hass, llm_server, items, **{CONF_PROFILE: "small"})
    llm_server.add(
        text_stream('{"id": "1234567890", "qty": 2, "name": "Apples and Pears"}'),
        tool_calls_stream(("add_item", {"name": "apples and pears", "qty": 2})),
        text_stream("Apples and pears are on your list."),
        text_stream("Apples and pears are on your list."),
    )

    result = await converse(hass, "Add two apples and pears.")

    assert last_user(llm_server.requests[1]).endswith(RETRY_NUDGES[Withheld.NOT_SPEECH])
    assert [r.target for r in items.requests] == ["POST /api/items"]
    assert speech(result) == "Apples and pears are on your list."


async def test_closing_braces_for_an_answer_are_no_speech(
    hass: HomeAssistant, llm_server: FakeLLMServer, items: DemoToolServer
) -> None:
    """The plain loop on the 0.5B model: given Napoli's weather, it answered
    "}" three times. The braces are never spoken: asked once more, it
    writes braces again, and the result is read out."""
    await setup(hass, llm_server, items, **{CONF_PROFILE: "capable"})
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Napoli"})),
        text_stream("}\n", "}\n", "}\n"),
        text_stream("}\n"),
    )

    result = await converse(hass, "Che tempo fa a Napoli?")

    assert [r.target for r in items.requests] == ["GET /weather/Napoli"]
    assert "}" not in speech(result)
    assert speech(result).startswith("Napoli: ")


def test_made_up_results() -> None:
    earlier = [("What's the weather in Rome?", "Rome: sunny, 16°C")]
    weather = ["get_weather: Current weather and temperature for a city."]
    # The shape of Rome's result, with other values, no call made.
    assert makes_up_result("Paris: sunny, 18°C.", "And in Paris?", earlier, [])
    # Rome's own result said again is no invention.
    assert not makes_up_result("Rome: sunny, 16°C.", "And Rome?", earlier, [])
    # A number about what a reading tool tells.
    assert makes_up_result(
        "Oslo is at 20 degrees.", "What's the weather in Oslo?", [], weather
    )
    assert not makes_up_result("2 plus 2 is 4.", "What is 2 plus 2?", [], weather)
    assert not makes_up_result(
        "It depends on the day.", "What's the weather in Oslo?", [], weather
    )
    # The form of an earlier result with other words and numbers.
    assert makes_up_result(
        "Milano: sunny, 20°C",
        "E a Milano?",
        [("Che tempo fa a Roma?", "Roma: cloudy, 25°C")],
        [],
    )
    assert makes_up_result(
        "apples (2).", "Actually make that two.", [("Put apples on", "apples (3).")], []
    )
    # The demo's two (issue "The first ten minutes"): the request names no
    # word of the tool's description, the sentence does.
    assert makes_up_result(
        "The temperature outside can range from 0 to 100 degrees Celsius.",
        "what's it like outside in Berlin",
        [],
        weather,
    )
    assert makes_up_result(
        "The temperature in Milano is 23°C.", "Che tempo fa a Milano?", [], weather
    )
    # A number with no word of what a reading tool tells stays an answer.
    assert not makes_up_result(
        "You can ask me 3 things.", "What can you do?", [], weather
    )


async def test_a_made_up_result_is_asked_again(
    hass: HomeAssistant, llm_server: FakeLLMServer, items: DemoToolServer
) -> None:
    """ "And in Paris?" after Rome's weather: the 0.5B model wrote Paris's
    "result" in Rome's shape with no call. Not spoken; asked again, it calls."""
    await setup(hass, llm_server, items, **{CONF_PROFILE: "small"})
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        # (Rome's weather is read out by the agent: `Rules.own_answer`.)
        text_stream("Paris: sunny, 18°C."),
        tool_calls_stream(("get_weather", {"city": "Paris"})),
    )
    first = await converse(hass, "What's the weather in Rome?")

    result = await converse(
        hass, "And in Paris?", conversation_id=first.conversation_id
    )

    assert [r.target for r in items.requests][-1] == "GET /weather/Paris"
    assert last_user(llm_server.requests[2]).endswith(RETRY_NUDGES[Withheld.RESULT])
    # The call's result, read out: not the made-up one.
    condition, degrees = weather_for("Paris")
    assert condition in speech(result)
    assert f"{degrees}°C" in speech(result)
    assert "18°C" not in speech(result)


async def test_an_earlier_answer_said_again_for_an_action_is_none(
    hass: HomeAssistant, llm_server: FakeLLMServer, items: DemoToolServer
) -> None:
    """ "Add coffee to the list." answered with the joke of the turn before."""
    await setup(hass, llm_server, items, **{CONF_PROFILE: "small"})
    joke = "Why did the tomato turn red? Because it saw the salad dressing!"
    llm_server.add(
        text_stream(joke),
        text_stream(joke),
        tool_calls_stream(("add_item", {"name": "coffee"})),
    )
    first = await converse(hass, "Tell me a joke.")

    result = await converse(
        hass, "Add coffee to the list.", conversation_id=first.conversation_id
    )

    assert [r.target for r in items.requests] == ["POST /api/items"]
    assert speech(result) == said("tool_result_done", result="coffee (1).")


async def test_a_made_up_result_twice_is_not_spoken(
    hass: HomeAssistant, llm_server: FakeLLMServer, items: DemoToolServer
) -> None:
    await setup(hass, llm_server, items, **{CONF_PROFILE: "small"})
    llm_server.add(*[text_stream("Oslo is at 20 degrees.")] * 2)

    result = await converse(hass, "What's the weather in Oslo?")

    assert items.requests == []
    assert speech(result) == said("no_result")


@pytest.mark.parametrize(
    ("request_text", "made_up", "language"),
    [
        # Issue 39: no tool ran, the list held three items, and it was spoken.
        (
            "What's on the demo shopping list?",
            "The demo shopping list is empty.",
            "en",
        ),
        # Weather in other languages than the tools' descriptions, and a
        # weather answer with no number; the request's language answers.
        (
            "Wie ist das Wetter in München?",
            "Die Wetter in München sind heute 15°C.",
            "de",
        ),
        (
            "Quel temps fait-il à Lyon ?",
            "Le temps à Lyon est 20 heures.",
            "fr",
        ),
        (
            "¿Qué tiempo hace en Sevilla?",
            "El tiempo en Sevilla es 16:00.",
            "es",
        ),
        (
            "Do I need an umbrella in Amsterdam?",
            "No, you do not need an umbrella in Amsterdam.",
            "en",
        ),
    ],
)
async def test_a_made_up_answer_in_any_language_is_not_spoken(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    items: DemoToolServer,
    request_text: str,
    made_up: str,
    language: str,
) -> None:
    """Answers the 0.5B model made up with no call (issue 39): not spoken,
    asked once more, then the agent says it could not find out."""
    await setup(hass, llm_server, items, **{CONF_PROFILE: "small"})
    llm_server.add(*[text_stream(made_up)] * 2)

    result = await converse(hass, request_text)

    assert items.requests == []
    assert last_user(llm_server.requests[1]).endswith(RETRY_NUDGES[Withheld.RESULT])
    assert speech(result) == said("no_result", language)


@pytest.mark.parametrize(
    ("request_text", "answer"),
    [
        ("How are you?", "I'm fine, thanks for asking!"),
        ("Wie geht es dir?", "Mir geht es gut, danke der Nachfrage!"),
        ("Comment ça va ?", "Je vais bien, merci de demander !"),
        ("¿Cómo estás?", "Estoy bien, gracias por preguntar."),
        ("Come stai?", "Sto bene, grazie per avermelo chiesto!"),
        ("Do you like the weather?", "I have no feelings about the weather."),
    ],
)
async def test_small_talk_in_each_language_is_spoken(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    items: DemoToolServer,
    request_text: str,
    answer: str,
) -> None:
    await setup(hass, llm_server, items, **{CONF_PROFILE: "small"})
    llm_server.add(text_stream(answer))

    result = await converse(hass, request_text)

    assert speech(result) == answer
