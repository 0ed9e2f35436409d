"""A server that goes away while the agent is in use: the turns say so, the
agent shows unavailable, and the log says it once when the server goes away
and once when it is back (not once per turn). The server is checked every
minute while it is away, so the agent comes back even without a turn."""

from __future__ import annotations

from datetime import timedelta
import logging

from homeassistant.core import HomeAssistant
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)

from custom_components.http_tools_agent.server import client
from custom_components.http_tools_agent.server.availability import RECHECK_INTERVAL

from .kit import AGENT_ID, converse, load_integration, speech
from .said import said
from .servers import FakeLLMServer, error, text_stream

LOGGER_NAME = "custom_components.http_tools_agent"
UNREACHABLE = "I can't reach the language model server"


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """The integration's log, from INFO up."""
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)
    return caplog


def lines(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    """The integration's log lines at exactly `level`."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith(LOGGER_NAME) and r.levelno == level
    ]


def agent_state(hass: HomeAssistant) -> str:
    """The agent entity's state."""
    state = hass.states.get(AGENT_ID)
    assert state is not None
    return state.state


async def later(hass: HomeAssistant, delta: timedelta) -> None:
    """Let `delta` pass and whatever it starts finish."""
    async_fire_time_changed(hass, dt_util.utcnow() + delta)
    await hass.async_block_till_done(wait_background_tasks=True)


async def test_server_gone_then_back_is_logged_once_each(
    hass: HomeAssistant,
    setup_integration: MockConfigEntry,
    llm_server: FakeLLMServer,
    logs: pytest.LogCaptureFixture,
) -> None:
    """Three turns against a stopped server: three spoken errors, one warning,
    the agent unavailable. The server returns: the next turn answers, one
    info line, the agent available; more turns log nothing more."""
    title = setup_integration.title
    await llm_server.stop()

    for _ in range(3):
        assert speech(await converse(hass, "Hello")).startswith(UNREACHABLE)

    (warning,) = lines(logs, logging.WARNING)
    assert warning.startswith(
        f"The language model server of {title} cannot be reached ({UNREACHABLE}"
    )
    assert warning.endswith("checking it every 60 s until it answers")
    assert agent_state(hass) == "unavailable"

    await llm_server.start()
    llm_server.add(text_stream("Back."), text_stream("Still here."))
    assert speech(await converse(hass, "Hello")) == "Back."
    assert speech(await converse(hass, "Hello")) == "Still here."

    assert lines(logs, logging.INFO) == [
        f"The language model server of {title} answers again"
    ]
    assert len(lines(logs, logging.WARNING)) == 1
    assert agent_state(hass) != "unavailable"


async def test_gateway_error_counts_as_unavailable_other_errors_do_not(
    hass: HomeAssistant,
    setup_integration: MockConfigEntry,
    llm_server: FakeLLMServer,
    logs: pytest.LogCaptureFixture,
) -> None:
    """A 503 (llama.cpp loading its model, a proxy whose backend is down) is
    an outage; a 400 about the request comes from a server that is there."""
    # The SDK retries a 5xx once.
    llm_server.add(*[error(503, "Loading model")] * 2)
    assert speech(await converse(hass, "Hello")) == said(
        "server_error", status="503", message="Loading model"
    )
    assert agent_state(hass) == "unavailable"

    llm_server.add(error(400, "context too long"))
    assert speech(await converse(hass, "Hello")).endswith("context too long")
    assert agent_state(hass) != "unavailable"
    assert lines(logs, logging.INFO) == [
        f"The language model server of {setup_integration.title} answers again"
    ]


async def test_agent_comes_back_without_a_turn(
    hass: HomeAssistant,
    setup_integration: MockConfigEntry,
    llm_server: FakeLLMServer,
    logs: pytest.LogCaptureFixture,
) -> None:
    """While unavailable the server is checked every minute: still down, it
    stays unavailable quietly; up again, the agent is available and the log
    says so, with no turn needed."""
    await llm_server.stop()
    assert speech(await converse(hass, "Hello")).startswith(UNREACHABLE)
    assert agent_state(hass) == "unavailable"

    await later(hass, RECHECK_INTERVAL)
    assert agent_state(hass) == "unavailable"
    assert len(lines(logs, logging.WARNING)) == 1

    await llm_server.start()
    await later(hass, RECHECK_INTERVAL * 2)

    assert agent_state(hass) != "unavailable"
    assert lines(logs, logging.INFO) == [
        f"The language model server of {setup_integration.title} answers again"
    ]
    # Back: no more checks.
    checks = llm_server.model_list_requests
    await later(hass, RECHECK_INTERVAL * 5)
    assert llm_server.model_list_requests == checks


async def test_unloading_stops_the_checks(
    hass: HomeAssistant,
    setup_integration: MockConfigEntry,
    llm_server: FakeLLMServer,
    logs: pytest.LogCaptureFixture,
) -> None:
    """An entry unloaded while its server is away checks nothing more."""
    await llm_server.stop()
    assert speech(await converse(hass, "Hello")).startswith(UNREACHABLE)

    assert await hass.config_entries.async_unload(setup_integration.entry_id)
    await llm_server.start()
    checks = llm_server.model_list_requests
    await later(hass, RECHECK_INTERVAL * 3)

    assert llm_server.model_list_requests == checks
    assert lines(logs, logging.INFO) == []


async def test_server_that_stops_answering_counts_as_unavailable(
    hass: HomeAssistant,
    monkeypatch: pytest.MonkeyPatch,
    config_entry: MockConfigEntry,
    llm_server: FakeLLMServer,
) -> None:
    """A server that accepts the request but never answers: the user hears
    it took too long (after the client's timeout), the agent is unavailable."""
    monkeypatch.setattr(client, "LLM_REQUEST_TIMEOUT", 0.2)
    await load_integration(hass)
    # The SDK tries twice.
    llm_server.add(*[text_stream("Too late.")] * 2)
    for reply in llm_server.replies:
        reply.delay = 1.0

    result = await converse(hass, "Hello")

    assert speech(result) == said("timeout")
    assert agent_state(hass) == "unavailable"
