"""Benchmark: a tool whose server streams 100 MB.

Runs a local aiohttp server on 127.0.0.1 that streams a 100 MB body chunk by
chunk, calls ``run_tool`` against it with a few limits and prints peak memory
growth (tracemalloc), wall time, bytes read by the client and bytes the server
managed to write before the client hung up.

    .venv/bin/python -m bench.bench_big_response
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
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

    def routes(self, app: web.Application) -> None:
        """The one big response."""
        app.router.add_get("/big", self._stream)


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


if __name__ == "__main__":
    asyncio.run(main())
