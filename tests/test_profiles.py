"""Model profiles: `auto` (the default) runs a model as `small` or `capable`
from what the server and the model's name say; the choice and its reason are
in the agent's form (test_config_flow), diagnostics and the log. With the
default settings a capable model's chains and its request for every tool
run; agents stored before profiles existed are migrated."""

from __future__ import annotations

import logging
from typing import Any

from homeassistant.config_entries import ConfigSubentryData
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.http_tools_agent.const import (
    CONF_BASE_URL,
    CONF_CHAIN_CALLS,
    CONF_PROFILE,
    CONF_TOOLS,
    DOMAIN,
)
from custom_components.http_tools_agent.server.info import (
    KIND_OPENAI,
    ModelCaps,
    ServerInfo,
)
from custom_components.http_tools_agent.server.profiles import (
    SMALL_MODEL_PARAMETERS,
    Evidence,
    Profile,
    choose_profile,
    format_size,
    size_in_name,
)
from dev.demo_setup import agent_subentry
from dev.tool_server import DemoToolServer

from .kit import (
    ENTRY_UNIQUE_ID,
    converse,
    load_integration,
    run_at_once,
    server_entry,
    speech,
)
from .servers import (
    FakeLLMServer,
    documented,
    server_check,
    text_stream,
    tool_calls_stream,
)


@pytest.mark.parametrize(
    ("name", "parameters"),
    [
        ("qwen2.5-coder-0.5b", 500_000_000),
        ("Qwen2.5-Coder-0.5B-Instruct-GGUF", 500_000_000),
        ("qwen2.5:0.5b-instruct-q4_K_M", 500_000_000),
        ("llama3.2:3b", 3_000_000_000),
        ("smollm2-135m", 135_000_000),
        ("gemma-3-270m-it", 270_000_000),
        ("Qwen3-30B-A3B", 30_000_000_000),  # the total, not the active part
        ("mixtral-8x7b-instruct", 56_000_000_000),
        ("meta-llama/Llama-3.1-8B-Instruct", 8_000_000_000),
        ("qwen2.5", None),  # a version, no size
        ("gpt-4o-mini", None),
        ("local", None),
        ("phi-4-mini", None),
    ],
)
def test_sizes_in_model_names(name: str, parameters: int | None) -> None:
    assert size_in_name(name) == parameters


def test_sizes_are_written_as_people_write_them() -> None:
    assert format_size(630_167_424) == "630M"
    assert format_size(1_540_000_000) == "1.5B"
    assert format_size(3_000_000_000) == "3B"


@pytest.mark.parametrize(
    ("model", "server", "base_url", "profile", "evidence"),
    [
        # The server's count wins over the name.
        (
            "my-alias",
            ServerInfo("llama.cpp", {"": ModelCaps(parameters=630_167_424)}),
            "http://127.0.0.1:8080/v1",
            Profile.SMALL,
            Evidence.SERVER_SIZE,
        ),
        (
            "tiny-7b",
            ServerInfo("llama.cpp", {"": ModelCaps(parameters=7_600_000_000)}),
            "http://127.0.0.1:8080/v1",
            Profile.CAPABLE,
            Evidence.SERVER_SIZE,
        ),
        (
            "qwen2.5-coder-0.5b",
            ServerInfo("llama-cpp-python"),
            "http://127.0.0.1:8080/v1",
            Profile.SMALL,
            Evidence.NAME_SIZE,
        ),
        (
            "llama3.1:8b",
            ServerInfo(),
            "http://192.168.1.20:11434/v1",
            Profile.CAPABLE,
            Evidence.NAME_SIZE,
        ),
        (
            "meta-llama/llama-3.2-1b-instruct",
            ServerInfo(),
            "https://openrouter.ai/api/v1",
            Profile.SMALL,
            Evidence.NAME_SIZE,
        ),
        (
            "gpt-4o-mini",
            ServerInfo(KIND_OPENAI),
            "https://api.openai.com/v1",
            Profile.CAPABLE,
            Evidence.HOSTED,
        ),
        (
            "deepseek-chat",
            ServerInfo(),
            "https://api.deepseek.com/v1",
            Profile.CAPABLE,
            Evidence.HOSTED,
        ),
        (
            "local",
            ServerInfo(),
            "http://gpu-box.local:8000/v1",
            Profile.CAPABLE,
            Evidence.UNKNOWN,
        ),
        (
            "local",
            ServerInfo(),
            "http://10.0.0.7:8000/v1",
            Profile.CAPABLE,
            Evidence.UNKNOWN,
        ),
        (
            "local",
            ServerInfo(),
            "http://llm:8000/v1",
            Profile.CAPABLE,
            Evidence.UNKNOWN,
        ),
    ],
)
def test_auto_decides_from_the_best_evidence(
    model: str,
    server: ServerInfo,
    base_url: str,
    profile: Profile,
    evidence: Evidence,
) -> None:
    choice = choose_profile("auto", model, server, base_url)

    assert (choice.profile, choice.evidence) == (profile, evidence)


