"""The demo tool server on loopback: weather, Open-Meteo style
geocode/forecast, an items REST surface and a webhook, recording every
request it receives.

Used by the demo (`scripts/demo`), the end-to-end tests and the P4 benchmark.
Answers are deterministic (derived from the city name) so a test can check
that the model's answer uses the tool's result.

    python -m dev.tool_server [--port 8091]

serves until interrupted and prints every request it receives.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from dataclasses import dataclass, field
import hashlib
import json
from typing import Any

from aiohttp import web

from .demo_sentences import SENTENCES
from .loopback import RecordingServer

CONDITIONS = ("sunny", "cloudy", "light rain", "windy", "foggy", "clear")
CITIES: dict[str, tuple[float, float, str]] = {
    "rome": (41.89, 12.48, "Italy"),
    "paris": (48.85, 2.35, "France"),
    "london": (51.51, -0.13, "United Kingdom"),
    "berlin": (52.52, 13.41, "Germany"),
    "madrid": (40.42, -3.70, "Spain"),
    "tokyo": (35.69, 139.69, "Japan"),
    "milan": (45.46, 9.19, "Italy"),
    "oslo": (59.91, 10.75, "Norway"),
}
SEED_ITEMS: tuple[tuple[str, int], ...] = (("apples", 3), ("bananas", 6), ("milk", 1))


def _number(text: str, modulo: int) -> int:
    return int(hashlib.sha256(text.lower().encode()).hexdigest(), 16) % modulo


def weather_for(city: str) -> tuple[str, int]:
    """Deterministic (condition, °C) for a city."""
    return CONDITIONS[_number(city, len(CONDITIONS))], 5 + _number(city, 25)


def forecast_for(latitude: float, longitude: float) -> dict[str, float | int]:
    """Deterministic current conditions at coordinates."""
    key = f"{latitude:.1f},{longitude:.1f}"
    return {
        "temperature_2m": round(2 + _number(key, 300) / 10, 1),
        "wind_speed_10m": round(_number(key + "w", 400) / 10, 1),
        "weather_code": (0, 1, 2, 3, 45, 61)[_number(key + "c", 6)],
    }


async def _json(request: web.Request) -> Any:
    """The request's JSON body; its text when it is not JSON; None when empty."""
    raw = await request.read()
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


