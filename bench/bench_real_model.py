"""P4 and P6 with the real model: llama_cpp.server + Qwen2.5-Coder-0.5B.

- P4: task success over spoken requests (weather, two cities, items CRUD,
  webhook, small talk): the 41 of the tuning set and the 40 held out (Italian,
  Spanish, other cities and phrasings), for our agent and for HA core's
  `llama_cpp` agent
  (structured calls only) using the same HTTP tools LLM API, same server,
  same tools, temperature 0. A task succeeds when exactly the right requests
  reach the tool server and the answer uses the result (the temperature, the
  item names) with no call markup; small talk succeeds with no tool request
  and a markup-free answer.
- P6: prompt tokens of the tools block as we send it vs pretty-printed, with
  the server's tokenizer (`/extras/tokenize`) and the `usage.prompt_tokens`
  difference of a request with and without tools.

    .venv/bin/python -m bench.bench_real_model [--only p4|p6] [--agents ours,core]
        [--limit N] [--every N] [--dump FILE]

(`--agents` also takes the variants of ours: ours-nostream, ours-required,
ours-examples (generated), ours-handwritten (the examples below), ours-grammar
(`bench/grammar.py`), ours-chain (calls after results), ours-1round,
ours-nudge-user and ours-nudge-system (`bench/nudge_placement.py`), and
ours-many, ours-many-search, ours-many-preselect: 40 imported operations
beside the demo's tools, all shown, searched or preselected.)

Needs `scripts/model_server --install-only` (or HTA_MODEL_SERVER_URL).
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
import json
from pathlib import Path
import statistics
import time
from typing import Any
from unittest import mock

import aiohttp

from bench._ha import (
    ModelRequests,
    home_assistant,
    log,
    machine,
    table,
    timed_turn,
)
from bench.grammar import grammar_in_requests
from bench.nudge_placement import nudge_as_message
from custom_components.http_tools_agent.const import DOMAIN
from custom_components.http_tools_agent.small import rules as small_model
from dev.loopback import Recorded
from dev.tool_server import DEMO_TOOLS, DemoToolServer, weather_for
from tests.e2e.harness import (
    QWEN_ALIAS,
    ModelServer,
    fixed_date_time_prompt,
    setup_llama_cpp,
    setup_ours,
)
from tests.many_tools import arr_tools
from tests.markup import markup_in
from tests.servers import FakeLLMServer, text_stream

TOOLS = list(DEMO_TOOLS)

type Check = Callable[[list[Recorded], DemoToolServer, str], tuple[bool, bool]]


type City = str | tuple[str, ...]


def _spellings(city: City) -> tuple[str, ...]:
    return (city,) if isinstance(city, str) else city


def weather(*cities: City) -> Check:
    """Right: one GET per city (any order; a city may have several right
    spellings: "Napoli" or "Naples"); used: every temperature said."""

    def check(
        reqs: list[Recorded], _s: DemoToolServer, answer: str
    ) -> tuple[bool, bool]:
        got = sorted(r.path.lower() for r in reqs if r.method == "GET")
        asked: list[str] = []
        for city in cities:
            found = next(
                (c for c in _spellings(city) if f"/weather/{c.lower()}" in got), None
            )
            if found is None:
                return False, False
            asked.append(found)
        right = len(reqs) == len(cities) and len(got) == len(cities)
        used = all(f"{weather_for(c)[1]}" in answer for c in asked)
        return right, right and used

    return check


def listed(reqs: list[Recorded], s: DemoToolServer, answer: str) -> tuple[bool, bool]:
    """Right: one GET /api/items; used: the items on the list are named."""
    ok = [(r.method, r.path) for r in reqs] == [("GET", "/api/items")]
    names = [str(i["name"]).lower() for i in s.items.values()]
    used = all(n in answer.lower() for n in names)
    return ok, ok and used


def added(name: City, qty: int | None = None) -> Check:
    """Right: one POST creating `name` (any of its spellings; with `qty`
    when given)."""

    def check(reqs: list[Recorded], s: DemoToolServer, _a: str) -> tuple[bool, bool]:
        ok = [(r.method, r.path) for r in reqs] == [("POST", "/api/items")] and any(
            any(n in str(i["name"]).lower() for n in _spellings(name))
            and (qty is None or i["qty"] == qty)
            for i in s.items.values()
        )
        return ok, ok

    return check


def updated(item_id: str, qty: int) -> Check:
    """Right: one PATCH of the item to qty."""

    def check(reqs: list[Recorded], s: DemoToolServer, _a: str) -> tuple[bool, bool]:
        ok = [(r.method, r.path) for r in reqs] == [
            ("PATCH", f"/api/items/{item_id}")
        ] and s.items[item_id]["qty"] == qty
        return ok, ok

    return check


def deleted(item_id: str) -> Check:
    """Right: one DELETE of the item."""

    def check(reqs: list[Recorded], s: DemoToolServer, _a: str) -> tuple[bool, bool]:
        ok = [(r.method, r.path) for r in reqs] == [
            ("DELETE", f"/api/items/{item_id}")
        ] and item_id not in s.items
        return ok, ok

    return check


def hooked(word: str) -> Check:
    """Right: one POST /hook whose message holds `word`."""

    def check(reqs: list[Recorded], s: DemoToolServer, _a: str) -> tuple[bool, bool]:
        ok = [(r.method, r.path) for r in reqs] == [("POST", "/hook")] and any(
            word in json.dumps(h).lower() for h in s.hooks
        )
        return ok, ok

    return check


# What our agent says itself when the model does not answer, besides the
# results read out (counted by the `agent_answered` quirk): no answer of
# the model's (`turn/say.py`, English; "Done. The tool " in runs before
# profiles).
AGENT_FALLBACKS = (
    "The model gave no answer.",
    "I used all ",
    "Done. The tool ",
    "Sorry, I didn't do that",
)


def model_answered(answer: str) -> bool:
    """Some words of the model's own, not a fallback of the agent."""
    return bool(answer.strip()) and not answer.startswith(AGENT_FALLBACKS)


