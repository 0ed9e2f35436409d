"""P8b: voice latency as a household feels it, through a real satellite.

The voice rig (`dev.voice.parts`, `tests.e2e.satellite`): Piper speaks each
question into wyoming-satellite's microphone; Home Assistant's `wyoming`
integration runs the satellite's pipeline PocketSphinx -> the agent (on the
real model, through a recording proxy: `bench/llm_proxy.py`) -> Piper, and
sends the answer audio back to the satellite's speaker.

Measured per turn, on one clock: the end of the user's speech at the
satellite's microphone -> the first answer audio at its speaker, split into

- speech to text: the end of speech -> the transcript (Home Assistant's
  voice activity detection waiting out its silence window, then
  PocketSphinx finishing the utterance);
- the agent to its first spoken word (the first text delta);
- text to speech: that word -> the first audio at the satellite (the rest
  of a sentence, or of a short answer, which the pipeline sends whole;
  Piper; Home Assistant's ffmpeg conversion; the Wyoming hops).

The floor of a turn: the silence window and PocketSphinx's own time (as
measured), the model's first sentence (the time the turn's last request took
to its first sentence: what is left if every earlier round were free), and
Piper's own time to the first audio of that sentence (asked directly).

Agents: `ours`, and `core` (Home Assistant's `llama_cpp` agent on our HTTP
tools API, the end-to-end harness's baseline). Per agent, the questions run
as follow-ups in one conversation and each in a fresh one; the agents take
turns, `--rounds` times. The medians and p95 leave out each series' first
question (a cold cache).

    .venv/bin/python -m bench.bench_voice [--agents ours,core] [--rounds 2]
        [--base-url URL] [--dump FILE]

Needs `scripts/voice --install-only` (and starts llama-cpp-python with the
Qwen model unless `--base-url` or HTA_MODEL_SERVER_URL names a server).
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass
import json
from pathlib import Path
import re
import statistics

from bench._ha import home_assistant, log, machine, table
from bench.llm_proxy import Exchange, RecordingProxy
from dev.tool_server import DEMO_TOOLS, DemoToolServer
from dev.voice.parts import VoiceParts
from tests.e2e.harness import ModelServer, setup_llama_cpp, setup_ours
from tests.e2e.satellite import SatelliteTurn, satellite_home

# P7's questions, with "What's on my shopping list?" (PocketSphinx hears
# P7's "What is on..." as "what is all my shopping list"). "Add milk..." is
# misheard every time: kept, as a household meets it.
QUESTIONS = (
    "What's the weather in Rome?",
    "And in Paris?",
    "Add milk to my shopping list.",
    "What's on my shopping list?",
    "Thank you!",
)
SENTENCE = re.compile(r"^.*?[.!?](\s|$)", re.DOTALL)
PARTS = ("total", "stt", "vad", "recogniser", "agent", "tts")


@dataclass
class Row:
    """One turn of one agent, with the model's requests and the floor."""

    agent: str
    mode: str
    index: int
    turn: SatelliteTurn
    exchanges: list[Exchange]
    piper: float | None

    @property
    def model_sentence(self) -> float | None:
        """The turn's last request to its first sentence."""
        if not self.exchanges:
            return None
        return self.exchanges[-1].seconds_to_first_sentence

    @property
    def floor(self) -> float | None:
        """Silence window + recogniser + model's first sentence + Piper."""
        split = self.turn.split()
        parts = (split["vad"], split["recogniser"], self.model_sentence, self.piper)
        if any(p is None for p in parts):
            return None
        return sum(p for p in parts if p is not None)


def first_sentence(text: str) -> str:
    """What the TTS speaks first."""
    found = SENTENCE.match(text.strip())
    return found.group(0).strip() if found else text.strip()


def fmt(value: float | None) -> str:
    """Seconds with two decimals, or a dash."""
    return "-" if value is None else f"{value:.2f}"


