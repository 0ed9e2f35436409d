"""German and French through a whole turn: the checks read the model's
words in those languages, and the agent says its own in them."""

from __future__ import annotations

from collections.abc import AsyncIterator
import json
from pathlib import Path

from homeassistant.core import HomeAssistant
import pytest

from custom_components.http_tools_agent.const import CONF_PROFILE, CONF_TOOLS
from dev.tool_server import DEMO_TOOLS, DemoToolServer
from tests.kit import converse, load_integration, server_entry, speech
from tests.servers import FakeLLMServer, completion, text_stream, tool_calls_stream

TRANSLATIONS = (
    Path(__file__).parents[2] / "custom_components/http_tools_agent/translations"
)


def said(language: str, key: str) -> str:
    """One of the agent's own messages in `language`."""
    messages = json.loads((TRANSLATIONS / f"{language}.json").read_text("utf-8"))
    text: str = messages["exceptions"][key]["message"]
    return text


@pytest.fixture
async def items(socket_enabled: None) -> AsyncIterator[DemoToolServer]:
    async with DemoToolServer() as server:
        yield server


async def setup(
    hass: HomeAssistant, llm_server: FakeLLMServer, items: DemoToolServer
) -> None:
    entry = server_entry(
        llm_server.base_url,
        options={CONF_TOOLS: items.tools(list(DEMO_TOOLS), sentences=False)},
        agent={CONF_PROFILE: "small"},
    )
    entry.add_to_hass(hass)
    await load_integration(hass)


@pytest.mark.parametrize(
    ("pipeline", "request_text", "narration", "language"),
    [
        ("de", "Füge Eier hinzu.", "Ich rufe das Tool add_item auf.", "de"),
        ("fr", "Ajoute des œufs.", "J'appelle l'outil add_item.", "fr"),
        # Asked in German or French of an English pipeline: said in that one.
        (
            "en",
            "Füge bitte Eier zur Einkaufsliste hinzu.",
            "Ich verwende das Werkzeug add_item.",
            "de",
        ),
        (
            "en",
            "Ajoute des œufs à la liste de courses.",
            "Je vais utiliser la fonction add_item.",
            "fr",
        ),
    ],
)
async def test_a_narration_twice_says_nothing_was_done_in_the_users_language(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    items: DemoToolServer,
    pipeline: str,
    request_text: str,
    narration: str,
    language: str,
) -> None:
    await setup(hass, llm_server, items)
    llm_server.add(text_stream(narration), text_stream(narration))

    result = await converse(hass, request_text, language=pipeline)

    assert items.requests == []
    assert speech(result) == said(language, "nothing_done")


@pytest.mark.parametrize(
    ("language", "request_text", "claim"),
    [
        (
            "de",
            "Füge Batterien zur Liste hinzu.",
            "Ich habe die Batterien hinzugefügt.",
        ),
        ("fr", "Ajoute des piles à la liste.", "J'ai ajouté les piles à la liste."),
    ],
)
async def test_a_claim_without_a_call_is_asked_again_and_the_call_runs(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    items: DemoToolServer,
    language: str,
    request_text: str,
    claim: str,
) -> None:
    """A change confirmed in German or French with no call made is not
    spoken; asked again, the model calls, and its answer is spoken."""
    await setup(hass, llm_server, items)
    llm_server.add(
        text_stream(claim),
        tool_calls_stream(("add_item", {"name": "batteries"})),
        text_stream("OK."),
    )

    result = await converse(hass, request_text, language=language)

    assert [r.target for r in items.requests] == ["POST /api/items"]
    assert claim not in speech(result)


@pytest.mark.parametrize(
    ("language", "request_text"),
    [
        ("de", "Lies mir die Liste vor."),
        ("fr", "Lis-moi la liste."),
    ],
)
async def test_a_list_read_is_read_out_when_the_model_says_nothing(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    items: DemoToolServer,
    language: str,
    request_text: str,
) -> None:
    """Asked for "die Liste" or "la liste", the list the model read is read
    out when the model says nothing of it (P4l: "Ich habe nichts
    gefunden." was said of a list of three)."""
    await setup(hass, llm_server, items)
    llm_server.add(
        tool_calls_stream(("list_items", {})),
        # Empty, streamed and then not (the agent asks once more without
        # streaming), for the answer request and the closing one.
        *(reply for _ in range(3) for reply in (text_stream(""), completion(""))),
    )

    result = await converse(hass, request_text, language=language)

    assert [r.target for r in items.requests] == ["GET /api/items"]
    for name in ("apples", "bananas", "milk"):
        assert name in speech(result).lower()