def no_tool(reqs: list[Recorded], _s: DemoToolServer, answer: str) -> tuple[bool, bool]:
    """Small talk: right = no request; used = and the model answered (the
    agent's own "The model gave no answer." is no answer)."""
    right = not reqs
    return right, right and model_answered(answer)


def rescore(path: str) -> None:
    """Print the P4 tables of a dump, small talk scored as `no_tool` does now
    (dumps of older runs counted the agent's fallback as an answer)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    results: dict[str, list[Outcome]] = {}
    for name, rows in data.items():
        outcomes = []
        for row in rows:
            outcome = Outcome(
                **{"request_set": "tuning", "quirks": {}, "trace": [], **row}
            )
            if outcome.category == "small talk":
                outcome.right = not outcome.requests
                outcome.used = (
                    outcome.right
                    and model_answered(outcome.answer)
                    and not outcome.markup
                )
            outcomes.append(outcome)
        results[name] = outcomes
    p4_tables(results)
    quirks_table(results)


# The requests the small-model rules were tuned on (sessions of issue 11).
TUNING: list[tuple[str, str, Check]] = [
    ("weather", "What's the weather in Rome?", weather("Rome")),
    ("weather", "How warm is it in Paris right now?", weather("Paris")),
    ("weather", "Is it raining in London?", weather("London")),
    ("weather", "Tell me the temperature in Berlin.", weather("Berlin")),
    ("weather", "What's the weather like in Madrid today?", weather("Madrid")),
    ("weather", "Weather in Tokyo, please.", weather("Tokyo")),
    ("weather", "Do I need an umbrella in Oslo?", weather("Oslo")),
    ("weather", "How hot is it in Milan?", weather("Milan")),
    ("weather", "What's the weather in Vienna?", weather("Vienna")),
    ("weather", "Temperature in Lisbon?", weather("Lisbon")),
    ("two cities", "What's the weather in Rome and Paris?", weather("Rome", "Paris")),
    (
        "two cities",
        "Compare the weather in London and Berlin.",
        weather("London", "Berlin"),
    ),
    ("two cities", "Is it warmer in Madrid or in Oslo?", weather("Madrid", "Oslo")),
    ("two cities", "Weather for Tokyo and Milan, please.", weather("Tokyo", "Milan")),
    (
        "two cities",
        "How is the weather in Vienna and in Lisbon?",
        weather("Vienna", "Lisbon"),
    ),
    ("items: list", "What's on my shopping list?", listed),
    ("items: list", "Which items do I have?", listed),
    ("items: list", "Show me the shopping list.", listed),
    ("items: list", "List all the items.", listed),
    ("items: add", "Add bread to the shopping list.", added("bread")),
    ("items: add", "Put 2 bottles of water on the list.", added("water", 2)),
    ("items: add", "Add eggs.", added("eggs")),
    ("items: add", "Please add 5 oranges to my shopping list.", added("orange", 5)),
    ("items: add", "I need coffee, add it to the list.", added("coffee")),
    ("items: update", "Set the quantity of item 2 to 10.", updated("2", 10)),
    ("items: update", "Change item 1 to 7 pieces.", updated("1", 7)),
    ("items: update", "Update item 3: quantity 4.", updated("3", 4)),
    ("items: delete", "Delete item 3.", deleted("3")),
    ("items: delete", "Remove item 1 from the shopping list.", deleted("1")),
    ("items: delete", "Please delete the item with id 2.", deleted("2")),
    ("webhook", "Send a notification saying the laundry is done.", hooked("laundry")),
    ("webhook", "Notify me that dinner is ready.", hooked("dinner")),
    (
        "webhook",
        "Trigger the webhook with the message 'garage open'.",
        hooked("garage"),
    ),
    ("webhook", "Send a webhook: the kids are home.", hooked("kids")),
    ("webhook", "Send the notification 'backup finished'.", hooked("backup")),
    ("small talk", "Hello, how are you?", no_tool),
    ("small talk", "Tell me a joke.", no_tool),
    ("small talk", "What is 2 plus 2?", no_tool),
    ("small talk", "Thank you!", no_tool),
    ("small talk", "What can you do?", no_tool),
    ("small talk", "Good night.", no_tool),
]

# Held out: written apart from TUNING (other cities, Italian and Spanish,
# other phrasings, other small talk) before any rule of the profiles was
# measured on them; no rule is fitted to them. A rule stays in the small
# profile only if it raises this set's figure.
HELD_OUT: list[tuple[str, str, Check]] = [
    ("weather", "Che tempo fa a Napoli?", weather(("Napoli", "Naples"))),
    ("weather", "¿Qué tiempo hace en Sevilla?", weather(("Sevilla", "Seville"))),
    ("weather", "Any rain expected in Dublin?", weather("Dublin")),
    ("weather", "I'm heading to Prague, what's it like there?", weather("Prague")),
    ("weather", "Give me the current conditions in Athens.", weather("Athens")),
    ("weather", "Quanti gradi ci sono a Torino?", weather(("Torino", "Turin"))),
    ("weather", "¿Hace frío en Bilbao?", weather("Bilbao")),
    ("weather", "Check the weather for Amsterdam.", weather("Amsterdam")),
    ("two cities", "Weather in Zurich and Geneva?", weather("Zurich", "Geneva")),
    (
        "two cities",
        "Che tempo fa a Firenze e a Venezia?",
        weather(("Firenze", "Florence"), ("Venezia", "Venice")),
    ),
    (
        "two cities",
        "¿Qué tiempo hace en Valencia y en Málaga?",
        weather("Valencia", ("Málaga", "Malaga")),
    ),
    (
        "two cities",
        "Compare Helsinki with Stockholm.",
        weather("Helsinki", "Stockholm"),
    ),
    ("items: list", "What do I still need to buy?", listed),
    ("items: list", "Cosa c'è nella lista della spesa?", listed),
    ("items: list", "¿Qué hay en mi lista de la compra?", listed),
    ("items: list", "Read me the list.", listed),
    ("items: add", "Add a bag of rice to my list.", added("rice")),
    ("items: add", "Aggiungi il pane alla lista.", added(("pane", "bread"))),
    ("items: add", "Añade leche a la lista.", added(("leche", "milk"))),
    ("items: add", "Put three lemons on the shopping list.", added("lemon", 3)),
    ("items: add", "We're out of butter, add it.", added("butter")),
    ("items: update", "Change the quantity of item 3 to 2.", updated("3", 2)),
    ("items: update", "Imposta l'articolo 1 a 4 pezzi.", updated("1", 4)),
    ("items: update", "Cambia el artículo 2 a 8 unidades.", updated("2", 8)),
    ("items: delete", "Take item 2 off the list.", deleted("2")),
    ("items: delete", "Elimina l'articolo 3.", deleted("3")),
    ("items: delete", "Borra el artículo 1.", deleted("1")),
    ("webhook", "Let everyone know I'll be late.", hooked("late")),
    ("webhook", "Send a message to the family: pizza tonight.", hooked("pizza")),
    (
        "webhook",
        "Manda una notifica: la lavatrice ha finito.",
        hooked("lavatrice"),
    ),
    ("webhook", "Envía un aviso: la puerta está abierta.", hooked("puerta")),
    ("webhook", "Ping the webhook saying the oven is preheated.", hooked("oven")),
    ("small talk", "Good morning!", no_tool),
    ("small talk", "Who are you?", no_tool),
    ("small talk", "Thanks a lot, that's all.", no_tool),
    ("small talk", "Buonanotte!", no_tool),
    ("small talk", "¿Cómo estás?", no_tool),
    ("small talk", "How many days are in a week?", no_tool),
    ("small talk", "Can you sing?", no_tool),
    ("small talk", "What's the capital of France?", no_tool),
]
SETS = {"tuning": TUNING, "held-out": HELD_OUT}

# Hand-written examples for the demo tools (item 9), in the style the
# generated ones use; their cities, items and ids are not those of TUNING.
HANDWRITTEN_EXAMPLES = """\
The user says "What's the weather in Naples?"; you reply only \
{"name": "get_weather", "arguments": {"city": "Naples"}}; the tool returns \
"Naples: cloudy, 12°C"; you answer "In Naples it is cloudy, 12°C."
The user says "Put cheese on my list."; you reply only \
{"name": "add_item", "arguments": {"name": "cheese"}}; the tool returns \
{"id": "9", "name": "cheese", "qty": 1}; you answer "I added cheese to your list."
The user says "Remove item 7."; you reply only \
{"name": "delete_item", "arguments": {"id": "7"}}; the tool returns \
{"deleted": "7"}; you answer "Item 7 is gone."
The user says "Thanks!"; you answer "You're welcome!" without a tool."""

# Settings of our agent to compare (subentry data / entry options).
VARIANTS: dict[str, dict[str, Any]] = {
    "ours": {},
    "ours-nostream": {"agent": {"stream": False}},
    "ours-required": {"agent": {"tool_choice": "required"}},
    "ours-examples": {"agent": {"examples": "generated"}},
    "ours-handwritten": {
        "agent": {"examples": "custom", "custom_examples": HANDWRITTEN_EXAMPLES}
    },
    "ours-grammar": {"grammar": True},
    "ours-1round": {"options": {"max_tool_iterations": 1}},
    "ours-chain": {"agent": {"chain_calls": "on"}},
    # The profiles (`ours` is `auto`, which runs this 0.5B model as small).
    "ours-small": {"agent": {"profile": "small"}},
    "ours-capable": {"agent": {"profile": "capable"}},
    # The small profile without one of its rules (`rules.Rules`).
    "ours-no-answer-request": {
        "agent": {"profile": "small"},
        "rules": {"answer_request": False},
    },
    "ours-no-claims": {
        "agent": {"profile": "small"},
        "rules": {"claims_need_calls": False},
    },
    "ours-no-unasked": {
        "agent": {"profile": "small"},
        "rules": {"unasked_changes": False},
    },
    "ours-no-question-rule": {
        "agent": {"profile": "small"},
        "rules": {"questions_change_nothing": False},
    },
    "ours-no-results-rule": {
        "agent": {"profile": "small"},
        "rules": {"results_need_calls": False},
    },
    # What the model is sent of earlier turns (`turn/request.py`; P4m).
    "ours-history-all": {"agent": {"history": "all"}},
    "ours-history-text": {"agent": {"history": "text"}},
    "ours-history-recent": {"agent": {"history": "recent", "history_turns": 1}},
    "ours-history-none": {"agent": {"history": "none"}},
    "ours-nudge-user": {"nudge": "user"},
    "ours-nudge-system": {"nudge": "system"},
    "ours-no-examples": {"agent": {"examples": "none"}},
    # 40 imported Sonarr operations before the demo's six tools
    # (`tests/many_tools.py`), shown all, searched, or preselected by the
    # sentence (`turn/tool_search.py`).
    "ours-many": {"many": True, "agent": {"tool_search": "off"}},
    "ours-many-search": {"many": True, "agent": {"tool_search": "search"}},
    "ours-many-preselect": {"many": True, "agent": {"tool_search": "preselect"}},
}


@contextmanager
def small_rules(changes: dict[str, Any] | None) -> Iterator[None]:
    """The small profile with some of its rules switched (`rules.Rules`)."""
    if not changes:
        yield
        return
    rules = replace(small_model.SMALL_RULES, **changes)
    with mock.patch.object(small_model, "SMALL_RULES", rules):
        yield


@dataclass
class Outcome:
    """One request's outcome."""

    request_set: str
    category: str
    right: bool
    used: bool
    markup: bool
    seconds: float
    answer: str
    requests: list[str]
    # What our agent made up for in this request (diagnostics' counters).
    quirks: dict[str, int]
    # The calls the chat log showed and their results.
    trace: list[str]
    # Requests sent to the model in this turn (a yes to a held call included).
    model_requests: int = 0


