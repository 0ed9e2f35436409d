"""Real HTTP servers on 127.0.0.1 that stand in for an OpenAI-compatible LLM
server and for the HTTP endpoints that tools call.

The LLM server replays bodies byte for byte (captured from real servers in
fixtures/transcripts, or built in the documented vLLM/OpenAI SSE format), so
the real `openai` client parses exactly what it would parse in production.
A reply can also be paced (a pause between SSE events, as a model writes) or
held before an event until something happened elsewhere.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
import contextlib
from dataclasses import dataclass, field
import json
from pathlib import Path
import re
from typing import Any

from aiohttp import web

from dev.loopback import LoopbackServer, RecordingServer

TRANSCRIPTS = Path(__file__).parent / "fixtures" / "transcripts"
# Real servers' answers to the server checks and to over-long requests.
SERVER_CHECKS = Path(__file__).parent / "fixtures" / "server_checks"
# Answers of servers that cannot run here, written from their documentation.
DOCUMENTED = Path(__file__).parent / "fixtures" / "documented"
# What the demo's model wrote (dev/demo_trial.py --captures).
DEMO = Path(__file__).parent / "fixtures" / "demo"
# Answers of a real model asked for markdown, emoji and links.
MARKDOWN = Path(__file__).parent / "fixtures" / "markdown"

# Qwen3-Coder's native call after a thinking block, streamed in pieces that
# split the tags (what a Qwen3 model with thinking on sends).
QWEN_THOUGHT = "The user wants the weather"
QWEN_THINK_AND_CALL = (
    "<thi",
    f"nk>{QWEN_THOUGHT}. I will call get_weather.</th",
    "ink>\n\n<tool",
    "_call>\n<function=get_wea",
    "ther>\n<parameter=city>\nRome\n</param",
    "eter>\n</function>\n</tool_call>",
)


@dataclass
class Reply:
    """One scripted answer of the LLM server."""

    status: int = 200
    content_type: str = "application/json"
    body: bytes = b""
    # Cut the connection after this many body bytes (a stream dying mid-way).
    cut_after: int | None = None
    # Seconds to wait before answering.
    delay: float = 0.0
    # Seconds between two SSE events (a model writing token by token).
    chunk_delay: float = 0.0
    # Stop writing before SSE event number `hold_before` until `hold_until()`
    # returns (or `hold_timeout` passes, which the server marks).
    hold_before: int | None = None
    hold_until: Callable[[], Awaitable[object]] | None = None
    hold_timeout: float = 20.0


def transcript(name: str) -> Reply:
    """Replay a captured real-server response exactly as it was received."""
    data = json.loads((TRANSCRIPTS / f"{name}.json").read_text(encoding="utf-8"))
    return Reply(
        status=data["status"],
        content_type=data["content_type"],
        body=data["body"].encode("utf-8"),
    )


def _reply_from(path: Path) -> Reply:
    data = json.loads(path.read_text(encoding="utf-8"))
    return Reply(
        status=data["status"],
        content_type=data["content_type"],
        body=data["body"].encode("utf-8"),
    )


def demo_capture(name: str) -> Reply:
    """Replay an answer of the demo's model (`tests/fixtures/demo/`)."""
    return _reply_from(DEMO / f"{name}.json")


def markdown_capture(name: str) -> Reply:
    """Replay a real model's answer in markdown (`tests/fixtures/markdown/`)."""
    return _reply_from(MARKDOWN / f"{name}.json")


def markdown_text(name: str) -> str:
    """The words of that answer, as the model wrote them."""
    data = json.loads((MARKDOWN / f"{name}.json").read_text(encoding="utf-8"))
    content: str = json.loads(data["body"])["choices"][0]["message"]["content"]
    return content


def server_check(name: str) -> Reply:
    """A real server's answer to a server check or an over-long request,
    replayed exactly (`fixtures/server_checks`)."""
    return _reply_from(SERVER_CHECKS / f"{name}.json")


def documented(name: str) -> Reply:
    """An answer written from a server's documentation (`fixtures/documented`)."""
    return _reply_from(DOCUMENTED / f"{name}.json")


def transcript_request(name: str) -> dict[str, Any]:
    """Return the request a transcript was captured with."""
    data = json.loads((TRANSCRIPTS / f"{name}.json").read_text(encoding="utf-8"))
    request: dict[str, Any] = data["request"]
    return request


def sse(chunks: list[dict[str, Any]], *, done: bool = True) -> Reply:
    """Build an SSE stream the way vLLM and OpenAI send it."""
    lines = [f"data: {json.dumps(c, separators=(',', ':'))}\n\n" for c in chunks]
    if done:
        lines.append("data: [DONE]\n\n")
    return Reply(
        content_type="text/event-stream; charset=utf-8",
        body="".join(lines).encode(),
    )


