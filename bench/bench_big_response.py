"""Benchmark: a tool whose server streams 100 MB.

Runs a local aiohttp server on 127.0.0.1 that streams a 100 MB body chunk by
chunk, calls ``run_tool`` against it with a few limits and prints peak memory
growth (tracemalloc), wall time, bytes read by the client and bytes the server
managed to write before the client hung up.

    python bench/bench_big_response.py
"""

from __future__ import annotations

import asyncio
from pathlib import Path
import sys
import time
import tracemalloc

import aiohttp
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from custom_components.http_tools_agent.engine.definitions import (
    parse_tools,
)
from custom_components.http_tools_agent.engine.executor import (
    DEFAULT_MAX_BYTES,
    run_tool,
)

TOTAL = 100 * 1024 * 1024
CHUNK = b"x" * 65_536


async def main() -> None:
    """Serve, run, report."""
    written = [0]
    finished = asyncio.Event()

    async def stream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        response.content_length = TOTAL
        await response.prepare(request)
        try:
            while written[0] < TOTAL:
                await response.write(CHUNK)
                written[0] += len(CHUNK)
        except ConnectionError, aiohttp.ClientConnectionResetError:
            pass
        finally:
            finished.set()
        return response

    app = web.Application()
    app.router.add_get("/big", stream)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    server = site._server
    assert isinstance(server, asyncio.Server)
    port = server.sockets[0].getsockname()[1]
    tools = {
        d.name: d
        for d in parse_tools(
            [{"name": "big", "url": f"http://127.0.0.1:{port}/big", "method": "GET"}]
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
    try:
        async with aiohttp.ClientSession() as session:
            for label, max_chars, max_bytes in cases:
                written[0] = 0
                finished.clear()
                tracemalloc.start()
                started = time.perf_counter()
                result = await run_tool(
                    session, tools["big"], {}, max_chars=max_chars, max_bytes=max_bytes
                )
                elapsed = time.perf_counter() - started
                _, peak = tracemalloc.get_traced_memory()
                tracemalloc.stop()
                await asyncio.wait_for(finished.wait(), 30)
                assert result.truncated, result
                print(
                    f"{label:<24}{peak / 2**20:>10.2f}{elapsed:>9.3f}"
                    f"{result.bytes_read:>12}{written[0] / 2**20:>15.1f}"
                )
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
