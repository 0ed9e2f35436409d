"""A tool's own sentence (`speech`): with the small profile a round whose
calls all succeeded, each of a tool that has one, is answered with it and
no other request is sent; a capable model answers itself and the sentence
is only the read-out when it leaves the results unsaid; and a tool's own
`read_only` decides, not its verb, whether a call is a change (the honesty
rules, failed actions, read-outs, the annotations Home Assistant reads)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm
import pytest

from custom_components.http_tools_agent.const import CONF_PROFILE
from dev.loopback import LoopbackServer

from .kit import API_ID, call_service, converse, llm_context, speech, weather_tool
from .said import failed
from .servers import (
    FakeLLMServer,
    Reply,
    ToolEndpoint,
    completion,
    text_stream,
    tool_calls_stream,
)

ROME = "What's the weather in Rome?"


def spoken_weather(base: str) -> dict[str, Any]:
    """The weather tool with its own sentence over its text result."""
    return {**weather_tool(base), "speech": "Now in {.}."}


def one_text_tool(
    name: str, description: str, field: str, url: str, method: str, **extra: Any
) -> dict[str, Any]:
    """A tool of one required text parameter, `field`."""
    return {
        "name": name,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": {field: {"type": "string"}},
            "required": [field],
        },
        "url": url,
        "method": method,
        **extra,
    }


def notify(base: str, **extra: Any) -> dict[str, Any]:
    """ntfy's publish-by-GET: an action sent as a GET."""
    return one_text_tool(
        "notify",
        "Send a notification to the phone.",
        "message",
        f"{base}/fail?message={{message}}",
        "GET",
        **extra,
    )


def search(base: str, **extra: Any) -> dict[str, Any]:
    """Immich's metadata search: a read sent as a POST."""
    return one_text_tool(
        "photo_search",
        "Find photos taken in a city.",
        "city",
        f"{base}/api/search/metadata",
        "POST",
        **extra,
    )


async def ask(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tools: list[dict[str, Any]],
    question: str,
    *replies: Reply,
) -> str:
    """Offer `tools` (the `set_tools` service), script the model's
    `replies`, ask `question`: what the agent said."""
    await call_service(hass, "set_tools", {"tools": tools})
    llm_server.add(*replies)
    return speech(await converse(hass, question))


AskRome = Callable[..., Awaitable[str]]


