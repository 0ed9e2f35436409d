"""What the model reads of real services' answers, before and after shaping.

Run from the repository root:

    .venv/bin/python -m bench.bench_services

Runs every case of `tests/fixtures/services` (tools written from each
service's published API documents, answers as the service sends them)
against a loopback server and prints, per voice operation: the characters
the model read before this round's shaping (the body as text, cut at the
2,000-character default, as the engine read every answer then; for a
composite tool, the last request's answer, the one a single tool could
have read) and whether the word a user needs was in it; the characters it
reads now and whether the word is there; the features the tool uses.
Then the answers a model that reads images is given as a picture
(`pictures=True`, as for an agent whose *Send images to the model* is
on): the description it reads either way and the data URL's length.
"""

from __future__ import annotations

import asyncio

import aiohttp

from custom_components.http_tools_agent.engine.executor import (
    DEFAULT_MAX_CHARS,
    run_tool,
    truncate,
)
from tests.service_cases import Case, ServiceServer, load_cases, serve, tools_at


def before(case: Case) -> str:
    """What the engine gave the model before shaping: the last answer's
    bytes decoded as UTF-8 (invalid bytes as U+FFFD), cut at the default
    limit."""
    raw = case.raw_bodies()[-1]
    text = raw.decode("utf-8", errors="replace")
    status = case.routes[-1][1].status
    if case.ok and not text.strip():
        return f"HTTP {status}"
    if case.ok:
        return truncate(text, DEFAULT_MAX_CHARS)[0]
    return truncate(f"Error: HTTP {status} \u2014 {text}", DEFAULT_MAX_CHARS)[0]


def _yes(found: bool) -> str:
    return "yes" if found else "**no**"


async def main() -> None:
    """Print the table (Markdown)."""
    server = ServiceServer()
    await server.start()
    rows: list[str] = []
    pictures: list[str] = []
    totals = [0, 0, 0, 0]
    try:
        async with aiohttp.ClientSession() as session:
            for case in load_cases():
                serve(server, case)
                definition = tools_at(case.service, server.url)[case.tool]
                result = await run_tool(
                    session,
                    definition,
                    case.arguments,
                    secrets=case.secrets,
                    tokens=case.token,
                )
                old = before(case)
                binary = any(
                    "image/" in (route.content_type or "") or not route.content_type
                    for _, route, name in case.routes
                    if name.endswith(".jpg")
                )
                # A JPEG read as text holds no answer, whatever it contains.
                old_found = case.needle in old and not binary
                new_found = case.needle in result.text
                totals[0] += len(old)
                totals[1] += len(result.text)
                totals[2] += old_found
                totals[3] += new_found
                rows.append(
                    f"| {case.service} | {case.operation} | {len(old):,} | "
                    f"{_yes(old_found)} | {len(result.text):,} | {_yes(new_found)} | "
                    f"{result.speech or '-'} |"
                )
                seen = await run_tool(
                    session,
                    definition,
                    case.arguments,
                    secrets=case.secrets,
                    pictures=True,
                )
                if seen.picture is not None:
                    pictures.append(
                        f"| {case.service} | {case.operation} | `{seen.text}` | "
                        f"{seen.picture.media_type} | {len(seen.picture.data):,} | "
                        f"{len(seen.picture.data_url()):,} |"
                    )
    finally:
        await server.stop()
    print(
        "| service | operation | chars before | answer in it | chars now | "
        "answer in it | the tool's own sentence |"
    )
    print("|---|---|---:|---|---:|---|---|")
    print("\n".join(rows))
    print(
        f"| **all {len(rows)}** | | {totals[0]:,} | {totals[2]}/{len(rows)} | "
        f"{totals[1]:,} | {totals[3]}/{len(rows)} | |"
    )
    print(
        "\n| service | operation | the model reads | picture | bytes | data URL chars |"
    )
    print("|---|---|---|---|---:|---:|")
    print("\n".join(pictures))


if __name__ == "__main__":
    asyncio.run(main())
