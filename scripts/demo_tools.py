#!/usr/bin/env python3
"""Serve the demo tools on loopback: weather, geocode/forecast, items REST
surface, webhook (the same server the end-to-end tests use).

    .venv/bin/python scripts/demo_tools.py [--port 8091] [--write-tools FILE]

--write-tools writes the tool definitions (the tools file format) that call
this server, then serves. Every request is logged on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
from pathlib import Path
import sys

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.tool_server import DemoToolServer, tool_definitions


async def serve(port: int) -> None:
    """Serve until interrupted, printing each request."""
    server = DemoToolServer(port=port)
    await server.start()
    print(f"demo_tools: serving on {server.url}", flush=True)
    seen = 0
    try:
        while True:
            await asyncio.sleep(0.2)
            for request in server.requests[seen:]:
                query = "&".join(f"{k}={v}" for k, v in request.query.items())
                body = "" if request.body is None else f" {json.dumps(request.body)}"
                print(
                    f"demo_tools: {request.method} {request.path}"
                    f"{'?' + query if query else ''}{body}",
                    flush=True,
                )
            seen = len(server.requests)
    finally:
        await server.stop()


def main() -> None:
    """Parse arguments, write the tools file if asked, serve."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8091)
    parser.add_argument("--write-tools", type=Path)
    args = parser.parse_args()
    if args.write_tools:
        tools = tool_definitions(f"http://127.0.0.1:{args.port}")
        args.write_tools.write_text(json.dumps(tools, indent=2, ensure_ascii=False))
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.port))


if __name__ == "__main__":
    main()
