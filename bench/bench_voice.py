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
    .venv/bin/python -m bench.bench_voice --tables DUMP[,DUMP...]

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
from typing import Any

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


def record(row: Row) -> dict[str, Any]:
    """A turn as JSON: what the tables are made of (`--dump`, `--tables`)."""
    return {
        "agent": row.agent,
        "mode": row.mode,
        "index": row.index,
        "question": row.turn.question,
        "heard": row.turn.transcript,
        "calls": row.turn.tool_calls,
        "answer": row.turn.answer_text,
        "error": row.turn.error,
        "split": row.turn.split(),
        "model_sentence": row.model_sentence,
        "piper": row.piper,
        "floor": row.floor,
        "requests": [
            {
                "first_token": e.seconds_to_first_token,
                "first_sentence": e.seconds_to_first_sentence,
                "seconds": None if e.ended is None else e.ended - e.sent,
                "tokens": (e.usage or {}).get("completion_tokens"),
                "text": e.text,
            }
            for e in row.exchanges
        ],
    }


def median_p95(values: list[float]) -> str:
    """`median · p95`, or a dash."""
    if not values:
        return "-"
    return f"{fmt(statistics.median(values))} · {fmt(p95(values))}"


def report(records: list[dict[str, Any]]) -> None:
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
                r["agent"],
                r["mode"],
                r["question"],
                r["heard"] or "-",
                len(r["requests"]),
                *(fmt(r["split"][k]) for k in ("total", "stt", "agent", "tts")),
                fmt(r["floor"]),
                r["answer"].replace("|", "/").replace("\n", " ")[:70],
            )
            for r in records
        ],
    )
    summary = []
    for agent in dict.fromkeys(r["agent"] for r in records):
        for mode in ("follow-up", "fresh"):
            mine = [
                r
                for r in records
                if r["agent"] == agent and r["mode"] == mode and r["index"]
            ]
            cells: list[str] = [agent, mode, str(len(mine))]
            for key in PARTS:
                cells.append(
                    median_p95([v for r in mine if (v := r["split"][key]) is not None])
                )
            for key in ("model_sentence", "piper", "floor"):
                cells.append(median_p95([v for r in mine if (v := r[key]) is not None]))
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


def dump(records: list[dict[str, Any]], path: str) -> None:
    """Write the turns so far as JSON."""
    Path(path).write_text(json.dumps(records, indent=1))


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
    records: list[dict[str, Any]] = []
    try:
        with VoiceParts() as parts:
            await tools.start()
            await proxy.start()
            # The agents take turns, round by round: the machine's load
            # falls on both alike.
            for _ in range(args.rounds):
                for agent in args.agents:
                    rows = await run_agent(parts, proxy, tools, agent)
                    records += [record(row) for row in rows]
                    if args.dump:  # kept as it grows: a long run may be cut
                        dump(records, args.dump)
        report(records)
        print(f"\nMachine after the run: {machine()}")
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
    parser.add_argument(
        "--tables",
        metavar="DUMP[,DUMP...]",
        help="print the tables of earlier runs' dumps, together; run nothing",
    )
    return parser.parse_args()


if __name__ == "__main__":
    arguments = parse_args()
    if arguments.tables:
        report(
            [
                r
                for name in arguments.tables.split(",")
                for r in json.loads(Path(name).read_text())
            ]
        )
    else:
        asyncio.run(main(arguments))
