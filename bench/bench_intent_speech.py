"""Seconds and answer of a small model's Assist intent turn: the demo's
house with Assist and the six demo tools (as `tests/e2e/test_house.py`
sets it up), each request in a fresh Home Assistant, against the real
model server.

    HTA_MODEL_SERVER_URL=http://127.0.0.1:8080/v1 \\
        .venv/bin/python -m bench.bench_intent_speech [--label after]

Run it from two checkouts (before and after a change) for an A/B on one
server; each line prints the label, the request, the seconds, the answer,
the kitchen lights' state, what the agent made up for, and the calls.
"""

from __future__ import annotations

import argparse
import asyncio
import os

from homeassistant.const import CONF_LLM_HASS_API
from homeassistant.helpers import llm

from bench._ha import home_assistant, timed_turn
from custom_components.http_tools_agent.const import DOMAIN
from dev.demo_house import async_set_up_house
from dev.tool_server import DEMO_TOOLS, DemoToolServer
from tests.e2e.harness import fixed_date_time_prompt, setup_ours
from tests.kit import API_ID

REQUESTS = (
    ("Turn on the kitchen lights.", "off"),
    ("Turn off the kitchen lights.", "on"),
    ("Switch on the kitchen lights.", "off"),
)
KITCHEN = "light.kitchen_lights"


async def main(args: argparse.Namespace) -> None:
    """Each request once, in a fresh Home Assistant."""
    url = os.environ.get("HTA_MODEL_SERVER_URL", "http://127.0.0.1:8080/v1")
    tools = DemoToolServer()
    await tools.start()
    try:
        with fixed_date_time_prompt():
            for text, before in REQUESTS:
                async with home_assistant() as hass:
                    await async_set_up_house(hass)
                    agent = await setup_ours(
                        hass,
                        url,
                        tools.tools(list(DEMO_TOOLS)),
                        agent={CONF_LLM_HASS_API: [llm.LLM_API_ASSIST, API_ID]},
                    )
                    await hass.services.async_call(
                        "light", f"turn_{before}", {"entity_id": KITCHEN}, blocking=True
                    )
                    trace: list[str] = []
                    seconds, _first, answer = await timed_turn(hass, agent, text, trace)
                    (entry,) = hass.config_entries.async_entries(DOMAIN)
                    state = hass.states.get(KITCHEN)
                    calls = [t for t in trace if not t.startswith("->")]
                    print(
                        f"| {args.label} | {text} | {seconds:.1f} s | {answer!r} | "
                        f"{state.state if state else '?'} | "
                        f"{dict(entry.runtime_data.model_quirks)} | {calls} |",
                        flush=True,
                    )
    finally:
        await tools.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", default="this checkout")
    asyncio.run(main(parser.parse_args()))
