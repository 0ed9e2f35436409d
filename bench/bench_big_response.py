"""Benchmark: a tool whose server streams 100 MB, and a shaped 50 MB list.

Runs a local aiohttp server on 127.0.0.1 that streams a 100 MB body chunk by
chunk, calls ``run_tool`` against it with a few limits and prints peak memory
growth (tracemalloc), wall time, bytes read by the client and bytes the server
managed to write before the client hung up. Then `/states` streams a 50 MB
JSON list of Home Assistant states (generated chunk by chunk, never held)
that shaped tools read whole as it streams: a filter, a sort with the newest
three, a count.

    .venv/bin/python -m bench.bench_big_response
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
import json
import time
import tracemalloc

import aiohttp
from aiohttp import web

from custom_components.http_tools_agent.engine.definitions import parse_tools
from custom_components.http_tools_agent.engine.executor import (
    DEFAULT_MAX_BYTES,
    run_tool,
)
from dev.loopback import LoopbackServer

TOTAL = 100 * 1024 * 1024
CHUNK = b"x" * 65_536


@dataclass
class BigServer(LoopbackServer):
    """`GET /big` streams TOTAL bytes; `written` counts what got out."""

    written: int = 0
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    shutdown_timeout: float = 1.0

    async def _stream(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        response.content_length = TOTAL
        await response.prepare(request)
        try:
            while self.written < TOTAL:
                await response.write(CHUNK)
                self.written += len(CHUNK)
        except ConnectionError, aiohttp.ClientConnectionResetError:
            pass
        finally:
            self.finished.set()
        return response

    async def _states(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        response.content_type = "application/json"
        response.content_length = len(states_body())
        await response.prepare(request)
        body = states_body()
        try:
            for at in range(0, len(body), len(CHUNK)):
                piece = body[at : at + len(CHUNK)]
                await response.write(piece)
                self.written += len(piece)
        except ConnectionError, aiohttp.ClientConnectionResetError:
            pass
        finally:
            self.finished.set()
        return response

    def routes(self, app: web.Application) -> None:
        """The big responses."""
        app.router.add_get("/big", self._stream)
        app.router.add_get("/states", self._states)


STATE_PAD = "x" * 300


def _state(n: int) -> bytes:
    """The n-th state of the list, as Home Assistant writes one (a comma
    before every one but the first)."""
    state = {
        "entity_id": f"{'binary_sensor' if n % 97 == 0 else 'sensor'}.thing_{n:06d}",
        "state": "on" if n % 2 == 0 else f"{n % 40}.5",
        "attributes": {"friendly_name": f"Thing {n:06d}", "note": STATE_PAD},
        "last_changed": f"2025-{1 + n % 12:02d}-{1 + n % 28:02d}T{n % 24:02d}:00:00+00:00",
    }
    return (b"," if n else b"") + json.dumps(state).encode()


STATES_HEAD = b'{"count": 0, "data": {"states": ['
STATES_COUNT = 111_000
STATES_ITEMS_BYTES = sum(len(_state(n)) for n in range(STATES_COUNT))
_BODY: list[bytes] = []


def states_body() -> bytes:
    """The 50 MB answer, made once before anything is measured (the
    server's bytes are not the client's memory)."""
    if not _BODY:
        _BODY.append(
            STATES_HEAD + b"".join(_state(n) for n in range(STATES_COUNT)) + b"]}"
        )
    return _BODY[0]


SHAPED = [
    (
        "filter (binary on)",
        {
            "path": "data.states",
            "where": {"entity_id": {"contains": "binary_sensor."}, "state": "on"},
            "max_items": 5,
            "fields": {"name": "attributes.friendly_name"},
        },
    ),
    (
        "sort desc, newest 3",
        {
            "path": "data.states",
            "sort": {"by": "last_changed", "order": "desc"},
            "max_items": 3,
            "fields": ["entity_id", "last_changed"],
        },
    ),
    (
        "count (state > 30)",
        {"path": "data.states", "where": {"state": {"above": 30}}, "count": True},
    ),
    ("no limit (1000 kept)", {"path": "data.states", "fields": ["entity_id"]}),
]


async def main() -> None:
    """Serve, run, report."""
    async with BigServer() as server:
        tools = {
            d.name: d
            for d in parse_tools(
                [{"name": "big", "url": f"{server.url}/big", "method": "GET"}]
            )
        }
        cases = [
            ("default (2000 chars)", 2000, DEFAULT_MAX_BYTES),
            ("max_chars=200000", 200_000, DEFAULT_MAX_BYTES),
            ("max_chars=10**9", 10**9, DEFAULT_MAX_BYTES),
        ]
        print(
            f"{'case':<24}{'peak MiB':>10}{'time s':>9}{'read B':>12}{'srv wrote MiB':>15}"
        )
        async with aiohttp.ClientSession() as session:
            for label, max_chars, max_bytes in cases:
                server.written = 0
                server.finished.clear()
                tracemalloc.start()
                started = time.perf_counter()
                result = await run_tool(
                    session, tools["big"], {}, max_chars=max_chars, max_bytes=max_bytes
                )
                elapsed = time.perf_counter() - started
                _, peak = tracemalloc.get_traced_memory()
                tracemalloc.stop()
                await asyncio.wait_for(server.finished.wait(), 30)
                assert result.truncated, result
                print(
                    f"{label:<24}{peak / 2**20:>10.2f}{elapsed:>9.3f}"
                    f"{result.bytes_read:>12}{server.written / 2**20:>15.1f}"
                )
            size = len(states_body())
            print(
                f"\nshaped list: {STATES_COUNT} states, {size / 2**20:.1f} MiB "
                f"(cap {DEFAULT_MAX_BYTES / 2**20:.0f} MiB)"
            )
            print(f"{'shape':<24}{'peak MiB':>10}{'time s':>9}{'read MiB':>10}  reads")
            for label, shape in SHAPED:
                (tool,) = parse_tools(
                    [
                        {
                            "name": "states",
                            "url": f"{server.url}/states",
                            "method": "GET",
                            "response": shape,
                        }
                    ]
                )
                # Timed untraced (tracemalloc slows every allocation), then
                # traced for the peak.
                started = time.perf_counter()
                result = await run_tool(session, tool, {}, timeout=120)
                elapsed = time.perf_counter() - started
                tracemalloc.start()
                traced = await run_tool(session, tool, {}, timeout=120)
                _, peak = tracemalloc.get_traced_memory()
                tracemalloc.stop()
                assert result.ok, result.text
                assert traced.text == result.text
                print(
                    f"{label:<24}{peak / 2**20:>10.2f}{elapsed:>9.2f}"
                    f"{result.bytes_read / 2**20:>10.1f}  {result.text[:70]}"
                )


if __name__ == "__main__":
    asyncio.run(main())
