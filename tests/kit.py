"""The test kit: how the tests, the end-to-end harness, the benchmarks and the
browser test drive Home Assistant the way a user does.

- entries: `server_entry` (a server with one agent, as the config flow makes
  it), `agent_with_tools` (that entry set up, its agent with HTTP tools),
  `core_llama_cpp_entry` (Home Assistant's own llama.cpp agent on our
  HTTP tools), `load_integration`, `add_agent`;
- turns: `converse`, `speech`; in an Assist pipeline: `pipeline_events`,
  `chat_log_deltas`, `assert_rome_weather_ran`;
- tools: `weather_tool`, `run_at_once`, `call_service`, `tool_names`, `llm_context`;
- `entry_state` (an entry's state, read afresh each time).

The loopback servers are in `tests/servers.py`, the markup checks in
`tests/markup.py` (no Home Assistant there: the engine tests use it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from homeassistant.auth.models import User
from homeassistant.components import conversation
from homeassistant.components.assist_pipeline import PipelineEvent, PipelineEventType
from homeassistant.components.assist_pipeline.models import Pipeline, PipelineStage
from homeassistant.components.assist_pipeline.pipeline import async_get_pipeline
from homeassistant.components.assist_pipeline.run import PipelineInput, PipelineRun
from homeassistant.components.conversation.chat_log import DATA_CHAT_LOGS
from homeassistant.config_entries import ConfigEntryState, ConfigSubentryData
from homeassistant.const import CONF_LLM_HASS_API
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import chat_session, entity_registry as er, llm
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.http_tools_agent.config_flow import HttpToolsAgentConfigFlow
from custom_components.http_tools_agent.const import (
    CONF_BASE_URL,
    CONF_TOOLS,
    CONF_WARM_UP,
    DOMAIN,
)
from custom_components.http_tools_agent.tools.llm_api import api_id_for
from custom_components.http_tools_agent.turn.messages import chat_messages
from dev.demo_setup import agent_subentry, ai_task_subentry
from dev.loopback import RecordingServer

ENTRY_UNIQUE_ID = "01JTESTENTRY"
# The entity of the agent `server_entry` makes, and of its AI task.
AGENT_ID = "conversation.http_tools_agent"
AI_TASK_ID = "ai_task.http_tools_ai_task"
API_ID = api_id_for(ENTRY_UNIQUE_ID)


def server_entry(
    base_url: str,
    *,
    options: dict[str, Any] | None = None,
    model: str = "local",
    agent: dict[str, Any] | None = None,
    unique_id: str = ENTRY_UNIQUE_ID,
    title: str | None = None,
    with_agent: bool = True,
    ai_task: dict[str, Any] | None = None,
) -> MockConfigEntry:
    """An entry for the server at `base_url` with one agent on `model` that
        uses this entry's HTTP tools (the config flow's defaults, `agent` over
        them); `with_agent=False` for a server without agents; `ai_task`: an AI
    task subentry too, with these settings over the same defaults.

        The agent sends no warm-up (it would take the first scripted reply) unless
        `agent` sets `warm_up` (`tests/test_warm_up.py`)."""
    agent = {CONF_WARM_UP: "off", **(agent or {})}
    return MockConfigEntry(
        domain=DOMAIN,
        title=title or base_url,
        version=HttpToolsAgentConfigFlow.VERSION,
        minor_version=HttpToolsAgentConfigFlow.MINOR_VERSION,
        unique_id=unique_id,
        data={CONF_BASE_URL: base_url},
        options=options or {},
        subentries_data=(
            ([agent_subentry(unique_id, model, agent)] if with_agent else [])
            + (
                [ai_task_subentry(unique_id, model, {CONF_WARM_UP: "off", **ai_task})]
                if ai_task is not None
                else []
            )
        ),
    )


def core_llama_cpp_entry(
    base_url: str,
    *,
    model: str = "local",
    streaming: bool | None = None,
    agent: dict[str, Any] | None = None,
) -> MockConfigEntry:
    """Home Assistant core's llama.cpp agent ("Core agent") on `base_url`,
    using the HTTP tools of `server_entry`'s entry; `agent` over its settings.

    Without `streaming` it streams only if its server check finds streaming.
    """
    return MockConfigEntry(
        domain="llama_cpp",
        title="core llama.cpp",
        data={"base_url": base_url}
        | ({} if streaming is None else {"streaming": streaming}),
        subentries_data=[
            ConfigSubentryData(
                subentry_type="conversation",
                title="Core agent",
                unique_id=None,
                data={
                    "chat_model": model,
                    "recommended": True,
                    CONF_LLM_HASS_API: [API_ID],
                    **(agent or {}),
                },
            )
        ],
    )


async def load_integration(hass: HomeAssistant) -> None:
    """Set up Home Assistant's core and this integration (every entry added)."""
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, DOMAIN, {})
    await hass.async_block_till_done()


async def agent_with_tools(
    hass: HomeAssistant,
    base_url: str,
    tools: list[dict[str, Any]] | None = None,
    *,
    options: dict[str, Any] | None = None,
    model: str = "local",
    agent: dict[str, Any] | None = None,
) -> MockConfigEntry:
    """Set up Home Assistant with an entry for the server at `base_url`
    whose one agent offers the HTTP `tools` (`options`: more of the entry's
    options; `agent`: the agent's settings over the config flow's); return
    the entry."""
    entry_options = {
        **({CONF_TOOLS: tools} if tools is not None else {}),
        **(options or {}),
    }
    entry = server_entry(
        base_url, options=entry_options or None, model=model, agent=agent
    )
    entry.add_to_hass(hass)
    await load_integration(hass)
    return entry


