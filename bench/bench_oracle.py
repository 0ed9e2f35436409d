"""P9: what the rules cost a model that is right (the oracle scenarios).

Each scenario of `tests/oracle/scenarios.py` runs against the oracle (a
scripted model that makes the right calls and answers from their results),
with calls structured and written as text, for each profile. A scenario
passes when every call the oracle makes runs in its round, no other tool
request runs, and its answers are spoken unchanged.

    .venv/bin/python -m bench.bench_oracle [--profiles capable,auto,small]
        [--rules] [--families] [--many]

`--rules` adds the small profile without each of its rules in turn
(`small-no-<rule>`): what each rule costs a model that is right.
`--families` adds the calls written as the 2026 families write them
(pythonic, Mistral's `[TOOL_CALLS]`, Gemma 4, gpt-oss): what reading them
costs a model that is right. `--many` runs each profile with 40 imported
operations offered besides (`tests/many_tools.py`), shown all (`off`),
searched or preselected (`turn/tool_search.py`): what a tool search costs
a model that is right (it searches for a tool it means that is not shown).
"""

from __future__ import annotations

import argparse
import asyncio
from collections import defaultdict
from dataclasses import fields

from bench._ha import home_assistant, machine, table
from bench.bench_real_model import small_rules
from custom_components.http_tools_agent.const import CONF_TOOL_SEARCH
from custom_components.http_tools_agent.small.rules import Rules
from tests.oracle.run import FAMILY_FORMATS, FORMATS, PROFILES, Outcome, run_scenario
from tests.oracle.scenarios import SCENARIOS

# Imported operations offered besides the scenario's tools (`--many`).
MANY = 40


async def run(
    profiles: list[str], formats: tuple[str, ...] = FORMATS
) -> dict[tuple[str, str], list[Outcome]]:
    """Every scenario, per profile (`small-no-<rule>`: small without that
    rule; `<profile>-many-<mode>`: with 40 imported operations offered
    besides, shown as `mode` says) and call format."""
    results: dict[tuple[str, str], list[Outcome]] = defaultdict(list)
    for profile in profiles:
        named, _, search = profile.partition("-many-")
        agent = {CONF_TOOL_SEARCH: search} if search else None
        setting, _, rule = named.partition("-no-")
        with small_rules({rule: False} if rule else None):
            for fmt in formats:
                for scenario in SCENARIOS:
                    async with home_assistant() as hass:
                        outcome = await run_scenario(
                            hass,
                            scenario,
                            setting,
                            fmt,
                            agent,
                            distractors=MANY if search else 0,
                        )
                    results[profile, fmt].append(outcome)
    return results


def report(results: dict[tuple[str, str], list[Outcome]]) -> None:
    """The P9 tables: per kind of scenario and overall; what failed."""
    columns = list(results)
    kinds = list(dict.fromkeys(o.kind for o in next(iter(results.values()))))
    rows = []
    for kind in [*kinds, "all"]:
        row = [kind]
        for column in columns:
            sel = [o for o in results[column] if kind in ("all", o.kind)]
            row.append(f"{sum(o.passed for o in sel)}/{len(sel)}")
        rows.append(row)
    rows.append(
        [
            "turns read out by the agent, the model not asked",
            *(str(sum(o.read_outs for o in results[c])) for c in columns),
        ]
    )
    table(
        "P9: scenarios where every call the oracle makes runs in its round and "
        "its answer is spoken unchanged (or read out whole: last row)",
        ("scenarios", *(f"{p} · {f}" for p, f in columns)),
        rows,
    )
    failed = [
        (f"{p} · {f}", o.scenario, _why(o))
        for (p, f), outcomes in results.items()
        for o in outcomes
        if not o.passed
    ]
    if failed:
        table(
            "P9: what failed, and why", ("profile · calls", "scenario", "why"), failed
        )


def _why(outcome: Outcome) -> str:
    reasons = []
    if not outcome.every_call_ran:
        reasons.append("a call of the oracle did not run")
    if outcome.unasked_requests:
        reasons.append(f"{outcome.unasked_requests} request(s) it did not make")
    if not outcome.answers_spoken:
        reasons.append(f"spoken {outcome.spoken!r}, not {outcome.expected!r}")
    return "; ".join(reasons)


def main() -> None:
    """Run P9 and print its tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profiles", default=",".join(PROFILES))
    parser.add_argument("--rules", action="store_true")
    parser.add_argument("--families", action="store_true")
    parser.add_argument("--many", action="store_true")
    args = parser.parse_args()
    profiles = args.profiles.split(",")
    if args.many:
        profiles = [
            f"{profile}-many-{mode}"
            for profile in profiles
            for mode in ("off", "search", "preselect")
        ]
    if args.rules:
        profiles += [f"small-no-{rule.name}" for rule in fields(Rules)]
    print(f"Machine: {machine()}")
    formats = FORMATS + (FAMILY_FORMATS if args.families else ())
    report(asyncio.run(run(profiles, formats)))


if __name__ == "__main__":
    main()
