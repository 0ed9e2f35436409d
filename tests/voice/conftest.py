"""Fixtures of the voice tests: Wyoming STT/TTS on loopback, HA's `wyoming`
integration connected to them, and an Assist pipeline through our agent."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass

from aiohttp import web
from aiohttp.test_utils import TestClient
from homeassistant.components.assist_pipeline.const import DOMAIN as PIPELINE_DOMAIN
from homeassistant.components.assist_pipeline.models import Pipeline
from homeassistant.components.assist_pipeline.pipeline import KEY_ASSIST_PIPELINE
from homeassistant.config_entries import ConfigEntry, ConfigEntryState
from homeassistant.const import CONF_HOST, CONF_PORT
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import entity_registry as er
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from tests.servers import ToolEndpoint

from .wyoming_servers import (
    VOICE,
    Timeline,
    TimelineLLMServer,
    WyomingSTT,
    WyomingTTS,
    espeak_available,
)

type HttpClient = TestClient[web.Request, web.Application]

AGENT_ID = "conversation.http_tools_agent"
COMMAND = "What's the weather in Rome?"


@pytest.fixture(autouse=True)
def _require_espeak() -> None:
    if not espeak_available():
        pytest.fail(
            "espeak-ng is not installed: run scripts/install_voice_deps "
            "(apt-get install espeak-ng) where the tests run"
        )


@pytest.fixture
def hass_config_dir(hass_tmp_config_dir: str) -> str:
    """A temporary config dir: the TTS file cache writes there."""
    return hass_tmp_config_dir


@pytest.fixture
async def http(hass: HomeAssistant, hass_client: ClientSessionGenerator) -> HttpClient:
    """An authenticated client of HA's HTTP API (on loopback)."""
    client: HttpClient = await hass_client()
    return client


@pytest.fixture
def timeline() -> Timeline:
    """What every server did, in order."""
    return Timeline()


@pytest.fixture
async def llm_server(
    socket_enabled: None, timeline: Timeline
) -> AsyncGenerator[TimelineLLMServer]:
    """The scripted OpenAI-compatible server, able to pace its replies."""
    async with TimelineLLMServer(timeline=timeline) as server:
        yield server


@pytest.fixture
def tts_streaming() -> bool:
    """Whether the Wyoming TTS advertises streaming synthesis."""
    return True


@pytest.fixture
async def wyoming_stt(
    socket_enabled: None, timeline: Timeline
) -> AsyncGenerator[WyomingSTT]:
    """The Wyoming STT that knows the test command."""
    server = WyomingSTT(timeline, [COMMAND])
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def wyoming_tts(
    socket_enabled: None, timeline: Timeline, tts_streaming: bool
) -> AsyncGenerator[WyomingTTS]:
    """The espeak-ng Wyoming TTS."""
    server = WyomingTTS(timeline, streaming=tts_streaming)
    await server.start()
    yield server
    await server.stop()


async def add_wyoming_service(hass: HomeAssistant, port: int) -> ConfigEntry:
    """Add a Wyoming service the way a user does: through its config flow."""
    result = await hass.config_entries.flow.async_init(
        "wyoming", context={"source": "user"}
    )
    assert result["type"] is FlowResultType.FORM
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_HOST: "127.0.0.1", CONF_PORT: port}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY, result
    entry = result["result"]
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED
    return entry


def entity_of(hass: HomeAssistant, domain: str, unique_id: str) -> str:
    """The entity id Home Assistant gave a Wyoming entity."""
    entity_id = er.async_get(hass).async_get_entity_id(domain, "wyoming", unique_id)
    assert entity_id is not None, f"no {domain} entity {unique_id}"
    return entity_id


@pytest.fixture
async def voice_pipeline(
    hass: HomeAssistant,
    setup_integration: ConfigEntry,
    wyoming_stt: WyomingSTT,
    wyoming_tts: WyomingTTS,
) -> AsyncGenerator[Pipeline]:
    """An Assist pipeline: Wyoming STT -> our agent -> Wyoming TTS."""
    assert await async_setup_component(hass, PIPELINE_DOMAIN, {})
    assert await async_setup_component(hass, "media_source", {})
    stt_entry = await add_wyoming_service(hass, wyoming_stt.port)
    tts_entry = await add_wyoming_service(hass, wyoming_tts.port)
    store = hass.data[KEY_ASSIST_PIPELINE].pipeline_store
    pipeline = await store.async_create_item(
        {
            "name": "Voice through HTTP tools",
            "language": "en",
            "conversation_engine": AGENT_ID,
            "conversation_language": "en",
            "stt_engine": entity_of(hass, "stt", f"{stt_entry.entry_id}-stt"),
            "stt_language": "en",
            "tts_engine": entity_of(hass, "tts", f"{tts_entry.entry_id}-tts"),
            "tts_language": "en",
            "tts_voice": VOICE,
            "wake_word_entity": None,
            "wake_word_id": None,
        }
    )
    yield pipeline
    # Unload the Wyoming entries: their info coordinators poll on a timer.
    for entry in (stt_entry, tts_entry):
        assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()


@dataclass
class Voice:
    """Everything a voice turn goes through: the pipeline (Wyoming STT -> our
    agent -> Wyoming TTS), the scripted model, the tool server, HA's HTTP API,
    and the timeline all servers write to."""

    hass: HomeAssistant
    pipeline: Pipeline
    llm: TimelineLLMServer
    tools: ToolEndpoint
    stt: WyomingSTT
    tts: WyomingTTS
    http: HttpClient
    timeline: Timeline


@pytest.fixture
def voice(
    hass: HomeAssistant,
    voice_pipeline: Pipeline,
    llm_server: TimelineLLMServer,
    tool_endpoint: ToolEndpoint,
    wyoming_stt: WyomingSTT,
    wyoming_tts: WyomingTTS,
    http: HttpClient,
    timeline: Timeline,
) -> Voice:
    """The voice rig of a test."""
    return Voice(
        hass,
        voice_pipeline,
        llm_server,
        tool_endpoint,
        wyoming_stt,
        wyoming_tts,
        http,
        timeline,
    )
