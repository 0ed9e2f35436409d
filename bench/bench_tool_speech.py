"""Seconds a tool's own sentence (`speech`) saves the small profile.

Run from the repository root:

    HTA_MODEL_SERVER_URL=http://127.0.0.1:8080/v1 \\
        .venv/bin/python -m bench.bench_tool_speech [--rounds N]

Two agents of the small profile on the same model server and the demo's
tools (`dev/tool_server.py`): `before` with the tools as they are, `with
speech` with each tool's own sentence. The same single requests (each a new
conversation) go to both, alternating, `--rounds` times; printed: the
seconds per request (median), how many requests went to the model, and
what each said. With a sentence, a round whose calls all succeeded is
answered without the request for the answer.

Needs `scripts/model_server --install-only` (or HTA_MODEL_SERVER_URL).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
from typing import Any

from bench._ha import home_assistant, machine, timed_turn
from dev.tool_server import DEMO_TOOLS, DemoToolServer
from tests.e2e.harness import (
    ENV_URL,
    ModelServer,
    fixed_date_time_prompt,
    setup_ours,
)

# The sentence each demo tool says of its result.
SPEECH = {
    "get_weather": "{.}.",
    "add_item": "Added {name}.",
    "send_webhook": "Sent.",
}
REQUESTS = (
    "What's the weather in Rome?",
    "How is the weather in Paris?",
    "Is it cold in Oslo?",
    "What's the weather like in Madrid?",
    "Add milk to the shopping list.",
    "Put eggs on the list.",
    "Tell everyone dinner is ready.",
)


def with_speech(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The demo tools, those of `SPEECH` with their sentence."""
    return [
        {**tool, "speech": SPEECH[tool["name"]]} if tool["name"] in SPEECH else tool
        for tool in tools
    ]


async def main(args: argparse.Namespace) -> None:
    """Run both agents on every request; print the numbers."""
    print(f"Machine: {machine()}")
    # A shared server busy with another's requests answers /models late:
    # the URL given is used as it is.
    url = os.environ.get(ENV_URL)
    server = ModelServer(url.rstrip("/")) if url else ModelServer.from_env_or_start()
    tools = DemoToolServer()
    await tools.start()
    seconds: dict[str, list[float]] = {"before": [], "with speech": []}
    said: dict[str, dict[str, str]] = {"before": {}, "with speech": {}}
    try:
        with fixed_date_time_prompt():
            async with home_assistant() as hass:
                plain = tools.tools(list(DEMO_TOOLS))
                agents = {
                    "before": await setup_ours(hass, server.url, plain),
                    "with speech": await setup_ours(
                        hass, server.url, with_speech(plain), unique_id="speech"
                    ),
                }
                for _ in range(args.rounds):
                    for text in REQUESTS:
                        for name, agent in agents.items():
                            took, _first, answer = await timed_turn(hass, agent, text)
                            seconds[name].append(took)
                            said[name][text] = answer
    finally:
        await tools.stop()
        server.stop()
    print("\n| agent | requests | median s per request | mean s |")
    print("|---|---:|---:|---:|")
    for name, values in seconds.items():
        print(
            f"| {name} | {len(values)} | {statistics.median(values):.2f} | "
            f"{statistics.fmean(values):.2f} |"
        )
    print("\n| request | before | with speech |")
    print("|---|---|---|")
    for text in REQUESTS:
        print(f"| {text} | {said['before'][text]} | {said['with speech'][text]} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    asyncio.run(main(parser.parse_args()))
