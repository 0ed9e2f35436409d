"""P4 in German and French with the real model (`bench.bench_real_model`'s
tasks, checks and tables, on requests in those languages).

- de-tuning, fr-tuning: requests of each kind of P4's tuning set (weather,
  two cities, items CRUD, webhook, small talk), written with the lexicons
  (`lexicon/de.py`, `lexicon/fr.py`): the words the checks look for were
  chosen with these requests in view.
- de-held-out, fr-held-out: other cities, items and phrasings, written
  apart before any figure was measured; no word was fitted to them.

The pipeline's language is English (as a user who types German to an
English pipeline); the agent tells the request's language (`lexicon.
guess_language`) and speaks its own words in it.

    HTA_MODEL_SERVER_URL=… .venv/bin/python -m bench.bench_languages
        [--agents ours,core] [--sets de-tuning,de-held-out,fr-tuning,fr-held-out]
        [--limit N] [--dump FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path

from bench import bench_real_model as p4
from bench.bench_real_model import (
    Check,
    added,
    deleted,
    listed,
    no_tool,
    updated,
    weather,
)
from custom_components.http_tools_agent.server import client
from dev.loopback import Recorded
from dev.tool_server import DemoToolServer
from tests.e2e.harness import ModelServer

TRANSLATIONS = (
    Path(__file__).resolve().parents[1]
    / "custom_components/http_tools_agent/translations"
)
# What the agent says itself when the model does not answer (`turn/say.py`).
_FALLBACK_KEYS = ("empty_answer", "nothing_done", "not_done", "no_result", "cut_off")


def hooked(word: str) -> Check:
    """Right: one POST /hook whose message holds `word` (accents kept)."""

    def check(reqs: list[Recorded], s: DemoToolServer, _a: str) -> tuple[bool, bool]:
        ok = [(r.method, r.path) for r in reqs] == [("POST", "/hook")] and any(
            word in json.dumps(h, ensure_ascii=False).lower() for h in s.hooks
        )
        return ok, ok

    return check


DE_TUNING: list[tuple[str, str, Check]] = [
    ("weather", "Wie ist das Wetter in Berlin?", weather("Berlin")),
    ("weather", "Wie warm ist es in Hamburg?", weather("Hamburg")),
    ("weather", "Regnet es in Köln?", weather(("Köln", "Koeln", "Cologne"))),
    ("weather", "Sag mir die Temperatur in Wien.", weather(("Wien", "Vienna"))),
    (
        "two cities",
        "Wie ist das Wetter in Berlin und in Paris?",
        weather("Berlin", "Paris"),
    ),
    (
        "two cities",
        "Vergleiche das Wetter in Hamburg und München.",
        weather("Hamburg", ("München", "Muenchen", "Munich")),
    ),
    ("items: list", "Was steht auf meiner Einkaufsliste?", listed),
    ("items: list", "Zeig mir die Einkaufsliste.", listed),
    ("items: add", "Füge Brot zur Einkaufsliste hinzu.", added(("brot", "bread"))),
    (
        "items: add",
        "Setz 2 Flaschen Wasser auf die Liste.",
        added(("wasser", "water"), 2),
    ),
    ("items: update", "Ändere die Menge von Artikel 2 auf 10.", updated("2", 10)),
    ("items: update", "Setze Artikel 1 auf 7 Stück.", updated("1", 7)),
    ("items: delete", "Lösche Artikel 3.", deleted("3")),
    ("items: delete", "Entferne Artikel 1 von der Einkaufsliste.", deleted("1")),
    ("webhook", "Benachrichtige mich, dass das Essen fertig ist.", hooked("essen")),
    ("webhook", "Sende eine Nachricht: Garage offen.", hooked("garage")),
    ("small talk", "Hallo, wie geht es dir?", no_tool),
    ("small talk", "Erzähl mir einen Witz.", no_tool),
    ("small talk", "Danke!", no_tool),
    ("small talk", "Was kannst du?", no_tool),
]
DE_HELD_OUT: list[tuple[str, str, Check]] = [
    ("weather", "Wird es in Dresden regnen?", weather("Dresden")),
    ("weather", "Wie kalt ist es gerade in Zürich?", weather(("Zürich", "Zurich"))),
    ("weather", "Brauche ich in Frankfurt einen Regenschirm?", weather("Frankfurt")),
    (
        "two cities",
        "Ist es in Bremen wärmer als in Leipzig?",
        weather("Bremen", "Leipzig"),
    ),
    ("items: list", "Was muss ich noch einkaufen?", listed),
    ("items: list", "Lies mir die Liste vor.", listed),
    (
        "items: add",
        "Ich brauche Kaffee, schreib ihn auf die Liste.",
        added(("kaffee", "coffee")),
    ),
    (
        "items: add",
        "Drei Zitronen auf die Einkaufsliste, bitte.",
        added(("zitrone", "lemon"), 3),
    ),
    ("items: update", "Mach aus Artikel 3 bitte 2 Stück.", updated("3", 2)),
    ("items: delete", "Nimm Artikel 2 von der Liste.", deleted("2")),
    ("items: delete", "Streich Artikel 3.", deleted("3")),
    ("webhook", "Sag allen Bescheid, dass ich später komme.", hooked("später")),
    ("webhook", "Schick der Familie: heute Abend Pizza.", hooked("pizza")),
    ("small talk", "Guten Morgen!", no_tool),
    ("small talk", "Wer bist du?", no_tool),
    ("small talk", "Gute Nacht.", no_tool),
    ("small talk", "Wie viele Tage hat eine Woche?", no_tool),
]
FR_TUNING: list[tuple[str, str, Check]] = [
    ("weather", "Quel temps fait-il à Paris ?", weather("Paris")),
    ("weather", "Fait-il chaud à Marseille ?", weather("Marseille")),
    ("weather", "Pleut-il à Lyon ?", weather("Lyon")),
    ("weather", "Donne-moi la température à Nice.", weather("Nice")),
    ("two cities", "Quel temps fait-il à Paris et à Lyon ?", weather("Paris", "Lyon")),
    (
        "two cities",
        "Compare la météo de Bordeaux et de Lille.",
        weather("Bordeaux", "Lille"),
    ),
    ("items: list", "Qu'est-ce qu'il y a sur ma liste de courses ?", listed),
    ("items: list", "Montre-moi la liste de courses.", listed),
    ("items: add", "Ajoute du pain à la liste de courses.", added(("pain", "bread"))),
    (
        "items: add",
        "Mets 2 bouteilles d'eau sur la liste.",
        added(("eau", "water"), 2),
    ),
    ("items: update", "Change la quantité de l'article 2 à 10.", updated("2", 10)),
    ("items: update", "Mets l'article 1 à 7 pièces.", updated("1", 7)),
    ("items: delete", "Supprime l'article 3.", deleted("3")),
    ("items: delete", "Enlève l'article 1 de la liste de courses.", deleted("1")),
    ("webhook", "Envoie une notification : le linge est prêt.", hooked("linge")),
    ("webhook", "Préviens-moi que le dîner est prêt.", hooked("dîner")),
    ("small talk", "Bonjour, comment ça va ?", no_tool),
    ("small talk", "Raconte-moi une blague.", no_tool),
    ("small talk", "Merci !", no_tool),
    ("small talk", "Que sais-tu faire ?", no_tool),
]
FR_HELD_OUT: list[tuple[str, str, Check]] = [
    ("weather", "Va-t-il pleuvoir à Toulouse ?", weather("Toulouse")),
    (
        "weather",
        "Il fait froid à Genève en ce moment ?",
        weather(("Genève", "Geneve", "Geneva")),
    ),
    (
        "weather",
        "J'ai besoin d'un parapluie à Bruxelles ?",
        weather(("Bruxelles", "Brussels")),
    ),
    (
        "two cities",
        "Fait-il plus chaud à Nantes qu'à Strasbourg ?",
        weather("Nantes", "Strasbourg"),
    ),
    ("items: list", "Qu'est-ce qu'il me reste à acheter ?", listed),
    ("items: list", "Lis-moi la liste.", listed),
    (
        "items: add",
        "Il me faut du café, ajoute-le à la liste.",
        added(("café", "cafe", "coffee")),
    ),
    (
        "items: add",
        "Trois citrons sur la liste de courses, s'il te plaît.",
        added(("citron", "lemon"), 3),
    ),
    ("items: update", "Passe l'article 3 à 2 pièces.", updated("3", 2)),
    ("items: delete", "Retire l'article 2 de la liste.", deleted("2")),
    ("items: delete", "Efface l'article 3.", deleted("3")),
    (
        "webhook",
        "Préviens tout le monde que je serai en retard.",
        hooked("retard"),
    ),
    (
        "webhook",
        "Envoie un message à la famille : pizza ce soir.",
        hooked("pizza"),
    ),
    ("small talk", "Bonne nuit !", no_tool),
    ("small talk", "Qui es-tu ?", no_tool),
    ("small talk", "Merci beaucoup, c'est tout.", no_tool),
    ("small talk", "Combien de jours y a-t-il dans une semaine ?", no_tool),
]
SETS = {
    "de-tuning": DE_TUNING,
    "de-held-out": DE_HELD_OUT,
    "fr-tuning": FR_TUNING,
    "fr-held-out": FR_HELD_OUT,
}


def fallbacks() -> tuple[str, ...]:
    """The agent's own answers, in English and in every translation (so a
    German "no answer" is not counted as the model's)."""
    said = list(p4.AGENT_FALLBACKS)
    for path in sorted(TRANSLATIONS.glob("*.json")):
        messages = json.loads(path.read_text(encoding="utf-8"))["exceptions"]
        said += [
            messages[key]["message"].split("{")[0]
            for key in _FALLBACK_KEYS
            if key in messages
        ]
    return tuple(dict.fromkeys(text for text in said if text))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--agents", default="ours,core")
    parser.add_argument("--limit", type=int, help="requests per set")
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--dump", help="write every outcome to this JSON file")
    arguments = parser.parse_args()
    arguments.only = "p4"
    p4.SETS.update(SETS)
    p4.AGENT_FALLBACKS = fallbacks()  # type: ignore[assignment]
    if url := os.environ.get("HTA_MODEL_SERVER_URL"):
        # A server another run keeps busy answers /models late; its requests
        # just wait their turn.
        server = ModelServer(url.rstrip("/"))
        ModelServer.from_env_or_start = lambda: server  # type: ignore[method-assign]
        setattr(client, "SERVER_CHECK_TIMEOUT", 600.0)  # noqa: B010
    asyncio.run(p4.main(arguments))
