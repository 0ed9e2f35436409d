"""Through a router: LiteLLM's proxy (`dev/router.py`, `scripts/install_router`)
in front of the real model server, as people put one in front of several.

The proxy serves one model name from two deployments, tried in order: first a
server that is down (a port that refuses connections), then the real
`llama_cpp.server` with Qwen2.5-Coder-0.5B. A failed attempt is retried on
the next deployment and the failed one cools down, so turns keep being
answered while a server is off. The agent is set up as the harness sets it
up (`setup_ours`), on the proxy's URL with its key. Every attempt the proxy
makes on a deployment is noted by its callbacks (`dev/router_attempts.py`):
the tests see which server was tried and which one answered.
"""

from __future__ import annotations

from homeassistant import config_entries
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_API_KEY
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import entity_registry as er
from homeassistant.setup import async_setup_component
import pytest
from yarl import URL

from custom_components.http_tools_agent.const import (
    CONF_BASE_URL,
    CONF_MODEL,
    CONF_STREAM,
    CONF_TEMPERATURE,
    CONF_TOOLS,
    DOMAIN,
    SUBENTRY_AI_TASK,
    SUBENTRY_CONVERSATION,
)
from custom_components.http_tools_agent.diagnostics import (
    async_get_config_entry_diagnostics,
)
from custom_components.http_tools_agent.server.client import async_list_models
from dev.router import Attempt, LiteLLMProxy
from dev.tool_server import DemoToolServer, weather_for
from tests.kit import converse, entry_state, server_entry, speech
from tests.markup import markup_in

from .harness import ModelServer

pytestmark = pytest.mark.e2e

WEATHER_TOOLS = ["get_weather", "send_webhook"]


async def setup_through(
    hass: HomeAssistant,
    router: LiteLLMProxy,
    tool_server: DemoToolServer,
    *,
    stream: bool = True,
) -> str:
    """Our entry and agent as `setup_ours` makes them (temperature 0, the
    weather tools), on the proxy's URL and with its key; the agent's id."""
    entry = server_entry(
        router.url,
        options={CONF_TOOLS: tool_server.tools(WEATHER_TOOLS, sentences=False)},
        model=router.model,
        agent={CONF_STREAM: stream, CONF_TEMPERATURE: 0.0},
    )
    entry.add_to_hass(hass)
    hass.config_entries.async_update_entry(
        entry, data={**entry.data, CONF_API_KEY: router.key}
    )
    assert await async_setup_component(hass, "homeassistant", {})
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    entities = er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
    (agent,) = [e.entity_id for e in entities if e.domain == "conversation"]
    return agent


async def ask_weather_in_rome(
    hass: HomeAssistant, agent: str, tool_server: DemoToolServer
) -> str:
    """Ask; the model writes the call as text (bare JSON), the proxy passes
    it through untouched, the agent runs it: Rome's weather reached the tool
    server once and its temperature is in the answer, without call markup."""
    answer = speech(await converse(hass, "What's the weather in Rome?", agent_id=agent))
    weather = [r for r in tool_server.requests if r.path.startswith("/weather/")]
    assert [(r.method, r.path) for r in weather] == [("GET", "/weather/Rome")], (
        tool_server.requests,
        answer,
    )
    assert not markup_in(answer), f"call markup in the answer: {answer!r}"
    _, temperature = weather_for("Rome")
    assert f"{temperature}" in answer, answer
    return answer


def answered_by(attempts: list[Attempt]) -> set[str]:
    """The deployments that answered."""
    return {a.api_base for a in attempts if a.outcome == "success"}


