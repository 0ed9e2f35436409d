"""Helpers of the benchmarks: a real Home Assistant in a plain script (the
agents are set up the way the end-to-end tests set them up:
`tests/e2e/harness.py`), timed turns, and table output.

The benchmarks run as modules from the repository root, e.g.
`.venv/bin/python -m bench.bench_loop`, so the repository is on `sys.path`.
"""

from __future__ import annotations

from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import asynccontextmanager, contextmanager
from dataclasses import asdict
import json
import os
from pathlib import Path
import platform
import statistics
import sys
import tempfile
import time
from typing import Any
from unittest import mock

from homeassistant import loader
from homeassistant.components import conversation
from homeassistant.components.assist_pipeline import PipelineEventType
from homeassistant.components.assist_pipeline.const import DOMAIN as PIPELINE_DOMAIN
from homeassistant.components.assist_pipeline.pipeline import (
    KEY_ASSIST_PIPELINE,
    Pipeline,
)
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import chat_session, frame
from homeassistant.setup import async_setup_component
from openai._base_client import AsyncAPIClient
from pytest_homeassistant_custom_component.common import async_test_home_assistant

import custom_components.http_tools_agent  # noqa: F401  (before HA's loader looks)
from custom_components.http_tools_agent.const import DOMAIN
from dev.tool_server import DemoToolServer
from tests.e2e.harness import ModelServer, fixed_date_time_prompt
from tests.kit import pipeline_events, speech


@asynccontextmanager
async def home_assistant() -> AsyncIterator[HomeAssistant]:
    """A running Home Assistant with custom integrations enabled."""
    with tempfile.TemporaryDirectory() as config_dir:
        async with async_test_home_assistant(config_dir=config_dir) as hass:
            hass.data.pop(loader.DATA_CUSTOM_COMPONENTS, None)
            # What the pytest plugin's `hass` fixture does: without it, a second
            # instance in one process fails to create an HTTP session.
            frame.async_setup(hass)
            yield hass
            await hass.async_stop(force=True)


class ModelRequests:
    """Counts the chat-completion requests sent through the `openai` SDK,
    so a benchmark can say how many model requests a turn made. Counted in
    the client's `request`, which every call reaches at call time (the
    resources bind `create` once)."""

    def __init__(self) -> None:
        """Start at zero; count while `counting()` is entered."""
        self.sent = 0

    @contextmanager
    def counting(self) -> Iterator[None]:
        """Count each chat-completion request while inside."""
        request = AsyncAPIClient.request

        async def counted(
            client: AsyncAPIClient, cast_to: Any, options: Any, **kwargs: Any
        ) -> Any:
            if str(options.url).endswith("chat/completions"):
                self.sent += 1
            return await request(client, cast_to, options, **kwargs)

        with mock.patch.object(AsyncAPIClient, "request", counted):
            yield


# What a bench user says to the agent's question before a held call
# (`turn/hold.py`): the request asked for the change, so it is confirmed and
# judged on what then ran, as a user at a satellite would go on.
CONFIRMATION = "Yes."


def holds_call(hass: HomeAssistant, conversation_id: str) -> bool:
    """Whether one of our agents asked before a call in `conversation_id`
    and waits for the answer."""
    return any(
        entry.runtime_data.held.waiting(conversation_id) is not None
        for entry in hass.config_entries.async_loaded_entries(DOMAIN)
    )


async def timed_turn(
    hass: HomeAssistant,
    agent_id: str,
    text: str,
    trace: list[str] | None = None,
    conversation_id: str | None = None,
) -> tuple[float, float | None, str]:
    """Run one turn; return (seconds, seconds to the first spoken char, speech).

    The first spoken character is the first non-empty `content` delta the
    chat log hands its delta listener: what the Assist pipeline streams to TTS.
    `trace` receives each call (`name {args}`) and result (`-> text`) shown.
    A `conversation_id` continues that conversation (else a new one). When
    the agent asks before a call, the turn goes on with `CONFIRMATION`: the
    seconds and the speech are of both, the question in `trace`.
    """
    elapsed, first, said, conversation_id = await _timed_exchange(
        hass, agent_id, text, trace, conversation_id
    )
    if not holds_call(hass, conversation_id):
        return elapsed, first, said
    if trace is not None:
        trace.append(f"asked: {said} -> {CONFIRMATION}")
    more, _first, said, _id = await _timed_exchange(
        hass, agent_id, CONFIRMATION, trace, conversation_id
    )
    return elapsed + more, first, said


async def _timed_exchange(
    hass: HomeAssistant,
    agent_id: str,
    text: str,
    trace: list[str] | None,
    conversation_id: str | None,
) -> tuple[float, float | None, str, str]:
    first: list[float] = []
    started = time.perf_counter()

    def listener(_chat_log: conversation.ChatLog, delta: dict[str, Any]) -> None:
        if not first and delta.get("content"):
            first.append(time.perf_counter() - started)
        if trace is None:
            return
        for call in delta.get("tool_calls") or ():
            trace.append(f"{call.tool_name} {call.tool_args}")
        if delta.get("role") == "tool_result":
            result = delta.get("result")
            data = result.get("data") if isinstance(result, dict) else result
            trace.append(f"-> {str(data)[:120]}")

    with (
        chat_session.async_get_chat_session(hass, conversation_id) as session,
        conversation.async_get_chat_log(
            hass, session, chat_log_delta_listener=listener
        ),
    ):
        result = await conversation.async_converse(
            hass, text, session.conversation_id, Context(), agent_id=agent_id
        )
    elapsed = time.perf_counter() - started
    return (
        elapsed,
        (first[0] if first else None),
        speech(result),
        session.conversation_id,
    )


