"""Warm first request: the first question after a restart, with and without
the warm-up (`server/warm_up.py`).

The demo's agent (Assist over the demo house, `dev/demo_house.py`, beside
the six demo tools; Qwen2.5-Coder-0.5B at temperature 0), as `scripts/demo`
sets it up. For each variant the model server is started afresh, its cache
empty (a restart), and a recording proxy (`bench/llm_proxy.py`) between Home
Assistant and the server notes each request:

- `cold`: `warm_up: off`: the first question reads the whole prompt;
- `warm`: `warm_up: on`: the agent sends its prompt's start when it is set
  up; once that is read, the first question comes.

Per variant: how long the warm-up took, the first question's first request
(seconds to its first token and, on llama.cpp's `llama-server`, the prompt
tokens it evaluated: `timings.prompt_n`), the whole turn, and the same
numbers for a second question in a new conversation (a follow-up's cost).

    .venv/bin/python -m bench.bench_warm_up [--port 8192] [--threads 1]
        [--llama-server PATH] [--question TEXT] [--variants cold,warm]

Without `--llama-server` the server is llama-cpp-python (`scripts/model_server
--install-only` first); with it, that `llama-server` binary (CONTRIBUTING,
"Benchmarks", tells how to build it) on the same model.
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass
import os
from pathlib import Path
import subprocess
import tempfile
import time

from homeassistant.const import CONF_LLM_HASS_API
from homeassistant.helpers import llm

from bench._ha import home_assistant, log, machine, table, timed_turn
from bench.llm_proxy import Exchange, RecordingProxy
from custom_components.http_tools_agent.const import CONF_WARM_UP
from dev.demo_house import async_set_up_house
from dev.tool_server import DEMO_TOOLS, DemoToolServer
from tests.e2e.harness import (
    MODELS_DIR,
    QWEN_FILE,
    ModelServer,
    server_answers,
    setup_ours,
)
from tests.kit import API_ID

QUESTIONS = ("Turn on the kitchen lights.", "Turn off the bed light.")


@dataclass
class Run:
    """One variant: the warm-up and two questions, each in a new conversation."""

    variant: str
    warm_up: Exchange | None = None
    first: tuple[float, Exchange | None, str] | None = None
    second: tuple[float, Exchange | None, str] | None = None


def start_llama_server(binary: str, port: int, threads: int) -> subprocess.Popen[bytes]:
    """llama.cpp's own server on the Qwen model, one slot."""
    log_file = Path(tempfile.gettempdir()) / f"hta-llama-server-{port}.log"
    with log_file.open("wb") as out:
        process = subprocess.Popen(
            [
                binary,
                "-m",
                str(MODELS_DIR / QWEN_FILE),
                "--jinja",
                "-c",
                "4096",
                "-t",
                str(threads),
                "-np",
                "1",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "-a",
                "qwen2.5-coder-0.5b",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 180
    while not server_answers(f"http://127.0.0.1:{port}/v1"):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise SystemExit(f"llama-server did not start: {log_file}")
        time.sleep(0.5)
    return process


async def run_variant(variant: str, base_url: str, questions: tuple[str, str]) -> Run:
    """Home Assistant with the demo agent on `base_url` (through a proxy)."""
    run = Run(variant)
    proxy = RecordingProxy(target=base_url)
    await proxy.start()
    try:
        async with home_assistant() as hass, DemoToolServer() as tools:
            await async_set_up_house(hass)
            agent = await setup_ours(
                hass,
                proxy.base_url,
                tools.tools(list(DEMO_TOOLS)),
                agent={
                    CONF_LLM_HASS_API: [llm.LLM_API_ASSIST, API_ID],
                    CONF_WARM_UP: "on" if variant == "warm" else "off",
                },
            )
            await hass.async_block_till_done(wait_background_tasks=True)
            if proxy.exchanges:
                run.warm_up = proxy.exchanges[0]
            for index, question in enumerate(questions):
                before = len(proxy.exchanges)
                seconds, _, spoken = await timed_turn(hass, agent, question)
                first = (
                    proxy.exchanges[before] if len(proxy.exchanges) > before else None
                )
                result = (seconds, first, spoken)
                if index == 0:
                    run.first = result
                else:
                    run.second = result
                log(f"{variant}: {question!r} {seconds:.1f} s -> {spoken!r}")
                for exchange in proxy.exchanges[before:]:
                    ttft = exchange.seconds_to_first_token
                    took = (exchange.ended or exchange.sent) - exchange.sent
                    log(
                        f"  request: {exchange.prompt_evaluated} prompt tokens "
                        f"read, first token {ttft if ttft is None else round(ttft, 1)}"
                        f" s, {took:.1f} s, {(exchange.usage or {}).get('completion_tokens')}"
                        " tokens written"
                    )
    finally:
        await proxy.stop()
    return run


def _first(result: tuple[float, Exchange | None, str] | None) -> list[str]:
    if result is None:
        return ["-", "-", "-", "-"]
    seconds, exchange, spoken = result
    ttft = exchange.seconds_to_first_token if exchange else None
    evaluated = exchange.prompt_evaluated if exchange else None
    return [
        f"{ttft:.1f}" if ttft is not None else "-",
        str(evaluated) if evaluated is not None else "-",
        f"{seconds:.1f}",
        spoken.replace("|", "/")[:60],
    ]


async def main() -> None:
    """Run the variants, one fresh server each, and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--llama-server", help="a llama-server binary")
    parser.add_argument("--variants", default="cold,warm")
    parser.add_argument("--question", default=QUESTIONS[0])
    args = parser.parse_args()
    questions = (args.question, QUESTIONS[1])
    os.environ["HTA_MODEL_THREADS"] = str(args.threads)
    server_name = "llama-server" if args.llama_server else "llama-cpp-python"
    log(f"machine: {machine()}")
    runs: list[Run] = []
    for variant in args.variants.split(","):
        log(f"{variant}: starting {server_name} on :{args.port} (empty cache)")
        if args.llama_server:
            process = start_llama_server(args.llama_server, args.port, args.threads)
            try:
                runs.append(
                    await run_variant(
                        variant, f"http://127.0.0.1:{args.port}/v1", questions
                    )
                )
            finally:
                process.terminate()
                process.wait(10)
        else:
            server = ModelServer.start(args.port)
            try:
                runs.append(await run_variant(variant, server.url, questions))
            finally:
                server.stop()
    rows = []
    for run in runs:
        warm = run.warm_up
        warm_seconds = (
            f"{warm.ended - warm.sent:.1f}" if warm and warm.ended is not None else "-"
        )
        # The prompt's size: llama.cpp's count of what it read, else `usage`.
        warm_tokens = (
            (warm.prompt_evaluated or (warm.usage or {}).get("prompt_tokens"))
            if warm
            else None
        )
        rows.append(
            [
                run.variant,
                warm_seconds,
                str(warm_tokens) if warm_tokens is not None else "-",
                *_first(run.first),
                *_first(run.second)[:3],
            ]
        )
    table(
        f"Warm first request ({server_name}, {args.threads} thread(s), "
        f"first question: {questions[0]!r}, then {questions[1]!r})",
        [
            "variant",
            "warm-up s",
            "warm-up prompt tokens",
            "1st question: s to first token",
            "prompt tokens evaluated",
            "turn s",
            "answer",
            "2nd question: s to first token",
            "prompt tokens evaluated",
            "turn s",
        ],
        rows,
    )
    print(f"\n{machine()}")


if __name__ == "__main__":
    asyncio.run(main())
