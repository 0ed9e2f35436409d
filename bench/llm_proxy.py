"""A recording proxy in front of an OpenAI-compatible server (benchmarks).

Forwards every request to the real server unchanged and streams the answer
back as it comes, while noting for each chat completion: when it was sent,
when the first token (text or call) came back, when it ended, and what the
server says it did (`usage`; llama.cpp's `timings`: prompt tokens evaluated,
tokens taken from the cache, milliseconds). The agents never know.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
import json
import re
import time
from typing import Any

import aiohttp
from aiohttp import web

from dev.loopback import LoopbackServer

_HOP_BY_HOP = {"content-length", "transfer-encoding", "connection", "host"}
_SENTENCE_END = re.compile(r"[.!?](\s|$)")


@dataclass
class Exchange:
    """One chat completion that went through the proxy."""

    body: dict[str, Any]
    sent: float
    first_token: float | None = None
    ended: float | None = None
    # When the text written so far first held a whole sentence (what a
    # streaming TTS needs to start speaking).
    first_sentence: float | None = None
    text: str = ""
    usage: dict[str, Any] | None = None
    timings: dict[str, Any] | None = None
    label: str = ""
    # The answer as the server sent it, byte for byte (to replay in tests).
    status: int = 0
    content_type: str = ""
    answer: bytearray = field(default_factory=bytearray)

    @property
    def prompt_evaluated(self) -> int | None:
        """Prompt tokens the server evaluated (llama.cpp), not from cache."""
        value = (self.timings or {}).get("prompt_n")
        return value if isinstance(value, int) else None

    @property
    def seconds_to_first_token(self) -> float | None:
        """Prompt processing plus the first token, as the client sees it."""
        return None if self.first_token is None else self.first_token - self.sent

    @property
    def seconds_to_first_sentence(self) -> float | None:
        """To the first whole sentence of text, or to the end of a reply
        whose text has no sentence end (None when it wrote no text)."""
        if not self.text.strip():
            return None
        at = self.first_sentence or self.ended
        return None if at is None else at - self.sent


def _note(exchange: Exchange, data: Any) -> None:
    """Note the counts and the first token of one chunk (or completion)."""
    if not isinstance(data, dict):
        return
    if isinstance(usage := data.get("usage"), dict):
        exchange.usage = usage
    if isinstance(timings := data.get("timings"), dict):
        exchange.timings = timings
    for choice in data.get("choices") or ():
        said = choice.get("delta") or choice.get("message") or {}
        if exchange.first_token is None and (
            said.get("content") or said.get("tool_calls")
        ):
            exchange.first_token = time.perf_counter()
        if isinstance(content := said.get("content"), str):
            exchange.text += content
            if exchange.first_sentence is None and _SENTENCE_END.search(exchange.text):
                exchange.first_sentence = time.perf_counter()


@dataclass
class RecordingProxy(LoopbackServer):
    """Forwards `/v1/...` to `target` (a base URL ending in `/v1`)."""

    target: str = ""
    exchanges: list[Exchange] = field(default_factory=list)
    label: str = ""
    _session: aiohttp.ClientSession | None = None

    @property
    def base_url(self) -> str:
        """The proxy's own `/v1` base URL."""
        return f"{self.url}/v1"

    def routes(self, app: web.Application) -> None:
        """Everything goes through."""
        app.router.add_route("*", "/v1/{tail:.*}", self._forward)

    async def stop(self) -> None:
        """Stop serving and close the upstream session."""
        await super().stop()
        if self._session is not None:
            await self._session.close()

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        if self._session is None:
            # As long as the agent waits: a slow server is what is measured.
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=None)
            )
        raw = await request.read()
        exchange: Exchange | None = None
        if request.path.endswith("/chat/completions"):
            exchange = Exchange(json.loads(raw), time.perf_counter(), label=self.label)
            self.exchanges.append(exchange)
        headers = {
            k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP
        }
        url = self.target + request.path.removeprefix("/v1")
        async with self._session.request(
            request.method, url, data=raw, headers=headers, params=request.query
        ) as upstream:
            response = web.StreamResponse(
                status=upstream.status,
                headers={"Content-Type": upstream.headers.get("Content-Type", "")},
            )
            await response.prepare(request)
            streamed = "event-stream" in upstream.headers.get("Content-Type", "")
            if exchange is not None:
                exchange.status = upstream.status
                exchange.content_type = upstream.headers.get("Content-Type", "")
            pending = b""
            async for piece in upstream.content.iter_any():
                try:
                    await response.write(piece)
                except ConnectionResetError:
                    # The agent closed the stream early (it had what it
                    # needed): what was read so far is noted.
                    break
                if exchange is None:
                    continue
                exchange.answer += piece
                pending += piece
                if not streamed:
                    continue
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    if line.startswith(b"data: {"):
                        _note(exchange, json.loads(line[6:]))
            if exchange is not None:
                if not streamed and pending:
                    _note(exchange, json.loads(pending))  # a whole completion
                exchange.ended = time.perf_counter()
            with contextlib.suppress(ConnectionResetError):
                await response.write_eof()
            return response
