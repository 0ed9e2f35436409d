"""Home Assistant's side of the voice rig: the satellite, its pipeline, and
one spoken turn as a household has it.

`satellite_home` adds the rig's services (`dev.voice.parts.VoiceParts`:
PocketSphinx, Piper, wyoming-satellite) through the `wyoming` config flow, as
a user adds them, makes an Assist pipeline PocketSphinx -> the given agent ->
Piper (the joe voice), and selects it on the satellite's own pipeline
select. `SatelliteHome.ask` plays a question into the satellite's
microphone and returns the `SatelliteTurn`: what was recognised, the tool
calls, the answer text, the audio the satellite was sent to play, and when
each step happened.

Used by the satellite tests (`test_satellite.py`), `bench/bench_voice.py` and
`scripts/voice`. The turn's times come from one clock (`time.monotonic`) in
every process: the microphone notes when each chunk went out, the speaker when
the answer's first audio arrived, and this module when the satellite's
pipeline reported each event.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
import time
from typing import Any

from homeassistant.components.assist_pipeline import PipelineEvent, PipelineEventType
from homeassistant.components.assist_pipeline.const import DOMAIN as PIPELINE_DOMAIN
from homeassistant.components.assist_pipeline.models import Pipeline
from homeassistant.components.assist_pipeline.pipeline import KEY_ASSIST_PIPELINE
from homeassistant.components.assist_satellite import AssistSatelliteEntity
from homeassistant.components.assist_satellite.const import DATA_COMPONENT
from homeassistant.config_entries import ConfigEntry, ConfigEntryState
from homeassistant.const import CONF_HOST, CONF_PORT
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import entity_registry as er
from homeassistant.setup import async_setup_component

from dev.voice.beside_demo import rig_http_config
from dev.voice.parts import VOICE, Answer, Spoken, VoiceParts, wait_until

# Long enough for the 0.5B model's slowest turns on 2 busy cores.
TURN_TIMEOUT = 300.0
ANSWER_AUDIO_TIMEOUT = 60.0


async def add_wyoming_service(hass: HomeAssistant, port: int) -> ConfigEntry:
    """Add a Wyoming service on loopback through its config flow."""
    result = await hass.config_entries.flow.async_init(
        "wyoming", context={"source": "user"}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_HOST: "127.0.0.1", CONF_PORT: port}
    )
    if result["type"] is not FlowResultType.CREATE_ENTRY:
        raise RuntimeError(f"Wyoming on port {port} was not added: {result}")
    entry: ConfigEntry = result["result"]
    await hass.async_block_till_done()
    if entry.state is not ConfigEntryState.LOADED:
        raise RuntimeError(f"Wyoming on port {port}: {entry.state}")
    return entry


def entity_of(hass: HomeAssistant, entry: ConfigEntry, domain: str) -> str:
    """The entity of `domain` a Wyoming entry made."""
    ids = [
        e.entity_id
        for e in er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
        if e.domain == domain
    ]
    if len(ids) != 1:
        raise RuntimeError(f"{entry.title}: {domain} entities {ids}")
    return ids[0]


@dataclass
class SatelliteTurn:
    """One question through the satellite, as it happened."""

    question: str
    spoken: Spoken
    events: list[tuple[float, PipelineEvent]]
    answer: Answer | None

    def _first(self, kind: PipelineEventType) -> tuple[float, dict[str, Any]] | None:
        for at, event in self.events:
            if event.type is kind:
                return at, event.data or {}
        return None

    @property
    def error(self) -> str | None:
        """The pipeline's error code, if it ended in one."""
        found = self._first(PipelineEventType.ERROR)
        return str(found[1].get("code")) if found else None

    @property
    def transcript(self) -> str | None:
        """What the speech-to-text made of the question."""
        found = self._first(PipelineEventType.STT_END)
        return str(found[1]["stt_output"]["text"]) if found else None

    def deltas(self) -> list[tuple[float, dict[str, Any]]]:
        """The chat log's deltas, with their times."""
        return [
            (at, event.data["chat_log_delta"])
            for at, event in self.events
            if event.type is PipelineEventType.INTENT_PROGRESS
            and event.data
            and "chat_log_delta" in event.data
        ]

    @property
    def tool_calls(self) -> list[tuple[str, dict[str, Any]]]:
        """The tool calls that ran: (name, arguments)."""
        return [
            (call.tool_name, dict(call.tool_args))
            for _, delta in self.deltas()
            for call in delta.get("tool_calls") or ()
        ]

    @property
    def tool_results(self) -> list[Any]:
        """What the tools returned, in order."""
        return [
            delta.get("tool_result")
            for _, delta in self.deltas()
            if delta.get("role") == "tool_result"
        ]

    @property
    def answer_text(self) -> str:
        """What the agent said (the text the TTS got)."""
        found = self._first(PipelineEventType.INTENT_END)
        if found is None:
            return ""
        speech = found[1]["intent_output"]["response"]["speech"]
        return str(speech.get("plain", {}).get("speech", ""))

    # --- times (s, monotonic) ------------------------------------------------

    def at(self, kind: PipelineEventType) -> float | None:
        """When the pipeline reported its first event of this kind."""
        found = self._first(kind)
        return found[0] if found else None

    @property
    def first_word_at(self) -> float | None:
        """The agent's first spoken text: the first delta with words, or the
        answer's end when the agent spoke without streaming (its own
        read-out of the results, a fallback)."""
        for at, delta in self.deltas():
            if (delta.get("content") or "").strip():
                return at
        return self.at(PipelineEventType.INTENT_END)

    @property
    def first_audio_at(self) -> float | None:
        """The first answer audio at the satellite's speaker."""
        return self.answer.first_audio if self.answer else None

    def split(self) -> dict[str, float | None]:
        """End of speech -> first answer audio, and its parts (s): speech to
        text (the silence window until the pipeline's voice activity
        detection ends the command, then the recogniser), the agent to its
        first spoken word, and from that word to the first audio at the
        satellite (the rest of a sentence or of a short answer, Piper,
        Home Assistant's conversion, the Wyoming hops)."""
        end = self.spoken.speech_end
        stt = self.at(PipelineEventType.STT_END)
        vad = self.at(PipelineEventType.STT_VAD_END)
        word = self.first_word_at
        audio = self.first_audio_at

        def span(start: float | None, stop: float | None) -> float | None:
            return None if start is None or stop is None else stop - start

        return {
            "total": span(end, audio),
            "stt": span(end, stt),
            "vad": span(end, vad),
            "recogniser": span(vad, stt),
            "agent": span(stt, word),
            "tts": span(word, audio),
        }


