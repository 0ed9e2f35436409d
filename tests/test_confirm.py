"""Ask before it acts: a call that needs the user's yes is held, the agent
asks, and only the yes (and the PIN) of the same conversation and device
runs exactly that call, once.

Replays through the real openai client against a scripted OpenAI-compatible
server, the tools against a loopback HTTP service that records every
request; both profiles, calls structured and written as text.
"""

from __future__ import annotations

from collections.abc import Callable
import json
import re
from typing import Any

from homeassistant.components import conversation
from homeassistant.core import Context, HomeAssistant
import pytest

from custom_components.http_tools_agent.const import (
    CONF_PROFILE,
    CONF_SECRETS,
    DOMAIN,
)
from custom_components.http_tools_agent.turn import hold

from .kit import AGENT_ID, agent_with_tools, speech
from .said import confirm_pin_question, said
from .servers import (
    FakeLLMServer,
    Reply,
    ToolEndpoint,
    text_stream,
    tool_calls_stream,
)

PROFILES = ["capable", "small"]
FORMS = ["structured", "text"]


def item_tools(base: str, **delete: Any) -> list[dict[str, Any]]:
    """The shopping list's delete (DELETE: confirmed by default) and add."""
    return [
        {
            "name": "delete_item",
            "description": "Delete an item of the shopping list by its id.",
            "parameters": {
                "type": "object",
                "properties": {"item_id": {"type": "string"}},
                "required": ["item_id"],
            },
            "url": f"{base}/api/items/{{item_id}}",
            "method": "DELETE",
            **delete,
        },
        {
            "name": "add_item",
            "description": "Add an item to the shopping list.",
            "parameters": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
            "url": f"{base}/api/items",
            "method": "POST",
        },
    ]


def call(form: str, name: str, arguments: dict[str, Any]) -> Reply:
    """The model's call, structured or written as text (bare JSON)."""
    if form == "structured":
        return tool_calls_stream((name, arguments))
    return text_stream(json.dumps({"name": name, "arguments": arguments}))


async def setup(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    profile: str = "capable",
    *,
    secrets: dict[str, str] | None = None,
    **delete: Any,
) -> None:
    await agent_with_tools(
        hass,
        llm_server.base_url,
        item_tools(tool_endpoint.url, **delete),
        options={CONF_SECRETS: secrets or {}},
        agent={CONF_PROFILE: profile},
    )


async def say(
    hass: HomeAssistant,
    text: str,
    conversation_id: str | None = None,
    *,
    device_id: str | None = "satellite-1",
    language: str | None = None,
) -> conversation.ConversationResult:
    """One turn from a satellite."""
    return await conversation.async_converse(
        hass,
        text,
        conversation_id,
        Context(),
        language=language,
        agent_id=AGENT_ID,
        device_id=device_id,
    )


def deletes(tool_endpoint: ToolEndpoint) -> list[str]:
    return [r.path for r in tool_endpoint.requests if r.method == "DELETE"]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("profile", PROFILES)
async def test_a_delete_waits_for_the_yes_and_runs_once(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    profile: str,
    form: str,
) -> None:
    """The DELETE is not sent; the agent asks and the satellite listens
    again; "yes" sends exactly it, once, with no model round to write it
    again; a second "yes" sends nothing more."""
    await setup(hass, llm_server, tool_endpoint, profile)
    llm_server.add(call(form, "delete_item", {"item_id": "3"}))

    asked = await say(hass, "Delete item 3 from the shopping list.")

    assert deletes(tool_endpoint) == []
    assert speech(asked) == said(
        "confirm_question", action="delete item", details="item id 3"
    )
    assert asked.continue_conversation is True
    requests_before = len(llm_server.requests)

    if profile != "small":
        llm_server.add(text_stream("Item 3 is deleted."))
    done = await say(hass, "Yes.", asked.conversation_id)

    assert deletes(tool_endpoint) == ["/api/items/3"]
    assert done.continue_conversation is False
    answer = llm_server.requests[requests_before:]
    if profile == "small":
        # The change asked for, read out: the model is not asked.
        assert speech(done) == said("tool_result_done", result="method DELETE.")
        assert answer == []
    else:
        # One request, for the answer from the call's result.
        assert speech(done) == "Item 3 is deleted."
        assert len(answer) == 1
        assert answer[0]["messages"][-1]["role"] == "tool"

    llm_server.add(text_stream("There is nothing to confirm."))
    await say(hass, "Yes.", asked.conversation_id)
    assert deletes(tool_endpoint) == ["/api/items/3"]