async def run_agent(
    name: str,
    base_url: str,
    tools: DemoToolServer,
    limit: int | None,
    sets: list[str],
    every: int = 1,
) -> list[Outcome]:
    """Run the request sets through one agent in a fresh Home Assistant
    (`every`: each set's every Nth request, a sample of every category)."""
    outcomes: list[Outcome] = []
    variant = VARIANTS.get(name, {})
    with (
        grammar_in_requests() if variant.get("grammar") else nullcontext(),
        nudge_as_message(variant["nudge"]) if variant.get("nudge") else nullcontext(),
        small_rules(variant.get("rules")),
    ):
        return await _run_agent(
            name, variant, base_url, tools, limit, sets, outcomes, every
        )


async def _run_agent(
    name: str,
    variant: dict[str, Any],
    base_url: str,
    tools: DemoToolServer,
    limit: int | None,
    sets: list[str],
    outcomes: list[Outcome],
    every: int = 1,
) -> list[Outcome]:
    async with home_assistant() as hass:
        offered = tools.tools(TOOLS, sentences=False)
        if variant.get("many"):
            offered = [*arr_tools(tools.url), *offered]
        ours = await setup_ours(
            hass,
            base_url,
            offered,
            options=variant.get("options"),
            agent=variant.get("agent"),
        )
        agent = ours
        if name == "core":
            agent = await setup_llama_cpp(hass, base_url)
        (entry,) = hass.config_entries.async_entries(DOMAIN)
        requests = [
            (set_name, *request)
            for set_name in sets
            for request in SETS[set_name][:limit][::every]
        ]
        counter = ModelRequests()
        for index, (set_name, category, text, check) in enumerate(requests):
            tools.reset()
            quirks_before = Counter(entry.runtime_data.model_quirks)
            trace: list[str] = []
            counter.sent = 0
            with counter.counting():
                elapsed, _first, answer = await timed_turn(hass, agent, text, trace)
            quirks = Counter(entry.runtime_data.model_quirks) - quirks_before
            right, used = check(list(tools.requests), tools, answer)
            markup = bool(markup_in(answer))
            outcome = Outcome(
                set_name,
                category,
                right,
                used and not markup,
                markup,
                elapsed,
                answer,
                [f"{r.method} {r.path}" for r in tools.requests],
                dict(quirks),
                trace,
                counter.sent,
            )
            outcomes.append(outcome)
            log(
                f"P4 {name} {set_name} {index + 1}/{len(requests)} {elapsed:.1f}s "
                f"{counter.sent} model requests "
                f"right={right} used={outcome.used} {text!r} -> "
                f"{outcome.requests} {answer[:100]!r}"
            )
    return outcomes


