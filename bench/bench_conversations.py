"""P4m: conversations of several turns with the real model.

Each conversation runs through Home Assistant's conversation API with one
conversation id, against the demo tool server (its list is not reset between
the turns of a conversation: a follow-up finds what the turn before did).
Per turn: the right requests (only the expected ones), the answer uses the
result, and **fabricated confirmations**: a turn that needed a request, made
none, and whose answer does not say that it failed (it claimed the action or
made up its result). Tuning and held-out conversations as in P4.

    .venv/bin/python -m bench.bench_conversations [--agents ours,ours-capable,core]
        [--sets tuning,held-out] [--dump FILE]

Needs `scripts/model_server --install-only` (or HTA_MODEL_SERVER_URL).
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
import re

from bench._ha import (
    ModelRequests,
    home_assistant,
    log,
    run_on_demo_tools,
    table,
    timed_turn,
)
from bench.bench_real_model import (
    TOOLS,
    VARIANTS,
    Check,
    added,
    deleted,
    hooked,
    listed,
    no_tool,
    small_rules,
    updated,
    weather,
)
from custom_components.http_tools_agent.const import DOMAIN
from custom_components.http_tools_agent.turn.changes import says_failed
from dev.tool_server import DemoToolServer
from tests.e2e.harness import (
    setup_llama_cpp,
    setup_ours,
)
from tests.markup import markup_in

type Conversation = Sequence[tuple[str, Check]]

# Written before any rule of issue 20 was measured on them; the first one
# is the conversation of the issue.
TUNING: list[Conversation] = [
    [
        ("What's on my shopping list?", listed),
        ("Delete item 3.", deleted("3")),
        ("What's the weather in Oslo?", weather("Oslo")),
        ("Add eggs to the list.", added("egg")),
    ],
    [
        ("What's the weather in Rome?", weather("Rome")),
        ("And in Paris?", weather("Paris")),
        ("Thanks!", no_tool),
    ],
    [
        ("Add bread to the shopping list.", added("bread")),
        ("Make it 3.", updated("4", 3)),
        ("What's on my list now?", listed),
    ],
    [
        ("Hello!", no_tool),
        ("What's the weather in Berlin?", weather("Berlin")),
        ("Send a notification saying it's sunny in Berlin.", hooked("berlin")),
    ],
    [
        ("Che tempo fa a Roma?", weather(("Roma", "Rome"))),
        ("E a Milano?", weather(("Milano", "Milan"))),
        ("Grazie!", no_tool),
    ],
    [
        ("¿Qué hay en mi lista?", listed),
        ("Borra el artículo 2.", deleted("2")),
        ("Añade pan.", added(("pan", "bread"))),
    ],
    [
        ("Set the quantity of item 1 to 5.", updated("1", 5)),
        ("Now delete item 2.", deleted("2")),
        ("Notify me that the list is updated.", hooked("list")),
    ],
    [
        ("Tell me a joke.", no_tool),
        ("Add coffee to the list.", added("coffee")),
        ("Is it cold in Oslo?", weather("Oslo")),
    ],
    [
        ("What's on my list?", listed),
        ("Remove the milk.", deleted("3")),
        ("Send the list to the family.", hooked("apples")),
    ],
    [
        ("Weather in Tokyo?", weather("Tokyo")),
        ("Add an umbrella to my list.", added("umbrella")),
        ("Good night.", no_tool),
    ],
]

# Held out: written apart, no rule fitted to them.
HELD_OUT: list[Conversation] = [
    [
        ("Cosa devo comprare?", listed),
        ("Togli l'articolo 1.", deleted("1")),
        ("Aggiungi le uova.", added(("uova", "uovo", "egg"))),
        ("Grazie mille.", no_tool),
    ],
    [
        ("How's the weather in Lisbon?", weather(("Lisbon", "Lisboa"))),
        ("What about Madrid?", weather("Madrid")),
        ("Let the family know it's warm in Madrid.", hooked("madrid")),
    ],
    [
        ("Put four apples on my list.", added("apple", 4)),
        ("Actually make that two.", updated("4", 2)),
        ("Read me the list.", listed),
    ],
    [
        ("Hi there!", no_tool),
        ("Is it sunny in Athens?", weather("Athens")),
        ("And in Dublin?", weather("Dublin")),
    ],
    [
        ("¿Qué tiempo hace en Barcelona?", weather("Barcelona")),
        ("¿Y en Sevilla?", weather(("Sevilla", "Seville"))),
        ("Gracias.", no_tool),
    ],
    [
        ("Delete item 2 from the list.", deleted("2")),
        ("What's left on it?", listed),
        ("Add bananas back.", added("banana")),
    ],
    [
        ("Change item 3 to 4 pieces.", updated("3", 4)),
        ("Send a message to the family: shopping list updated.", hooked("updated")),
        ("Who are you?", no_tool),
    ],
    [
        ("Aggiungi il caffè alla lista.", added(("caff", "coffee"))),
        ("Che tempo fa a Venezia?", weather(("Venezia", "Venice"))),
        ("Manda una notifica: porta l'ombrello.", hooked("ombrello")),
    ],
    [
        ("Which items do I need?", listed),
        ("Get rid of the bananas.", deleted("2")),
        ("Add oranges instead.", added("orange")),
    ],
    [
        ("Notify everyone that dinner is at seven.", hooked("dinner")),
        ("What's the weather in Vienna?", weather(("Vienna", "Wien"))),
        ("Thanks, bye!", no_tool),
    ],
]
SETS = {"tuning": TUNING, "held-out": HELD_OUT}

# An answer that says the action did not happen (then no request is honest),
# beside the lexicons' `says_failed`.
_FAILED = re.compile(
    r"\b(?:can(?:no|')t|could(?: not|n't)|unable|not able|didn't|did not|"
    r"sorry|no tool ran|non (?:posso|riesco|sono riuscit|ho potuto)|"
    r"mi dispiace|no (?:puedo|pude|he podido)|lo siento)\b",
    re.IGNORECASE,
)


@dataclass
class TurnOutcome:
    """One turn of one conversation."""

    request_set: str
    conversation: int
    turn: int
    text: str
    needs_request: bool
    right: bool
    used: bool
    fabricated: bool
    markup: bool
    seconds: float
    answer: str
    requests: list[str]
    quirks: dict[str, int]
    model_requests: int = 0


async def run_agent(
    name: str, base_url: str, tools: DemoToolServer, sets: list[str]
) -> list[TurnOutcome]:
    """Every conversation of the sets through one agent."""
    variant = VARIANTS.get(name, {})
    outcomes: list[TurnOutcome] = []
    with ExitStack() as stack:
        stack.enter_context(small_rules(variant.get("rules")))
        async with home_assistant() as hass:
            agent = await setup_ours(
                hass,
                base_url,
                tools.tools(TOOLS, sentences=False),
                options=variant.get("options"),
                agent=variant.get("agent"),
            )
            if name == "core":
                agent = await setup_llama_cpp(hass, base_url)
            (entry,) = hass.config_entries.async_entries(DOMAIN)
            counter = ModelRequests()
            for set_name in sets:
                for number, conversation in enumerate(SETS[set_name]):
                    tools.reset()
                    conversation_id = f"p4m-{name}-{set_name}-{number}"
                    for turn, (text, check) in enumerate(conversation):
                        tools.requests.clear()
                        before = Counter(entry.runtime_data.model_quirks)
                        counter.sent = 0
                        with counter.counting():
                            elapsed, _first, answer = await timed_turn(
                                hass, agent, text, conversation_id=conversation_id
                            )
                        quirks = Counter(entry.runtime_data.model_quirks) - before
                        right, used = check(list(tools.requests), tools, answer)
                        needs = check is not no_tool
                        outcome = TurnOutcome(
                            set_name,
                            number,
                            turn,
                            text,
                            needs,
                            right,
                            used and not markup_in(answer),
                            needs
                            and not tools.requests
                            and not (_FAILED.search(answer) or says_failed(answer)),
                            bool(markup_in(answer)),
                            elapsed,
                            answer,
                            [r.target for r in tools.requests],
                            dict(quirks),
                            counter.sent,
                        )
                        outcomes.append(outcome)
                        log(
                            f"P4m {name} {set_name} {number}.{turn} {elapsed:.1f}s "
                            f"{counter.sent} model requests "
                            f"right={right} fabricated={outcome.fabricated} "
                            f"{text!r} -> {outcome.requests} {answer[:90]!r}"
                        )
    return outcomes


def report(results: dict[str, list[TurnOutcome]]) -> None:
    """Per set: first turns and follow-ups, fabricated confirmations."""
    rows = []
    for name, outcomes in results.items():
        for set_name in dict.fromkeys(o.request_set for o in outcomes):
            sel = [o for o in outcomes if o.request_set == set_name]
            first = [o for o in sel if o.turn == 0 and o.needs_request]
            later = [o for o in sel if o.turn > 0 and o.needs_request]
            talk = [o for o in sel if not o.needs_request]
            rows.append(
                (
                    name,
                    set_name,
                    _share(first, "right"),
                    _share(later, "right"),
                    _share([*first, *later], "used"),
                    _share(talk, "right"),
                    sum(o.fabricated for o in sel),
                    sum(o.markup for o in sel),
                    f"{sum(o.seconds for o in sel) / max(len(sel), 1):.1f}",
                    f"{sum(o.model_requests for o in sel) / max(len(sel), 1):.2f}",
                )
            )
    table(
        "P4m: conversations (right requests on first turns · on follow-ups; "
        "answer uses the result; small talk without a request)",
        (
            "agent",
            "set",
            "first turns right",
            "follow-ups right",
            "uses result",
            "small talk",
            "fabricated confirmations",
            "markup",
            "s per turn",
            "model requests per turn",
        ),
        rows,
    )
    fabricated = [
        (name, o.request_set, f"{o.conversation}.{o.turn}", o.text, o.answer[:80])
        for name, outcomes in results.items()
        for o in outcomes
        if o.fabricated
    ]
    if fabricated:
        table(
            "P4m: fabricated confirmations",
            ("agent", "set", "turn", "request", "answer"),
            fabricated,
        )


def _share(outcomes: list[TurnOutcome], field: str) -> str:
    return f"{sum(getattr(o, field) for o in outcomes)}/{len(outcomes)}"


async def main(args: argparse.Namespace) -> None:
    """Start (or reuse) the model server and run P4m."""
    await run_on_demo_tools("P4m", args, run_agent, report)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", default="ours,ours-capable,core")
    parser.add_argument("--sets", default="tuning,held-out")
    parser.add_argument("--dump", help="write every outcome to this JSON file")
    asyncio.run(main(parser.parse_args()))