@pytest.mark.parametrize("profile", PROFILES)
async def test_a_call_that_cannot_run_is_never_asked_about(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    profile: str,
) -> None:
    """A delete with an empty id is not held ("Should I delete item: item
    id ?" asks about nothing): the model reads the argument error, as from
    the tool, and calls again with the id."""
    await setup(hass, llm_server, tool_endpoint, profile)
    llm_server.add(
        call("structured", "delete_item", {"item_id": ""}),
        call("structured", "delete_item", {"item_id": "3"}),
    )

    asked = await say(hass, "Delete item 3 from the shopping list.")

    assert deletes(tool_endpoint) == []
    assert speech(asked) == said(
        "confirm_question", action="delete item", details="item id 3"
    )
    sent = [m for m in llm_server.requests[1]["messages"] if m["role"] == "tool"]
    assert sent[-1]["content"].startswith(
        "Error: missing required argument 'item_id' for tool 'delete_item'"
    ), sent


@pytest.mark.parametrize("profile", PROFILES)
async def test_a_repeated_call_after_the_yes_does_not_run_again(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    profile: str,
) -> None:
    """After the yes the model writes the same call again (small models
    repeat a call after its result): it is not sent a second time."""
    await setup(hass, llm_server, tool_endpoint, profile)
    llm_server.add(tool_calls_stream(("delete_item", {"item_id": "3"})))
    asked = await say(hass, "Delete item 3.")

    llm_server.add(
        tool_calls_stream(("delete_item", {"item_id": "3"})),
        *[text_stream("Item 3 is deleted.")] * 3,
    )
    await say(hass, "yes", asked.conversation_id)

    assert deletes(tool_endpoint) == ["/api/items/3"]


@pytest.mark.parametrize(
    ("language", "request_text", "yes", "no"),
    [
        ("en", "Delete item 3.", "yes", "no"),
        (
            "it",
            "Elimina l'articolo 3 dalla lista.",
            "Sì, grazie",
            "No",
        ),
        (
            "es",
            "Elimina el artículo 3 de la lista.",
            "Sí",
            "no gracias",
        ),
        (
            "de",
            "Lösche den Eintrag 3 von der Liste.",
            "Ja, bitte",
            "Nein",
        ),
        (
            "fr",
            "Supprime l'article 3 de la liste.",
            "Oui, d'accord",
            "non merci",
        ),
    ],
)
@pytest.mark.parametrize("answer", ["yes", "no"])
async def test_the_question_and_the_answer_in_each_language(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    language: str,
    request_text: str,
    yes: str,
    no: str,
    answer: str,
) -> None:
    """Asked in the user's language; their yes runs the call, their no does
    not, and the agent says so in that language."""
    await setup(hass, llm_server, tool_endpoint)
    llm_server.add(tool_calls_stream(("delete_item", {"item_id": "3"})))

    asked = await say(hass, request_text, language=language)
    assert speech(asked) == said(
        "confirm_question", language, action="delete item", details="item id 3"
    )

    if answer == "yes":
        llm_server.add(text_stream("OK."))
        await say(hass, yes, asked.conversation_id, language=language)
        assert deletes(tool_endpoint) == ["/api/items/3"]
        return
    declined = await say(hass, no, asked.conversation_id, language=language)
    assert deletes(tool_endpoint) == []
    assert speech(declined) == said("confirm_declined", language)


@pytest.mark.parametrize(
    "answer",
    ["Yes, but item 4.", "What's on the list?", "maybe", "no, yes"],
)
async def test_anything_but_a_yes_runs_nothing(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    answer: str,
) -> None:
    """Words that are not only a yes drop the held call: nothing is sent,
    and the user hears it was not done (a no with a yes is no yes)."""
    await setup(hass, llm_server, tool_endpoint)
    llm_server.add(tool_calls_stream(("delete_item", {"item_id": "3"})))
    asked = await say(hass, "Delete item 3.")
    requests = len(llm_server.requests)

    result = await say(hass, answer, asked.conversation_id)

    assert deletes(tool_endpoint) == []
    assert speech(result) == said("confirm_not_answered")
    assert len(llm_server.requests) == requests  # no model round either
    # And a yes after that finds nothing held.
    llm_server.add(text_stream("Yes to what?"))
    await say(hass, "yes", asked.conversation_id)
    assert deletes(tool_endpoint) == []