@dataclass
class DemoToolServer(RecordingServer):
    """The services the demo tools call, on 127.0.0.1."""

    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    hooks: list[Any] = field(default_factory=list)
    _next_id: int = 1

    def __post_init__(self) -> None:
        """Seed the items."""
        self.reset()

    def reset(self) -> None:
        """Forget requests; put the seed items back."""
        self.requests.clear()
        self.hooks.clear()
        self.items.clear()
        self._next_id = 1
        for name, qty in SEED_ITEMS:
            self._add(name, qty)

    def add(self, name: str, qty: int | None) -> dict[str, Any]:
        """Put an item on the list (as `POST /api/items` does)."""
        return self._add(name, qty)

    def _add(self, name: str, qty: int | None) -> dict[str, Any]:
        item: dict[str, Any] = {"id": str(self._next_id), "name": name, "qty": qty or 1}
        self.items[item["id"]] = item
        self._next_id += 1
        return item

    async def _weather(self, request: web.Request) -> web.Response:
        city = request.match_info["city"]
        condition, temp = weather_for(city)
        return web.Response(text=f"{city}: {condition}, {temp}°C")

    async def _geocode(self, request: web.Request) -> web.Response:
        name = request.query.get("name", "").strip()
        if not name:
            return web.json_response({"error": "name is required"}, status=400)
        lat, lon, country = CITIES.get(
            name.lower(),
            (_number(name, 1600) / 20 - 40, _number(name + "x", 3400) / 20 - 85, ""),
        )
        return web.json_response(
            {
                "results": [
                    {
                        "name": name.title(),
                        "latitude": lat,
                        "longitude": lon,
                        "country": country,
                    }
                ]
            }
        )

    async def _forecast(self, request: web.Request) -> web.Response:
        try:
            lat = float(request.query["latitude"])
            lon = float(request.query["longitude"])
        except KeyError, ValueError:
            return web.json_response(
                {"error": "latitude and longitude are required numbers"}, status=400
            )
        return web.json_response(
            {"latitude": lat, "longitude": lon, "current": forecast_for(lat, lon)}
        )

    async def _list_items(self, request: web.Request) -> web.Response:
        items = list(self.items.values())
        if search := request.query.get("search", "").lower():
            items = [i for i in items if search in i["name"].lower()]
        if (limit := request.query.get("limit", "")).isdigit():
            items = items[: int(limit)]
        return web.json_response(items)

    async def _create_item(self, request: web.Request) -> web.Response:
        body = await _json(request)
        if not isinstance(body, dict) or not body.get("name"):
            return web.json_response({"error": "name is required"}, status=400)
        qty = body.get("qty")
        item = self._add(str(body["name"]), int(qty) if qty else None)
        return web.json_response(item, status=201)

    async def _item(self, request: web.Request) -> web.StreamResponse:
        item_id = request.match_info["id"]
        item = self.items.get(item_id)
        if item is None:
            return web.json_response({"error": f"no item {item_id}"}, status=404)
        if request.method == "DELETE":
            del self.items[item_id]
            return web.json_response({"deleted": item_id})
        body = await _json(request)
        body = body if isinstance(body, dict) else {}
        if request.method == "PATCH":
            item.update({k: v for k, v in body.items() if k in {"name", "qty"}})
        elif request.method == "PUT":
            item.clear()
            item.update({"id": item_id, "name": body.get("name", ""), **body})
        return web.json_response(item)

    async def _hook(self, request: web.Request) -> web.Response:
        body = await _json(request)
        self.hooks.append(body)
        return web.json_response({"ok": True, "received": body})

    def routes(self, app: web.Application) -> None:
        """The demo services."""
        app.router.add_get("/weather/{city}", self._weather)
        app.router.add_get("/geocode", self._geocode)
        app.router.add_get("/forecast", self._forecast)
        app.router.add_get("/api/items", self._list_items)
        app.router.add_post("/api/items", self._create_item)
        for method in ("GET", "PATCH", "PUT", "DELETE"):
            app.router.add_route(method, "/api/items/{id}", self._item)
        app.router.add_post("/hook", self._hook)

    def tools(
        self, names: list[str] | None = None, *, sentences: bool = True
    ) -> list[dict[str, Any]]:
        """Tool definitions (the tools file format) that call this server;
        without their own sentences when `sentences` is off (the agent
        answers those itself, before any model: what measures the model
        leaves them out)."""
        defs = tool_definitions(self.url)
        if not sentences:
            defs = [{k: v for k, v in d.items() if k != "sentences"} for d in defs]
        if names is None:
            return defs
        by_name = {d["name"]: d for d in defs}
        return [by_name[n] for n in names]


# Weather, the items REST surface and the webhook: few tools keep a 0.5B
# model on track (the geocode/forecast pair is served too, for other setups).
# The demo offers these, and the benchmark measures with them.
DEMO_TOOLS = (
    "get_weather",
    "list_items",
    "add_item",
    "update_item",
    "delete_item",
    "send_webhook",
)
# What the demo's entry holds: the tools above, and one only its sentences
# run ("Remove the bread.": the item found by its name, then deleted, after
# the user's yes), so the model's six tools stay as they are.
DEMO_ENTRY_TOOLS = (*DEMO_TOOLS, "remove_item")