def test_a_chosen_profile_is_kept() -> None:
    server = ServerInfo("llama.cpp", {"": ModelCaps(parameters=400_000_000)})

    choice = choose_profile("capable", "qwen-0.5b", server, "http://x/v1")

    assert (choice.profile, choice.evidence) == (Profile.CAPABLE, Evidence.SETTING)
    assert choice.describe() == "capable (chosen in the agent's settings)"


def test_the_threshold_is_two_billion() -> None:
    server = ServerInfo("llama.cpp", {"": ModelCaps(parameters=SMALL_MODEL_PARAMETERS)})
    assert choose_profile("auto", "m", server, "http://x/v1").profile is Profile.CAPABLE
    smaller = ServerInfo("llama.cpp", {"": ModelCaps(parameters=1_999_999_999)})
    assert choose_profile("auto", "m", smaller, "http://x/v1").profile is Profile.SMALL


async def diagnostics_profile(
    hass: HomeAssistant, hass_client: ClientSessionGenerator, entry: MockConfigEntry
) -> dict[str, Any]:
    assert await async_setup_component(hass, "diagnostics", {})
    result = await get_diagnostics_for_config_entry(hass, hass_client, entry)
    profile: dict[str, Any] = result["agents"][0]["profile"]
    return profile


@pytest.mark.parametrize(
    ("server_answers", "model", "expected"),
    [
        # Captured: llama-server with Qwen2.5-Coder-0.5B (`meta.n_params`).
        (
            {
                "models": server_check("llama-server__models"),
                "GET /props": server_check("llama-server__props"),
            },
            "qwen2.5-coder-0.5b",
            "small (the server reports 630M parameters)",
        ),
        # Captured: llama-server with SmolLM2-135M.
        (
            {
                "models": server_check("llama-server-smollm2__models"),
                "GET /props": server_check("llama-server-smollm2__props"),
            },
            "smollm2-135m",
            "small (the server reports 135M parameters)",
        ),
        # Captured: llama-cpp-python says no size; its alias does.
        (
            {"models": server_check("llama-cpp-python-smollm2__models")},
            "smollm2-135m",
            "small (the model's name says 135M)",
        ),
        # Written from Ollama's documentation: `/api/show`'s model_info.
        (
            {
                "models": documented("ollama__models"),
                "GET /api/version": documented("ollama__version"),
                "POST /api/show qwen3:0.6b": documented("ollama__show_qwen3"),
            },
            "qwen3:0.6b",
            "small (the server reports 752M parameters)",
        ),
        # Written from vLLM's documentation: only the name tells.
        (
            {"models": documented("vllm__models")},
            "Qwen/Qwen3-0.6B",
            "small (the model's name says 600M)",
        ),
        # An alias without a size, on a server that says nothing.
        ({}, "local", "capable (the model's size is unknown)"),
    ],
    ids=[
        "llama-server",
        "llama-server-smollm2",
        "llama-cpp-python",
        "ollama",
        "vllm",
        "alias",
    ],
)
async def test_auto_profile_in_diagnostics_and_the_log(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    llm_server: FakeLLMServer,
    caplog: pytest.LogCaptureFixture,
    server_answers: dict[str, Any],
    model: str,
    expected: str,
) -> None:
    answers = dict(server_answers)
    if (models := answers.pop("models", None)) is not None:
        llm_server.models_reply = models
    llm_server.pages.update(answers)
    entry = server_entry(llm_server.base_url, model=model)
    entry.add_to_hass(hass)
    caplog.set_level(logging.INFO)

    await load_integration(hass)

    assert await diagnostics_profile(hass, hass_client, entry) == {
        "setting": "auto",
        "runs_as": expected.split(maxsplit=1)[0],
        "reason": expected,
    }
    assert (
        f"(model {model}) runs with the {expected.split(maxsplit=1)[0]} profile: "
        in (caplog.text)
    )
    assert expected in caplog.text


# --- the two cases, with the default settings ------------------------


def remove_milk_replies() -> list[Any]:
    """What a capable model sends: it reads the list, deletes the id it found
    for milk, then answers."""
    return [
        tool_calls_stream(("list_items", {"search": "milk"})),
        tool_calls_stream(("delete_item", {"id": "3"})),
        text_stream("I removed milk from your list."),
    ]


@pytest.mark.parametrize("profile", [None, "capable"], ids=["default", "capable"])
async def test_a_chain_runs(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    items: DemoToolServer,
    profile: str | None,
) -> None:
    entry = server_entry(
        llm_server.base_url,
        options={CONF_TOOLS: run_at_once(items.tools(sentences=False))},
        agent={CONF_PROFILE: profile} if profile else None,
    )
    entry.add_to_hass(hass)
    await load_integration(hass)
    llm_server.add(*remove_milk_replies())

    result = await converse(hass, "Remove milk from my shopping list.")

    assert [r.target for r in items.requests] == [
        "GET /api/items?search=milk",
        "DELETE /api/items/3",
    ]
    assert "3" not in items.items
    assert speech(result) == "I removed milk from your list."
    # Each request after results is the model's own round: no instruction
    # rides on a result, tools stay offered.
    for body in llm_server.requests[1:]:
        assert body["messages"][-1]["role"] == "tool"
        assert body["messages"][-1]["content"].startswith(("[", "{"))
        assert body["tool_choice"] == "auto"


