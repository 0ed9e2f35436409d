"""Config flow (a new entry: an agent and an AI task), reconfigure and
conversation subentry flows."""

from __future__ import annotations

import asyncio

from homeassistant import config_entries
from homeassistant.components.ai_task.const import DEFAULT_SYSTEM_PROMPT
from homeassistant.const import CONF_API_KEY, CONF_LLM_HASS_API, CONF_PROMPT
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import llm
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.http_tools_agent import config_flow
from custom_components.http_tools_agent.const import (
    CONF_BASE_URL,
    CONF_MAX_TOKENS,
    CONF_MODEL,
    CONF_STREAM,
    CONF_TEMPERATURE,
    CONF_TOOL_CHOICE,
    DEFAULT_EXAMPLES,
    DOMAIN,
    SUBENTRY_AI_TASK,
    SUBENTRY_CONVERSATION,
)
from custom_components.http_tools_agent.tools.llm_api import api_id_for
from dev.loopback import free_port

from .kit import (
    API_ID,
    ENTRY_UNIQUE_ID,
    converse,
    entry_state,
    load_integration,
    server_entry,
    speech,
)
from .servers import FakeLLMServer, server_check, text_stream


@pytest.fixture(autouse=True)
async def setup_ha(hass: HomeAssistant) -> None:
    """The config flow needs the core integrations."""
    assert await async_setup_component(hass, "homeassistant", {})


async def test_user_flow_creates_server_and_first_agent(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """A working server gives an entry with an agent and an AI task that use
    its HTTP tools, on the server's first model."""
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {}

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: llm_server.base_url + "/"}
    )
    await hass.async_block_till_done()

    assert result["type"] is FlowResultType.CREATE_ENTRY
    entry = result["result"]
    assert entry.data == {CONF_BASE_URL: llm_server.base_url}
    # Named for what it is (the scripted server answers the checks as
    # llama-cpp-python does), not for its URL.
    assert entry.title == "llama-cpp-python · qwen2.5-coder-0.5b"
    (subentry,) = entry.get_subentries_of_type(SUBENTRY_CONVERSATION)
    (task,) = entry.get_subentries_of_type(SUBENTRY_AI_TASK)
    assert len(entry.subentries) == 2
    assert subentry.title == "HTTP Tools Agent"
    assert task.title == "HTTP Tools AI Task"
    for each in (subentry, task):
        assert each.data[CONF_MODEL] == "qwen2.5-coder-0.5b"
        assert each.data[CONF_LLM_HASS_API] == [api_id_for(str(entry.unique_id))]
        assert each.data[CONF_TOOL_CHOICE] == "auto"
        assert each.data[CONF_STREAM] is True
    assert subentry.data[CONF_PROMPT] == llm.DEFAULT_INSTRUCTIONS_PROMPT
    assert task.data[CONF_PROMPT] == DEFAULT_SYSTEM_PROMPT
    # The agent and the AI task exist, and their API is this entry's.
    assert hass.states.get("conversation.http_tools_agent") is not None
    assert hass.states.get("ai_task.http_tools_ai_task") is not None


async def test_user_flow_with_api_key(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """A key the server accepts is stored; a wrong one is refused with a message."""
    llm_server.api_key = "sk-right"
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"],
        {CONF_BASE_URL: llm_server.base_url, CONF_API_KEY: "sk-wrong"},
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "invalid_auth"}

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"],
        {CONF_BASE_URL: llm_server.base_url, CONF_API_KEY: "sk-right"},
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"][CONF_API_KEY] == "sk-right"


async def test_user_flow_cannot_connect(
    hass: HomeAssistant, socket_enabled: None
) -> None:
    """Nothing listens: a translated cannot-connect error, and nothing is created."""
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: f"http://127.0.0.1:{free_port()}/v1"}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "cannot_connect"}
    assert hass.config_entries.async_entries(DOMAIN) == []


@pytest.mark.parametrize(
    ("status", "body"),
    [(404, b"<html>Not Found</html>"), (200, b"<html>a router admin page</html>")],
)
async def test_user_flow_not_openai_compatible(
    hass: HomeAssistant, llm_server: FakeLLMServer, status: int, body: bytes
) -> None:
    """Something answers, but not an OpenAI API (a web page, a 404)."""
    llm_server.models_status = status
    llm_server.models_body = body
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: llm_server.base_url}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "not_openai_compatible"}


async def test_same_server_twice_is_refused(
    hass: HomeAssistant, config_entry: MockConfigEntry, llm_server: FakeLLMServer
) -> None:
    """One entry per server URL."""
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: llm_server.base_url}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"


