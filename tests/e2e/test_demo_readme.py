"""The README is a test: the demo as `scripts/demo` sets it up (its config
dir, its tool server, Home Assistant in a process of its own, onboarding
done as a newcomer does it), with the real model, asked what the README
tells a newcomer to try, through the Assist pipeline the Assist dialog
uses (`dev/demo_trial.py`).

The questions are read from README.md's "Try it: the demo": an example
added there without a check here fails the test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
import re

import pytest

from dev.demo_trial import Answer, DemoHass
from dev.tool_server import weather_for
from tests.markup import markup_in

from .harness import ModelServer

pytestmark = pytest.mark.e2e

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_examples() -> list[str]:
    """What the README's demo section tells a newcomer to type, in order."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Try it: the demo", 1)[1].split("\n## ", 1)[0]
    items = [line for line in section.splitlines() if line.startswith("- ")]
    return [q for item in items for q in re.findall(r"\*([^*]+?[.?!])\*", item)]


@pytest.fixture
async def demo(
    model_server: ModelServer, tmp_path: Path, socket_enabled: None
) -> AsyncIterator[DemoHass]:
    """The demo, started as a newcomer starts it."""
    async with DemoHass(model_server.url, tmp_path) as running:
        yield running


def brief(answer: Answer) -> str:
    """An answer as a failed check shows it."""
    calls = [(c.get("tool_name"), c.get("tool_args")) for c in answer.calls]
    replies = [r["text"][:300] for r in answer.model_replies]
    return (
        f"{answer.question!r} -> {answer.speech!r} ({answer.seconds} s); "
        f"calls {calls}; tool server {answer.tool_requests}; model {replies}"
    )


def said(answer: Answer) -> str:
    """The answer, checked for what a user must never hear."""
    assert answer.error is None, brief(answer)
    assert answer.speech.strip(), brief(answer)
    assert not markup_in(answer.speech), brief(answer)
    for word in ("refused", "Error", "invalid_tool_call", '{"'):
        assert word not in answer.speech, brief(answer)
    return answer.speech


async def _rome(demo: DemoHass, answer: Answer) -> None:
    condition, degrees = weather_for("Rome")
    assert "GET /weather/Rome" in answer.tool_requests, brief(answer)
    assert f"{degrees}" in said(answer) and condition in said(answer), brief(answer)


async def _list(demo: DemoHass, answer: Answer) -> None:
    assert any(r.startswith("GET /api/items") for r in answer.tool_requests), brief(
        answer
    )
    for item in ("apples", "bananas", "milk"):
        assert item in said(answer), brief(answer)


async def _add_bread(demo: DemoHass, answer: Answer) -> None:
    said(answer)
    assert "bread" in {i["name"] for i in demo.tools.items.values()}, brief(answer)


async def _remove_bread(demo: DemoHass, answer: Answer) -> None:
    said(answer)
    names = sorted(i["name"] for i in demo.tools.items.values())
    assert names == ["apples", "bananas", "milk"], (names, brief(answer))


async def _notify(demo: DemoHass, answer: Answer) -> None:
    said(answer)
    assert any("laundry" in str(hook).lower() for hook in demo.tools.hooks), brief(
        answer
    )


async def _kitchen_lights(demo: DemoHass, answer: Answer) -> None:
    said(answer)
    kitchen = await demo.state("light.kitchen_lights")
    assert kitchen is not None and kitchen["state"] == "on", brief(answer)
    for other in ("light.bed_light", "light.living_room_lights"):
        state = await demo.state(other)
        assert state is not None and state["state"] == "off", (other, brief(answer))


CHECKS: dict[str, Callable[[DemoHass, Answer], Awaitable[None]]] = {
    "What's the weather in Rome?": _rome,
    "What's on my shopping list?": _list,
    "Add bread to the shopping list.": _add_bread,
    "Remove the bread.": _remove_bread,
    "Send a notification saying the laundry is done.": _notify,
    "Turn on the kitchen lights.": _kitchen_lights,
}


async def test_the_readme_examples_do_what_the_readme_says(demo: DemoHass) -> None:
    """Each example, in the README's order, in a conversation of its own."""
    examples = readme_examples()
    assert examples, "README.md lists no example"
    assert set(examples) <= set(CHECKS), set(examples) - set(CHECKS)
    for example in examples:
        answer = await demo.ask(example)
        await CHECKS[example](demo, answer)
