"""Real services as tools: each service's tools (written from its published
API documents, tests/fixtures/services/<service>/) run against a loopback
server that answers as the service does (its documented or recorded
bodies, their content types, basic, digest or OAuth2 bearer credentials
checked). For
each voice operation: the requests arrive as the service expects them, the
model reads what the case says and the word a user needs is in it, and the
tool's own sentence is the one a person would say."""

from __future__ import annotations

import json

import aiohttp
import pytest

from custom_components.http_tools_agent.engine.executor import Outcome, run_tool
from custom_components.http_tools_agent.engine.hosts import HostPolicy
from tests.markdown import DOCS, blocks
from tests.service_cases import (
    Case,
    ServiceServer,
    iter_services,
    load_cases,
    load_tools,
    serve,
    tools_at,
)

CASES = load_cases()


def test_there_are_enough_real_services() -> None:
    """At least twelve services, each with a tool per voice operation."""
    services = list(iter_services())
    assert len(services) >= 12
    assert {case.service for case in CASES} == set(services)


def test_the_sign_in_tools_on_the_page_are_the_tested_ones() -> None:
    """docs/services.md shows the OAuth2 tools these cases run, as written."""
    shown = [
        json.loads(block.text)
        for block in blocks(DOCS / "services.md")
        if block.info == "json" and '"oauth2"' in block.text
    ]
    assert shown == [*load_tools("spotify"), *load_tools("google_calendar")]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
async def test_service_operation(
    case: Case, service: ServiceServer, session: aiohttp.ClientSession
) -> None:
    """The requests that arrive, what the model reads, what the tool says."""
    serve(service, case)
    definition = tools_at(case.service, service.url)[case.tool]

    result = await run_tool(
        session,
        definition,
        case.arguments,
        secrets=case.secrets,
        hosts=HostPolicy.parse(["127.0.0.1"]),
        tokens=case.token,
    )

    arrived = service.arrived
    assert [r.target for r in arrived] == [e.target for e in case.requests]
    for request, expected in zip(arrived, case.requests, strict=True):
        if expected.body is not None:
            assert request.body.decode() == expected.body
        for name, value in expected.headers.items():
            assert request.headers.get(name) == value, name
        for name in expected.absent_headers:
            assert name not in request.headers
    assert result.ok is case.ok, result.text
    assert result.outcome is (Outcome.DONE if case.ok else Outcome.HTTP_ERROR)
    if case.reads is not None:
        assert result.text == case.reads
    assert case.needle in result.text
    if case.speech is not None:
        assert result.speech == case.speech
    for value in [*case.secrets.values(), *case.tokens.values()]:
        assert value not in result.text
