"""Ask before it acts, through the Assist pipeline as a satellite runs it:
the question ends the intent stage with `continue_conversation` (so the
satellite listens again), and the satellite's yes in the same conversation
runs the held DELETE once."""

from __future__ import annotations

from typing import Any

from homeassistant.components.assist_pipeline import PipelineEventType
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest

from .kit import pipeline_events
from .servers import FakeLLMServer, ToolEndpoint, text_stream, tool_calls_stream
from .test_confirm import deletes, item_tools

SATELLITE = "satellite-kitchen"


@pytest.fixture
def tools(tool_endpoint: ToolEndpoint) -> list[dict[str, Any]]:
    """The shopping list's delete (it asks first) and add."""
    return item_tools(tool_endpoint.url)


async def say(
    hass: HomeAssistant, text: str, conversation_id: str | None
) -> tuple[dict[str, Any], str]:
    """One text turn of the satellite's pipeline: the intent-end output and
    the conversation id."""
    events = await pipeline_events(
        hass, text, conversation_id=conversation_id, device_id=SATELLITE
    )
    (end,) = [e for e in events if e.type is PipelineEventType.INTENT_END]
    assert end.data is not None
    output: dict[str, Any] = end.data["intent_output"]
    return output, str(output["conversation_id"])


@pytest.mark.usefixtures("setup_integration")
async def test_the_satellite_is_asked_and_its_yes_runs_the_call(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    assert await async_setup_component(hass, "assist_pipeline", {})
    await hass.async_block_till_done()
    llm_server.add(tool_calls_stream(("delete_item", {"item_id": "3"})))

    asked, conversation = await say(hass, "Delete item 3.", None)

    assert asked["continue_conversation"] is True
    speech = asked["response"]["speech"]["plain"]["speech"]
    assert speech == "Should I delete item: item id 3?"
    assert deletes(tool_endpoint) == []

    llm_server.add(text_stream("Item 3 is deleted."))
    done, _ = await say(hass, "Yes.", conversation)

    assert done["continue_conversation"] is False
    assert done["response"]["speech"]["plain"]["speech"] == "Item 3 is deleted."
    assert deletes(tool_endpoint) == ["/api/items/3"]