def _obj(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


def tool_definitions(base: str) -> list[dict[str, Any]]:
    """The demo tools, pointed at `base`, with their sentences
    (`demo_sentences.py`)."""
    return [
        {**tool, "sentences": SENTENCES[tool["name"]]}
        if tool["name"] in SENTENCES
        else tool
        for tool in _tools(base)
    ]


def _tools(base: str) -> list[dict[str, Any]]:
    string, integer = {"type": "string"}, {"type": "integer"}
    item_id = {"type": "string", "description": "The item's id"}
    return [
        {
            "name": "get_weather",
            "description": "Current weather and temperature for a city.",
            "parameters": _obj(
                {"city": {"type": "string", "description": "City name"}}, ["city"]
            ),
            "url": f"{base}/weather/{{city}}",
            "method": "GET",
        },
        {
            "name": "geocode_city",
            "description": "Find the latitude and longitude of a city by name. "
            "Call it first, then pass them to get_forecast.",
            "parameters": _obj(
                {"name": {"type": "string", "description": "City name"}}, ["name"]
            ),
            "url": f"{base}/geocode",
            "method": "GET",
        },
        {
            "name": "get_forecast",
            "description": "Current temperature (°C) and wind at coordinates "
            "returned by geocode_city.",
            "parameters": _obj(
                {"latitude": {"type": "number"}, "longitude": {"type": "number"}},
                ["latitude", "longitude"],
            ),
            "url": f"{base}/forecast",
            "method": "GET",
        },
        {
            "name": "list_items",
            "description": "List the items on the shopping list, optionally "
            "filtered by name.",
            "parameters": _obj(
                {"search": {**string, "description": "Text the name contains"}}, []
            ),
            "url": f"{base}/api/items",
            "method": "GET",
        },
        {
            "name": "get_item",
            "description": "One item of the shopping list by its id.",
            "parameters": _obj({"id": item_id}, ["id"]),
            "url": f"{base}/api/items/{{id}}",
            "method": "GET",
        },
        {
            "name": "add_item",
            "description": "Add an item to the shopping list.",
            "parameters": _obj(
                {"name": {**string, "description": "Item name"}, "qty": integer},
                ["name"],
            ),
            "url": f"{base}/api/items",
            "method": "POST",
        },
        {
            "name": "update_item",
            "description": "Change the quantity of an item by its id.",
            "parameters": _obj({"id": item_id, "qty": integer}, ["id", "qty"]),
            "url": f"{base}/api/items/{{id}}",
            "method": "PATCH",
        },
        {
            "name": "delete_item",
            "description": "Delete an item by its id.",
            "parameters": _obj({"id": item_id}, ["id"]),
            "url": f"{base}/api/items/{{id}}",
            "method": "DELETE",
        },
        {
            "name": "send_webhook",
            "description": "Send a notification message through the webhook.",
            "parameters": _obj(
                {"message": {**string, "description": "Notification text"}},
                ["message"],
            ),
            "url": f"{base}/hook",
            "method": "POST",
        },
        {
            "name": "remove_item",
            "description": "Remove an item from the shopping list by its name.",
            "parameters": _obj(
                {"name": {**string, "description": "Item name"}}, ["name"]
            ),
            "steps": [
                {
                    "name": "find",
                    "method": "GET",
                    "url": f"{base}/api/items?search={{name}}",
                },
                {
                    "name": "remove",
                    "method": "DELETE",
                    "url": f"{base}/api/items/{{find[0].id}}",
                },
            ],
            # What was removed, by its name ("Done: bread.").
            "response": {"fields": {"name": "find[0].name"}},
            "confirm_question": "Should I remove {name} from the demo shopping list?",
        },
    ]


async def serve(port: int) -> None:
    """Serve until interrupted, printing each request."""
    server = DemoToolServer(port=port)
    await server.start()
    print(f"tool_server: serving on {server.url}", flush=True)
    seen = 0
    try:
        while True:
            await asyncio.sleep(0.2)
            for request in server.requests[seen:]:
                body = request.body.decode("utf-8", "replace")
                print(f"tool_server: {request.target} {body}".rstrip(), flush=True)
            seen = len(server.requests)
    finally:
        await server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8091)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(parser.parse_args().port))