@dataclass
class SatelliteHome:
    """Home Assistant with the rig's satellite on a pipeline through an agent."""

    hass: HomeAssistant
    parts: VoiceParts
    satellite: AssistSatelliteEntity
    pipeline: Pipeline
    entries: list[ConfigEntry]
    events: list[tuple[float, PipelineEvent]] = field(default_factory=list)
    run_ended: asyncio.Event = field(default_factory=asyncio.Event)

    def observe(self) -> None:
        """Note every pipeline event of the satellite, with its time."""
        forward = self.satellite.on_pipeline_event

        def noted(event: PipelineEvent) -> None:
            self.events.append((time.monotonic(), event))
            if event.type is PipelineEventType.RUN_END:
                self.run_ended.set()
            forward(event)

        # The entity hands each event to `on_pipeline_event`; look on the way.
        setattr(self.satellite, "on_pipeline_event", noted)  # noqa: B010

    def new_conversation(self) -> None:
        """The next question starts a conversation of its own (the satellite
        keeps one for five minutes, so questions are follow-ups by default)."""
        setattr(self.satellite, "_conversation_id", None)  # noqa: B010

    async def ask(self, question: str, *, fresh: bool = False) -> SatelliteTurn:
        """Say `question` to the satellite; return the turn once its answer
        has been played (or the run ended without one)."""
        if fresh:
            self.new_conversation()
        start = len(self.events)
        played = len(self.parts.answers())
        self.run_ended.clear()
        spoken = await self.parts.say(question)
        async with asyncio.timeout(TURN_TIMEOUT):
            await self.run_ended.wait()
        events = self.events[start:]
        answer = None
        if any(e.type is PipelineEventType.TTS_END for _, e in events):
            await wait_until(
                lambda: len(self.parts.answers()) > played,
                ANSWER_AUDIO_TIMEOUT,
                "the answer audio at the satellite",
            )
            answer = self.parts.answers()[played]
        return SatelliteTurn(question, spoken, events, answer)

    async def close(self) -> None:
        """Unload the Wyoming entries (the satellite disconnects)."""
        for entry in self.entries:
            await self.hass.config_entries.async_unload(entry.entry_id)
        await self.hass.async_block_till_done()


async def async_set_up_components(
    hass: HomeAssistant, http_config: dict[str, Any]
) -> None:
    """What the rig's pipeline needs, HTTP (for media_source) as
    `http_config` says: on a free port, as 8123 may be the demo's. A failure
    names the component."""
    for component, config in (
        ("homeassistant", {}),
        ("http", http_config),
        (PIPELINE_DOMAIN, {}),
        ("media_source", {}),
    ):
        if not await async_setup_component(hass, component, config):
            raise RuntimeError(
                f"Home Assistant could not set up `{component}` (its error is "
                "logged above)"
            )


async def satellite_home(
    hass: HomeAssistant, parts: VoiceParts, agent_id: str, name: str = "Voice rig"
) -> SatelliteHome:
    """Add the rig's services to Home Assistant and a pipeline PocketSphinx ->
    `agent_id` -> Piper on the satellite; wait until the satellite is connected."""
    await async_set_up_components(hass, rig_http_config())
    stt_entry = await add_wyoming_service(hass, parts.sphinx_port)
    tts_entry = await add_wyoming_service(hass, parts.piper_port)
    satellite_entry = await add_wyoming_service(hass, parts.satellite_port)
    store = hass.data[KEY_ASSIST_PIPELINE].pipeline_store
    pipeline: Pipeline = await store.async_create_item(
        {
            "name": name,
            "language": "en",
            "conversation_engine": agent_id,
            "conversation_language": "en",
            "stt_engine": entity_of(hass, stt_entry, "stt"),
            "stt_language": "en",
            "tts_engine": entity_of(hass, tts_entry, "tts"),
            "tts_language": "en_US",
            "tts_voice": VOICE,
            "wake_word_entity": None,
            "wake_word_id": None,
        }
    )
    satellite_id = entity_of(hass, satellite_entry, "assist_satellite")
    satellite = hass.data[DATA_COMPONENT].get_entity(satellite_id)
    assert isinstance(satellite, AssistSatelliteEntity), satellite_id
    # The satellite's own "Assistant" select, as a user picks it.
    assert satellite.pipeline_entity_id is not None
    await hass.services.async_call(
        "select",
        "select_option",
        {"entity_id": satellite.pipeline_entity_id, "option": name},
        blocking=True,
    )
    home = SatelliteHome(
        hass, parts, satellite, pipeline, [stt_entry, tts_entry, satellite_entry]
    )
    home.observe()
    # Connected once the entity holds its client; then it tells the satellite
    # to run (and the satellite listens for its wake word).
    await wait_until(
        lambda: getattr(satellite, "_client", None) is not None,
        30,
        "Home Assistant connecting to the satellite",
    )
    await asyncio.sleep(0.5)
    return home
