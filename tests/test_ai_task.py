"""The AI Task entity through Home Assistant's `ai_task.generate_data`
service, against a scripted OpenAI-compatible server and the HTTP tools."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from homeassistant import config_entries
from homeassistant.components import ai_task
from homeassistant.components.ai_task.const import DEFAULT_SYSTEM_PROMPT
from homeassistant.config_entries import ConfigSubentryData
from homeassistant.const import CONF_LLM_HASS_API, CONF_PROMPT
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import llm
from homeassistant.setup import async_setup_component
import probatio
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.http_tools_agent.const import (
    CONF_BASE_URL,
    CONF_MAX_TOKENS,
    CONF_MODEL,
    CONF_STREAM,
    CONF_TEMPERATURE,
    CONF_TOOL_CHOICE,
    CONF_WARM_UP,
    DOMAIN,
    SUBENTRY_AI_TASK,
)
from custom_components.http_tools_agent.turn.say import async_spoken_error
from dev.demo_setup import agent_subentry, ai_task_subentry

from .integration_files import COMPONENT
from .kit import (
    AI_TASK_ID,
    API_ID,
    ENTRY_UNIQUE_ID,
    load_integration,
    server_entry,
)
from .said import said
from .servers import (
    FakeLLMServer,
    ToolEndpoint,
    completion,
    error,
    text_stream,
    tool_calls_stream,
    transcript,
)

STRUCTURE = {
    "city": {"selector": {"text": {}}, "required": True},
    "temperature": {
        "description": "Degrees Celsius",
        "selector": {"number": {}},
        "required": True,
    },
}
# A pixel of PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@pytest.fixture
def config_entry(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    entry_options: dict[str, Any],
) -> MockConfigEntry:
    """A server entry with an agent and an AI task, both on its HTTP tools."""
    entry = server_entry(llm_server.base_url, options=entry_options, ai_task={})
    entry.add_to_hass(hass)
    return entry


@pytest.fixture
async def ai_task_ready(hass: HomeAssistant, config_entry: MockConfigEntry) -> None:
    """Home Assistant with the integration and the AI Task component."""
    await load_integration(hass)
    assert await async_setup_component(hass, "ai_task", {})
    await hass.async_block_till_done()


async def generate(hass: HomeAssistant, **fields: Any) -> dict[str, Any]:
    """Run `ai_task.generate_data` on the entry's AI task; its response."""
    response = await hass.services.async_call(
        "ai_task",
        "generate_data",
        {"task_name": "Test task", "entity_id": AI_TASK_ID, **fields},
        blocking=True,
        return_response=True,
    )
    assert response is not None
    return dict(response)


def system_prompt(request: dict[str, Any]) -> str:
    """The system prompt a request carried."""
    message = request["messages"][0]
    assert message["role"] == "system"
    return str(message["content"])


