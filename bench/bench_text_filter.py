"""Benchmark of the streaming text-call filter (engine/textcalls/).

Run from the repository root:

    .venv/bin/python -m bench.bench_text_filter

Prints two tables:

1. cost: microseconds of filter work per streamed delta (best of several
   runs), for the real captures' chunkings (read from
   tests/fixtures/transcripts/ by tests/engine/textcall_cases.py) and
   synthetic long answers, prose and markup; plus throughput of the filter
   fed a whole large reply at once.
2. delay: when the first spoken character comes out of the filter compared
   with when it arrived in the raw stream, in deltas and in characters, and
   the ratio of raw characters received by then (filtered / raw; 1.00 means
   no added delay).
"""

from __future__ import annotations

from collections.abc import Callable
import random
import time

from custom_components.http_tools_agent.engine.textcalls import TextCallFilter
from tests.engine.textcall_cases import TOOLS, TRANSCRIPTS
from tests.engine.textcall_run import filter_reply

PROSE = (
    "the weather in rome is sunny today with a light breeze from the west and "
    "temperatures around twenty two degrees so it is a good day for a walk "
    "along the river although clouds may arrive in the evening"
)
WORDS = PROSE.split()


def tokenize(text: str, rng: random.Random) -> list[str]:
    """Split like a tokenizer would: pieces of 1 to 5 characters."""
    out: list[str] = []
    i = 0
    while i < len(text):
        step = rng.randint(1, 5)
        out.append(text[i : i + step])
        i += step
    return out


def word_tokens(n_words: int, rng: random.Random, extra: str = "") -> list[str]:
    """Prose as ' word' tokens, with ``extra`` inserted every 40 words."""
    out: list[str] = []
    for k in range(n_words):
        out.append(("" if k == 0 else " ") + rng.choice(WORDS))
        if k % 12 == 11:
            out.append(".")
        if extra and k % 40 == 39:
            out.append(extra)
    return out


def synthetic(rng: random.Random) -> dict[str, list[str]]:
    qwen = (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nRome\n"
        "</parameter>\n</function>\n</tool_call>"
    )
    hermes = (
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n'
        "</tool_call>"
    )
    fence = '```json\n{\n  "name": "get_weather",\n  "arguments": {"city": "Rome"}\n}\n```\n'
    streams: dict[str, list[str]] = {
        "prose 2000 words": word_tokens(2000, rng),
        "prose with '3 < 5' / {x}": word_tokens(2000, rng, extra=" 3 < 5 and {x}"),
        "prose with <b> html": word_tokens(2000, rng, extra=" <b>bold</b>"),
        "think 1500 words + answer": [
            "<think>",
            *word_tokens(1500, rng),
            "</think>",
            *word_tokens(200, rng),
        ],
    }
    text_qwen = "".join(f"Checking {k}.\n{qwen}\n" for k in range(60))
    text_hermes = "".join(f"Call {k}: {hermes} ok. " for k in range(60))
    text_fence = fence * 60
    text_bare = '{"name": "get_weather", "arguments": {"city": "Rome"}}\n' * 60
    streams["qwen xml x60 + text"] = tokenize(text_qwen, rng)
    streams["hermes x60 + text"] = tokenize(text_hermes, rng)
    streams["fenced json x60"] = tokenize(text_fence, rng)
    streams["bare json x60"] = tokenize(text_bare, rng)
    big_arg = "word " * 4000
    streams["one call, 20 kB argument"] = tokenize(
        '<tool_call>{"name": "send_webhook", "arguments": {"message": "'
        + big_arg
        + '"}}</tool_call>',
        rng,
    )
    return streams


def run(deltas: list[str]) -> None:
    flt = TextCallFilter(TOOLS)
    for d in deltas:
        flt.feed(d)
    flt.finish()


def best_time(fn: Callable[[], None], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def delay(deltas: list[str]) -> tuple[str, str, str, str]:
    """First spoken char: (arrived at delta, released at delta, extra chars,
    ratio of raw chars received by then)."""
    flt = TextCallFilter(TOOLS)
    raw = "".join(deltas)
    outs = [flt.feed(d) for d in deltas]
    outs.append(flt.finish())
    spoken = "".join(o.text for o in outs)
    if not spoken:
        return "-", "-", "-", "-"
    offset = -1
    for k in range(min(24, len(spoken)), 0, -1):
        offset = raw.find(spoken[:k])
        if offset >= 0:
            break
    ends = []
    pos = 0
    for d in deltas:
        pos += len(d)
        ends.append(pos)
    arrived = next(k for k, e in enumerate(ends) if e > offset)
    released = next(k for k, o in enumerate(outs) if o.text)
    consumed = ends[min(released, len(ends) - 1)]
    return (
        str(arrived),
        str(released),
        str(consumed - ends[arrived]),
        f"{consumed / ends[arrived]:.3f}",
    )


def main() -> None:
    rng = random.Random(1)
    streams = {f"real {k}": v for k, v in sorted(TRANSCRIPTS.items())}
    streams.update(synthetic(rng))

    print("1. filter cost per delta (best of runs)\n")
    print(f"{'stream':58} {'deltas':>7} {'chars':>7} {'us/delta':>9}")
    for name, deltas in streams.items():
        repeat = max(3, 3000 // max(1, len(deltas)))
        t = best_time(lambda d=deltas: run(d), repeat)  # type: ignore[misc]
        print(
            f"{name:58} {len(deltas):7} {len(''.join(deltas)):7} "
            f"{t / len(deltas) * 1e6:9.2f}"
        )
    whole = "".join(word_tokens(100_000, rng, extra=" a < b {c}\n"))

    def extract() -> None:
        filter_reply(whole, TOOLS)

    t = best_time(extract, 3)
    print(
        f"\nwhole reply in one feed, {len(whole) / 1e6:.2f} MB: "
        f"{t * 1e3:.1f} ms ({len(whole) / t / 1e6:.0f} MB/s)"
    )

    print("\n2. delay of the first spoken character\n")
    print(f"{'stream':58} {'arrived':>7} {'out at':>7} {'+chars':>7} {'ratio':>6}")
    for name, deltas in streams.items():
        arrived, released, extra, ratio = delay(deltas)
        print(f"{name:58} {arrived:>7} {released:>7} {extra:>7} {ratio:>6}")


if __name__ == "__main__":
    main()
