"""The conversation stays open when the agent asks: a satellite listens
again after a clarification, whatever its last character; a statement
ends the turn."""

from __future__ import annotations

from homeassistant.core import HomeAssistant
import pytest

from custom_components.http_tools_agent.turn.honesty import asks_back

from .kit import converse, speech
from .servers import FakeLLMServer, text_stream


@pytest.mark.parametrize(
    ("answer", "asks"),
    [
        ("Please tell me which city.", True),
        ("Which city do you mean?", True),
        ("Which city do you mean", True),  # speech-to-text style, no "?"
        ("I can do that. Tell me what the item is called.", True),
        ("Dimmi quale città.", True),
        ("Sag mir, welche Stadt du meinst.", True),
        ("Dime qué ciudad.", True),
        ("Dis-moi quelle ville.", True),
        ("Rome is sunny, 16 degrees.", False),
        ("Let me know if you need anything else.", False),
        ("Which city? Rome is sunny.", False),  # answered its own question
        ("", False),
    ],
)
def test_what_asks_back(answer: str, asks: bool) -> None:
    assert asks_back(answer) is asks


@pytest.mark.parametrize(
    ("answer", "listens"),
    [
        ("Please tell me which city.", True),
        ("In Rome it is sunny.", False),
    ],
)
@pytest.mark.usefixtures("setup_integration")
async def test_a_clarification_keeps_the_microphone_open(
    hass: HomeAssistant, llm_server: FakeLLMServer, answer: str, listens: bool
) -> None:
    llm_server.add(text_stream(answer))

    result = await converse(hass, "What's the weather?")

    assert speech(result) == answer
    assert result.continue_conversation is listens