@pytest.mark.usefixtures("ai_task_ready")
async def test_plain_text_is_kept_as_written(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """A task's answer is data, not speech: markdown and links stay."""
    answer = "- **Milk**\n- Eggs, see https://example.com/list 🥚"
    llm_server.add(
        text_stream("- **Milk**\n", "- Eggs, see https://example.com/list 🥚")
    )

    response = await generate(hass, instructions="What do I need for pancakes?")

    assert response["data"] == answer
    request = llm_server.requests[0]
    assert request["messages"][-1] == {
        "role": "user",
        "content": "What do I need for pancakes?",
    }
    assert "You are a Home Assistant expert" in system_prompt(request)
    # The entry's HTTP tools are offered during the task.
    names = [tool["function"]["name"] for tool in request["tools"]]
    assert "get_weather" in names


@pytest.mark.usefixtures("ai_task_ready")
async def test_structured_answer_is_validated_json(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """A structure's JSON schema ends the prompt; the answer (fenced, as
    small models write it) comes back as data coerced by its selectors."""
    llm_server.add(text_stream('```json\n{"city": "Rome", ', '"temperature": 14}\n```'))

    response = await generate(
        hass, instructions="The weather in Rome as data.", structure=STRUCTURE
    )

    assert response["data"] == {"city": "Rome", "temperature": 14.0}
    prompt = system_prompt(llm_server.requests[0])
    assert "answer with only one JSON object that matches this JSON schema" in prompt
    assert '"required": ["city", "temperature"]' in prompt
    assert '"description": "Degrees Celsius"' in prompt
    assert len(llm_server.requests) == 1


@pytest.mark.usefixtures("ai_task_ready")
async def test_a_mismatch_is_asked_again_once(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """An answer that does not match is asked again, saying what did not."""
    llm_server.add(
        text_stream('{"town": "Rome", "temperature": 14}'),
        text_stream('{"city": "Rome", "temperature": 14}'),
    )

    response = await generate(
        hass, instructions="The weather in Rome as data.", structure=STRUCTURE
    )

    assert response["data"] == {"city": "Rome", "temperature": 14.0}
    assert len(llm_server.requests) == 2
    again = llm_server.requests[1]["messages"][-1]
    assert again["role"] == "user"
    assert "does not match the requested structure" in again["content"]
    assert "'town'" in again["content"]
    # The first answer is in the request, before the note.
    assert llm_server.requests[1]["messages"][-2] == {
        "role": "assistant",
        "content": '{"town": "Rome", "temperature": 14}',
    }


@pytest.mark.usefixtures("ai_task_ready")
async def test_a_second_mismatch_is_a_clear_error(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """Asked twice without a match: an error naming the task and the field."""
    llm_server.add(
        text_stream("It is sunny in Rome."),
        text_stream('{"city": "Rome", "temperature": "warm"}'),
    )

    with pytest.raises(HomeAssistantError) as caught:
        await generate(
            hass, instructions="The weather in Rome as data.", structure=STRUCTURE
        )

    message = await async_spoken_error(hass, "en", caught.value)
    assert "Test task" in message
    assert "asked twice" in message
    assert "temperature" in message
    assert len(llm_server.requests) == 2


@pytest.mark.usefixtures("ai_task_ready")
async def test_an_http_tool_runs_during_a_task(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """The task calls the weather tool through the tool loop, then answers
    from its result in the structure asked for."""
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        text_stream('{"city": "Rome", "temperature": 14}'),
    )

    response = await generate(
        hass, instructions="Get the weather in Rome as data.", structure=STRUCTURE
    )

    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]
    assert response["data"] == {"city": "Rome", "temperature": 14.0}
    result = llm_server.requests[1]["messages"][-1]
    assert result["role"] == "tool"
    assert result["content"] == "Rome: ☀️ +14°C"


@pytest.mark.usefixtures("ai_task_ready")
async def test_a_server_error_is_a_clear_error(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """The server's failure is the task's error, in words."""
    # The client retries a 5xx once.
    llm_server.add(*[error(500, "model crashed", type_="server_error")] * 2)

    with pytest.raises(HomeAssistantError) as caught:
        await generate(hass, instructions="Summarise my day.")

    message = await async_spoken_error(hass, "en", caught.value)
    assert message == said("server_error", status="500", message="model crashed")


@pytest.mark.usefixtures("ai_task_ready")
async def test_an_image_goes_with_the_instructions(
    hass: HomeAssistant, llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    """An image attachment is an image part of the task's user message."""
    (tmp_path / "door.png").write_bytes(PNG)
    hass.config.media_dirs["local"] = str(tmp_path)
    llm_server.add(text_stream("A closed door."))

    response = await generate(
        hass,
        instructions="What is in the picture?",
        attachments=[
            {
                "media_content_id": "media-source://media_source/local/door.png",
                "media_content_type": "image/png",
            }
        ],
    )

    assert response["data"] == "A closed door."
    content = llm_server.requests[0]["messages"][-1]["content"]
    assert content[0] == {"type": "text", "text": "What is in the picture?"}
    assert content[1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()},
    }


@pytest.mark.usefixtures("ai_task_ready")
async def test_a_file_that_is_no_image_is_refused_by_name(
    hass: HomeAssistant, llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    """Only images go to the server: another file is an error naming it."""
    (tmp_path / "notes.txt").write_text("milk", encoding="utf-8")
    hass.config.media_dirs["local"] = str(tmp_path)

    with pytest.raises(HomeAssistantError) as caught:
        await generate(
            hass,
            instructions="Read my notes.",
            attachments=[
                {
                    "media_content_id": "media-source://media_source/local/notes.txt",
                    "media_content_type": "text/plain",
                }
            ],
        )

    message = await async_spoken_error(hass, "en", caught.value)
    assert "notes.txt (text/plain) is not an image" in message
    assert llm_server.requests == []


# The AI task form as a user fills it: an agent's settings.
FORM = {
    CONF_MODEL: "local",
    CONF_LLM_HASS_API: [API_ID, "assist"],
    CONF_TEMPERATURE: 0.0,
    CONF_MAX_TOKENS: 512,
    CONF_TOOL_CHOICE: "auto",
    CONF_STREAM: True,
}


async def test_add_an_ai_task_and_use_it(
    hass: HomeAssistant, llm_server: FakeLLMServer, entry_options: dict[str, Any]
) -> None:
    """An AI task is added as core's integrations add one (an `ai_task_data`
    subentry): it starts with core's task instructions and this entry's HTTP
    tools, gets an entity, and can be changed."""
    entry = server_entry(llm_server.base_url, options=entry_options)
    entry.add_to_hass(hass)
    await load_integration(hass)
    assert await async_setup_component(hass, "ai_task", {})

    result = await hass.config_entries.subentries.async_init(
        (entry.entry_id, SUBENTRY_AI_TASK),
        context={"source": config_entries.SOURCE_USER},
    )
    assert result["type"] is FlowResultType.FORM
    assert result["data_schema"] is not None
    schema = result["data_schema"].schema
    prompt = next(k for k in schema if k == CONF_PROMPT)
    assert prompt.description == {"suggested_value": DEFAULT_SYSTEM_PROMPT}
    # Every field the form shows has its label; a task has nobody to ask
    # before Assist unlocks, so that switch is not shown.
    strings = json.loads((COMPONENT / "strings.json").read_text(encoding="utf-8"))
    labels = strings["config_subentries"][SUBENTRY_AI_TASK]["step"]["user"]["data"]
    shown = {str(key) for key in schema if str(key) != "advanced"}
    assert shown <= set(labels), shown - set(labels)
    assert "confirm_intents" not in shown
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        {**FORM, CONF_PROMPT: DEFAULT_SYSTEM_PROMPT},
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "HTTP Tools AI Task"
    (task,) = entry.get_subentries_of_type(SUBENTRY_AI_TASK)
    assert task.data[CONF_LLM_HASS_API] == [API_ID, "assist"]
    assert hass.states.get(AI_TASK_ID) is not None

    # The task offers the HTTP tools and the selected LLM API's (Assist).
    llm_server.add(text_stream("Nothing to report."))
    response = await generate(hass, instructions="Anything new?")
    assert response["data"] == "Nothing to report."
    names = {tool["function"]["name"] for tool in llm_server.requests[0]["tools"]}
    assert "http-tools__get_weather" in names
    assert any(name.startswith("assist__") for name in names)

    result = await entry.start_subentry_reconfigure_flow(hass, task.subentry_id)
    assert result["type"] is FlowResultType.FORM
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        {**FORM, CONF_PROMPT: "Answer in French.", CONF_LLM_HASS_API: [API_ID]},
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert entry.subentries[task.subentry_id].data[CONF_PROMPT] == "Answer in French."


@pytest.mark.usefixtures("ai_task_ready")
async def test_a_call_written_as_text_runs_during_a_task(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """A small model's call written as text (llama-cpp-python's bare JSON)
    runs through the same loop; the answer after it is the task's data."""
    llm_server.add(
        transcript("llama-cpp-python__weather_stream"),
        text_stream("Rome is sunny, 14 degrees."),
    )

    response = await generate(hass, instructions="What's the weather in Rome?")

    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]
    assert response["data"] == "Rome is sunny, 14 degrees."


@pytest.mark.usefixtures("ai_task_ready")
async def test_no_answer_is_an_error_not_data(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """A model that says nothing (asked again without streaming, and closing):
    what the agent would say in its place is the task's error, not its data."""
    llm_server.add(text_stream(""), completion(""))

    with pytest.raises(HomeAssistantError) as caught:
        await generate(hass, instructions="Summarise my day.")

    message = await async_spoken_error(hass, "en", caught.value)
    assert message == said(
        "task_no_answer", task="Test task", said=said("empty_answer")
    )


@pytest.mark.usefixtures("ai_task_ready")
async def test_an_llm_api_passed_by_a_caller_is_offered(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """An integration passing an LLM API (`llm_api=`) gets its tools offered
    beside the HTTP tools; the JSON an answer wraps in words is read."""
    assist = next(api for api in llm.async_get_apis(hass) if api.id == "assist")
    llm_server.add(
        text_stream('Here it is: {"city": "Rome", "temperature": 14} Hope it helps!')
    )

    result = await ai_task.async_generate_data(
        hass,
        task_name="Test task",
        entity_id=AI_TASK_ID,
        instructions="The weather in Rome as data.",
        structure=probatio.Schema(
            {
                probatio.Required("city"): str,
                probatio.Required("temperature"): probatio.Coerce(float),
            }
        ),
        llm_api=assist,
    )

    assert result.data == {"city": "Rome", "temperature": 14.0}
    names = {tool["function"]["name"] for tool in llm_server.requests[0]["tools"]}
    assert "http-tools__get_weather" in names
    assert any(name.startswith("assist__") for name in names)


@pytest.mark.usefixtures("ai_task_ready")
async def test_a_task_never_runs_a_call_that_waits_for_a_yes(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    config_entry: MockConfigEntry,
) -> None:
    """A task has no one to ask: a call of a tool that asks before it acts
    (a DELETE) is refused, and the model reads why."""
    delete = {
        "name": "delete_item",
        "parameters": {
            "type": "object",
            "properties": {"item_id": {"type": "string"}},
        },
        "url": f"{tool_endpoint.url}/api/items/{{item_id}}",
        "method": "DELETE",
    }
    hass.config_entries.async_update_entry(
        config_entry, options={**config_entry.options, "tools": [delete]}
    )
    await hass.async_block_till_done()
    llm_server.add(
        tool_calls_stream(("delete_item", {"item_id": "3"})),
        text_stream("It needs a yes first."),
    )

    response = await generate(hass, instructions="Delete item 3.")

    assert tool_endpoint.requests == []
    assert response["data"] == "It needs a yes first."
    result = llm_server.requests[1]["messages"][-1]
    assert result["role"] == "tool"
    assert "needs the user's confirmation" in result["content"]


async def test_a_new_entry_answers_a_task_at_once(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """The config flow's entry has an AI task, as core's LLM integrations
    give one: `ai_task.generate_data` works without the user adding one, on
    the server's first model with core's task instructions."""
    assert await async_setup_component(hass, "homeassistant", {})
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: llm_server.base_url}
    )
    # The agent's warm-up (on for a local server) is sent and answered first.
    await hass.async_block_till_done(wait_background_tasks=True)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    sent_before = len(llm_server.requests)
    llm_server.add(text_stream("Nothing to report."))

    response = await generate(hass, instructions="Anything new?")

    assert response["data"] == "Nothing to report."
    request = llm_server.requests[sent_before]
    assert system_prompt(request).startswith(DEFAULT_SYSTEM_PROMPT)
    assert request["model"] == "qwen2.5-coder-0.5b"


def stored_entry(
    base_url: str, subentries: list[ConfigSubentryData]
) -> MockConfigEntry:
    """An entry as version 1.2 stored it (before a new entry had an AI task)."""
    return MockConfigEntry(
        domain=DOMAIN,
        title="old",
        unique_id=ENTRY_UNIQUE_ID,
        data={CONF_BASE_URL: base_url},
        version=1,
        minor_version=2,
        subentries_data=subentries,
    )


async def test_an_entry_stored_without_an_ai_task_gets_one(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """1.2 -> 1.3: an entry without an AI task gets the one a new entry has,
    on its first agent's model, and it answers."""
    entry = stored_entry(
        llm_server.base_url,
        [agent_subentry(ENTRY_UNIQUE_ID, "first", {CONF_WARM_UP: "off"})],
    )
    entry.add_to_hass(hass)

    await load_integration(hass)

    assert (entry.version, entry.minor_version) == (1, 4)
    (task,) = entry.get_subentries_of_type(SUBENTRY_AI_TASK)
    assert task.title == "HTTP Tools AI Task"
    assert task.data[CONF_MODEL] == "first"
    assert task.data[CONF_LLM_HASS_API] == [API_ID]
    assert task.data[CONF_PROMPT] == DEFAULT_SYSTEM_PROMPT
    llm_server.add(text_stream("Nothing to report."))
    response = await generate(hass, instructions="Anything new?")
    assert response["data"] == "Nothing to report."


async def test_an_ai_task_the_user_added_is_kept_alone(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """1.2 -> 1.3: an entry that has an AI task gets no second one."""
    entry = stored_entry(
        llm_server.base_url,
        [
            agent_subentry(ENTRY_UNIQUE_ID, "local", {CONF_WARM_UP: "off"}),
            ai_task_subentry(ENTRY_UNIQUE_ID, "mine", {CONF_PROMPT: "Be brief."}),
        ],
    )
    entry.add_to_hass(hass)

    await load_integration(hass)

    assert entry.minor_version == 4
    (task,) = entry.get_subentries_of_type(SUBENTRY_AI_TASK)
    assert task.data[CONF_MODEL] == "mine"
    assert task.data[CONF_PROMPT] == "Be brief."


async def test_a_new_entrys_ai_task_is_named_in_the_house_language(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """The title (and so the AI task's device) is in Home Assistant's
    language; adding one more names its model."""
    await hass.config.async_update(language="it")
    assert await async_setup_component(hass, "homeassistant", {})
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: llm_server.base_url}
    )
    await hass.async_block_till_done()
    entry = result["result"]

    (task,) = entry.get_subentries_of_type(SUBENTRY_AI_TASK)
    assert task.title == "Attività IA di HTTP Tools"

    flow = await hass.config_entries.subentries.async_init(
        (entry.entry_id, SUBENTRY_AI_TASK),
        context={"source": config_entries.SOURCE_USER},
    )
    added = await hass.config_entries.subentries.async_configure(
        flow["flow_id"], {**FORM, CONF_LLM_HASS_API: []}
    )
    await hass.async_block_till_done()
    assert added["title"] == "Attività IA di HTTP Tools (local)"