async def test_reconfigure_changes_server(
    hass: HomeAssistant, setup_integration: MockConfigEntry, socket_enabled: None
) -> None:
    """Reconfigure checks the new server; a dead one is refused, a live one kept."""
    entry = setup_integration
    async with FakeLLMServer() as other:
        result = await entry.start_reconfigure_flow(hass)
        assert result["type"] is FlowResultType.FORM
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_BASE_URL: f"http://127.0.0.1:{free_port()}/v1"}
        )
        assert result["errors"] == {"base": "cannot_connect"}

        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_BASE_URL: other.base_url, CONF_API_KEY: "sk-new"}
        )
        await hass.async_block_till_done()
        assert result["type"] is FlowResultType.ABORT
        assert result["reason"] == "reconfigure_successful"
        assert entry.data == {CONF_BASE_URL: other.base_url, CONF_API_KEY: "sk-new"}
        assert entry.unique_id == ENTRY_UNIQUE_ID
        assert await hass.config_entries.async_unload(entry.entry_id)


async def test_add_and_reconfigure_agent(
    hass: HomeAssistant, setup_integration: MockConfigEntry
) -> None:
    """A second agent picks a model from the server's list; it can be changed."""
    entry = setup_integration
    result = await hass.config_entries.subentries.async_init(
        (entry.entry_id, SUBENTRY_CONVERSATION),
        context={"source": config_entries.SOURCE_USER},
    )
    assert result["type"] is FlowResultType.FORM
    assert result["data_schema"] is not None
    schema = result["data_schema"].schema
    model_selector = next(v for k, v in schema.items() if k == CONF_MODEL)
    assert {"qwen2.5-coder-0.5b", "local"} <= set(model_selector.config["options"])
    # The form says what the `auto` profile makes of the server's first model.
    assert result["description_placeholders"] == {
        "model": "qwen2.5-coder-0.5b",
        "profile_decision": "Auto runs it as a small model: its name says 500M "
        "(under 2B).",
    }

    agent = {
        CONF_MODEL: "my-own-model",
        CONF_PROMPT: "Be brief.",
        CONF_LLM_HASS_API: [API_ID, "assist"],
        CONF_TEMPERATURE: 0.2,
        CONF_MAX_TOKENS: 256,
        CONF_TOOL_CHOICE: "required",
        CONF_STREAM: False,
    }
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], agent
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert len(entry.subentries) == 2
    new = next(
        s for s in entry.subentries.values() if s.data[CONF_MODEL] == "my-own-model"
    )
    # No tools chosen: the agent offers all of them; the small-model settings
    # (a collapsed section, left alone) keep their defaults.
    assert new.data == {
        **agent,
        "http_tools": [],
        "thinking": "auto",
        "max_calls_per_turn": 8,
        "profile": "auto",
        "chain_calls": "profile",
        "examples": DEFAULT_EXAMPLES,
        "history": "profile",
        "history_turns": 3,
        "warm_up": "auto",
        "tool_search": "auto",
        "confirm_intents": False,
        "vision": "auto",
        "confirm_other_tools": "destructive",
    }

    result = await entry.start_subentry_reconfigure_flow(hass, new.subentry_id)
    assert result["type"] is FlowResultType.FORM
    assert result["description_placeholders"] == {
        "model": "my-own-model",
        "profile_decision": "Auto runs it as a capable model: its size is unknown. "
        "Choose Small for a model under 2B parameters.",
    }
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {**agent, CONF_TOOL_CHOICE: "none"}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert entry.subentries[new.subentry_id].data[CONF_TOOL_CHOICE] == "none"


async def test_add_agent_needs_loaded_entry(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    """An agent cannot be added while its server entry is not loaded."""
    result = await hass.config_entries.subentries.async_init(
        (config_entry.entry_id, SUBENTRY_CONVERSATION),
        context={"source": config_entries.SOURCE_USER},
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "entry_not_loaded"


async def test_user_flow_invalid_url(hass: HomeAssistant) -> None:
    """A mistyped URL is a form error, not a crash."""
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: "http://[::1:8080/v1"}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "invalid_url"}


async def test_title_never_shows_url_credentials(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """A password in the URL stays out of the entry's title."""
    url = llm_server.base_url.replace("http://", "http://user:s3cret@")
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: url}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "llama-cpp-python · qwen2.5-coder-0.5b"
    assert "s3cret" not in result["title"]
    assert result["data"][CONF_BASE_URL] == url


