"""Run the text-call filter over one reply: whole, or delta by delta."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from custom_components.http_tools_agent.engine.textcalls import (
    FilterOutput,
    TextCallFilter,
)

type Tools = Mapping[str, Mapping[str, Any]]


def filter_stream(
    deltas: Iterable[str],
    tools: Tools,
    *,
    after_tool_results: bool = False,
    think_open: bool = False,
) -> tuple[FilterOutput, list[FilterOutput]]:
    """Feed ``deltas`` one by one; return the merged output and each step's."""
    flt = TextCallFilter(
        tools, after_tool_results=after_tool_results, think_open=think_open
    )
    steps = [flt.feed(d) for d in deltas]
    steps.append(flt.finish())
    total = FilterOutput()
    for step in steps:
        total.extend(step)
    return total, steps


def filter_reply(
    text: str, tools: Tools, *, after_tool_results: bool = False
) -> FilterOutput:
    """Calls, speakable text, thinking and problems of a whole reply."""
    total, _ = filter_stream([text], tools, after_tool_results=after_tool_results)
    return total