async def test_another_conversation_or_device_cannot_confirm(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
) -> None:
    """A held call belongs to its conversation and its satellite: a yes in
    another conversation, or from another satellite in this one, is a new
    turn for the model; the owner's yes still runs it."""
    await setup(hass, llm_server, tool_endpoint)
    llm_server.add(tool_calls_stream(("delete_item", {"item_id": "3"})))
    asked = await say(hass, "Delete item 3.")

    llm_server.add(text_stream("Yes to what?"), text_stream("Yes to what?"))
    other = await say(hass, "yes")
    assert other.conversation_id != asked.conversation_id
    await say(hass, "yes", asked.conversation_id, device_id="satellite-2")
    assert deletes(tool_endpoint) == []

    llm_server.add(text_stream("Done."))
    await say(hass, "yes", asked.conversation_id)
    assert deletes(tool_endpoint) == ["/api/items/3"]


async def test_a_held_call_expires(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
) -> None:
    """A yes after `HOLD_SECONDS` runs nothing, and says the question has
    expired."""
    await setup(hass, llm_server, tool_endpoint)
    now = [1000.0]
    (entry,) = hass.config_entries.async_entries(DOMAIN)
    entry.runtime_data.held.clock = lambda: now[0]
    llm_server.add(tool_calls_stream(("delete_item", {"item_id": "3"})))
    asked = await say(hass, "Delete item 3.")

    now[0] += hold.HOLD_SECONDS + 1
    late = await say(hass, "yes", asked.conversation_id)

    assert deletes(tool_endpoint) == []
    assert speech(late) == said("confirm_expired")


async def test_after_expiry_a_new_request_is_a_turn_as_any_other(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
) -> None:
    """A request after the question expired is answered by the model; the
    held call is gone, and does not run."""
    await setup(hass, llm_server, tool_endpoint)
    now = [1000.0]
    (entry,) = hass.config_entries.async_entries(DOMAIN)
    entry.runtime_data.held.clock = lambda: now[0]
    llm_server.add(tool_calls_stream(("delete_item", {"item_id": "3"})))
    asked = await say(hass, "Delete item 3.")

    now[0] += hold.HOLD_SECONDS + 1
    llm_server.add(text_stream("Hello!"))
    hello = await say(hass, "Hello there.", asked.conversation_id)

    assert speech(hello) == "Hello!"
    assert entry.runtime_data.held.waiting(asked.conversation_id) is None
    assert deletes(tool_endpoint) == []


async def test_the_tools_own_question_and_confirm_settings(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
) -> None:
    """`confirm_question` is what is asked, filled with the arguments."""
    await setup(
        hass,
        llm_server,
        tool_endpoint,
        confirm_question="Delete item {item_id} from the shopping list?",
    )
    llm_server.add(tool_calls_stream(("delete_item", {"item_id": "3"})))
    asked = await say(hass, "Delete item 3.")
    assert speech(asked) == "Delete item 3 from the shopping list?"


@pytest.mark.parametrize(
    ("confirm", "tool", "arguments", "held"),
    [
        ("never", "delete_item", {"item_id": "3"}, False),
        ("auto", "add_item", {"name": "milk"}, False),
        ("always", "delete_item", {"item_id": "3"}, True),
    ],
)
async def test_confirm_never_and_auto(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    confirm: str,
    tool: str,
    arguments: dict[str, Any],
    held: bool,
) -> None:
    """`never` runs a DELETE at once; `auto` runs a POST at once."""
    await setup(hass, llm_server, tool_endpoint, confirm=confirm)
    llm_server.add(tool_calls_stream((tool, arguments)), text_stream("Done."))
    result = await say(hass, "Delete item 3 and add milk.")
    assert bool(tool_endpoint.requests) is not held
    assert result.continue_conversation is held


