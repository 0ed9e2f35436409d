"""What the server is and can do: llama.cpp's `/props`, Ollama's
`/api/show`, vLLM's model list; shown in diagnostics, and a server whose
template takes no tools is said so in the flow and in a repair issue.

llama.cpp and llama-cpp-python answers are real captures
(`fixtures/server_checks/`); Ollama and vLLM are written from their
documentation (`fixtures/documented/`)."""

from __future__ import annotations

import json
from typing import Any

from homeassistant import config_entries
from homeassistant.const import CONF_LLM_HASS_API
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import issue_registry as ir
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.http_tools_agent.const import CONF_BASE_URL, CONF_MODEL, DOMAIN
from custom_components.http_tools_agent.server.info import (
    ModelCaps,
    ServerInfo,
    tool_support_issue_id,
)

from .kit import converse, load_integration, server_entry, speech
from .servers import FakeLLMServer, Reply, documented, server_check, text_stream


def as_llama_server(server: FakeLLMServer, model: str = "qwen") -> None:
    """Answer the server checks as the captured `llama-server` did."""
    prefix = "llama-server" if model == "qwen" else "llama-server-smollm2"
    server.models_reply = server_check(f"{prefix}__models")
    server.pages["GET /props"] = server_check(f"{prefix}__props")


def as_ollama(server: FakeLLMServer) -> None:
    """Answer as Ollama's documentation says it does."""
    server.models_reply = documented("ollama__models")
    server.pages["GET /api/version"] = documented("ollama__version")
    server.pages["POST /api/show qwen3:0.6b"] = documented("ollama__show_qwen3")
    server.pages["POST /api/show gemma3:1b"] = documented("ollama__show_gemma3")


async def diagnostics_of(
    hass: HomeAssistant, hass_client: ClientSessionGenerator, entry: MockConfigEntry
) -> dict[str, Any]:
    assert await async_setup_component(hass, "diagnostics", {})
    result: dict[str, Any] = await get_diagnostics_for_config_entry(
        hass, hass_client, entry
    )
    return result


async def test_llama_server_props(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    config_entry: MockConfigEntry,
    hass_client: ClientSessionGenerator,
) -> None:
    """`/props` of a `--jinja` server: tools supported, its context known;
    its model list says the model's size, so `auto` runs it as small."""
    as_llama_server(llm_server)
    await load_integration(hass)

    assert config_entry.runtime_data.server_info == ServerInfo(
        "llama.cpp",
        {
            "": ModelCaps(
                context=4096,
                tools=True,
                parallel_tool_calls=True,
                parameters=630167424,
                # `modalities.vision`: started without `--mmproj`.
                vision=False,
            )
        },
    )
    diagnostics = await diagnostics_of(hass, hass_client, config_entry)
    assert diagnostics["server"] == {
        "kind": "llama.cpp",
        "models": {
            "*": {
                "context": 4096,
                "tools": True,
                "parallel_tool_calls": True,
                "thinking": None,
                "parameters": 630167424,
                "vision": False,
            }
        },
    }
    assert diagnostics["agents"][0]["profile"] == {
        "setting": "auto",
        "runs_as": "small",
        "reason": "small (the server reports 630M parameters)",
    }
    assert diagnostics["model_quirks"] == {}
    assert (
        ir.async_get(hass).async_get_issue(
            DOMAIN, tool_support_issue_id(config_entry.entry_id)
        )
        is None
    )


async def test_template_without_tools_raises_a_repair_issue(
    hass: HomeAssistant, llm_server: FakeLLMServer, config_entry: MockConfigEntry
) -> None:
    """SmolLM2's template takes no tools: a repair issue says what to do, the
    agent keeps answering, and the issue goes once the server has tools."""
    as_llama_server(llm_server, "smollm2")
    await load_integration(hass)

    issue = ir.async_get(hass).async_get_issue(
        DOMAIN, tool_support_issue_id(config_entry.entry_id)
    )
    assert issue is not None
    assert issue.translation_key == "no_tool_support"
    assert issue.translation_placeholders == {
        "server": llm_server.base_url,
        "kind": "llama.cpp",
        "models": "local",
    }
    llm_server.add(text_stream("Hello!"))
    assert speech(await converse(hass, "Hi")) == "Hello!"

    # Restarted with a template that has tools; the server comes back.
    as_llama_server(llm_server, "qwen")
    runtime = config_entry.runtime_data
    runtime.availability.async_mark_unavailable("restarting")
    runtime.availability.async_mark_available()
    await hass.async_block_till_done(wait_background_tasks=True)

    assert runtime.server_info.model("local").tools is True
    assert (
        ir.async_get(hass).async_get_issue(
            DOMAIN, tool_support_issue_id(config_entry.entry_id)
        )
        is None
    )


async def test_the_issue_goes_with_the_entry(
    hass: HomeAssistant, llm_server: FakeLLMServer, config_entry: MockConfigEntry
) -> None:
    as_llama_server(llm_server, "smollm2")
    await load_integration(hass)
    issue_id = tool_support_issue_id(config_entry.entry_id)
    assert ir.async_get(hass).async_get_issue(DOMAIN, issue_id) is not None

    await hass.config_entries.async_remove(config_entry.entry_id)

    assert ir.async_get(hass).async_get_issue(DOMAIN, issue_id) is None