def p4_tables(results: dict[str, list[Outcome]]) -> None:
    """Per request set: per category and overall; then the summary."""
    names = list(results)
    sets = list(dict.fromkeys(o.request_set for o in next(iter(results.values()))))
    for set_name in sets:
        categories = list(dict.fromkeys(c for c, _t, _k in SETS[set_name]))
        rows = []
        for category in [*categories, "all"]:
            row: list[str] = [category]
            for name in names:
                sel = [
                    o
                    for o in results[name]
                    if o.request_set == set_name and category in {"all", o.category}
                ]
                if not sel:
                    row.append("—")
                    continue
                right = sum(o.right for o in sel)
                used = sum(o.used for o in sel)
                row.append(f"{right}/{len(sel)} · {used}/{len(sel)}")
            rows.append(row)
        table(
            f"P4, {set_name} set: task success (right requests · right requests "
            "and answer uses the result, no markup)",
            ("category", *names),
            rows,
        )
    summary: list[tuple[str, ...]] = []
    for name in names:
        row = [name]
        for set_name in sets:
            sel = [o for o in results[name] if o.request_set == set_name]
            n = len(sel) or 1
            row.append(
                f"{100 * sum(o.right for o in sel) / n:.0f}% · "
                f"{100 * sum(o.used for o in sel) / n:.0f}%"
            )
        every = results[name]
        row += [
            str(sum(o.markup for o in every)),
            str(
                sum(
                    not model_answered(o.answer) or bool(o.quirks.get("agent_answered"))
                    for o in every
                )
            ),
            f"{sum(o.seconds for o in every) / max(len(every), 1):.1f}",
            f"{statistics.median(o.seconds for o in every):.1f}",
            f"{sum(o.model_requests for o in every) / max(len(every), 1):.2f}",
        ]
        summary.append(tuple(row))
    table(
        "P4 summary (right requests · and answer uses the result)",
        (
            "agent",
            *sets,
            "answers with markup",
            "answers by the agent (model silent)",
            "s per request",
            "median s",
            "model requests per request",
        ),
        summary,
    )


