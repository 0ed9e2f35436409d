"""What the user hears when a model runs an HTTP tool with no sentence of
its own and then says nothing (the 0.5B model often does): the result as
an answer in the user's language, "Berlin: clear, temperature 16 °C,
humidity 80 %.", never its keys ("city Berlin, temperature c 16")."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from homeassistant.core import HomeAssistant
import pytest

from dev.loopback import LoopbackServer

from .kit import call_service, converse, speech
from .servers import FakeLLMServer, completion, text_stream, tool_calls_stream

# Asked for the answer, then to close: no words, streamed or not.
SILENCE = (text_stream(""), completion(""), text_stream(""), completion(""))


class _Service(LoopbackServer):
    """A weather service and a shopping list that answer with JSON."""

    def routes(self, app: web.Application) -> None:
        """`/weather`: Berlin now; `/items`: the list."""

        async def weather(_request: web.Request) -> web.Response:
            return web.json_response(
                {
                    "city": "Berlin",
                    "temperature_c": 16.5,
                    "condition": "clear",
                    "humidity_pct": 80,
                    "raining": False,
                }
            )

        async def items(_request: web.Request) -> web.Response:
            return web.json_response(
                [
                    {"id": 1, "name": "apples", "quantity": 3},
                    {"id": 2, "name": "bananas", "quantity": 6},
                    {"id": 3, "name": "milk", "quantity": 1},
                ]
            )

        async def episodes(request: web.Request) -> web.Response:
            # Four pages of two, as Sonarr's `page` parameter pages a list.
            page = int(request.query.get("page", "1"))
            numbers = (2 * page - 1, 2 * page) if page <= 4 else ()
            return web.json_response(
                {"page": page, "records": [{"title": f"Ep {n}"} for n in numbers]}
            )

        app.router.add_get("/weather", weather)
        app.router.add_get("/items", items)
        app.router.add_get("/episodes", episodes)


def tools(base: str) -> list[dict[str, Any]]:
    city = {"type": "object", "properties": {"city": {"type": "string"}}}
    return [
        {
            "name": "get_weather",
            "description": "The weather in a city now.",
            "parameters": city,
            "url": f"{base}/weather",
            "method": "GET",
        },
        {
            "name": "list_items",
            "description": "The shopping list.",
            "url": f"{base}/items",
            "method": "GET",
        },
        {
            "name": "missing_episodes",
            "description": "Episodes not downloaded yet.",
            "url": f"{base}/episodes?page=1",
            "method": "GET",
            "pages": {"page": "page", "max_pages": 2},
            "response": {"path": "records"},
        },
    ]


@pytest.mark.parametrize(
    ("language", "request_text", "call", "spoken"),
    [
        (
            "en",
            "Is it raining in Berlin?",
            ("get_weather", {"city": "Berlin"}),
            "Berlin: clear, temperature 16.5 °C, humidity 80 %, raining: no.",
        ),
        (
            "it",
            "Piove a Berlin?",
            ("get_weather", {"city": "Berlin"}),
            "Berlin: clear, temperatura 16,5 °C, umidità 80 %, raining: no.",
        ),
        (
            "en",
            "What's on my shopping list?",
            ("list_items", {}),
            "3 items: apples (3), bananas (6) and milk (1).",
        ),
        (
            "it",
            "Cosa c'è nella lista della spesa?",
            ("list_items", {}),
            "3 elementi: apples (3), bananas (6) e milk (1).",
        ),
        # A list over more pages than the tool reads says so.
        (
            "en",
            "Which episodes am I missing?",
            ("missing_episodes", {}),
            "4 items (first 2 pages, there are more): Ep 1, Ep 2, Ep 3 and Ep 4.",
        ),
    ],
)
@pytest.mark.usefixtures("setup_integration", "socket_enabled")
async def test_a_result_is_read_as_an_answer(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    language: str,
    request_text: str,
    call: tuple[str, dict[str, Any]],
    spoken: str,
) -> None:
    """The model ran the tool and said nothing: the agent reads the result,
    with units, "and" and yes or no in the user's language."""
    async with _Service() as service:
        await call_service(hass, "set_tools", {"tools": tools(service.url)})
        llm_server.add(tool_calls_stream(call), *SILENCE)

        result = await converse(hass, request_text, language=language)

    assert speech(result) == spoken