async def text_pipeline(
    hass: HomeAssistant, agent_id: str, *, prefer_local_intents: bool
) -> Pipeline:
    """An English Assist pipeline on `agent_id`, text only (no STT, no TTS),
    with or without "Prefer handling commands locally"."""
    assert await async_setup_component(hass, PIPELINE_DOMAIN, {})
    store = hass.data[KEY_ASSIST_PIPELINE].pipeline_store
    pipeline: Pipeline = await store.async_create_item(
        {
            "name": f"bench {agent_id} local={prefer_local_intents}",
            "language": "en",
            "conversation_engine": agent_id,
            "conversation_language": "en",
            "stt_engine": None,
            "stt_language": None,
            "tts_engine": None,
            "tts_language": None,
            "tts_voice": None,
            "wake_word_entity": None,
            "wake_word_id": None,
            "prefer_local_intents": prefer_local_intents,
        }
    )
    return pipeline


async def pipeline_turn(
    hass: HomeAssistant, pipeline: Pipeline, text: str
) -> tuple[float, str, bool]:
    """Run one turn through `pipeline`'s intent stage, text in as the Assist
    dialog sends it; return (seconds, speech, whether Home Assistant answered
    it itself: a local intent, the agent not asked). A pipeline error is the
    speech `(pipeline error: CODE)`. When the agent asks before a call, the
    turn goes on with `CONFIRMATION` in the same conversation."""
    elapsed, said, local, conversation_id = await _pipeline_exchange(
        hass, pipeline, text, None
    )
    if conversation_id is None or not holds_call(hass, conversation_id):
        return elapsed, said, local
    more, said, _local, _id = await _pipeline_exchange(
        hass, pipeline, CONFIRMATION, conversation_id
    )
    return elapsed + more, said, local


async def _pipeline_exchange(
    hass: HomeAssistant, pipeline: Pipeline, text: str, conversation_id: str | None
) -> tuple[float, str, bool, str | None]:
    started = time.perf_counter()
    events = await pipeline_events(
        hass, text, pipeline=pipeline, conversation_id=conversation_id
    )
    elapsed = time.perf_counter() - started
    for event in events:
        data = event.data or {}
        if event.type is PipelineEventType.ERROR:
            return (
                elapsed,
                f"(pipeline error: {data.get('code')})",
                False,
                conversation_id,
            )
        if event.type is PipelineEventType.INTENT_END:
            output = data["intent_output"]
            said = output["response"].get("speech", {}).get("plain", {}).get("speech")
            return (
                elapsed,
                str(said or ""),
                bool(data.get("processed_locally")),
                output.get("conversation_id") or conversation_id,
            )
    return elapsed, "(pipeline: no intent-end event)", False, conversation_id


def log(message: str) -> None:
    """Progress on stderr (the tables go to stdout)."""
    print(message, file=sys.stderr, flush=True)


def median_ms(values: Sequence[float]) -> str:
    """Median in ms with 2 decimals."""
    return f"{statistics.median(values) * 1000:.2f}"


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Print a Markdown table."""
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    sys.stdout.flush()


def machine() -> str:
    """nproc, CPU model, RAM, Python."""
    cpu = "?"
    ram = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                ram = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} CPUs ({cpu}), {ram} RAM, Python "
        f"{platform.python_version()}, load average "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )


def dump_outcomes(path: str, results: Mapping[str, Sequence[Any]]) -> None:
    """Write every outcome (dataclasses) as JSON: written after each agent,
    so a long run that is cut keeps what it measured."""
    Path(path).write_text(
        json.dumps(
            {k: [asdict(o) for o in v] for k, v in results.items()},
            indent=1,
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )


async def run_on_demo_tools[T](
    label: str,
    args: Any,
    run_agent: Callable[[str, str, DemoToolServer, list[str]], Awaitable[list[T]]],
    report: Callable[[dict[str, list[T]]], None],
) -> None:
    """Start (or reuse) the model server and the demo tool server, run each
    agent of `args.agents` on `args.sets` (dumping to `args.dump` after
    each), then report. The date/time prompt line is fixed meanwhile."""
    print(f"Machine: {machine()}")
    server = ModelServer.from_env_or_start()
    tools = DemoToolServer()
    await tools.start()
    results: dict[str, list[T]] = {}
    started = time.monotonic()
    try:
        with fixed_date_time_prompt():
            for name in args.agents.split(","):
                results[name] = await run_agent(
                    name, server.url, tools, args.sets.split(",")
                )
                if args.dump:
                    dump_outcomes(args.dump, results)
        report(results)
        print(f"\n{label} wall time: {time.monotonic() - started:.0f} s")
    finally:
        await tools.stop()
        server.stop()
