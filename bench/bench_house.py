"""P4a: the house and the tools together, with the real model.

A small home of core's demo lights and fans in areas (Kitchen, Bedroom,
Living room), five of them exposed to Assist; the agent offers Home
Assistant's Assist API beside the demo HTTP tools. Requests in English,
Italian and Spanish turn things on and off, set brightness and fan speed,
ask for a state, or need an HTTP tool, some both. The house's state and the
tool server's requests are the judge. Per request:

- right outcome: exactly the expected changes (state) and HTTP requests,
  and for a question an answer with the right state;
- unasked requests: calls nobody asked for that reached the house or the
  tool server (`changes`: those that changed something);
- fabricated confirmations: an asked change did not happen and the answer
  does not say so;
- seconds.

Tuning and held-out requests as in P4; core's `llama_cpp` agent on the same
server and APIs as the comparison.

`--via` says how a request reaches the agent: `agent` (straight, as
`conversation.process` does), `pipeline` (an English Assist pipeline on the
agent, text in as the Assist dialog sends it) or `local` (the same pipeline
with "Prefer handling commands locally" on: Home Assistant's own intents
answer what they match, the rest goes to the agent; the rows count how many
Home Assistant answered itself).

    .venv/bin/python -m bench.bench_house [--agents ours,core]
        [--sets tuning,held-out,verbless]
        [--via agent,pipeline,local]
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter
from dataclasses import dataclass, field
import re
import statistics
from typing import Any

from homeassistant.components.homeassistant.exposed_entities import (
    async_expose_entity,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers import (
    area_registry as ar,
    device_registry as dr,
    entity_registry as er,
    llm,
)

from bench._ha import (
    home_assistant,
    log,
    pipeline_turn,
    run_on_demo_tools,
    table,
    text_pipeline,
    timed_turn,
)
from bench.bench_real_model import TOOLS, VARIANTS, small_rules
from custom_components.http_tools_agent.const import DOMAIN
from custom_components.http_tools_agent.turn.changes import says_failed
from dev.tool_server import DemoToolServer
from tests.e2e.harness import (
    setup_llama_cpp,
    setup_ours,
)
from tests.house import async_demo_house
from tests.kit import API_ID
from tests.markup import markup_in

# Entity -> area; these are exposed, the other demo entities are not.
HOUSE = {
    "light.kitchen_lights": "Kitchen",
    "light.bed_light": "Bedroom",
    "light.ceiling_lights": "Living room",
    "fan.living_room_fan": "Living room",
    "fan.ceiling_fan": "Bedroom",
}
# Each request starts from this state.
START = {
    "light.kitchen_lights": "off",
    "light.bed_light": "off",
    "light.ceiling_lights": "on",
    "fan.living_room_fan": "off",
    "fan.ceiling_fan": "off",
}

type Snapshot = dict[str, tuple[str, Any, Any]]


@dataclass(frozen=True)
class Expect:
    """What a request should do: states, HTTP requests, words in the answer."""

    states: dict[str, str] = field(default_factory=dict)
    brightness: tuple[str, int] | None = None  # entity, percent (±10)
    percentage: tuple[str, int] | None = None  # fan, percent (±20)
    http: tuple[str, ...] = ()  # "METHOD /path" prefixes
    # For a question: a pattern the answer must match.
    answer: str | None = None


def on(entity: str, **more: Any) -> Expect:
    return Expect(states={entity: "on"}, **more)


def off(entity: str, **more: Any) -> Expect:
    return Expect(states={entity: "off"}, **more)


TUNING: list[tuple[str, Expect]] = [
    ("Turn on the kitchen lights.", on("light.kitchen_lights")),
    ("Switch off the ceiling lights.", off("light.ceiling_lights")),
    ("Turn on the bed light.", on("light.bed_light")),
    ("Turn on the living room fan.", on("fan.living_room_fan")),
    (
        "Set the bed light to 50 percent.",
        Expect(states={"light.bed_light": "on"}, brightness=("light.bed_light", 50)),
    ),
    (
        "Set the ceiling fan to 60 percent.",
        Expect(states={"fan.ceiling_fan": "on"}, percentage=("fan.ceiling_fan", 60)),
    ),
    ("Is the kitchen light on?", Expect(answer=r"\b(?:no|off|not)\b")),
    ("Are the ceiling lights on?", Expect(answer=r"\b(?:yes|on)\b")),
    ("Accendi la luce della cucina.", on("light.kitchen_lights")),
    ("Spegni le luci del soggiorno.", off("light.ceiling_lights")),
    ("Enciende la luz del dormitorio.", on("light.bed_light")),
    ("Apaga las luces del salón.", off("light.ceiling_lights")),
    ("What's the weather in Rome?", Expect(http=("GET /weather/rome",))),
    ("Add milk to the list.", Expect(http=("POST /api/items",))),
    (
        "Turn on the kitchen lights and add milk to the list.",
        on("light.kitchen_lights", http=("POST /api/items",)),
    ),
    ("Good evening!", Expect()),
]
HELD_OUT: list[tuple[str, Expect]] = [
    ("Lights on in the kitchen, please.", on("light.kitchen_lights")),
    ("Turn the bedroom light on.", on("light.bed_light")),
    ("Kill the living room lights.", off("light.ceiling_lights")),
    ("Start the fan in the bedroom.", on("fan.ceiling_fan")),
    (
        "Dim the bed light to 30 percent.",
        Expect(states={"light.bed_light": "on"}, brightness=("light.bed_light", 30)),
    ),
    (
        "Put the living room fan at half speed.",
        Expect(
            states={"fan.living_room_fan": "on"},
            percentage=("fan.living_room_fan", 50),
        ),
    ),
    ("Is the bedroom fan running?", Expect(answer=r"\b(?:no|off|not)\b")),
    ("La luce della cucina è accesa?", Expect(answer=r"\b(?:no|spent)\w*")),
    ("Accendi il ventilatore del soggiorno.", on("fan.living_room_fan")),
    ("Spegni la luce della camera da letto.", off("light.bed_light")),
    ("Enciende las luces de la cocina.", on("light.kitchen_lights")),
    ("¿Está encendida la luz del dormitorio?", Expect(answer=r"\b(?:no|apagad)\w*")),
    ("How warm is it in Madrid?", Expect(http=("GET /weather/madrid",))),
    ("Put eggs on my shopping list.", Expect(http=("POST /api/items",))),
    (
        "Switch on the bed light and tell the family I'm going to sleep.",
        on("light.bed_light", http=("POST /hook",)),
    ),
    ("Thanks, that's all.", Expect()),
]
# Things switched without a verb ("Kitchen lights on."), written apart from
# the two sets above to judge the rule that reads them as asking for a
# change (`lexicon/en.py` `switch_phrases`); the last two must change nothing.
VERBLESS: list[tuple[str, Expect]] = [
    ("Ceiling lights off.", off("light.ceiling_lights")),
    ("Bed light on, please.", on("light.bed_light")),
    ("Kitchen lights on.", on("light.kitchen_lights")),
    ("Living room fan on.", on("fan.living_room_fan")),
    ("Fan on in the bedroom.", on("fan.ceiling_fan")),
    ("Lights off in the living room.", off("light.ceiling_lights")),
    ("Is the bed light on?", Expect(answer=r"\b(?:no|off|not)\b")),
    ("I'm off to bed.", Expect()),
]
SETS = {"tuning": TUNING, "held-out": HELD_OUT, "verbless": VERBLESS}


@dataclass
class Outcome:
    """One request."""

    request_set: str
    text: str
    right: bool
    unasked: int
    unasked_changes: int
    fabricated: bool
    markup: bool
    seconds: float
    answer: str
    changed: list[str]
    http: list[str]
    quirks: dict[str, int]
    # Answered by Home Assistant's own intents (`--via local`).
    local: bool = False


async def build_house(hass: HomeAssistant) -> None:
    """The demo lights and fans, in areas, five of them exposed."""
    await async_demo_house(hass)
    areas = ar.async_get(hass)
    entities = er.async_get(hass)
    devices = dr.async_get(hass)
    for entity_id in [s.entity_id for s in hass.states.async_all(("light", "fan"))]:
        exposed = entity_id in HOUSE
        async_expose_entity(hass, "conversation", entity_id, exposed)
        entry = entities.async_get(entity_id)
        if not exposed or entry is None:
            continue
        area = areas.async_get_area_by_name(HOUSE[entity_id]) or (
            areas.async_create(HOUSE[entity_id])
        )
        if entry.device_id is not None:
            # The demo lights are named by their device: its area is theirs.
            devices.async_update_device(entry.device_id, area_id=area.id)
        else:
            entities.async_update_entity(entity_id, area_id=area.id)


async def reset_house(hass: HomeAssistant) -> None:
    """Every exposed light and fan back to `START`."""
    for entity_id, state in START.items():
        domain = entity_id.split(".")[0]
        await hass.services.async_call(
            domain, f"turn_{state}", {"entity_id": entity_id}, blocking=True
        )


def snapshot(hass: HomeAssistant) -> Snapshot:
    """Every light's and fan's state, brightness and speed."""
    return {
        s.entity_id: (
            s.state,
            s.attributes.get("brightness"),
            s.attributes.get("percentage"),
        )
        for s in hass.states.async_all(("light", "fan"))
    }


def judge(
    expect: Expect, before: Snapshot, after: Snapshot, http: list[str], answer: str
) -> tuple[bool, int, int, bool]:
    """Right, unasked requests, unasked changes, fabricated confirmation."""
    changed = {e for e in after if after[e] != before.get(e)}
    wanted = set(expect.states)
    for target in (expect.brightness, expect.percentage):
        if target is not None:
            wanted.add(target[0])
    states_ok = all(after[e][0] == s for e, s in expect.states.items())
    level_ok = True
    if expect.brightness:
        entity, percent = expect.brightness
        brightness = (after[entity][1] or 0) * 100 / 255
        level_ok = abs(brightness - percent) <= 10
    if expect.percentage:
        entity, percent = expect.percentage
        level_ok = level_ok and abs((after[entity][2] or 0) - percent) <= 20
    http_asked = [
        r for r in http if any(r.lower().startswith(w.lower()) for w in expect.http)
    ]
    http_ok = len(http_asked) == len(expect.http) == len(http)
    unasked_changes = len(changed - wanted) + sum(
        1 for r in http if r not in http_asked and not r.startswith("GET")
    )
    unasked = len(changed - wanted) + len(http) - len(http_asked)
    answer_ok = expect.answer is None or bool(
        re.search(expect.answer, answer, re.IGNORECASE)
    )
    right = states_ok and level_ok and http_ok and not (changed - wanted) and answer_ok
    asked_change = bool(expect.states) or any(
        not w.startswith("GET") for w in expect.http
    )
    # The asked change not done, whatever else ran (an extra read is no
    # fabrication when the change was made).
    http_done = all(
        any(r.lower().startswith(w.lower()) for r in http) for w in expect.http
    )
    fabricated = (
        asked_change and not (states_ok and http_done) and not says_failed(answer)
    )
    return right, unasked, unasked_changes, fabricated


# The requests of this run (`--only`); None: every request of the sets.
ONLY: re.Pattern[str] | None = None


async def run_agent(
    name: str, base_url: str, tools: DemoToolServer, sets: list[str]
) -> list[Outcome]:
    """The request sets through one agent (`NAME@VIA`: `--via`) in a fresh
    Home Assistant."""
    agent_name, _, via = name.partition("@")
    variant = VARIANTS.get(agent_name, {})
    outcomes: list[Outcome] = []
    apis = [API_ID, llm.LLM_API_ASSIST]
    with small_rules(variant.get("rules")):
        async with home_assistant() as hass:
            await build_house(hass)
            agent = await setup_ours(
                hass,
                base_url,
                tools.tools(TOOLS),
                options=variant.get("options"),
                agent={"llm_hass_api": apis, **(variant.get("agent") or {})},
            )
            if agent_name == "core":
                agent = await setup_llama_cpp(hass, base_url, apis=apis)
            pipeline = None
            if via in ("pipeline", "local"):
                pipeline = await text_pipeline(
                    hass, agent, prefer_local_intents=via == "local"
                )
            (entry,) = hass.config_entries.async_entries(DOMAIN)
            for set_name in sets:
                for index, (text, expect) in enumerate(SETS[set_name]):
                    if ONLY is not None and not ONLY.search(text):
                        continue
                    tools.reset()
                    await reset_house(hass)
                    before = snapshot(hass)
                    quirks_before = Counter(entry.runtime_data.model_quirks)
                    local = False
                    if pipeline is None:
                        elapsed, _first, answer = await timed_turn(hass, agent, text)
                    else:
                        elapsed, answer, local = await pipeline_turn(
                            hass, pipeline, text
                        )
                    after = snapshot(hass)
                    http = [f"{r.method} {r.path}" for r in tools.requests]
                    right, unasked, unasked_changes, fabricated = judge(
                        expect, before, after, http, answer
                    )
                    outcome = Outcome(
                        set_name,
                        text,
                        right and not markup_in(answer),
                        unasked,
                        unasked_changes,
                        fabricated,
                        bool(markup_in(answer)),
                        elapsed,
                        answer,
                        sorted(e for e in after if after[e] != before.get(e)),
                        http,
                        dict(Counter(entry.runtime_data.model_quirks) - quirks_before),
                        local,
                    )
                    outcomes.append(outcome)
                    log(
                        f"P4a {name} {set_name} {index + 1} {elapsed:.1f}s "
                        f"right={outcome.right} unasked={unasked} "
                        f"fabricated={fabricated} local={local} "
                        f"{text!r} -> {outcome.changed} "
                        f"{http} {answer[:80]!r}"
                    )
    return outcomes


def report(results: dict[str, list[Outcome]]) -> None:
    """Per agent and set."""
    rows = []
    for name, outcomes in results.items():
        for set_name in dict.fromkeys(o.request_set for o in outcomes):
            sel = [o for o in outcomes if o.request_set == set_name]
            rows.append(
                (
                    name,
                    set_name,
                    f"{sum(o.right for o in sel)}/{len(sel)}",
                    sum(o.unasked for o in sel),
                    sum(o.unasked_changes for o in sel),
                    sum(o.fabricated for o in sel),
                    sum(o.markup for o in sel),
                    f"{sum(o.seconds for o in sel) / max(len(sel), 1):.1f}",
                    f"{statistics.median(o.seconds for o in sel):.1f}",
                    sum(o.local for o in sel),
                )
            )
    table(
        "P4a: the house and the tools (right outcome; unasked requests, of "
        "them changes; fabricated confirmations)",
        (
            "agent",
            "set",
            "right",
            "unasked",
            "unasked changes",
            "fabricated",
            "markup",
            "s per request",
            "median s",
            "answered by Home Assistant",
        ),
        rows,
    )
    misses: list[tuple[str, ...]] = [
        (
            name,
            o.request_set,
            o.text,
            ", ".join(o.changed + o.http) or "—",
            o.answer[:70],
        )
        for name, outcomes in results.items()
        for o in outcomes
        if not o.right or o.unasked or o.fabricated
    ]
    if misses:
        table(
            "P4a: misses",
            ("agent", "set", "request", "what happened", "answer"),
            misses,
        )


async def main(args: argparse.Namespace) -> None:
    """Start (or reuse) the model server and run P4a, each agent each way."""
    global ONLY  # noqa: PLW0603  (one run's selection, set once here)
    ONLY = re.compile(args.only, re.IGNORECASE) if args.only else None
    ways = [v for v in args.via.split(",") if v]
    if unknown := set(ways) - {"agent", "pipeline", "local"}:
        raise SystemExit(f"--via: unknown {sorted(unknown)}")
    args.agents = ",".join(
        a if v == "agent" else f"{a}@{v}" for a in args.agents.split(",") for v in ways
    )
    await run_on_demo_tools("P4a", args, run_agent, report)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", default="ours,core")
    parser.add_argument("--sets", default="tuning,held-out")
    parser.add_argument("--via", default="agent", help="agent, pipeline, local")
    parser.add_argument("--dump", help="write every outcome to this JSON file")
    parser.add_argument(
        "--only", help="run only the requests this regular expression finds"
    )
    asyncio.run(main(parser.parse_args()))