async def test_server_checks_see_the_router(
    hass: HomeAssistant, router: LiteLLMProxy
) -> None:
    """What the config flow and the server checks see through the proxy:
    its model list (the model name once, though two deployments serve it),
    no kind (LiteLLM answers neither llama.cpp's `/props` nor Ollama's
    `/api/version`, and lists its models as `owned_by: openai`), so the
    entry is titled by its address and `auto` goes by the size in the
    model's name. A key the proxy does not know gets LiteLLM's 400 "No
    connected db." (no database: only the master key exists), which the form
    reads as a server that is not OpenAI-compatible, not as a refused key.
    None of it reaches a deployment: no completion is asked."""
    assert await async_setup_component(hass, "homeassistant", {})
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: router.url, CONF_API_KEY: "sk-wrong"}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "not_openai_compatible"}

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: router.url, CONF_API_KEY: router.key}
    )
    await hass.async_block_till_done()

    assert result["type"] is FlowResultType.CREATE_ENTRY, result
    entry = result["result"]
    assert entry.data == {CONF_BASE_URL: router.url, CONF_API_KEY: router.key}
    assert entry.title == f"127.0.0.1:{URL(router.url).port} · {router.model}"
    # The agent and the AI task a new entry gets, both on the router's model.
    by_type = {s.subentry_type: s for s in entry.subentries.values()}
    assert set(by_type) == {SUBENTRY_CONVERSATION, SUBENTRY_AI_TASK}
    assert {s.data[CONF_MODEL] for s in by_type.values()} == {router.model}
    assert entry_state(entry) is ConfigEntryState.LOADED
    assert await async_list_models(entry.runtime_data.client) == [router.model]
    diagnostics = await async_get_config_entry_diagnostics(hass, entry)
    assert diagnostics["server"] == {"kind": "unknown", "models": {}}
    (agent,) = [a for a in diagnostics["agents"] if a["type"] == SUBENTRY_CONVERSATION]
    assert agent["profile"]["runs_as"] == "small", agent
    assert "the model's name says" in agent["profile"]["reason"], agent
    # (The refused key is a failure LiteLLM logs without a deployment.)
    assert [a for a in router.attempts() if a.api_base] == []


async def test_streamed_weather_turn(
    hass: HomeAssistant,
    router: LiteLLMProxy,
    model_server: ModelServer,
    tool_server: DemoToolServer,
) -> None:
    """A streamed turn through the proxy: the call the model writes as text
    runs, the answer holds its result; the real server streamed it."""
    agent = await setup_through(hass, router, tool_server, stream=True)

    answer = await ask_weather_in_rome(hass, agent, tool_server)

    attempts = router.attempts()
    assert answered_by(attempts) == {model_server.url}, (attempts, answer)
    assert any(a.stream for a in attempts if a.outcome == "success"), attempts


async def test_unstreamed_weather_turn(
    hass: HomeAssistant,
    router: LiteLLMProxy,
    model_server: ModelServer,
    tool_server: DemoToolServer,
) -> None:
    """The same with the agent's *Stream the answer* off: whole replies
    through the proxy, none streamed."""
    agent = await setup_through(hass, router, tool_server, stream=False)

    answer = await ask_weather_in_rome(hass, agent, tool_server)

    attempts = router.attempts()
    assert answered_by(attempts) == {model_server.url}, (attempts, answer)
    assert not any(a.stream for a in attempts), attempts


async def test_a_server_that_is_down_is_skipped(
    hass: HomeAssistant,
    fresh_router: LiteLLMProxy,
    model_server: ModelServer,
    tool_server: DemoToolServer,
) -> None:
    """LiteLLM's fallback: the turn's first request meets the server that is
    down (the first deployment), fails there and is retried on the real one;
    the next turn's requests skip the down one (its cooldown). The user
    hears the weather as if nothing were off, both times."""
    router = fresh_router
    agent = await setup_through(hass, router, tool_server)

    await ask_weather_in_rome(hass, agent, tool_server)
    tool_server.reset()
    answer = await ask_weather_in_rome(hass, agent, tool_server)

    attempts = router.attempts()
    first, *rest = attempts
    assert first == Attempt("failure", str(router.down_url), stream=True), attempts
    # The retry, then the next turn's request: the real server.
    assert len(rest) >= 2, attempts
    assert all(
        a == Attempt("success", model_server.url, stream=a.stream) for a in rest
    ), (
        attempts,
        answer,
    )
