"""Speech without markup: markdown, emoji and bare URLs never reach the
speaker; every word stays (`turn/spoken_text.py`).

Through the module (whole and streamed a character at a time), through a
real conversation turn, and through Home Assistant's Assist pipeline, whose
chat-log deltas are what a streaming text-to-speech reads.
"""

from __future__ import annotations

import re

from homeassistant.components.assist_pipeline import PipelineEventType
from homeassistant.core import HomeAssistant
import pytest

from custom_components.http_tools_agent.turn.spoken_text import SpokenText, spoken

from .kit import chat_log_deltas, converse, pipeline_events, speech
from .servers import FakeLLMServer, markdown_capture, markdown_text, text_stream
from .spoken_cases import CAPTURED, WRITTEN

# What a voice must never read: emphasis and code marks, a heading's or a
# bullet's marker at a line start, link brackets, URLs, emoji.
_UNSPEAKABLE = re.compile(
    r"\*\*|__|`|~~|\]\(|https?://|www\.|^\s*(?:#|[-*+•]\s|>)"
    "|[\U0001f000-\U0001faff\u2600-\u27bf\ufe0f\u200d]",
    re.MULTILINE,
)


def assert_speakable(text: str) -> None:
    """Fail when `text` holds markup, a URL or an emoji."""
    found = _UNSPEAKABLE.search(text)
    assert found is None, f"{found.group()!r} would be read out in {text!r}"


def streamed(text: str, size: int = 1) -> str:
    """What the streaming cleaner says of `text` fed `size` characters at a time."""
    cleaner = SpokenText()
    out = [cleaner.feed(text[i : i + size]) for i in range(0, len(text), size)]
    return ("".join(out) + cleaner.finish()).strip()


@pytest.mark.parametrize(("written", "said"), WRITTEN)
def test_written_answers_are_said_without_markup(written: str, said: str) -> None:
    """Each form loses its markup, keeps its words; streamed or whole."""
    assert spoken(written) == said
    assert streamed(written) == said
    assert streamed(written, 7) == said
    assert_speakable(said)


@pytest.mark.parametrize("name", sorted(CAPTURED))
def test_captured_answers_are_said_without_markup(name: str) -> None:
    """A real model's markdown answers, as they would be spoken."""
    said = spoken(markdown_text(name))
    assert said.startswith(CAPTURED[name])
    assert streamed(markdown_text(name), 3) == said
    assert_speakable(said)


def test_a_plain_answer_streams_word_by_word() -> None:
    """Text with no markup is passed on at once (its last word held), so a
    streaming text-to-speech starts on the first words."""
    cleaner = SpokenText()
    assert cleaner.feed("In Rome it is sun") == "In Rome it is"
    assert cleaner.feed("ny and 14 degrees") == " sunny and 14"
    assert cleaner.feed(" right now.") == " degrees right"
    assert cleaner.finish() == " now."


def test_a_link_is_held_until_it_closes() -> None:
    """A link's text is said once its URL has come (not its brackets)."""
    cleaner = SpokenText()
    assert cleaner.feed("See [Mr. Smith's page](https://exa") == "See"
    assert cleaner.feed("mple.com/smith) for more.") == ""
    assert cleaner.held == len(
        " [Mr. Smith's page](https://example.com/smith) for more."
    )
    assert cleaner.finish() == " Mr. Smith's page for more."


@pytest.mark.parametrize("name", sorted(CAPTURED))
@pytest.mark.parametrize("agent_options", [{"stream": False}])
@pytest.mark.usefixtures("setup_integration")
async def test_a_conversation_speaks_no_markup(
    hass: HomeAssistant, llm_server: FakeLLMServer, name: str
) -> None:
    """The captured answer, replayed as the server sent it: the turn's
    speech and the chat log hold the words without the markup."""
    llm_server.add(markdown_capture(name))

    result = await converse(hass, "Tell me.")

    said = speech(result)
    assert said.strip() == spoken(markdown_text(name))
    assert_speakable(said)


@pytest.mark.parametrize("name", sorted(CAPTURED))
@pytest.mark.usefixtures("setup_integration")
async def test_the_pipeline_streams_no_markup(
    hass: HomeAssistant, llm_server: FakeLLMServer, name: str
) -> None:
    """Through the Assist pipeline, streamed in small pieces (as a model
    writes tokens): no chat-log delta (what a streaming text-to-speech
    reads) and no final speech holds markup, and they say the same."""
    from homeassistant.setup import async_setup_component

    assert await async_setup_component(hass, "assist_pipeline", {})
    text = markdown_text(name)
    llm_server.add(text_stream(*(text[i : i + 4] for i in range(0, len(text), 4))))

    events = await pipeline_events(hass, "Tell me.")

    deltas = [d.get("content") or "" for d in chat_log_deltas(events)]
    for delta in deltas:
        assert_speakable(delta)
    end = next(e for e in events if e.type is PipelineEventType.INTENT_END)
    assert end.data is not None
    final = end.data["intent_output"]["response"]["speech"]["plain"]["speech"]
    assert "".join(deltas).strip() == final.strip() == spoken(text)
    assert_speakable(final)