def chunk(
    delta: dict[str, Any], finish_reason: str | None = None, *, model: str = "m"
) -> dict[str, Any]:
    """One `chat.completion.chunk` object."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1796014011,
        "model": model,
        "choices": [
            {
                "index": 0,
                "delta": delta,
                "logprobs": None,
                "finish_reason": finish_reason,
            }
        ],
    }


def text_stream(
    *pieces: str,
    chunk_delay: float = 0.0,
    hold_before_piece: int | None = None,
    hold_until: Callable[[], Awaitable[object]] | None = None,
) -> Reply:
    """A streamed plain-text answer, one delta per piece; optionally paced
    (`chunk_delay` seconds between events) and held before piece number N
    until `hold_until()` returns."""
    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": p}) for p in pieces]
    chunks.append(chunk({}, "stop"))
    reply = sse(chunks)
    reply.chunk_delay = chunk_delay
    # Event 0 is the role delta: piece N is event N + 1.
    if hold_before_piece is not None:
        reply.hold_before, reply.hold_until = hold_before_piece + 1, hold_until
    return reply


def tool_calls_stream(
    *calls: tuple[str, dict[str, Any]], split: int = 7, ids: Sequence[str] = ()
) -> Reply:
    """Structured streamed tool calls as vLLM/OpenAI send them.

    Each call's arguments arrive in pieces of `split` characters after a
    first delta that carries the id (`ids`, else `call_<index>_<name>`) and
    name.
    """
    chunks = [chunk({"role": "assistant", "content": None})]
    for index, (name, args) in enumerate(calls):
        arguments = json.dumps(args)
        chunks.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": ids[index] if ids else f"call_{index}_{name}",
                            "type": "function",
                            "function": {"name": name, "arguments": ""},
                        }
                    ]
                }
            )
        )
        for start in range(0, len(arguments), split):
            chunks.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": index,
                                "function": {
                                    "arguments": arguments[start : start + split]
                                },
                            }
                        ]
                    }
                )
            )
    chunks.append(chunk({}, "tool_calls"))
    return sse(chunks)


def completion(
    content: str | None,
    tool_calls: list[tuple[str, dict[str, Any]]] | None = None,
    finish_reason: str = "stop",
) -> Reply:
    """A non-streamed `chat.completion`."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for i, (name, args) in enumerate(tool_calls)
        ]
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1796014011,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }
    return Reply(body=json.dumps(body).encode())


def error(status: int, message: str, *, type_: str = "invalid_request_error") -> Reply:
    """An OpenAI-style error body."""
    body = {"error": {"message": message, "type": type_, "code": status}}
    return Reply(status=status, body=json.dumps(body).encode())


