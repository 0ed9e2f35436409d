"""Which way a turn goes: the integration's modules one turn passes through.

Runs turns of ours (capable and small profile) in real Home Assistant on a
scripted server (a structured call and its answer; a call written as text
and its answer) and records, with `sys.setprofile`, every call from one of
the integration's modules into another. Each module has a layer (the
entity on top, then the loop, the turn's state, a request and a reply,
the call gate and the checks, and the leaves: engine, server, tools,
lexicon). It prints, per turn:

- the modules entered and the calls between modules;
- how often `entity.py` is entered;
- the calls that climb back: from a module into a function of a module on
  a higher layer (a callback, a closure), by caller -> callee;
- the calls that ask an object passed down (a check reading the `Turn`'s
  properties), counted apart: they read, they do not hand control back.

    .venv/bin/python -m bench.bench_turn_trace
"""

from __future__ import annotations

import asyncio
from collections import Counter
import sys
from types import FrameType
from typing import Any

from bench._ha import home_assistant, table, timed_turn
from tests.e2e.harness import setup_ours
from tests.kit import weather_tool
from tests.servers import FakeLLMServer, ToolEndpoint, text_stream, tool_calls_stream

PACKAGE = "custom_components.http_tools_agent."

# Layer of each module (the part of its name after the package); a module
# not named here is a leaf (engine, server, tools, lexicon, const, ...).
LAYERS: dict[str, int] = {
    "conversation": 0,
    "entity": 0,
    "turn.loop": 1,
    "turn.state": 2,
    "turn.request": 3,
    "turn.reply": 3,
    "turn.say": 3,
    "turn.read_out": 3,
    "turn.checks": 3,
    "small.answer": 3,
    "turn.calls": 4,
    "turn.changes": 4,
    "turn.honesty": 4,
    "turn.runaway": 4,
    "turn.data_calls": 4,
    "turn.messages": 4,
    "turn.context_fit": 4,
    "turn.prompt": 4,
    "turn.examples": 4,
    "turn.outcomes": 4,
    "small.guards": 4,
    "small.rules": 4,
}
LEAF = 5


def layer(module: str) -> int:
    """A module's layer (0: the entity)."""
    return LAYERS.get(module, LEAF)


class Trace:
    """Calls between the integration's modules while it is on.

    A coroutine resumed is no new call (its frame was seen). A call from a
    lower layer into a method of an object passed down to it (the `Turn` a
    check reads) asks that object; a call into a function of a higher layer
    (a callback, a closure) climbs back.
    """

    def __init__(self) -> None:
        self.calls: Counter[tuple[str, str]] = Counter()
        self.entered: Counter[str] = Counter()
        self.climbs: Counter[tuple[str, str]] = Counter()
        self.asks: Counter[tuple[str, str]] = Counter()
        self._frames: set[FrameType] = set()

    def __call__(self, frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call" or frame in self._frames:
            return
        callee = frame.f_globals.get("__name__", "")
        caller_frame = frame.f_back
        if not callee.startswith(PACKAGE) or caller_frame is None:
            return
        self._frames.add(frame)
        caller = caller_frame.f_globals.get("__name__", "")
        callee = callee.removeprefix(PACKAGE)
        if not caller.startswith(PACKAGE):
            # Entered from Home Assistant (the chat log, the pipeline).
            self.entered[callee] += 1
            return
        caller = caller.removeprefix(PACKAGE)
        if caller == callee:
            return
        self.calls[caller, callee] += 1
        if layer(callee) < layer(caller):
            where = f"{caller} -> {callee}.{frame.f_code.co_name}"
            owner = frame.f_locals.get("self")
            if owner is not None and type(owner).__module__ == PACKAGE + callee:
                self.asks[caller, where] += 1
            else:
                self.climbs[caller, where] += 1

    def calls_into(self, module: str) -> int:
        """How often another of the integration's modules called `module`."""
        return sum(n for (_caller, callee), n in self.calls.items() if callee == module)


async def traced(hass: Any, agent: str, question: str) -> Trace:
    """One turn of `agent`, traced."""
    trace = Trace()
    sys.setprofile(trace)
    try:
        _seconds, _first, spoken = await timed_turn(hass, agent, question)
    finally:
        sys.setprofile(None)
    assert "Rome" in spoken, spoken
    return trace


async def main() -> None:
    """Trace each kind of turn and print what it passed through."""
    llm = FakeLLMServer()
    endpoint = ToolEndpoint()
    for server in (llm, endpoint):
        await server.start()
    try:
        async with home_assistant() as hass:
            tools = [weather_tool(endpoint.url)]
            capable = await setup_ours(
                hass, llm.base_url, tools, agent={"profile": "capable"}
            )
            small = await setup_ours(
                hass,
                llm.base_url,
                tools,
                agent={"profile": "small"},
                unique_id="01JSMALLTRACE",
            )
            answer = text_stream("It is sunny in Rome, ", "14 degrees.")
            structured = tool_calls_stream(("get_weather", {"city": "Rome"}))
            written = text_stream(
                '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}'
                "\n</tool_call>"
            )
            rows = []
            for label, agent, first in (
                ("capable, structured call", capable, structured),
                ("capable, call written as text", capable, written),
                ("small, structured call", small, structured),
                ("small, call written as text", small, written),
            ):
                llm.add(first, answer)  # warm: imports, caches
                await timed_turn(hass, agent, "What's the weather in Rome?")
                llm.add(first, answer)
                trace = await traced(hass, agent, "What's the weather in Rome?")
                modules = {m for pair in trace.calls for m in pair} | set(trace.entered)
                rows.append(
                    (
                        label,
                        str(len(modules)),
                        str(sum(trace.calls.values())),
                        str(trace.entered["entity"] + trace.calls_into("entity")),
                        str(sum(trace.climbs.values())),
                        ", ".join(f"{w} ({n})" for (_c, w), n in trace.climbs.items())
                        or "none",
                        str(sum(trace.asks.values())),
                    )
                )
            table(
                "Which way a turn goes (one turn: a call, its result, the answer)",
                (
                    "turn",
                    "modules",
                    "calls between modules",
                    "entity.py entered",
                    "climbs back",
                    "which",
                    "asks an object passed down",
                ),
                rows,
            )
    finally:
        for server in (llm, endpoint):
            await server.stop()


if __name__ == "__main__":
    asyncio.run(main())