async def test_user_flow_says_the_server_takes_no_tools(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """Adding a server whose template has no tools shows why it matters and
    what to do; the server can still be added."""
    assert await async_setup_component(hass, "homeassistant", {})
    as_llama_server(llm_server, "smollm2")
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: llm_server.base_url}
    )

    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "no_tool_support"
    assert result["description_placeholders"] == {
        "server": llm_server.base_url,
        "kind": "llama.cpp",
        "models": "smollm2-135m",
    }

    result = await hass.config_entries.flow.async_configure(result["flow_id"], {})
    await hass.async_block_till_done()

    assert result["type"] is FlowResultType.CREATE_ENTRY
    # Its agent and its AI task, both on the model.
    models = [s.data[CONF_MODEL] for s in result["result"].subentries.values()]
    assert models == ["smollm2-135m", "smollm2-135m"]


async def test_user_flow_with_tools_goes_straight_on(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    assert await async_setup_component(hass, "homeassistant", {})
    as_llama_server(llm_server, "qwen")
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: llm_server.base_url}
    )
    await hass.async_block_till_done()

    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert llm_server.page_requests == ["GET /props", "GET /props"]


async def test_ollama_models_are_asked_one_by_one(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    hass_client: ClientSessionGenerator,
) -> None:
    """Ollama: each agent's model is shown (`/api/show`); a model without
    `tools` among its capabilities raises the issue."""
    as_ollama(llm_server)
    entry = server_entry(llm_server.base_url, model="qwen3:0.6b")
    entry.add_to_hass(hass)
    await load_integration(hass)
    subentry = next(iter(entry.subentries.values()))
    issue_id = tool_support_issue_id(entry.entry_id)
    assert ir.async_get(hass).async_get_issue(DOMAIN, issue_id) is None

    diagnostics = await diagnostics_of(hass, hass_client, entry)
    assert diagnostics["server"] == {
        "kind": "ollama",
        "models": {
            "qwen3:0.6b": {
                # `num_ctx 2048` in its parameters (not the 40960 it was
                # trained for): what Ollama really gives the request.
                "context": 2048,
                "tools": True,
                "parallel_tool_calls": None,
                "thinking": True,
                "parameters": 751632384,
                "vision": False,
            }
        },
    }
    assert diagnostics["agents"][0]["profile"]["reason"] == (
        "small (the server reports 752M parameters)"
    )

    hass.config_entries.async_update_subentry(
        entry, subentry, data={**subentry.data, CONF_MODEL: "gemma3:1b"}
    )
    await hass.async_block_till_done()

    issue = ir.async_get(hass).async_get_issue(DOMAIN, issue_id)
    assert issue is not None
    assert issue.translation_placeholders is not None
    assert issue.translation_placeholders["models"] == "gemma3:1b"
    assert entry.runtime_data.server_info.model("gemma3:1b") == ModelCaps(
        context=4096, tools=False, thinking=False, parameters=999890000, vision=False
    )
    assert "POST /api/show gemma3:1b" in llm_server.page_requests


async def test_agents_without_an_api_need_no_tools(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """An agent that offers no tools does not need a template with tools."""
    as_llama_server(llm_server, "smollm2")
    entry = server_entry(llm_server.base_url, agent={CONF_LLM_HASS_API: []})
    entry.add_to_hass(hass)
    await load_integration(hass)

    assert (
        ir.async_get(hass).async_get_issue(
            DOMAIN, tool_support_issue_id(entry.entry_id)
        )
        is None
    )


@pytest.mark.parametrize(
    ("models", "kind", "context"),
    [
        ("vllm__models", "vllm", 2048),
        ("llama-cpp-python-smollm2__models", "llama-cpp-python", None),
    ],
)
async def test_the_model_list_tells_vllm_and_llama_cpp_python(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    models: str,
    kind: str,
    context: int | None,
) -> None:
    """vLLM's cards carry `max_model_len`; llama-cpp-python says nothing more
    (its `/props` is a 404, as captured)."""
    if models.startswith("vllm"):
        llm_server.models_reply = documented(models)
    else:
        llm_server.models_reply = server_check(models)
        llm_server.pages["GET /props"] = server_check("llama-cpp-python-smollm2__props")
    entry = server_entry(llm_server.base_url, model="Qwen/Qwen3-0.6B")
    entry.add_to_hass(hass)
    await load_integration(hass)

    info = entry.runtime_data.server_info
    assert info.kind == kind
    assert info.model("Qwen/Qwen3-0.6B").context == context


async def test_a_server_that_says_nothing_is_unknown(
    hass: HomeAssistant, llm_server: FakeLLMServer, config_entry: MockConfigEntry
) -> None:
    """A model list like any other and every probe a 404: `unknown`, and the
    agent works as before."""
    llm_server.models_reply = Reply(
        body=json.dumps(
            {"object": "list", "data": [{"id": "local", "object": "model"}]}
        ).encode()
    )
    await load_integration(hass)

    assert config_entry.runtime_data.server_info == ServerInfo()
    assert llm_server.page_requests == ["GET /props", "GET /api/version"]
    llm_server.add(text_stream("Hello!"))
    assert speech(await converse(hass, "Hi")) == "Hello!"