@dataclass
class FakeLLMServer(LoopbackServer):
    """An OpenAI-compatible server on 127.0.0.1 answering from a script.

    `mark` is told what the server does (`hold`, `release`, `hold-timeout`,
    `sent` with each event, `done`): a subclass can put it on a timeline.
    """

    models: list[str] = field(default_factory=lambda: ["qwen2.5-coder-0.5b", "local"])
    api_key: str | None = None
    replies: deque[Reply] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    models_status: int = 200
    models_body: bytes | None = None
    # A model list as a real server sent it (captured or documented).
    models_reply: Reply | None = None
    # How many times `GET /v1/models` was asked (server checks).
    model_list_requests: int = 0
    # Seconds before the model list is answered (llama-cpp-python answers
    # it after the generation under way).
    models_delay: float = 0.0
    # Answers of other paths, by "METHOD /path" (or "POST /api/show <model>"
    # for a request naming a model), e.g. a captured llama.cpp `/props`; any
    # other path answers 404, as most servers do. Each request is recorded.
    pages: dict[str, Reply] = field(default_factory=dict)
    page_requests: list[str] = field(default_factory=list)
    # As llama-cpp-python's server (its default `interrupt_requests`): one
    # chat request at a time, and a streamed answer ends (`[DONE]`, then
    # the connection drops) as soon as another request waits.
    interrupt_requests: bool = False
    interrupted: int = 0
    _busy: asyncio.Lock | None = field(default=None, repr=False)
    _waiting: int = 0

    @property
    def base_url(self) -> str:
        """Return the `/v1` base URL."""
        return f"{self.url}/v1"

    def add(self, *replies: Reply) -> None:
        """Queue replies for the next chat-completion requests."""
        self.replies.extend(replies)

    def mark(self, kind: str, text: str = "") -> None:
        """What the server did (nothing is kept here)."""

    def _authorized(self, request: web.Request) -> bool:
        if self.api_key is None:
            return True
        return request.headers.get("Authorization") == f"Bearer {self.api_key}"

    async def _models(self, request: web.Request) -> web.StreamResponse:
        self.model_list_requests += 1
        if self.models_delay:
            await asyncio.sleep(self.models_delay)
        if not self._authorized(request):
            return web.json_response(
                {"error": {"message": "Invalid API key", "type": "auth"}}, status=401
            )
        if self.models_reply is not None:
            return web.Response(
                status=self.models_reply.status,
                body=self.models_reply.body,
                headers={"Content-Type": self.models_reply.content_type},
            )
        if self.models_body is not None:
            return web.Response(
                status=self.models_status,
                body=self.models_body,
                content_type="text/html",
            )
        return web.json_response(
            {
                "object": "list",
                "data": [
                    {"id": m, "object": "model", "owned_by": "me"} for m in self.models
                ],
            },
            status=self.models_status,
        )

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        if not self.interrupt_requests:
            return await self._answer(request, body)
        if self._busy is None:
            self._busy = asyncio.Lock()
        self._waiting += 1
        async with self._busy:
            self._waiting -= 1
            return await self._answer(request, body)

    async def _answer(
        self, request: web.Request, body: dict[str, Any]
    ) -> web.StreamResponse:
        if not self._authorized(request):
            return web.json_response(
                {"error": {"message": "Invalid API key", "type": "auth"}}, status=401
            )
        if not self.replies:
            return web.json_response(
                {"error": {"message": "no scripted reply left"}}, status=500
            )
        reply = self.replies.popleft()
        if reply.delay:
            await asyncio.sleep(reply.delay)
        response = web.StreamResponse(
            status=reply.status, headers={"Content-Type": reply.content_type}
        )
        await response.prepare(request)
        payload = (
            reply.body if reply.cut_after is None else reply.body[: reply.cut_after]
        )
        # Write event by event, as a real server flushes each SSE event.
        events = re.findall(rb".*?\n\n|.+$", payload, re.S)
        for index, part in enumerate(events):
            if index == reply.hold_before:
                await self._hold(reply)
            if self.interrupt_requests and self._waiting and body.get("stream"):
                self.interrupted += 1
                self.mark("interrupted")
                await response.write(b"data: [DONE]\n\n")
                assert request.transport is not None
                request.transport.close()
                return response
            await response.write(part)
            self.mark("sent", part.decode(errors="replace"))
            if reply.chunk_delay and index < len(events) - 1:
                await asyncio.sleep(reply.chunk_delay)
        self.mark("done")
        if reply.cut_after is not None:
            # Drop the connection without finishing the chunked body.
            assert request.transport is not None
            request.transport.close()
            return response
        # The client may hang up as soon as it has read `[DONE]`.
        with contextlib.suppress(ConnectionResetError):
            await response.write_eof()
        return response

    async def _hold(self, reply: Reply) -> None:
        assert reply.hold_until is not None
        self.mark("hold")
        try:
            await asyncio.wait_for(reply.hold_until(), reply.hold_timeout)
        except TimeoutError:
            self.mark("hold-timeout")
        else:
            self.mark("release")

    async def _page(self, request: web.Request) -> web.StreamResponse:
        key = f"{request.method} {request.path}"
        body = await request.json() if request.can_read_body else None
        model = body.get("model") if isinstance(body, dict) else None
        self.page_requests.append(f"{key} {model}" if model else key)
        reply = self.pages.get(f"{key} {model}") or self.pages.get(key)
        if reply is None:
            return web.json_response({"detail": "Not Found"}, status=404)
        return web.Response(
            status=reply.status,
            body=reply.body,
            headers={"Content-Type": reply.content_type},
        )

    def routes(self, app: web.Application) -> None:
        """The two endpoints the openai client uses, and `pages`."""
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_route("*", "/{tail:.*}", self._page)


@dataclass
class ToolEndpoint(RecordingServer):
    """Stands in for the HTTP services tools call; records every request."""

    delay: float = 0.0

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if self.delay:
            await asyncio.sleep(self.delay)
        if request.path.startswith("/weather/"):
            city = request.match_info.get("tail", "").split("/")[-1] or "?"
            return web.Response(text=f"{city}: ☀️ +14°C")
        if request.path.startswith("/places/"):
            # A geocoder: every place of the name, with its coordinates.
            name = request.path.rpartition("/")[2]
            return web.json_response(
                [
                    {"name": name, "region": "Illinois", "lat": 39.8, "lon": -89.6},
                    {"name": name, "region": "Missouri", "lat": 37.2, "lon": -93.3},
                ]
            )
        if request.path == "/empty":
            return web.json_response([])
        if request.path == "/fail":
            return web.Response(status=500, text="backend exploded")
        if request.path == "/busy":
            # Every other request: too busy, come back at once.
            tries = sum(r.path == "/busy" for r in self.requests)
            if tries % 2:
                return web.Response(
                    status=503, text="busy", headers={"Retry-After": "0"}
                )
        if request.path == "/echo":
            # Like httpbin: the request's headers and query come back.
            return web.json_response(
                {"headers": dict(request.headers), "query": request.query_string}
            )
        if request.path == "/echo-error":
            return web.Response(status=401, text=f"bad key: {request.query_string}")
        return web.json_response({"ok": True, "method": request.method})

    def routes(self, app: web.Application) -> None:
        """Every method on every path."""
        app.router.add_route("*", "/{tail:.*}", self._handle)
