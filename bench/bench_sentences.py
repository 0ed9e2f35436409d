"""Which requests the demo's tools answer by their own sentences (no model),
and what each costs: requests written apart from the sentences
(`dev/demo_sentences.py`), new phrasings in the five languages, through an
Assist pipeline that prefers local intents, on the demo's tools and a
scripted model server that only records what reaches it (no real model:
a request that reaches it is "goes to the model").

    .venv/bin/python -m bench.bench_sentences

Prints one Markdown row per request: language, request, local or model,
seconds (a held change: the question and the "Yes." together), the answer
and the tool requests it made; then the split and the median seconds.
"""

from __future__ import annotations

import asyncio
import statistics

from bench._ha import home_assistant, pipeline_turn, text_pipeline
from dev.tool_server import DEMO_ENTRY_TOOLS, DemoToolServer
from tests.e2e.harness import setup_ours
from tests.servers import FakeLLMServer

REQUESTS: tuple[tuple[str, str], ...] = (
    ("en", "What's the weather like in Paris?"),
    ("en", "How's the weather in Oslo today?"),
    ("en", "Is it raining in London?"),
    ("en", "Tell me the weather for Madrid."),
    ("en", "What's on the shopping list?"),
    ("en", "Read me the demo shopping list."),
    ("en", "What do we need from the store?"),
    ("en", "Add eggs to the demo shopping list."),
    ("en", "Put coffee on my demo list."),
    ("en", "Please add oat milk to the demo shopping list."),
    ("en", "Remove the apples."),
    ("en", "Delete bananas from the demo shopping list."),
    ("en", "Send a notification that the washing machine is finished."),
    ("en", "Notify everyone that dinner is ready in five minutes."),
    ("en", "Tell my phone that the pizza is here."),
    ("de", "Wie ist das Wetter in Hamburg?"),
    ("de", "Wird es heute in Köln regnen?"),
    ("de", "Was steht auf der Einkaufsliste?"),
    ("de", "Setz Butter auf die Demo-Einkaufsliste."),
    ("de", "Schick eine Nachricht, dass das Essen fertig ist."),
    ("es", "¿Qué tiempo hace en Valencia?"),
    ("es", "¿Va a llover en Bilbao?"),
    ("es", "¿Qué hay en mi lista de la compra?"),
    ("es", "Añade pan a la lista de la compra demo."),
    ("es", "Manda una notificación diciendo que la colada está lista."),
    ("fr", "Quel temps fait-il à Marseille ?"),
    ("fr", "Est-ce qu'il pleut à Nantes ?"),
    ("fr", "Qu'est-ce qu'il y a sur ma liste de courses ?"),
    ("fr", "Ajoute du beurre à la liste de courses démo."),
    ("fr", "Envoie une notification qui dit que le linge est sec."),
    ("it", "Che tempo fa a Napoli?"),
    ("it", "Piove a Venezia?"),
    ("it", "Cosa c'è nella lista della spesa?"),
    ("it", "Aggiungi il caffè alla lista della spesa demo."),
    ("it", "Manda una notifica che dice che la lavatrice ha finito."),
)


async def main() -> None:
    """Each request once, in one Home Assistant (the list changes as asked)."""
    local_seconds: list[float] = []
    to_model = 0
    async with (
        FakeLLMServer() as model,
        DemoToolServer() as tools,
        home_assistant() as hass,
    ):
        agent = await setup_ours(
            hass, model.base_url, tools.tools(list(DEMO_ENTRY_TOOLS))
        )
        pipeline = await text_pipeline(hass, agent, prefer_local_intents=True)
        print("| lang | request | answered | seconds | answer | tool requests |")
        print("|---|---|---|---|---|---|")
        for language, text in REQUESTS:
            asked, sent = len(model.requests), len(tools.requests)
            seconds, said, _local = await pipeline_turn(hass, pipeline, text)
            # A warm-up carries no question: only a request with it counts.
            reached = any(
                text in str(m.get("content"))
                for r in model.requests[asked:]
                for m in r["messages"]
            )
            made = [r.target for r in tools.requests[sent:]]
            if reached:
                to_model += 1
                where, cost = "goes to the model", "-"
            else:
                local_seconds.append(seconds)
                where, cost = "locally", f"{seconds:.3f}"
                said = said.replace("|", "/")
            print(
                f"| {language} | {text} | {where} | {cost} | "
                f"{said if not reached else '-'} | {', '.join(made) or '-'} |",
                flush=True,
            )
    total = len(REQUESTS)
    print(
        f"\nlocally: {len(local_seconds)}/{total} "
        f"(median {statistics.median(local_seconds):.3f} s, "
        f"max {max(local_seconds):.3f} s); to the model: {to_model}/{total}"
    )


if __name__ == "__main__":
    asyncio.run(main())