@pytest.fixture
def ask_rome(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> AskRome:
    """Asks for Rome's weather with the spoken weather tool offered: the
    model calls it, then sends the `replies` given; what the agent said."""

    async def asked(*replies: Reply) -> str:
        return await ask(
            hass,
            llm_server,
            [spoken_weather(tool_endpoint.url)],
            ROME,
            tool_calls_stream(("get_weather", {"city": "Rome"})),
            *replies,
        )

    return asked


@pytest.mark.parametrize("agent_options", [{CONF_PROFILE: "small"}])
@pytest.mark.usefixtures("setup_integration")
async def test_small_profile_answers_with_the_tools_sentence(
    llm_server: FakeLLMServer, ask_rome: AskRome
) -> None:
    """One request to the model, not two: the tool said it."""
    said = await ask_rome()

    # The weather service's emoji is never spoken (`turn/spoken_text.py`).
    assert said == "Now in Rome: +14°C."
    assert len(llm_server.requests) == 1


@pytest.mark.parametrize("agent_options", [{CONF_PROFILE: "small"}])
@pytest.mark.usefixtures("setup_integration")
async def test_a_tool_without_a_sentence_still_asks_for_the_answer(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """A round with a call of a tool that has no sentence: the model answers."""
    tools = [
        spoken_weather(tool_endpoint.url),
        {**weather_tool(tool_endpoint.url), "name": "plain"},
    ]
    said = await ask(
        hass,
        llm_server,
        tools,
        "Weather in Rome and Oslo?",
        tool_calls_stream(
            ("get_weather", {"city": "Rome"}), ("plain", {"city": "Oslo"})
        ),
        text_stream("Rome is sunny, Oslo too."),
    )

    assert said == "Rome is sunny, Oslo too."
    assert len(llm_server.requests) == 2


@pytest.mark.parametrize("agent_options", [{CONF_PROFILE: "capable"}])
@pytest.mark.usefixtures("setup_integration")
async def test_a_capable_model_answers_itself(ask_rome: AskRome) -> None:
    """The sentence never replaces a capable model's answer ..."""
    said = await ask_rome(text_stream("It's sunny in Rome, 14 degrees."))

    assert said == "It's sunny in Rome, 14 degrees."


@pytest.mark.parametrize("agent_options", [{CONF_PROFILE: "capable"}])
@pytest.mark.usefixtures("setup_integration")
async def test_the_sentence_is_the_read_out_when_the_model_is_silent(
    ask_rome: AskRome,
) -> None:
    """... it is what the agent reads out when the model says nothing."""
    said = await ask_rome(
        text_stream(""), completion(""), text_stream(""), completion("")
    )

    # The weather service's emoji is never spoken (`turn/spoken_text.py`).
    assert said == "Now in Rome: +14°C."


@pytest.mark.parametrize("agent_options", [{CONF_PROFILE: "small"}])
@pytest.mark.usefixtures("setup_integration")
async def test_an_action_sent_as_get_that_failed_is_said_as_failed(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """`read_only: false` on a GET: the failed send is said as failed, even
    when the model claims it went out."""
    said = await ask(
        hass,
        llm_server,
        [notify(tool_endpoint.url, read_only=False)],
        "Send a notification that dinner is ready.",
        tool_calls_stream(("notify", {"message": "Dinner is ready"})),
        tool_calls_stream(("notify", {"message": "Dinner is ready"})),
        text_stream("I sent the notification."),
        text_stream("I sent the notification."),
    )

    assert said == failed("reason_http_status", status="500")
    assert "sent the notification" not in said


@pytest.mark.usefixtures("setup_integration")
async def test_annotations_follow_the_tools_read_only(
    hass: HomeAssistant, tool_endpoint: ToolEndpoint
) -> None:
    """What Home Assistant reads of each tool: a GET that acts is no read;
    a POST that searches is one; the verb decides only what is not said."""
    search = {
        "name": "search",
        "url": f"{tool_endpoint.url}/search",
        "method": "POST",
        "read_only": True,
    }
    put = {"name": "put", "url": f"{tool_endpoint.url}/x", "method": "PUT"}
    tools = [notify(tool_endpoint.url, read_only=False), search, put]
    await call_service(hass, "set_tools", {"tools": tools})

    instance = await llm.async_get_api(hass, API_ID, llm_context())
    found = {tool.name: tool.annotations for tool in instance.tools}

    assert (found["notify"].read_only, found["notify"].idempotent) == (False, False)
    assert (found["search"].read_only, found["search"].destructive) == (True, False)
    assert (found["put"].read_only, found["put"].destructive) == (False, True)
    assert found["put"].idempotent


@pytest.mark.parametrize("agent_options", [{CONF_PROFILE: "small"}])
@pytest.mark.parametrize(
    ("read_only", "runs"), [(None, False), (True, True)], ids=["by verb", "declared"]
)
@pytest.mark.usefixtures("setup_integration")
async def test_a_read_sent_as_post_is_a_read(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    read_only: bool | None,
    runs: bool,
) -> None:
    """By its verb a POST is a change nobody asked for in a question, and
    the small profile does not run it; declared `read_only` it is a read,
    and it runs."""
    extra = {} if read_only is None else {"read_only": read_only}
    await ask(
        hass,
        llm_server,
        [search(tool_endpoint.url, **extra)],
        "Which pictures do I have from Rome?",
        tool_calls_stream(("photo_search", {"city": "Rome"})),
        text_stream("You have photos from Rome."),
        text_stream("You have photos from Rome."),
        completion("You have photos from Rome."),
    )

    ran = [r for r in tool_endpoint.requests if r.path == "/api/search/metadata"]
    assert bool(ran) is runs


class _Clock(LoopbackServer):
    """A service that answers with an epoch time."""

    def routes(self, app: web.Application) -> None:
        """`/sun`: today's sunset, in epoch seconds."""

        async def sun(_request: web.Request) -> web.Response:
            return web.json_response({"sunset": 1764780000, "extra": "x" * 50})

        app.router.add_get("/sun", sun)


@pytest.mark.usefixtures("setup_integration", "socket_enabled")
async def test_times_are_said_in_the_houses_time_zone(hass: HomeAssistant) -> None:
    """A shape's epoch time without a `timezone` is said in Home Assistant's."""
    await hass.config.async_update(time_zone="Europe/Rome")
    async with _Clock() as clock:
        tool = {
            "name": "sunset",
            "url": f"{clock.url}/sun",
            "method": "GET",
            "response": {
                "fields": ["sunset"],
                "times": {"sunset": {"unit": "s", "show": "time"}},
            },
        }
        await call_service(hass, "set_tools", {"tools": [tool]})
        instance = await llm.async_get_api(hass, API_ID, llm_context())

        result = await instance.async_call_tool(
            llm.ToolInput(tool_name="sunset", tool_args={})
        )

    assert result.data == {"result": '{"sunset":"17:40"}'}
