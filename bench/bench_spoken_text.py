"""Benchmark of speech without markup (turn/spoken_text.py).

Run from the repository root:

    .venv/bin/python -m bench.bench_spoken_text

For each answer (a real model's markdown answers in tests/fixtures/markdown,
and the forms tests/spoken_cases.py writes), fed in pieces of 1 to 5
characters as a tokenizer would, it prints:

- µs per delta: the cleaner's work per streamed piece (best of several runs);
- first word: how many raw characters had arrived when the first spoken
  character came out, against where the first spoken character is in the
  raw text (the delay the cleaner adds before a voice can start);
- held: the most characters the cleaner held back at once.
"""

from __future__ import annotations

import json
from pathlib import Path
import random
import time

from custom_components.http_tools_agent.turn.spoken_text import SpokenText, spoken
from tests.spoken_cases import WRITTEN

MARKDOWN = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "markdown"
RUNS = 20


def answers() -> dict[str, str]:
    """The captured answers by name, then the written forms."""
    found: dict[str, str] = {}
    for path in sorted(MARKDOWN.glob("*.json")):
        body = json.loads(json.loads(path.read_text(encoding="utf-8"))["body"])
        found[path.stem] = body["choices"][0]["message"]["content"]
    for index, (written, _) in enumerate(WRITTEN):
        found[f"written_{index + 1}"] = written
    return found


def tokens(text: str, rng: random.Random) -> list[str]:
    """Pieces of 1 to 5 characters."""
    out: list[str] = []
    i = 0
    while i < len(text):
        step = rng.randint(1, 5)
        out.append(text[i : i + step])
        i += step
    return out


def measure(text: str) -> tuple[float, int, int, int]:
    """µs per delta, raw characters in at the first spoken one, where the
    first speakable character is in the raw text, the most held."""
    pieces = tokens(text, random.Random(1))
    best = float("inf")
    for _ in range(RUNS):
        cleaner = SpokenText()
        start = time.perf_counter()
        for piece in pieces:
            cleaner.feed(piece)
        cleaner.finish()
        best = min(best, time.perf_counter() - start)
    cleaner = SpokenText()
    received = said = held = 0
    first_at = 0
    for piece in pieces:
        received += len(piece)
        out = cleaner.feed(piece)
        if out.strip() and not first_at:
            first_at = received
        said += len(out)
        held = max(held, cleaner.held)
    if not first_at:
        first_at = received
    words = spoken(text)
    first_word = text.find(words.split()[0]) + len(words.split()[0]) if words else 0
    return best / len(pieces) * 1e6, first_at, first_word, held


def main() -> None:
    """Print the table."""
    print(
        f"{'answer':22} {'chars':>6} {'µs/delta':>9} {'first out':>10} "
        f"{'first word':>11} {'held max':>9}"
    )
    for name, text in answers().items():
        cost, first_at, first_word, held = measure(text)
        print(
            f"{name:22} {len(text):6d} {cost:9.1f} {first_at:10d} "
            f"{first_word:11d} {held:9d}"
        )


if __name__ == "__main__":
    main()
