"""An end-to-end check through Home Assistant's Assist pipeline."""

from __future__ import annotations

from homeassistant.components.assist_pipeline import PipelineEventType
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest

from .kit import assert_rome_weather_ran, chat_log_deltas, pipeline_events
from .markup import assert_clean
from .servers import (
    QWEN_THINK_AND_CALL,
    FakeLLMServer,
    Reply,
    ToolEndpoint,
    text_stream,
    transcript,
)


@pytest.fixture
async def pipeline_ready(hass: HomeAssistant, setup_integration: object) -> None:
    """Set up the Assist pipeline integration."""
    assert await async_setup_component(hass, "assist_pipeline", {})
    await hass.async_block_till_done()


@pytest.mark.parametrize(
    "first_round",
    [
        text_stream(*QWEN_THINK_AND_CALL),
        transcript("llama-server__weather_stream"),
        transcript("llama-cpp-python__weather_stream"),
    ],
    ids=[
        "qwen3-coder-xml+think",
        "llama-server-bare-json",
        "llama-cpp-python-bare-json",
    ],
)
@pytest.mark.usefixtures("pipeline_ready")
async def test_guide_end_to_end_check(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    first_round: Reply,
) -> None:
    """Events show the tool call, then the end; no delta or speech has markup."""
    llm_server.add(first_round, text_stream("In Rome it is sunny ", "and 14 degrees."))

    events = await pipeline_events(hass, "What's the weather in Rome?")

    types = [e.type for e in events]
    assert types[0] is PipelineEventType.RUN_START
    assert types[-1] is PipelineEventType.RUN_END
    assert PipelineEventType.ERROR not in types

    deltas = chat_log_deltas(events)
    assert_rome_weather_ran(deltas, tool_endpoint)
    spoken = "".join(d.get("content") or "" for d in deltas)
    assert_clean(spoken)
    assert spoken.strip() == "In Rome it is sunny and 14 degrees."

    end = next(e for e in events if e.type is PipelineEventType.INTENT_END)
    speech = end.data["intent_output"]["response"]["speech"]["plain"]["speech"]  # type: ignore[index]
    assert speech == "In Rome it is sunny and 14 degrees."
    # The call comes before the end of the intent stage.
    assert types.index(PipelineEventType.INTENT_END) > types.index(
        PipelineEventType.INTENT_PROGRESS
    )


@pytest.mark.parametrize(
    "tag",
    ["</tool_response>", "</tool_call>", "</function>", "</parameter>", "</think>"],
)
@pytest.mark.usefixtures("pipeline_ready")
async def test_a_tag_alone_is_in_no_delta(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    tag: str,
) -> None:
    """The demo's pipeline stream carried a chat-log delta "</tool_response>"
    (a chat view or a text-to-speech that follows the stream got it): a tag
    that arrives alone, in a delta of its own, reaches no delta."""
    llm_server.add(
        transcript("llama-cpp-python__weather_stream"),
        text_stream("In Rome it is sunny", tag, " and 14 degrees."),
    )

    events = await pipeline_events(hass, "What's the weather in Rome?")

    deltas = chat_log_deltas(events)
    for delta in deltas:
        assert_clean(delta.get("content") or "")
    spoken = "".join(d.get("content") or "" for d in deltas)
    assert spoken.strip() == "In Rome it is sunny and 14 degrees."
