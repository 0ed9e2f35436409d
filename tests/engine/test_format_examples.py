"""The examples of docs/tool-format.md run as written.

A tool block with `<!-- docs-test: run {arguments} -->` on the line before
is run against a server on 127.0.0.1 (its URLs pointed there, each secret
given a value, each sign-in a token the server asks for); the blocks after it, up to the next such tool, say what
happens: `answer /path` is what the service answers there (JSON),
`sent` the first request that must arrive (`METHOD /path`, then its body;
secrets as `***`), `twice` every request that arrives when the tool is
called twice with one session store (a kept login), `reads` what the model
reads and `says` the tool's own sentence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import json
import re
from typing import Any

import aiohttp
import pytest

from custom_components.http_tools_agent.engine.definitions import parse_tools
from custom_components.http_tools_agent.engine.executor import run_tool
from custom_components.http_tools_agent.engine.sessions import SessionStore
from tests.markdown import DOCS, Block, blocks
from tests.service_cases import ServiceServer, pointed

PAGE = DOCS / "tool-format.md"
_SECRET = re.compile(r"\{secret:([A-Za-z0-9_-]+)\}")


@dataclass(slots=True)
class Example:
    """One runnable example of the page."""

    tool: Block
    arguments: dict[str, Any]
    answers: dict[str, bytes] = field(default_factory=dict)
    sent: str | None = None
    twice: str | None = None
    reads: str | None = None
    says: str | None = None


def examples() -> list[Example]:
    """The page's runnable examples, in order."""
    found: list[Example] = []
    for block in blocks(PAGE):
        note = block.note
        if note.startswith("run "):
            found.append(Example(block, json.loads(note.removeprefix("run "))))
        elif found and note.startswith("answer "):
            found[-1].answers[note.removeprefix("answer ")] = block.text.encode()
        elif found and note in ("sent", "twice", "reads", "says"):
            setattr(found[-1], note, block.text.rstrip("\n"))
    return found


EXAMPLES = examples()


def test_the_page_has_runnable_examples() -> None:
    """Bodies, optional placeholders, auth, steps, shapes and sentences."""
    assert len(EXAMPLES) >= 5
    assert all(e.reads or e.sent or e.says for e in EXAMPLES)
    assert any(e.twice for e in EXAMPLES)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.tool.where)
async def test_example_runs_as_the_page_says(
    example: Example, service: ServiceServer, session: aiohttp.ClientSession
) -> None:
    """What arrives, what the model reads, what the tool says."""
    raw = json.loads(example.tool.text)
    steps = raw.get("steps", [])
    logouts = [s["session"].get("logout") for s in steps if "session" in s]
    for request in [raw, *steps, *(x for x in logouts if x)]:
        if "url" in request:
            request["url"] = pointed(request["url"], service.url)
    (definition,) = parse_tools([raw])
    secrets = {name: f"value-of-{name}" for name in _SECRET.findall(example.tool.text)}
    basic = None
    if definition.auth is not None and definition.auth.type == "basic":
        password = _SECRET.sub(lambda m: secrets[m[1]], definition.auth.password)
        basic = (definition.auth.username, password)
    # A sign-in's tool gets a token of its own, which the service checks.
    tokens = {name: f"token-of-{name}" for name in definition.sign_ins}
    bearer = next(iter(tokens.values()), None)
    for path, body in example.answers.items():
        service.route(
            path,
            body=body,
            content_type="application/json",
            basic=basic,
            bearer=bearer,
        )

    async def token(name: str) -> str:
        return tokens[name]

    store = SessionStore()
    runs = 2 if example.twice is not None else 1
    for _ in range(runs):
        result = await run_tool(
            session,
            definition,
            example.arguments,
            secrets=secrets,
            sessions=store,
            tokens=token,
        )

    if example.sent is not None:
        first = service.arrived[0]
        sent = first.body.decode()
        for value in secrets.values():
            sent = sent.replace(value, "***")
        head, _, rest = example.sent.partition("\n")
        assert (f"{first.method} {first.path}", sent) == (head, rest)
    if example.twice is not None:
        assert [r.target for r in service.arrived] == example.twice.splitlines()
    if example.reads is not None:
        assert result.text == example.reads
    if example.says is not None:
        assert result.speech == example.says
