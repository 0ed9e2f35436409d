"""The near-JSON corpus: every call line the demo's model wrote that round
3's text-call filter could not read (`tests/fixtures/near_json/`). Each is
read as the call it means when it has exactly one reading, and otherwise
stays a problem the model is told about; none is ever spoken, and none
becomes a call it does not mean."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from custom_components.http_tools_agent.engine.textcalls import TextCallFilter

CORPUS = Path(__file__).parents[1] / "fixtures" / "near_json" / "corpus.json"
ENTRIES: list[dict[str, Any]] = json.loads(CORPUS.read_text(encoding="utf-8"))[
    "entries"
]
# The tools the demo offered (Assist over its house, its six HTTP tools).
TOOLS = {
    name: {"type": "object", "properties": {}}
    for name in (
        "assist__assist_satellite__HassBroadcast",
        "assist__fan__HassFanSetSpeed",
        "assist__homeassistant__GetLiveContext",
        "assist__intent__HassTurnOn",
        "assist__intent__HassTurnOff",
        "assist__intent__HassCancelAllTimers",
        "assist__light__HassLightSet",
        "assist__llm__GetDateTime",
        "http-tools__get_weather",
        "http-tools__list_items",
        "http-tools__add_item",
        "http-tools__update_item",
        "http-tools__delete_item",
        "http-tools__send_webhook",
    )
}


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["reply"][:60] for e in ENTRIES])
def test_each_reply_is_its_call_or_a_problem(entry: dict[str, Any]) -> None:
    parser = TextCallFilter(TOOLS, after_tool_results=True)
    out = parser.feed(entry["reply"])
    out.extend(parser.finish())

    assert out.text == ""
    calls = [[call.name, call.arguments] for call in out.calls]
    if entry["meant"] is None:
        assert calls == []
        assert out.problems
    else:
        assert calls == [entry["meant"]]
        assert out.problems == []
        assert out.repaired == 1


def test_the_corpus_holds_every_form() -> None:
    """What the corpus was collected to show: the slips that have one
    reading, and those that have none."""
    forms = {e["form"] for e in ENTRIES}
    assert "a closer of the wrong kind" in forms
    assert "arguments as a string an escaped quote closes" in forms
    assert any(e["meant"] is None for e in ENTRIES)