def quirks_table(results: dict[str, list[Outcome]]) -> None:
    """How often each agent made up for the model, over the whole run."""
    totals = {name: Counter[str]() for name in results}
    for name, outcomes in results.items():
        for outcome in outcomes:
            totals[name].update(outcome.quirks)
    kinds = sorted({kind for counter in totals.values() for kind in counter})
    if kinds:
        table(
            "P4: what our agent made up for (counts over the run)",
            ("kind", *results),
            [(kind, *(totals[name][kind] for name in results)) for kind in kinds],
        )


async def sent_tools_block(tools: DemoToolServer) -> list[dict[str, Any]]:
    """The `tools` array exactly as our agent sends it (recorded by a fake server)."""
    async with (
        FakeLLMServer(models=[QWEN_ALIAS]) as fake,
        home_assistant() as hass,
    ):
        agent = await setup_ours(
            hass, fake.base_url, tools.tools(TOOLS, sentences=False)
        )
        fake.add(text_stream("Hi."))
        await timed_turn(hass, agent, "Hi")
    block: list[dict[str, Any]] = fake.requests[0]["tools"]
    return block


async def p6(base_url: str, tools: DemoToolServer) -> None:
    """Tokens of the tools block: as sent vs pretty-printed."""
    block = await sent_tools_block(tools)
    root = base_url.removesuffix("/v1")
    compact = json.dumps(block, separators=(",", ":"), ensure_ascii=False)
    pretty = json.dumps(block, indent=2, ensure_ascii=False)
    rows: list[tuple[str, Any, Any]] = []
    async with aiohttp.ClientSession() as session:

        async def count(text: str) -> int:
            async with session.post(
                f"{root}/extras/tokenize", json={"input": text, "model": QWEN_ALIAS}
            ) as reply:
                return len((await reply.json())["tokens"])

        async def prompt_tokens(extra: dict[str, Any], system: str = "") -> int:
            messages = [{"role": "user", "content": "Hi"}]
            if system:
                messages.insert(0, {"role": "system", "content": system})
            body = {
                "model": QWEN_ALIAS,
                "messages": messages,
                "max_tokens": 1,
                "temperature": 0,
                **extra,
            }
            async with session.post(f"{base_url}/chat/completions", json=body) as reply:
                tokens: int = (await reply.json())["usage"]["prompt_tokens"]
                return tokens

        rows.append(
            ("as we send it (compact JSON)", len(compact), await count(compact))
        )
        rows.append(("pretty-printed (indent=2)", len(pretty), await count(pretty)))
        bare = await prompt_tokens({})
        rows.append(
            (
                "model's prompt: `tools` parameter (template re-renders it)",
                "—",
                await prompt_tokens({"tools": block}) - bare,
            )
        )
        rows.append(
            (
                "model's prompt: pretty JSON pasted in the system prompt",
                "—",
                await prompt_tokens({}, system=pretty) - bare,
            )
        )
    table(
        f"P6: prompt tokens of the {len(block)}-tool block (server's tokenizer)",
        ("form", "chars", "tokens"),
        rows,
    )


