"""P1, P2, P3: the tool loop in real Home Assistant against scripted servers.

Both agents run in one Home Assistant, side by side (alternating blocks of
turns) on the same scripted OpenAI-compatible server and the same tool endpoint, both on
loopback: ours (`http_tools_agent`) and HA core's `llama_cpp` agent (the
open_router/llama_cpp loop shape: structured calls only) using our HTTP tools
LLM API.

- P1: per-round overhead: a turn = structured call round + answer round,
  minus the floor (the bare openai SDK consuming the same two streams and
  aiohttp fetching the same tool URL, no Home Assistant); each agent in
  blocks of its own turns (`connections_opened`).
- P2: time to the first spoken character (first content delta the chat log
  hands the Assist pipeline) on a paced stream (one token per chunk, 20 ms
  apart, as llama-cpp-python sends), vs the raw SDK stream.
- P3: three parallel tool calls of 300 ms each vs one.
- P1b: the whole turn a user waits for: small talk (no call, three
  pieces streamed by an instant server) through `conversation.async_converse`
  with five HTTP tools offered to both agents; wall and CPU time per turn
  (CPU time of this process, which holds both agents and the servers: less
  moved by other load on the machine than wall time) and the connections
  each turn opens. Each agent runs its turns in blocks (see `p1b`).

    .venv/bin/python -m bench.bench_loop [--turns 40] [--only p1,p1b,p2,p3]
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
import json
import statistics
import time
from typing import Any

import aiohttp
import openai

from bench._ha import home_assistant, machine, median_ms, table, timed_turn
from dev.tool_server import DEMO_TOOLS, DemoToolServer
from tests.e2e.harness import setup_llama_cpp, setup_ours
from tests.kit import speech, weather_tool
from tests.servers import (
    FakeLLMServer,
    Reply,
    ToolEndpoint,
    text_stream,
    tool_calls_stream,
    transcript,
)

WEATHER_TOOL = "get_weather"
ANSWER = "It is sunny in Rome, 14 degrees."
TOKEN_GAP = 0.020
ANSWER_TOKENS = ["It", " is", " sunny", " in", " Rome", ",", " 14", " degrees", "."]
# Small talk: no action and no result, so the small profile's honesty checks
# let it through (they hold each sentence until it is whole).
HELLO_TOKENS = ["Hello", "!", " How", " can", " I", " help", " you", " today", "?"]
# The model's profile (profiles.py): P1 and P2 measure the plain loop, and the
# small profile's rules on top of it in rows of their own.
CAPABLE = {"profile": "capable"}
SMALL = {"profile": "small"}
# P1b: what a small-talk answer streams. P1, P1b: the turns each agent runs
# in a row (`connections_opened`).
SMALL_TALK = ("Hello", " there", "!")
BLOCK = 10
THINKING = ["<think>", "The", " user", " asks", " the", " weather", ".", "</think>"]


async def three_agents(
    hass: object, base_url: str, endpoint: ToolEndpoint
) -> tuple[str, str, str]:
    """Ours as capable and as small, and core's `llama_cpp`, on one server
    with the weather tool."""
    from homeassistant.core import HomeAssistant

    assert isinstance(hass, HomeAssistant)
    tools = [weather_tool(endpoint.url)]
    ours = await setup_ours(hass, base_url, tools, agent=CAPABLE)
    small = await setup_ours(
        hass, base_url, tools, agent=SMALL, unique_id="01JSMALLPROFILE"
    )
    return ours, small, await setup_llama_cpp(hass, base_url)


@contextmanager
def connections_opened() -> Iterator[list[int]]:
    """Count the TCP connections this process opens meanwhile (item 0).

    Both agents use Home Assistant's shared HTTP client, and core's SDK
    drops the connection after `[DONE]`: a turn right after core's opens a
    new one, whichever agent it is. So each agent runs its turns in blocks
    of `BLOCK`, the first of each left out, and pays for what it does to its
    own connection, as in a Home Assistant where it is the one agent.
    """
    loop = asyncio.get_running_loop()
    connect = loop.create_connection
    opened = [0]

    async def counted(*args: Any, **kwargs: Any) -> Any:
        opened[0] += 1
        return await connect(*args, **kwargs)

    setattr(loop, "create_connection", counted)  # noqa: B010
    try:
        yield opened
    finally:
        setattr(loop, "create_connection", connect)  # noqa: B010


def paced(tokens: list[str]) -> Reply:
    """One token per chunk, TOKEN_GAP seconds before each SSE event."""
    reply = text_stream(*tokens, chunk_delay=TOKEN_GAP)
    reply.delay = TOKEN_GAP
    return reply


async def floor_turn(
    client: openai.AsyncOpenAI, session: aiohttp.ClientSession, tool_url: str
) -> float:
    """The same two rounds with the bare SDK and one aiohttp GET.

    Each stream is read to the end of its body, as the agent reads it, so the
    connection is reused (the SDK's own stream stops at `[DONE]` and drops it).
    """
    started = time.perf_counter()
    for _ in range(2):
        async with client.chat.completions.with_streaming_response.create(
            model="local", messages=[{"role": "user", "content": "x"}], stream=True
        ) as stream:
            async for line in stream.iter_lines():
                if line.startswith("data: {"):
                    json.loads(line[6:])
        if _ == 0:
            async with session.get(f"{tool_url}/weather/Rome") as reply:
                await reply.read()
    return time.perf_counter() - started


async def raw_first_char(client: openai.AsyncOpenAI) -> float | None:
    """Time to the first non-empty content delta of the raw SDK stream."""
    started = time.perf_counter()
    first = None
    async with await client.chat.completions.create(
        model="local", messages=[{"role": "user", "content": "x"}], stream=True
    ) as stream:
        async for part in stream:
            if first is None and part.choices and part.choices[0].delta.content:
                first = time.perf_counter() - started
    return first


async def main(turns: int, only: set[str]) -> None:
    """Run P1-P3 (or those in `only`) and print their tables."""
    print(f"Machine: {machine()}")
    llm = FakeLLMServer()
    fast = FakeLLMServer()
    endpoint = ToolEndpoint()
    for server in (llm, fast, endpoint):
        await server.start()
    try:
        if only & {"p1", "p3"}:
            async with home_assistant() as hass:
                ours, small, core = await three_agents(hass, fast.base_url, endpoint)
                client = openai.AsyncOpenAI(api_key="x", base_url=fast.base_url)
                if "p1" in only:
                    async with aiohttp.ClientSession() as session:
                        await p1(
                            hass,
                            fast,
                            endpoint,
                            (ours, small),
                            core,
                            client,
                            session,
                            turns,
                        )
                if "p3" in only:
                    await p3(hass, fast, endpoint, ours, core, max(turns // 4, 5))
        if "p1b" in only:
            async with home_assistant() as hass:
                await p1b(hass, fast, max(turns * 5, 100))
        if "p2" in only:
            async with home_assistant() as hass:
                ours, small, core = await three_agents(hass, llm.base_url, endpoint)
                paced_client = openai.AsyncOpenAI(api_key="x", base_url=llm.base_url)
                await p2(
                    hass, llm, (ours, small), core, paced_client, max(turns // 4, 5)
                )
    finally:
        for server in (llm, fast, endpoint):
            await server.stop()


async def p1(
    hass: object,
    fast: FakeLLMServer,
    endpoint: ToolEndpoint,
    agents: tuple[str, str],
    core: str,
    client: openai.AsyncOpenAI,
    session: aiohttp.ClientSession,
    turns: int,
) -> None:
    """Per-round overhead on instant servers."""
    ours, small = agents
    from homeassistant.core import HomeAssistant

    assert isinstance(hass, HomeAssistant)
    structured = tool_calls_stream((WEATHER_TOOL, {"city": "Rome"}))
    answer = text_stream("It is sunny in Rome, ", "14 degrees.")
    text_call = transcript("llama-cpp-python__weather_stream")
    times: dict[str, list[float]] = {
        k: [] for k in ("ours", "small", "core", "text", "floor")
    }
    connects = dict.fromkeys(times, 0)
    with connections_opened() as opened:
        # A block of warm-up turns first, then blocks until `turns` each.
        for block in range(-(-turns // (BLOCK - 1)) + 1):
            for key, values in times.items():
                for index in range(BLOCK):
                    before = opened[0]
                    if key == "floor":
                        fast.add(structured, answer)
                        elapsed = await floor_turn(client, session, endpoint.url)
                    else:
                        fast.add(text_call if key == "text" else structured, answer)
                        agent = {"core": core, "small": small}.get(key, ours)
                        elapsed, _first, spoken = await timed_turn(
                            hass, agent, "What's the weather in Rome?"
                        )
                        assert spoken.startswith("It is sunny"), (key, spoken)
                    if block and index and len(values) < turns:
                        values.append(elapsed)
                        connects[key] += opened[0] - before
    floor = statistics.median(times["floor"])
    rows = []
    for key, label in (
        ("ours", "http_tools_agent, structured call"),
        ("small", "http_tools_agent, small profile, structured call"),
        ("core", "HA core llama_cpp loop, structured call"),
        ("text", "http_tools_agent, text call (llama-cpp-python transcript)"),
        ("floor", "floor: bare openai SDK + aiohttp GET"),
    ):
        turn = statistics.median(times[key])
        per_round = "—" if key == "floor" else f"{(turn - floor) / 2 * 1000:.2f}"
        rows.append(
            (
                label,
                median_ms(times[key]),
                per_round,
                f"{connects[key] / turns:.2f}",
            )
        )
    table(
        f"P1: integration overhead per round (median of {turns} turns, 2 rounds "
        f"each, in blocks of {BLOCK})",
        (
            "loop",
            "turn ms",
            "overhead per round ms (turn - floor) / 2",
            "new connections per turn",
        ),
        rows,
    )


async def p1b(hass: object, fast: FakeLLMServer, turns: int) -> None:
    """A whole small-talk turn through `conversation.async_converse`, ours vs
    core, five HTTP tools offered to both, in blocks (`connections_opened`)."""
    from homeassistant.components import conversation
    from homeassistant.core import Context, HomeAssistant

    assert isinstance(hass, HomeAssistant)
    async with DemoToolServer() as tools:
        offered = tools.tools(list(DEMO_TOOLS[:5]), sentences=False)
        ours = await setup_ours(hass, fast.base_url, offered, model="m")
        core = await setup_llama_cpp(hass, fast.base_url, model="m")
        wall: dict[str, list[float]] = {"ours": [], "core": []}
        cpu: dict[str, list[float]] = {"ours": [], "core": []}
        connects = {"ours": 0, "core": 0}
        with connections_opened() as opened:
            for turn in range(2 * (turns + turns // (BLOCK - 1) + BLOCK)):
                key, agent = (("ours", ours), ("core", core))[(turn // BLOCK) % 2]
                fast.add(text_stream(*SMALL_TALK))
                before, started = opened[0], time.process_time()
                wall_started = time.perf_counter()
                result = await conversation.async_converse(
                    hass, "Hello", None, Context(), agent_id=agent
                )
                elapsed = time.perf_counter() - wall_started
                used = time.process_time() - started
                assert speech(result) == "".join(SMALL_TALK), (key, speech(result))
                if turn % BLOCK and len(wall[key]) < turns:
                    wall[key].append(elapsed)
                    cpu[key].append(used)
                    connects[key] += opened[0] - before
    rows = [
        (
            label,
            median_ms(wall[key]),
            median_ms(cpu[key]),
            f"{connects[key] / len(wall[key]):.2f}",
        )
        for key, label in (
            ("ours", "http_tools_agent"),
            ("core", "HA core llama_cpp"),
        )
    ]
    ratios = [
        statistics.median(values["ours"]) / statistics.median(values["core"])
        for values in (wall, cpu)
    ]
    rows.append(("ours / core", f"{ratios[0]:.2f}x", f"{ratios[1]:.2f}x", ""))
    table(
        f"P1b: a whole small-talk turn (`conversation.async_converse`, five "
        f"tools offered, three pieces; median of {turns} turns a side, in "
        f"blocks of {BLOCK})",
        ("agent", "wall ms", "CPU ms", "new connections per turn"),
        rows,
    )


async def p2(
    hass: object,
    llm: FakeLLMServer,
    agents: tuple[str, str],
    core: str,
    client: openai.AsyncOpenAI,
    turns: int,
) -> None:
    """Time to the first spoken character on a paced stream."""
    from homeassistant.core import HomeAssistant

    assert isinstance(hass, HomeAssistant)
    ours, small = agents
    rows = []
    for label, tokens, question, paths in (
        ("plain answer", ANSWER_TOKENS, "Weather?", ("raw", "core", "ours")),
        (
            "thinking, then answer",
            [*THINKING, "\n\n", *ANSWER_TOKENS],
            "Weather?",
            ("raw", "core", "ours"),
        ),
        # The small profile speaks no weather it did not fetch: small talk.
        ("small talk", HELLO_TOKENS, "Hello", ("raw", "ours", "small")),
    ):
        first: dict[str, list[float]] = {key: [] for key in paths}
        spoken_by: dict[str, str] = {}
        for _ in range(turns):
            for key, values in first.items():
                llm.add(paced(tokens))
                if key == "raw":
                    value = await raw_first_char(client)
                    spoken_by[key] = "".join(tokens)
                else:
                    agent = {"core": core, "small": small}.get(key, ours)
                    _t, value, spoken = await timed_turn(hass, agent, question)
                    spoken_by[key] = spoken
                if value is not None:
                    values.append(value)
        names = {
            "raw": "raw SDK stream",
            "core": "HA core llama_cpp (unfiltered)",
            "ours": "http_tools_agent (filtered)",
            "small": "http_tools_agent, small profile (sentences checked)",
        }
        for key in paths:
            name = names[key]
            rows.append(
                (
                    label,
                    name,
                    median_ms(first[key]) if first[key] else "never",
                    repr(spoken_by[key][:40]),
                )
            )
    table(
        f"P2: time to first spoken character, {TOKEN_GAP * 1000:.0f} ms per token "
        f"(median of {turns})",
        ("stream", "path", "first char ms", "what the user hears"),
        rows,
    )


async def p3(
    hass: object,
    fast: FakeLLMServer,
    endpoint: ToolEndpoint,
    ours: str,
    core: str,
    turns: int,
) -> None:
    """Three 300 ms tool calls in one round vs one."""
    from homeassistant.core import HomeAssistant

    assert isinstance(hass, HomeAssistant)
    endpoint.delay = 0.3
    one = tool_calls_stream((WEATHER_TOOL, {"city": "Rome"}))
    three = tool_calls_stream(
        (WEATHER_TOOL, {"city": "Rome"}),
        (WEATHER_TOOL, {"city": "Paris"}),
        (WEATHER_TOOL, {"city": "Oslo"}),
    )
    rows = []
    for agent, name in ((ours, "http_tools_agent"), (core, "HA core llama_cpp")):
        results = {}
        for label, stream in (("1 call", one), ("3 calls", three)):
            values = []
            for _ in range(turns):
                fast.add(stream, text_stream(ANSWER))
                elapsed, _f, _s = await timed_turn(hass, agent, "Weather?")
                values.append(elapsed)
            results[label] = statistics.median(values)
        rows.append(
            (
                name,
                f"{results['1 call'] * 1000:.0f}",
                f"{results['3 calls'] * 1000:.0f}",
                f"{results['3 calls'] / results['1 call']:.2f}",
            )
        )
    endpoint.delay = 0.0
    table(
        f"P3: three parallel 300 ms tool calls vs one (turn ms, median of {turns})",
        ("agent", "1 call", "3 calls", "ratio"),
        rows,
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--only", default="p1,p1b,p2,p3", help="which parts, e.g. p1b")
    args = parser.parse_args()
    asyncio.run(main(args.turns, set(args.only.split(","))))
