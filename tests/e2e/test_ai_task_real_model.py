"""The AI Task entity with the real model (Qwen2.5-Coder-0.5B on
llama-cpp-python, temperature 0) and the demo tool server: a structured
task that needs a tool, through Home Assistant's `ai_task.generate_data`."""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest

from custom_components.http_tools_agent.const import (
    CONF_STREAM,
    CONF_TEMPERATURE,
    CONF_TOOLS,
)
from dev.tool_server import DemoToolServer, weather_for
from tests.kit import AI_TASK_ID, load_integration, server_entry

from .harness import QWEN_ALIAS, ModelServer

pytestmark = pytest.mark.e2e


async def test_a_structured_task_that_needs_a_tool(
    hass: HomeAssistant, model_server: ModelServer, tool_server: DemoToolServer
) -> None:
    """The model calls the weather tool during the task; the data comes back
    as the structure asks, with the temperature the tool returned."""
    entry = server_entry(
        model_server.url,
        options={CONF_TOOLS: tool_server.tools(["get_weather"])},
        model=QWEN_ALIAS,
        with_agent=False,
        ai_task={CONF_STREAM: True, CONF_TEMPERATURE: 0.0},
    )
    entry.add_to_hass(hass)
    await load_integration(hass)
    assert await async_setup_component(hass, "ai_task", {})

    response: Any = await hass.services.async_call(
        "ai_task",
        "generate_data",
        {
            "task_name": "Rome weather",
            "entity_id": AI_TASK_ID,
            "instructions": "What is the weather in Rome now?",
            "structure": {
                "city": {"selector": {"text": {}}, "required": True},
                "temperature": {
                    "description": "Degrees Celsius",
                    "selector": {"number": {}},
                    "required": True,
                },
            },
        },
        blocking=True,
        return_response=True,
    )

    weather = [r.path for r in tool_server.requests if r.path.startswith("/weather/")]
    assert weather == ["/weather/Rome"], (tool_server.requests, response)
    data = response["data"]
    _, temperature = weather_for("Rome")
    assert data == {"city": "Rome", "temperature": float(temperature)}, data