async def test_a_chain_under_the_small_rules(
    hass: HomeAssistant, llm_server: FakeLLMServer, items: DemoToolServer
) -> None:
    """`small`: after the list the agent asks for the answer, and a call of
    another tool is not run then (a 0.5B model calls tools nobody asked
    for at that point). The agent then asks for the answer without tools."""
    entry = server_entry(
        llm_server.base_url,
        options={CONF_TOOLS: run_at_once(items.tools(sentences=False))},
        agent={CONF_PROFILE: "small"},
    )
    entry.add_to_hass(hass)
    await load_integration(hass)
    llm_server.add(
        tool_calls_stream(("list_items", {"search": "milk"})),
        tool_calls_stream(("delete_item", {"id": "3"})),
        text_stream("Milk is item 3 on your list."),
    )

    result = await converse(hass, "Remove milk from my shopping list.")

    assert [r.target for r in items.requests] == ["GET /api/items?search=milk"]
    assert "3" in items.items
    assert [body["tool_choice"] for body in llm_server.requests] == [
        "auto",
        "auto",
        "none",
    ]
    assert speech(result) == "Milk is item 3 on your list."


EVERY_TOOL = "Read my list, delete item 1, the weather in Rome, and tell the family."


def every_tool_replies() -> list[Any]:
    return [
        tool_calls_stream(
            ("list_items", {}),
            ("delete_item", {"id": "1"}),
            ("get_weather", {"city": "Rome"}),
            ("send_webhook", {"message": "On my way"}),
        ),
        text_stream("Done: your list, item 1 deleted, Rome's weather, and a note."),
    ]


@pytest.mark.parametrize("profile", [None, "capable"], ids=["default", "capable"])
async def test_a_request_for_every_tool_runs_them_all(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    items: DemoToolServer,
    profile: str | None,
) -> None:
    entry = server_entry(
        llm_server.base_url,
        options={
            CONF_TOOLS: run_at_once(
                items.tools(
                    ["list_items", "delete_item", "get_weather", "send_webhook"],
                    sentences=False,
                )
            )
        },
        agent={CONF_PROFILE: profile} if profile else None,
    )
    entry.add_to_hass(hass)
    await load_integration(hass)
    llm_server.add(*every_tool_replies())

    result = await converse(hass, EVERY_TOOL)

    assert sorted(r.target for r in items.requests) == [
        "DELETE /api/items/1",
        "GET /api/items",
        "GET /weather/Rome",
        "POST /hook",
    ]
    assert speech(result).startswith("Done: your list")


async def test_every_tool_under_the_small_rules(
    hass: HomeAssistant, llm_server: FakeLLMServer, items: DemoToolServer
) -> None:
    """`small`: the user asked for all four things, so all four calls run,
    as with `capable` (each change, the delete and the message, is in the
    user's words)."""
    entry = server_entry(
        llm_server.base_url,
        options={
            CONF_TOOLS: run_at_once(
                items.tools(
                    ["list_items", "delete_item", "get_weather", "send_webhook"],
                    sentences=False,
                )
            )
        },
        agent={CONF_PROFILE: "small"},
    )
    entry.add_to_hass(hass)
    await load_integration(hass)
    llm_server.add(*every_tool_replies())

    await converse(hass, EVERY_TOOL)

    assert sorted(r.target for r in items.requests) == [
        "DELETE /api/items/1",
        "GET /api/items",
        "GET /weather/Rome",
        "POST /hook",
    ]


# --- migration ----------------------------------------------------------------


async def test_agents_stored_before_profiles_get_auto(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """1.1 -> 1.2: every agent gets `auto`; `chain_calls` on (set by the user:
    it was off by default) stays on, off follows the profile."""

    def stored_agent(title: str, chain_calls: bool) -> ConfigSubentryData:
        # An agent as version 1.1 stored it: no profile, a chain switch.
        data = {
            k: v
            for k, v in agent_subentry(ENTRY_UNIQUE_ID, "local")["data"].items()
            if k not in (CONF_PROFILE, CONF_CHAIN_CALLS)
        }
        return ConfigSubentryData(
            subentry_type="conversation",
            title=title,
            unique_id=None,
            data={**data, CONF_CHAIN_CALLS: chain_calls},
        )

    entry = MockConfigEntry(
        domain=DOMAIN,
        title="old",
        unique_id=ENTRY_UNIQUE_ID,
        data={CONF_BASE_URL: llm_server.base_url},
        version=1,
        minor_version=1,
        subentries_data=[stored_agent("chains", True), stored_agent("plain", False)],
    )
    entry.add_to_hass(hass)

    await load_integration(hass)

    assert (entry.version, entry.minor_version) == (1, 4)
    by_title = {sub.title: sub.data for sub in entry.subentries.values()}
    assert by_title["chains"][CONF_PROFILE] == "auto"
    assert by_title["chains"][CONF_CHAIN_CALLS] == "on"
    assert by_title["plain"][CONF_PROFILE] == "auto"
    assert by_title["plain"][CONF_CHAIN_CALLS] == "profile"
