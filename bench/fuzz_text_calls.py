"""The text-call filter against a million random replies.

Each reply is built from the families' replies and markers, the
transcripts' pieces, prose words and random characters
(`tests/engine/textcall_cases.py` FRAGMENTS), then filtered whole and in a
random chunking (and one in ten character by character). It counts replies
whose chunked result differs from the whole one, and replies whose spoken
text holds a whole marker (`tests/markup.py` MARKUP): both must be 0.

    .venv/bin/python -m bench.fuzz_text_calls [--replies 1000000] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import time

from bench._ha import machine
from tests.engine.textcall_cases import CASE_TOOLS, CASES, FRAGMENTS
from tests.engine.textcall_run import filter_reply, filter_stream
from tests.markup import MARKUP

_PROSE = ["The", " weather", " in", " Rome", " is", " sunny", ".", "\n", " ", "é", "!"]
_NOISE = '<>{}[]()|`"\\/=:,_ \nabcthinkfunctiolprmegATOLSRG'


def reply(rng: random.Random) -> str:
    """One random reply of up to 14 pieces."""
    parts = []
    for _ in range(rng.randint(1, 14)):
        kind = rng.random()
        if kind < 0.45:
            parts.append(rng.choice(FRAGMENTS))
        elif kind < 0.7:
            parts.append(rng.choice(_PROSE))
        elif kind < 0.8:
            parts.append(rng.choice(CASES)[1])
        else:
            parts.append("".join(rng.choices(_NOISE, k=rng.randint(1, 12))))
    return "".join(parts)


def chunked(text: str, rng: random.Random) -> list[str]:
    """``text`` cut at random places."""
    if len(text) < 2:
        return [text]
    cuts = sorted(
        rng.sample(range(1, len(text)), k=min(len(text) - 1, rng.randint(1, 40)))
    )
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


def main() -> None:
    """Fuzz and print the counts."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replies", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    differences = leaks = 0
    examples: list[str] = []
    start = time.perf_counter()
    for n in range(args.replies):
        text = reply(rng)
        whole = filter_reply(text, CASE_TOOLS)
        pieces = list(text) if n % 10 == 0 else chunked(text, rng)
        streamed, _ = filter_stream(pieces, CASE_TOOLS)
        if streamed != whole:
            differences += 1
            examples.append(f"chunking: {text!r}")
        if any(m in whole.text for m in MARKUP):
            leaks += 1
            examples.append(f"leak: {text!r} -> {whole.text!r}")
    seconds = time.perf_counter() - start
    print(f"Machine: {machine()}")
    print(
        f"{args.replies:,} replies (seed {args.seed}) in {seconds:.0f} s: "
        f"{differences} chunking differences, {leaks} leaks"
    )
    for example in examples[:10]:
        print(" ", example)


if __name__ == "__main__":
    main()