async def test_reconfigure_loads_an_entry_whose_server_was_wrong(
    hass: HomeAssistant, socket_enabled: None, llm_server: FakeLLMServer
) -> None:
    """An entry retrying against a wrong URL loads as soon as the URL is fixed,
    without waiting for its next retry."""
    entry = server_entry(f"http://127.0.0.1:{free_port()}/v1")
    entry.add_to_hass(hass)
    await load_integration(hass)
    assert entry.state is config_entries.ConfigEntryState.SETUP_RETRY

    result = await entry.start_reconfigure_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: llm_server.base_url}
    )
    await hass.async_block_till_done()

    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert entry_state(entry) is config_entries.ConfigEntryState.LOADED
    (agent,) = entry.subentries.values()
    assert entry.title == f"llama-cpp-python · {agent.data[CONF_MODEL]}"


async def test_the_entry_is_named_by_the_server_kind_and_model(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """A llama.cpp server (answering the checks as the real one did) gives
    an entry named for what it is, not for its URL."""
    llm_server.models_reply = server_check("llama-server__models")
    llm_server.pages["GET /props"] = server_check("llama-server__props")
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: llm_server.base_url}
    )
    await hass.async_block_till_done()

    (agent,) = result["result"].get_subentries_of_type(SUBENTRY_CONVERSATION)
    model = agent.data[CONF_MODEL]
    assert result["title"] == f"llama.cpp · {model}"


async def test_add_agent_when_the_model_list_fails(
    hass: HomeAssistant, setup_integration: MockConfigEntry, llm_server: FakeLLMServer
) -> None:
    """The server stops listing its models: the agent form still opens, says
    the list failed, and offers the models the server listed at setup; any
    other name can be typed."""
    llm_server.models_status, llm_server.models_body = 404, b"<html>gone</html>"

    result = await hass.config_entries.subentries.async_init(
        (setup_integration.entry_id, SUBENTRY_CONVERSATION),
        context={"source": config_entries.SOURCE_USER},
    )

    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "models_not_listed"}
    assert result["data_schema"] is not None
    schema = result["data_schema"].schema
    model_selector = next(v for k, v in schema.items() if k == CONF_MODEL)
    assert model_selector.config["options"] == ["qwen2.5-coder-0.5b", "local"]


async def test_the_agent_form_waits_seconds_at_most_for_the_model_list(
    hass: HomeAssistant,
    setup_integration: MockConfigEntry,
    llm_server: FakeLLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server busy with another program's answer lists its models after
    it (llama-cpp-python): the agent's form does not wait for it beyond a
    few seconds (here shortened), and says the list failed."""
    monkeypatch.setattr(config_flow, "FORM_MODEL_LIST_TIMEOUT", 0.2)
    llm_server.models_delay = 5.0

    async with asyncio.timeout(2):
        result = await setup_integration.start_subentry_reconfigure_flow(
            hass, next(iter(setup_integration.subentries))
        )

    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "models_not_listed"}


async def test_the_agent_form_opens_at_once_while_the_model_answers(
    hass: HomeAssistant, setup_integration: MockConfigEntry, llm_server: FakeLLMServer
) -> None:
    """Opened while an agent's answer streams, the agent's form is shown at
    once, without asking the server (llama-cpp-python would list the models
    after the answer, ~20 s here, and cut the answer for the request), with
    the models it listed at setup and no failure to report; the answer is
    heard whole. Its description names the model, never the entry or the
    flow (the frontend shows the entry's id while a form is slow to load)."""
    llm_server.interrupt_requests = True
    streaming, form_shown = asyncio.Event(), asyncio.Event()

    async def until_the_form_is_shown() -> None:
        streaming.set()
        await form_shown.wait()

    llm_server.add(
        text_stream(
            "The kitchen lights ",
            "are on.",
            hold_before_piece=1,
            hold_until=until_the_form_is_shown,
        )
    )
    listed = llm_server.model_list_requests
    answering = hass.async_create_task(converse(hass, "Are the lights on?"))
    async with asyncio.timeout(5):
        await streaming.wait()
        result = await hass.config_entries.subentries.async_init(
            (setup_integration.entry_id, SUBENTRY_CONVERSATION),
            context={"source": config_entries.SOURCE_USER},
        )
    form_shown.set()

    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {}
    assert llm_server.model_list_requests == listed
    assert result["data_schema"] is not None
    schema = result["data_schema"].schema
    model_selector = next(v for k, v in schema.items() if k == CONF_MODEL)
    assert {"qwen2.5-coder-0.5b", "local"} <= set(model_selector.config["options"])
    placeholders = result["description_placeholders"] or {}
    shown = " ".join([*placeholders, *placeholders.values()])
    for an_id in (setup_integration.entry_id, result["flow_id"]):
        assert an_id not in shown
    assert speech(await answering) == "The kitchen lights are on."
    assert llm_server.interrupted == 0
