"""Ask the voice rig out loud (what `scripts/voice` runs, from `.venv`).

    python -m dev.voice --say "What's the weather in Rome?" [--say ...]
    python -m dev.voice            # one question per line on stdin

Starts Piper, PocketSphinx and wyoming-satellite (`parts.VoiceParts`), the
model server (`HTA_MODEL_SERVER_URL`, or llama-cpp-python with the Qwen model
on a free port), the demo tool server (the demo's model and tool servers
when `scripts/demo` runs: `beside_demo`), and a Home Assistant (the one the
benchmarks run, in this process, its HTTP on a free port) with this integration's agent, or core's
`llama_cpp` agent with `--agent core`, on an Assist pipeline PocketSphinx ->
agent -> Piper selected on the satellite (`tests.e2e.satellite`). Each
question is spoken into the satellite's microphone; the answer audio the
satellite receives is written to a WAV file, and what happened is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path
import shutil
import sys

from bench._ha import home_assistant
from dev.tool_server import DEMO_TOOLS, DemoToolServer, tool_definitions
from tests.e2e.harness import (
    ModelServer,
    server_answers,
    setup_llama_cpp,
    setup_ours,
)
from tests.e2e.satellite import SatelliteTurn, satellite_home

from .beside_demo import rig_services
from .parts import ROOT, VoiceParts

DEFAULT_WAV = ROOT / "test-artifacts" / "voice" / "answer.wav"


def log(message: str) -> None:
    """Progress, on stderr."""
    print(f"voice: {message}", file=sys.stderr, flush=True)


def seconds(value: float | None) -> str:
    """`1.23 s`, or a dash."""
    return "-" if value is None else f"{value:.2f} s"


def wav_path(base: Path, number: int) -> Path:
    """The first answer at `base`, the n-th beside it with `-n`."""
    return base if number == 1 else base.with_stem(f"{base.stem}-{number}")


def report(turn: SatelliteTurn, wav: Path | None) -> str:
    """What a turn did, for a person to read."""
    lines = [
        f"question:    {turn.question}",
        f"recognised:  {turn.transcript if turn.transcript is not None else '-'}",
    ]
    results = [json.dumps(r, ensure_ascii=False)[:120] for r in turn.tool_results]
    for index, (name, args) in enumerate(turn.tool_calls):
        result = results[index] if index < len(results) else "-"
        lines.append(
            f"tool call:   {name} {json.dumps(args, ensure_ascii=False)} -> {result}"
        )
    if not turn.tool_calls:
        lines.append("tool call:   none")
    lines.append(f"answer:      {turn.answer_text or '-'}")
    if turn.error:
        lines.append(f"error:       {turn.error}")
    if wav is not None and turn.answer is not None:
        lines.append(f"answer audio: {wav} ({turn.answer.pcm().seconds:.1f} s)")
    else:
        lines.append("answer audio: none")
    split = turn.split()
    lines.append(
        "times:       end of speech -> first answer audio "
        f"{seconds(split['total'])}: speech to text {seconds(split['stt'])} "
        f"(end of speech found {seconds(split['vad'])}, PocketSphinx "
        f"{seconds(split['recogniser'])}), agent to its first word "
        f"{seconds(split['agent'])}, from that word to audio at the satellite "
        f"{seconds(split['tts'])}"
    )
    return "\n".join(lines)


async def run(args: argparse.Namespace) -> int:
    """Start the rig, ask, print; 1 when a question got no answer audio."""
    status = 0
    services = rig_services(os.environ, server_answers)
    if services.note:
        log(services.note)
    log("starting Piper, PocketSphinx and the satellite")
    with VoiceParts() as parts:
        server = (
            ModelServer(services.model_url)
            if services.model_url
            else ModelServer.from_env_or_start()
        )
        tools = DemoToolServer()
        if services.tools_url is None:
            await tools.start()
            definitions = tools.tools(list(DEMO_TOOLS))
        else:
            by_name = {d["name"]: d for d in tool_definitions(services.tools_url)}
            definitions = [by_name[name] for name in DEMO_TOOLS]
        try:
            async with home_assistant() as hass:
                agent = await setup_ours(hass, server.url, definitions)
                if args.agent == "core":
                    agent = await setup_llama_cpp(hass, server.url)
                home = await satellite_home(hass, parts, agent)
                log(
                    f"ready: satellite on 127.0.0.1:{parts.satellite_port}, agent {agent}"
                )
                asked: list[str] | None = args.say  # None: read stdin
                number = 0
                while True:
                    if asked is None:
                        print("question> ", end="", file=sys.stderr, flush=True)
                        line = await asyncio.to_thread(sys.stdin.readline)
                        if not line:
                            break
                        text = line.strip()
                        if not text:
                            continue
                    elif number < len(asked):
                        text = asked[number]
                    else:
                        break
                    number += 1
                    turn = await home.ask(text, fresh=args.fresh)
                    wav = None
                    if turn.answer is not None:
                        wav = wav_path(Path(args.wav), number)
                        wav.parent.mkdir(parents=True, exist_ok=True)
                        shutil.copyfile(turn.answer.wav, wav)
                    else:
                        status = 1
                    print(report(turn, wav), flush=True)
                    print(flush=True)
                await home.close()
        finally:
            if services.tools_url is None:
                await tools.stop()
            server.stop()
    return status


def parse_args() -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(
        prog="scripts/voice", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--say", action="append", metavar="TEXT", help="a question (repeatable)"
    )
    parser.add_argument(
        "--wav",
        default=str(DEFAULT_WAV),
        help="where the answer audio goes (the n-th answer: NAME-n.wav)",
    )
    parser.add_argument(
        "--agent",
        choices=("ours", "core"),
        default="ours",
        help="this integration's agent, or core's llama_cpp on its HTTP tools",
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="each question in a new conversation (default: follow-ups)",
    )
    return parser.parse_args()


if __name__ == "__main__":
    sys.exit(asyncio.run(run(parse_args())))
