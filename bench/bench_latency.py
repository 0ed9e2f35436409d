"""Latency with the real model, through the Assist pipeline: text in, speech out.

The same questions, asked as follow-ups in one conversation and each in a
fresh conversation, go through Assist pipelines that end in a streaming
Wyoming TTS (espeak-ng), one pipeline per agent:

- `ours`: this integration;
- `ours-before`: ours without the date-and-time tool, so Home Assistant's
  clock line stays in the system prompt (the prompt before the stable
  prefix, for comparison);
- `core`: Home Assistant core's `llama_cpp` agent with our HTTP tools API
  (which brings the date-and-time tool: core's prompt is stable too);
- `core-before`: the same without the date-and-time tool (core as it runs
  with any tools API that has none).

Each agent's questions run back to back (a server slot caches one prompt).
Measured per turn: time to the first spoken word (text in -> the first audio
of the TTS stream, read as a satellite reads it) and to the whole answer (end
of the intent stage). Per request, a recording proxy between Home Assistant
and the server (`bench/llm_proxy.py`) notes the time to the first token and
what the server reports (llama.cpp's `timings`: prompt tokens evaluated). On
llama.cpp's `llama-server` it also works out the floor: the time the server
needs to the first spoken word when only the tokens new since the previous
request are evaluated (`/apply-template` + `/tokenize`, at the server's
measured speeds): the new prompt tokens of every round, the tokens the calls
generate, and the answer's first sentence (the TTS speaks by sentences).

`--concurrent N` runs N follow-up conversations at once (N satellites) and
prints p50/p95 of the first word; give it a server with N slots
(`llama-server -np N`).

    .venv/bin/python -m bench.bench_latency [--base-url URL]
        [--agents ours-before,ours,core] [--concurrent N] [--dump FILE]

Without `--base-url` (or HTA_MODEL_SERVER_URL) it starts llama-cpp-python
with Qwen2.5-Coder-0.5B (`scripts/model_server --install-only` first).
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
import json
from pathlib import Path
import re
import statistics
import time

import aiohttp
from homeassistant.components import tts
from homeassistant.components.assist_pipeline import PipelineEvent, PipelineEventType
from homeassistant.components.assist_pipeline.const import DOMAIN as PIPELINE_DOMAIN
from homeassistant.components.assist_pipeline.pipeline import (
    KEY_ASSIST_PIPELINE,
    Pipeline,
    PipelineInput,
    PipelineRun,
    PipelineStage,
)
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import chat_session, llm
from homeassistant.setup import async_setup_component

from bench._ha import home_assistant, log, machine, table
from bench.llm_proxy import Exchange, RecordingProxy
from custom_components.http_tools_agent.const import CONF_MAX_TOKENS
from custom_components.http_tools_agent.tools.llm_api import DateTimeTool, HttpToolsAPI
from dev.tool_server import DemoToolServer, tool_definitions
from tests.e2e.harness import ModelServer, setup_llama_cpp, setup_ours
from tests.voice.conftest import add_wyoming_service, entity_of
from tests.voice.wyoming_servers import VOICE, Timeline, WyomingTTS

QUESTIONS = (
    "What's the weather in Rome?",
    "And in Paris?",
    "Add milk to my shopping list.",
    "What is on my shopping list?",
    "Thank you!",
)
WAV_HEADER = 44
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
CLOCK_RE = re.compile(r"Current time is [^.]*\. Today's date is [^.]*\.")


@dataclass
class Turn:
    """One question through one pipeline."""

    agent: str
    mode: str
    question: str
    first_word: float | None = None
    # The answer's first sentence complete: what the TTS waits for.
    first_sentence: float | None = None
    answer: float | None = None
    spoken: str = ""
    exchanges: list[Exchange] = field(default_factory=list)


@contextmanager
def clock_in_system_prompt() -> Iterator[None]:
    """The layout before the stable prefix: no date-and-time tool, so Home
    Assistant puts its clock line (to the second) into the system prompt."""
    original = HttpToolsAPI.async_get_api_instance

    async def without_clock_tool(
        self: HttpToolsAPI, llm_context: llm.LLMContext
    ) -> llm.APIInstance:
        instance = await original(self, llm_context)
        instance.tools = [t for t in instance.tools if not isinstance(t, DateTimeTool)]
        return instance

    HttpToolsAPI.async_get_api_instance = without_clock_tool  # type: ignore[method-assign]
    try:
        yield
    finally:
        HttpToolsAPI.async_get_api_instance = original  # type: ignore[method-assign]


async def make_pipeline(hass: HomeAssistant, agent_id: str, tts_id: str) -> Pipeline:
    """An English pipeline: text -> the agent -> the Wyoming TTS."""
    store = hass.data[KEY_ASSIST_PIPELINE].pipeline_store
    pipeline: Pipeline = await store.async_create_item(
        {
            "name": f"bench {agent_id}",
            "language": "en",
            "conversation_engine": agent_id,
            "conversation_language": "en",
            "stt_engine": None,
            "stt_language": None,
            "tts_engine": tts_id,
            "tts_language": "en",
            "tts_voice": VOICE,
            "wake_word_entity": None,
            "wake_word_id": None,
        }
    )
    return pipeline


async def first_audio(hass: HomeAssistant, token: str, started: float) -> float | None:
    """Read the TTS stream as a satellite does; when did speech arrive?"""
    stream = tts.async_get_stream(hass, token)
    if stream is None:
        return None
    received = 0
    async for chunk in stream.async_stream_result():
        received += len(chunk)
        if received > WAV_HEADER:
            return time.perf_counter() - started
    return None


async def ask(
    hass: HomeAssistant, pipeline: Pipeline, turn: Turn, conversation_id: str | None
) -> str:
    """Run one text turn through the pipeline and fill in `turn`; return the
    conversation id."""
    started = time.perf_counter()
    reading: list[asyncio.Task[float | None]] = []

    said: list[str] = []

    def on_event(event: PipelineEvent) -> None:
        data = event.data or {}
        if (
            event.type is PipelineEventType.INTENT_PROGRESS
            and turn.first_sentence is None
        ):
            said.append((data.get("chat_log_delta") or {}).get("content") or "")
            if SENTENCE_END.search("".join(said) + " "):
                turn.first_sentence = time.perf_counter() - started
        if event.type is PipelineEventType.RUN_START and "tts_output" in data:
            token = data["tts_output"]["token"]
            reading.append(hass.async_create_task(first_audio(hass, token, started)))
        elif event.type is PipelineEventType.INTENT_END:
            turn.answer = time.perf_counter() - started
            if turn.first_sentence is None:
                turn.first_sentence = turn.answer
            speech = data["intent_output"]["response"]["speech"]
            turn.spoken = speech.get("plain", {}).get("speech", "")

    with chat_session.async_get_chat_session(hass, conversation_id) as session:
        pipeline_input = PipelineInput(
            session=session,
            intent_input=turn.question,
            run=PipelineRun(
                hass,
                context=Context(),
                pipeline=pipeline,
                start_stage=PipelineStage.INTENT,
                end_stage=PipelineStage.TTS,
                event_callback=on_event,
                # What the TTS makes: no conversion (and no ffmpeg) in between.
                tts_audio_output={tts.ATTR_PREFERRED_FORMAT: "wav"},
            ),
        )
        await pipeline_input.validate()
        await pipeline_input.execute()
        conversation_id = session.conversation_id
    if reading:
        turn.first_word = await asyncio.wait_for(reading[0], 300)
    return conversation_id


def fmt(value: float | None) -> str:
    """Seconds with two decimals, or a dash."""
    return "-" if value is None else f"{value:.2f}"


async def run_agent(
    hass: HomeAssistant, pipeline: Pipeline, agent: str, proxy: RecordingProxy
) -> list[Turn]:
    """The questions as follow-ups, then each in a fresh conversation."""
    turns: list[Turn] = []
    for mode in ("follow-up", "fresh"):
        conversation_id = None
        for question in QUESTIONS:
            turn = Turn(agent, mode, question)
            before = len(proxy.exchanges)
            new_id = await ask(hass, pipeline, turn, conversation_id)
            conversation_id = new_id if mode == "follow-up" else None
            turn.exchanges = proxy.exchanges[before:]
            turns.append(turn)
            log(
                f"{agent:12} {mode:9} {question[:30]:30} first word "
                f"{fmt(turn.first_word)} s, answer {fmt(turn.answer)} s, "
                f"evaluated {[e.prompt_evaluated for e in turn.exchanges]}: "
                f"{turn.spoken[:60]!r}"
            )
    return turns


async def new_tokens(
    session: aiohttp.ClientSession, server: str, exchanges: list[Exchange]
) -> list[int] | None:
    """Per request, the prompt tokens not in the previous request's prompt
    (both without Home Assistant's clock line).

    llama.cpp only (`/apply-template`, `/tokenize`); None elsewhere.
    """
    root = server.removesuffix("/v1")
    previous: list[int] = []
    counts: list[int] = []
    for exchange in exchanges:
        body = {k: v for k, v in exchange.body.items() if k in ("messages", "tools")}
        # The content that is new, whatever the layout: Home Assistant's
        # clock line (changing every turn in the layout before) does not count.
        body["messages"] = [
            {**m, "content": CLOCK_RE.sub("", m["content"])}
            if m["role"] == "system"
            else m
            for m in body["messages"]
        ]
        async with session.post(f"{root}/apply-template", json=body) as reply:
            if reply.status != 200:
                return None
            prompt = (await reply.json())["prompt"]
        async with session.post(f"{root}/tokenize", json={"content": prompt}) as reply:
            tokens: list[int] = (await reply.json())["tokens"]
        common = 0
        for old, new in zip(previous, tokens, strict=False):
            if old != new:
                break
            common += 1
        counts.append(len(tokens) - common)
        previous = tokens
    return counts


def speeds(exchanges: list[Exchange]) -> tuple[float, float] | None:
    """Median ms per prompt token and per generated token (llama.cpp)."""
    prompt = [
        e.timings["prompt_per_token_ms"]
        for e in exchanges
        if e.timings and e.timings.get("prompt_n", 0) >= 20
    ]
    gen = [
        e.timings["predicted_per_token_ms"]
        for e in exchanges
        if e.timings and e.timings.get("predicted_n", 0) >= 5
    ]
    if not prompt or not gen:
        return None
    return statistics.median(prompt), statistics.median(gen)


def floor_of(
    turn: Turn, new: list[int], rates: tuple[float, float], first_sentence: int
) -> float:
    """Seconds to the first word if only new tokens were evaluated: every
    round's new prompt tokens, the calls' generated tokens, and the tokens of
    the answer's first sentence (what the TTS waits for before it speaks)."""
    per_prompt, per_token = rates
    total = 0.0
    for index, exchange in enumerate(turn.exchanges):
        total += new[index] * per_prompt
        last = index == len(turn.exchanges) - 1
        generated = (exchange.timings or {}).get("predicted_n", 1)
        total += (first_sentence if last else generated) * per_token
    return total / 1000


async def sentence_tokens(
    session: aiohttp.ClientSession, server: str, spoken: str
) -> int:
    """Tokens of the answer's first sentence (llama.cpp's `/tokenize`)."""
    sentence = SENTENCE_END.split(spoken.strip(), maxsplit=1)[0] or spoken
    root = server.removesuffix("/v1")
    async with session.post(f"{root}/tokenize", json={"content": sentence}) as reply:
        return max(len((await reply.json())["tokens"]), 1)


def report(turns: list[Turn], floors: dict[int, float]) -> None:
    """The per-turn table and the medians."""
    rows = []
    for index, turn in enumerate(turns):
        evaluated = [e.prompt_evaluated for e in turn.exchanges]
        rows.append(
            (
                turn.agent,
                turn.mode,
                turn.question,
                len(turn.exchanges),
                fmt(turn.first_sentence),
                fmt(turn.first_word),
                fmt(turn.answer),
                " / ".join(fmt(e.seconds_to_first_token) for e in turn.exchanges),
                " / ".join("-" if n is None else str(n) for n in evaluated),
                fmt(floors.get(index)),
            )
        )
    table(
        "Latency per turn (s; per request: time to first token, prompt tokens "
        "the server evaluated)",
        (
            "agent",
            "conversation",
            "question",
            "requests",
            "first sentence",
            "first word",
            "answer",
            "first token per request",
            "evaluated",
            "floor",
        ),
        rows,
    )
    summary = []
    for agent in dict.fromkeys(t.agent for t in turns):
        for mode in ("follow-up", "fresh"):
            mine = [
                (i, t)
                for i, t in enumerate(turns)
                if t.agent == agent and t.mode == mode and t.question != QUESTIONS[0]
            ]
            first = [t.first_word for _, t in mine if t.first_word is not None]
            sentence = [
                t.first_sentence for _, t in mine if t.first_sentence is not None
            ]
            done = [t.answer for _, t in mine if t.answer is not None]
            ttft = [
                e.seconds_to_first_token
                for _, t in mine
                for e in t.exchanges[:1]
                if e.seconds_to_first_token is not None
            ]
            floor = [floors[i] for i, _ in mine if i in floors]
            summary.append(
                (
                    agent,
                    mode,
                    fmt(statistics.median(sentence)) if sentence else "-",
                    fmt(statistics.median(first)) if first else "-",
                    fmt(statistics.median(done)) if done else "-",
                    fmt(statistics.median(ttft)) if ttft else "-",
                    fmt(statistics.median(floor)) if floor else "-",
                )
            )
    table(
        "Medians over questions 2-5 (s)",
        (
            "agent",
            "conversation",
            "first sentence",
            "first word",
            "answer",
            "first token of the turn's first request",
            "floor",
        ),
        summary,
    )


async def concurrent(
    hass: HomeAssistant, pipeline: Pipeline, satellites: int, proxy: RecordingProxy
) -> None:
    """N satellites asking their follow-ups at the same time: how fast, and
    whether each conversation kept hitting a warm cache (prompt tokens the
    server evaluated for the first request of each follow-up turn)."""

    async def satellite(number: int) -> list[Turn]:
        conversation_id = None
        turns = []
        for question in QUESTIONS:
            turn = Turn(f"satellite {number}", "follow-up", question)
            before = len(proxy.exchanges)
            conversation_id = await ask(hass, pipeline, turn, conversation_id)
            # The turn's first request is its own: later ones may interleave.
            turn.exchanges = proxy.exchanges[before : before + 1]
            turns.append(turn)
        return turns

    started = time.perf_counter()
    results = await asyncio.gather(*(satellite(n) for n in range(satellites)))
    wall = time.perf_counter() - started
    first = sorted(t.first_word for ts in results for t in ts[1:] if t.first_word)
    p95 = first[min(len(first) - 1, round(0.95 * (len(first) - 1)))] if first else None
    evaluated = [
        e.prompt_evaluated
        for ts in results
        for t in ts[1:]
        for e in t.exchanges
        if e.prompt_evaluated is not None
    ]
    table(
        f"{satellites} conversations at once (follow-ups 2-5)",
        (
            "satellites",
            "turns",
            "first word p50 s",
            "first word p95 s",
            "wall s",
            "prompt tokens evaluated (median, max)",
        ),
        [
            (
                satellites,
                len(first),
                fmt(statistics.median(first)) if first else "-",
                fmt(p95),
                fmt(wall),
                f"{statistics.median(evaluated)}, {max(evaluated)}"
                if evaluated
                else "-",
            )
        ],
    )


async def floors_of(
    turns: list[Turn], agents: list[str], server_url: str
) -> dict[int, float]:
    """The floor of each turn, where the server can tell it (llama.cpp)."""
    floors: dict[int, float] = {}
    async with aiohttp.ClientSession() as session:
        for agent in agents:
            mine = [(i, t) for i, t in enumerate(turns) if t.agent == agent]
            exchanges = [e for _, t in mine for e in t.exchanges]
            new = await new_tokens(session, server_url, exchanges)
            rates = speeds(exchanges)
            if new is None or rates is None:
                continue
            for index, turn in mine:
                count = len(turn.exchanges)
                first = await sentence_tokens(session, server_url, turn.spoken)
                floors[index] = floor_of(turn, new[:count], rates, first)
                new = new[count:]
    return floors


def dump(turns: list[Turn], path: Path) -> None:
    """Every turn, with the server's counts, as JSON."""
    path.write_text(
        json.dumps(
            [
                {
                    "agent": t.agent,
                    "mode": t.mode,
                    "question": t.question,
                    "first_sentence": t.first_sentence,
                    "first_word": t.first_word,
                    "answer": t.answer,
                    "spoken": t.spoken,
                    "requests": [
                        {
                            "first_token": e.seconds_to_first_token,
                            "timings": e.timings,
                            "usage": e.usage,
                        }
                        for e in t.exchanges
                    ],
                }
                for t in turns
            ],
            indent=1,
        )
    )


async def main(args: argparse.Namespace) -> None:
    """Run the agents' turns and print the tables."""
    print(f"Machine: {machine()}")
    server = (
        ModelServer(args.base_url.rstrip("/"))
        if args.base_url
        else ModelServer.from_env_or_start()
    )
    tts_server = WyomingTTS(Timeline(), streaming=True)
    tools = DemoToolServer()
    proxy = RecordingProxy(target=server.url)
    try:
        await tts_server.start()
        await tools.start()
        await proxy.start()
        log(f"model server {server.url}, through the proxy {proxy.base_url}")
        async with home_assistant() as hass:
            ours = await setup_ours(
                hass,
                proxy.base_url,
                # The eight tools P7 was measured with (get_item came later).
                [t for t in tool_definitions(tools.url) if t["name"] != "get_item"],
                model=args.model,
                agent={CONF_MAX_TOKENS: args.max_tokens} if args.max_tokens else None,
            )
            for component in (PIPELINE_DOMAIN, "media_source"):
                assert await async_setup_component(hass, component, {})
            tts_entry = await add_wyoming_service(hass, tts_server.port)
            tts_id = entity_of(hass, "tts", f"{tts_entry.entry_id}-tts")
            pipelines = {"ours": await make_pipeline(hass, ours, tts_id)}
            pipelines["ours-before"] = pipelines["ours"]
            if {"core", "core-before"} & set(args.agents):
                core = await setup_llama_cpp(hass, proxy.base_url, model=args.model)
                pipelines["core"] = await make_pipeline(hass, core, tts_id)
                pipelines["core-before"] = pipelines["core"]
            if args.concurrent:
                await concurrent(hass, pipelines["ours"], args.concurrent, proxy)
                return
            turns: list[Turn] = []
            for agent in args.agents:
                if agent.endswith("-before"):
                    with clock_in_system_prompt():
                        turns += await run_agent(hass, pipelines[agent], agent, proxy)
                else:
                    turns += await run_agent(hass, pipelines[agent], agent, proxy)
            report(turns, await floors_of(turns, args.agents, server.url))
            if args.dump:
                dump(turns, Path(args.dump))
    finally:
        await proxy.stop()
        await tools.stop()
        await tts_server.stop()
        server.stop()


def parse_args() -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", help="an OpenAI-compatible /v1 URL")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument(
        "--agents",
        type=lambda text: text.split(","),
        default=["ours-before", "ours", "core-before", "core"],
    )
    parser.add_argument("--concurrent", type=int, default=0)
    parser.add_argument(
        "--max-tokens", type=int, help="our agent's maximum tokens (its default)"
    )
    parser.add_argument("--dump", help="write every turn as JSON here")
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