def p95(values: list[float]) -> float:
    """The 95th percentile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def run_agent(
    parts: VoiceParts,
    proxy: RecordingProxy,
    tools: DemoToolServer,
    agent: str,
) -> list[Row]:
    """The questions through the satellite, as follow-ups then fresh, in a
    Home Assistant of their own."""
    rows: list[Row] = []
    tools.reset()  # the same shopping list for every agent
    async with home_assistant() as hass:
        agent_id = await setup_ours(hass, proxy.base_url, tools.tools(list(DEMO_TOOLS)))
        if agent == "core":
            agent_id = await setup_llama_cpp(hass, proxy.base_url)
        home = await satellite_home(hass, parts, agent_id, name=f"Voice {agent}")
        try:
            for mode in ("follow-up", "fresh"):
                home.new_conversation()
                for index, question in enumerate(QUESTIONS):
                    before = len(proxy.exchanges)
                    turn = await home.ask(question, fresh=mode == "fresh")
                    sentence = first_sentence(turn.answer_text)
                    piper = (
                        await parts.piper_first_audio(sentence) if sentence else None
                    )
                    row = Row(agent, mode, index, turn, proxy.exchanges[before:], piper)
                    rows.append(row)
                    split = turn.split()
                    log(
                        f"{agent:5} {mode:9} {question[:28]:28} heard "
                        f"{turn.transcript!r:34} first audio "
                        f"{fmt(split['total'])} s (floor {fmt(row.floor)}): "
                        f"{turn.answer_text[:50]!r}"
                    )
        finally:
            await home.close()
    return rows


def report(rows: list[Row]) -> None:
    """The per-turn table and the medians/p95."""
    table(
        "Per turn (s): end of speech at the satellite -> first answer audio there",
        (
            "agent",
            "conversation",
            "question",
            "heard",
            "requests",
            "total",
            "speech to text",
            "agent to first word",
            "first word to audio",
            "floor",
            "answer",
        ),
        [
            (
                r.agent,
                r.mode,
                r.turn.question,
                r.turn.transcript or "-",
                len(r.exchanges),
                *(fmt(r.turn.split()[k]) for k in ("total", "stt", "agent", "tts")),
                fmt(r.floor),
                r.turn.answer_text.replace("|", "/").replace("\n", " ")[:70],
            )
            for r in rows
        ],
    )
    summary = []
    for agent in dict.fromkeys(r.agent for r in rows):
        for mode in ("follow-up", "fresh"):
            mine = [r for r in rows if r.agent == agent and r.mode == mode and r.index]
            cells: list[str] = [agent, mode, str(len(mine))]
            for key in PARTS:
                values = [v for r in mine if (v := r.turn.split()[key]) is not None]
                cells.append(
                    f"{fmt(statistics.median(values))} · {fmt(p95(values))}"
                    if values
                    else "-"
                )
            for values in (
                [v for r in mine if (v := r.model_sentence) is not None],
                [v for r in mine if (v := r.piper) is not None],
                [v for r in mine if (v := r.floor) is not None],
            ):
                cells.append(
                    f"{fmt(statistics.median(values))} · {fmt(p95(values))}"
                    if values
                    else "-"
                )
            summary.append(cells)
    table(
        "P8b: median · p95 over questions 2-5 (s)",
        (
            "agent",
            "conversation",
            "turns",
            "end of speech -> first audio",
            "speech to text",
            "of which silence window",
            "of which PocketSphinx",
            "agent to first word",
            "first word to audio",
            "model's first sentence (last request)",
            "Piper's own first audio",
            "floor",
        ),
        summary,
    )


def dump(rows: list[Row], path: Path) -> None:
    """Every turn as JSON."""
    path.write_text(
        json.dumps(
            [
                {
                    "agent": r.agent,
                    "mode": r.mode,
                    "question": r.turn.question,
                    "heard": r.turn.transcript,
                    "calls": r.turn.tool_calls,
                    "answer": r.turn.answer_text,
                    "error": r.turn.error,
                    "split": r.turn.split(),
                    "piper": r.piper,
                    "floor": r.floor,
                    "requests": [
                        {
                            "first_token": e.seconds_to_first_token,
                            "first_sentence": e.seconds_to_first_sentence,
                            "seconds": None if e.ended is None else e.ended - e.sent,
                        }
                        for e in r.exchanges
                    ],
                }
                for r in rows
            ],
            indent=1,
            default=str,
        )
    )


async def main(args: argparse.Namespace) -> None:
    """Start the rig, run the agents, print the tables."""
    print(f"Machine: {machine()}")
    server = (
        ModelServer(args.base_url.rstrip("/"))
        if args.base_url
        else ModelServer.from_env_or_start()
    )
    tools = DemoToolServer()
    proxy = RecordingProxy(target=server.url)
    rows: list[Row] = []
    try:
        with VoiceParts() as parts:
            await tools.start()
            await proxy.start()
            # The agents take turns, round by round: the machine's load
            # falls on both alike.
            for _ in range(args.rounds):
                for agent in args.agents:
                    rows += await run_agent(parts, proxy, tools, agent)
        report(rows)
        print(f"\nMachine after the run: {machine()}")
        if args.dump:
            dump(rows, Path(args.dump))
    finally:
        await proxy.stop()
        await tools.stop()
        server.stop()


def parse_args() -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", help="an OpenAI-compatible /v1 URL")
    parser.add_argument(
        "--agents", type=lambda text: text.split(","), default=["ours", "core"]
    )
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--dump", help="write every turn as JSON here")
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