def dump(path: str, results: dict[str, list[Outcome]]) -> None:
    """Write every outcome as JSON."""
    Path(path).write_text(
        json.dumps(
            {k: [o.__dict__ for o in v] for k, v in results.items()},
            indent=1,
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )


async def main(args: argparse.Namespace) -> None:
    """Start (or reuse) the model server, run P4 and P6."""
    print(f"Machine: {machine()}")
    server = ModelServer.from_env_or_start()
    tools = DemoToolServer()
    await tools.start()
    try:
        if args.only in (None, "p6"):
            await p6(server.url, tools)
        if args.only in (None, "p4"):
            results = {}
            started = time.monotonic()
            with fixed_date_time_prompt():
                for name in args.agents.split(","):
                    results[name] = await run_agent(
                        name,
                        server.url,
                        tools,
                        args.limit,
                        args.sets.split(","),
                        args.every,
                    )
                    if args.dump:  # after each agent: a long run keeps its part
                        dump(args.dump, results)
            p4_tables(results)
            quirks_table(results)
            print(f"\nP4 wall time: {time.monotonic() - started:.0f} s")
    finally:
        await tools.stop()
        server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=["p4", "p6"])
    parser.add_argument("--agents", default="ours,core")
    parser.add_argument("--limit", type=int, help="requests per set")
    parser.add_argument(
        "--sets", default="tuning,held-out", help="tuning, held-out or both"
    )
    parser.add_argument("--dump", help="write every outcome to this JSON file")
    parser.add_argument(
        "--every", type=int, default=1, help="each set's every Nth request only"
    )
    parser.add_argument(
        "--rescore", help="print the P4 tables of a dump (no model needed)"
    )
    arguments = parser.parse_args()
    if arguments.rescore:
        rescore(arguments.rescore)
    else:
        asyncio.run(main(arguments))