def pin_setup(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> Callable[[], Any]:
    return lambda: setup(
        hass,
        llm_server,
        tool_endpoint,
        secrets={"list_pin": "1234"},
        pin="{secret:list_pin}",
    )


async def test_a_pin_right_and_wrong(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The question asks for the PIN; a yes without it or with a wrong one
    runs nothing and asks again; the right one runs the call. The PIN never
    reaches the model, nor the log."""
    await pin_setup(hass, llm_server, tool_endpoint)()
    llm_server.add(tool_calls_stream(("delete_item", {"item_id": "3"})))
    asked = await say(hass, "Delete item 3.")
    assert speech(asked) == confirm_pin_question(
        said("confirm_question", action="delete item", details="item id 3")
    )
    assert asked.continue_conversation is True

    bare = await say(hass, "yes", asked.conversation_id)
    assert speech(bare) == said("confirm_wrong_pin")
    wrong = await say(hass, "yes 9999", asked.conversation_id)
    assert speech(wrong) == said("confirm_wrong_pin")
    assert wrong.continue_conversation is True
    assert deletes(tool_endpoint) == []

    llm_server.add(text_stream("Item 3 is deleted."))
    await say(hass, "yes 1 2 3 4", asked.conversation_id)
    assert deletes(tool_endpoint) == ["/api/items/3"]
    sent = json.dumps(llm_server.requests)
    assert "1 2 3 4" not in sent
    assert "1234" not in sent
    assert "9999" not in sent
    # Home Assistant's debug log prints every content's timestamp, whose
    # microseconds may hold any four digits.
    logged = re.sub(r"datetime\.datetime\([^)]*\)", "", caplog.text)
    assert "1234" not in logged


async def test_three_wrong_pins_drop_the_call(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
) -> None:
    """After `MAX_PIN_ATTEMPTS` wrong PINs the call is dropped: even the
    right PIN then runs nothing."""
    await pin_setup(hass, llm_server, tool_endpoint)()
    llm_server.add(tool_calls_stream(("delete_item", {"item_id": "3"})))
    asked = await say(hass, "Delete item 3.")
    for _ in range(hold.MAX_PIN_ATTEMPTS - 1):
        await say(hass, "yes 0000", asked.conversation_id)
    last = await say(hass, "yes 0000", asked.conversation_id)
    assert speech(last) == said("confirm_pin_locked")
    assert last.continue_conversation is False

    llm_server.add(text_stream("Yes to what?"))
    await say(hass, "yes 1234", asked.conversation_id)
    assert deletes(tool_endpoint) == []


async def test_two_held_calls_in_one_reply(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
) -> None:
    """One question at a time: the first call is held, the second never
    runs; the add beside them runs."""
    await setup(hass, llm_server, tool_endpoint)
    llm_server.add(
        tool_calls_stream(
            ("delete_item", {"item_id": "3"}),
            ("delete_item", {"item_id": "4"}),
            ("add_item", {"name": "milk"}),
        )
    )
    asked = await say(hass, "Delete items 3 and 4 and add milk.")
    assert speech(asked) == said(
        "confirm_question", action="delete item", details="item id 3"
    )
    assert [r.method for r in tool_endpoint.requests] == ["POST"]

    llm_server.add(text_stream("Done."))
    await say(hass, "yes", asked.conversation_id)
    assert deletes(tool_endpoint) == ["/api/items/3"]


def test_reading_answers() -> None:
    """Yes and no in each language, with filler words and a PIN; anything
    else is no answer."""
    assert hold.read_answer("Yes please.") == (hold.Answer.YES, "")
    assert hold.read_answer("sì, il codice è 4321") == (hold.Answer.YES, "4321")
    assert hold.read_answer("¡Sí, por favor!") == (hold.Answer.YES, "")
    assert hold.read_answer("go ahead") == (hold.Answer.YES, "")
    assert hold.read_answer("No, thanks") == (hold.Answer.NO, "")
    assert hold.read_answer("lascia stare") == (hold.Answer.NO, "")
    assert hold.read_answer("yes delete everything")[0] is hold.Answer.OTHER
    assert hold.read_answer("")[0] is hold.Answer.OTHER
    assert hold.mask_digits("yes 1234") == "yes ••••"