async def add_agent(hass: HomeAssistant, entry: MockConfigEntry) -> str:
    """Add an entry with one agent, set it up; return the agent's entity id."""
    entry.add_to_hass(hass)
    assert await async_setup_component(hass, "homeassistant", {})
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    entities = er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
    ids = [e.entity_id for e in entities if e.domain == "conversation"]
    assert len(ids) == 1, ids
    return ids[0]


async def converse(
    hass: HomeAssistant,
    text: str,
    *,
    agent_id: str = AGENT_ID,
    conversation_id: str | None = None,
    context: Context | None = None,
    language: str | None = None,
) -> conversation.ConversationResult:
    """One user turn, in a new conversation unless `conversation_id` is given."""
    return await conversation.async_converse(
        hass,
        text,
        conversation_id,
        context or Context(),
        language=language,
        agent_id=agent_id,
    )


def conversation_messages(
    hass: HomeAssistant, conversation_id: str
) -> list[dict[str, Any]]:
    """The conversation as the agent keeps it, in the messages its next
    request would carry (calls, their results, the words)."""
    chat_log = hass.data[DATA_CHAT_LOGS][conversation_id]
    return [dict(m) for m in chat_messages(chat_log.content, lambda _: "")]


def speech(result: conversation.ConversationResult) -> str:
    """What the user hears ("" when nothing)."""
    text: str = result.response.speech.get("plain", {}).get("speech", "")
    return text


async def pipeline_events(
    hass: HomeAssistant,
    text: str,
    *,
    pipeline: Pipeline | None = None,
    conversation_id: str | None = None,
    device_id: str | None = None,
) -> list[PipelineEvent]:
    """One text turn through a pipeline's intent stage, as the Assist dialog
    sends it (or a satellite, `device_id`), in the conversation
    `conversation_id` (None: a new one): the events it reported.
    `pipeline`: by default the one Home Assistant makes for the agent."""
    events: list[PipelineEvent] = []
    with chat_session.async_get_chat_session(hass, conversation_id) as session:
        await PipelineInput(
            session=session,
            intent_input=text,
            device_id=device_id,
            run=PipelineRun(
                hass,
                context=Context(),
                pipeline=pipeline or async_get_pipeline(hass, AGENT_ID),
                start_stage=PipelineStage.INTENT,
                end_stage=PipelineStage.INTENT,
                event_callback=events.append,
            ),
        ).execute(validate=True)
    return events


def chat_log_deltas(events: list[PipelineEvent]) -> list[dict[str, Any]]:
    """The chat-log deltas an Assist pipeline run reported, in order."""
    return [
        e.data["chat_log_delta"]
        for e in events
        if e.type is PipelineEventType.INTENT_PROGRESS
        and e.data
        and "chat_log_delta" in e.data
    ]


def question(message: Mapping[str, Any]) -> str:
    """The user's words of a user message sent to the model: exactly what
    was said (the clock is a tool, not part of the message)."""
    assert message["role"] == "user", message
    text: str = message["content"]
    return text


def assert_rome_weather_ran(
    deltas: list[dict[str, Any]], tool_endpoint: RecordingServer
) -> None:
    """The pipeline showed the get_weather call for Rome and its result, and
    the tool server (`tests.servers.ToolEndpoint`) got the one request."""
    call = next(d for d in deltas if d.get("tool_calls"))["tool_calls"][0]
    assert (call.tool_name, call.tool_args) == ("get_weather", {"city": "Rome"})
    result = next(d for d in deltas if d.get("role") == "tool_result")
    assert result["result"]["data"] == {"result": "Rome: ☀️ +14°C"}
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]


def weather_tool(base_url: str) -> dict[str, Any]:
    """A weather tool (wttr.in's shape), calling `base_url`/weather/{city}."""
    return {
        "name": "get_weather",
        "description": "Current weather and temperature for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City"}},
            "required": ["city"],
        },
        "url": f"{base_url}/weather/{{city}}",
        "method": "GET",
    }


def run_at_once(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`tools`, each with `confirm: never`: for the tests of rules other
    than asking before a call (`tests/test_confirm.py` has those)."""
    return [{**tool, "confirm": "never"} for tool in tools]


async def call_service(
    hass: HomeAssistant,
    service: str,
    data: dict[str, Any] | None = None,
    *,
    user: User | None = None,
    return_response: bool = True,
) -> Any:
    """Call one of the integration's actions (as `user`); return its response."""
    return await hass.services.async_call(
        DOMAIN,
        service,
        data or {},
        blocking=True,
        return_response=return_response,
        context=Context(user_id=user.id) if user else Context(),
    )


def tool_names(response: dict[str, Any]) -> list[str]:
    """The tool names of a set_tools / get_tools / reset_tools response."""
    return [tool["name"] for tool in response["tools"]]


def llm_context() -> llm.LLMContext:
    """The context another agent asks an LLM API with."""
    return llm.LLMContext(
        platform="test",
        context=Context(),
        language="en",
        assistant="conversation",
        device_id=None,
    )


def entry_state(entry: MockConfigEntry) -> ConfigEntryState:
    """The entry's state now (a call, so type checkers do not carry an
    earlier assertion about it over to the next)."""
    state: ConfigEntryState = entry.state
    return state
