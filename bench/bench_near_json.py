"""What becomes of the near-JSON calls the demo's model wrote.

Run from the repository root:

    .venv/bin/python -m bench.bench_near_json

Reads `tests/fixtures/near_json/corpus.json` (every call line round 3's
text-call filter could not read, with the call it means when it has one
reading) and prints, per form of slip: how many lines, how many the filter
now reads as the call meant, as another call (never wanted), and how many
stay a problem the model is told about (asked again once).
"""

from __future__ import annotations

from collections import Counter
import json
from pathlib import Path
from typing import Any

from custom_components.http_tools_agent.engine.textcalls import TextCallFilter
from tests.engine.test_near_json import CORPUS, TOOLS


def outcome(entry: dict[str, Any]) -> str:
    """`meant`, `other` or `problem` for one corpus line."""
    parser = TextCallFilter(TOOLS, after_tool_results=True)
    out = parser.feed(entry["reply"])
    out.extend(parser.finish())
    calls = [[call.name, call.arguments] for call in out.calls]
    if not calls:
        return "problem"
    return "meant" if calls == [entry["meant"]] else "other"


def main() -> None:
    """Print the table."""
    entries: list[dict[str, Any]] = json.loads(Path(CORPUS).read_text("utf-8"))[
        "entries"
    ]
    rows: dict[str, Counter[str]] = {}
    for entry in entries:
        rows.setdefault(entry["form"], Counter())[outcome(entry)] += 1
    print("| form | lines | one reading | read as meant | another call | a problem |")
    print("|---|---:|---|---:|---:|---:|")
    total: Counter[str] = Counter()
    for form, counts in sorted(rows.items(), key=lambda r: -r[1].total()):
        meant = next(e["meant"] is not None for e in entries if e["form"] == form)
        print(
            f"| {form} | {counts.total()} | {'yes' if meant else 'no'} | "
            f"{counts['meant']} | {counts['other']} | {counts['problem']} |"
        )
        total.update(counts)
    print(
        f"| all | {total.total()} | | {total['meant']} | {total['other']} | "
        f"{total['problem']} |"
    )


if __name__ == "__main__":
    main()
