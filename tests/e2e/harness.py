"""Drive real Home Assistant turns against a real (or scripted) model server.

Used by the end-to-end tests and by the benchmarks (`bench/`), so both set up
the agents exactly the same way: our agent (`http_tools_agent`) and, as the
structured-calls-only baseline, Home Assistant core's `llama_cpp` agent using
our HTTP tools LLM API.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
import os
from pathlib import Path
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any
import urllib.error
import urllib.request

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentryData
from homeassistant.const import CONF_LLM_HASS_API, CONF_PROMPT
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import entity_registry as er, llm
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.http_tools_agent.config_flow import default_agent_data
from custom_components.http_tools_agent.const import (
    CONF_BASE_URL,
    CONF_MODEL,
    CONF_STREAM,
    CONF_TEMPERATURE,
    CONF_TOOLS,
    DOMAIN,
    SUBENTRY_CONVERSATION,
)
from custom_components.http_tools_agent.llm_api import api_id_for
from tests.markup import MARKUP

ROOT = Path(__file__).resolve().parents[2]
MODEL_VENV = Path(os.environ.get("HTA_MODEL_VENV", ROOT / ".venv-model"))
MODELS_DIR = Path(os.environ.get("HTA_MODELS_DIR", ROOT / ".models"))
QWEN_FILE = "qwen2.5-coder-0.5b-instruct.gguf"
QWEN_ALIAS = "qwen2.5-coder-0.5b"
ENV_URL = "HTA_MODEL_SERVER_URL"
INSTALL_HINT = (
    "The real model environment is missing: run `scripts/model_server "
    "--install-only` (on this machine: `../shared/toolchain/py314 "
    "scripts/model_server --install-only`; the first run builds "
    "llama-cpp-python, ~11 min on 2 cores) or point "
    f"{ENV_URL} at a running OpenAI-compatible server with the Qwen model "
    "(e.g. `scripts/model_server --detach` prints http://127.0.0.1:8080/v1)."
)
# Call markup and its leftovers never reach the user.
# Call markup, plus what a bare JSON call or its fence leaves in text.
SPOKEN_MARKUP = (*MARKUP, '"arguments"', "```json")
# HA puts the time of day (to the second) in the system prompt; a fixed one
# makes a turn's prompt, hence a temperature-0 answer, reproducible.
FIXED_DATE_TIME_PROMPT = "Current time is 12:00:00. Today's date is 2026-11-30.\n"
ENTRY_UNIQUE_ID = "01JE2EENTRY"


@contextmanager
def fixed_date_time_prompt() -> Iterator[None]:
    """Make Home Assistant's date/time prompt line constant."""
    original = llm.DATE_TIME_PROMPT
    llm.DATE_TIME_PROMPT = FIXED_DATE_TIME_PROMPT
    try:
        yield
    finally:
        llm.DATE_TIME_PROMPT = original


def server_answers(base_url: str, timeout: float = 2.0) -> bool:
    """Whether an OpenAI-compatible server lists its models."""
    try:
        url = f"{base_url}/models"
        with urllib.request.urlopen(url, timeout=timeout) as reply:  # noqa: S310
            return bool(reply.status == 200)
    except OSError, urllib.error.URLError:
        return False


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class ModelServer:
    """`python -m llama_cpp.server` with the Qwen model, on loopback."""

    url: str
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    @classmethod
    def missing(cls) -> str | None:
        """Say what is missing to start a server here, or None."""
        python = MODEL_VENV / "bin" / "python"
        if not python.exists():
            return f"{python} does not exist. {INSTALL_HINT}"
        if not (MODELS_DIR / QWEN_FILE).is_file():
            return f"{MODELS_DIR / QWEN_FILE} does not exist. {INSTALL_HINT}"
        return None

    @classmethod
    def start(cls, port: int | None = None, timeout: float = 180.0) -> ModelServer:
        """Start a server on a free port and wait until it answers."""
        if (why := cls.missing()) is not None:
            raise RuntimeError(why)
        port = port or free_port()
        log = Path(tempfile.gettempdir()) / f"hta-model-server-{port}.log"
        threads = os.environ.get("HTA_MODEL_THREADS", str(os.cpu_count() or 2))
        with log.open("wb") as out:
            process = subprocess.Popen(  # noqa: S603 (fixed arguments)
                [
                    str(MODEL_VENV / "bin" / "python"),
                    "-m",
                    "llama_cpp.server",
                    "--model",
                    str(MODELS_DIR / QWEN_FILE),
                    "--model_alias",
                    QWEN_ALIAS,
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--n_ctx",
                    "4096",
                    "--n_threads",
                    threads,
                    "--seed",
                    "1",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        server = cls(f"http://127.0.0.1:{port}/v1", process, log)
        deadline = time.monotonic() + timeout
        while not server_answers(server.url):
            if process.poll() is not None or time.monotonic() > deadline:
                server.stop()
                tail = log.read_text(errors="replace")[-2000:]
                raise RuntimeError(
                    f"llama_cpp.server did not come up on {server.url}:\n{tail}"
                )
            time.sleep(0.5)
        return server

    @classmethod
    def from_env_or_start(cls) -> ModelServer:
        """Reuse HTA_MODEL_SERVER_URL when set, else start one."""
        if url := os.environ.get(ENV_URL):
            url = url.rstrip("/")
            if not server_answers(url, timeout=10):
                raise RuntimeError(f"{ENV_URL}={url} does not answer /models")
            return cls(url)
        return cls.start()

    def stop(self) -> None:
        """Stop the server if we started it."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def log(message: str) -> None:
    """Progress on stderr (bench scripts)."""
    print(message, file=sys.stderr, flush=True)


async def setup_ours(
    hass: HomeAssistant,
    base_url: str,
    tools: list[dict[str, Any]],
    *,
    model: str = QWEN_ALIAS,
    stream: bool = True,
    temperature: float = 0.0,
    options: dict[str, Any] | None = None,
    agent: dict[str, Any] | None = None,
) -> str:
    """Add and set up our entry + agent; return the agent's entity id."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        title=base_url,
        unique_id=ENTRY_UNIQUE_ID,
        data={CONF_BASE_URL: base_url},
        options={CONF_TOOLS: tools, **(options or {})},
        subentries_data=[
            ConfigSubentryData(
                subentry_type=SUBENTRY_CONVERSATION,
                title="HTTP Tools Agent",
                unique_id=None,
                data={
                    **default_agent_data(api_id_for(ENTRY_UNIQUE_ID), [model]),
                    CONF_MODEL: model,
                    CONF_STREAM: stream,
                    CONF_TEMPERATURE: temperature,
                    **(agent or {}),
                },
            )
        ],
    )
    entry.add_to_hass(hass)
    assert await async_setup_component(hass, "homeassistant", {})
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    return _agent_entity(hass, entry)


async def setup_llama_cpp(
    hass: HomeAssistant,
    base_url: str,
    *,
    model: str = QWEN_ALIAS,
    stream: bool = True,
    temperature: float = 0.0,
) -> str:
    """Add HA core's llama_cpp agent using our entry's HTTP tools API.

    Call after `setup_ours` (the API is registered by our entry).
    """
    entry = MockConfigEntry(
        domain="llama_cpp",
        title=base_url,
        data={"base_url": base_url, "streaming": stream},
        subentries_data=[
            ConfigSubentryData(
                subentry_type="conversation",
                title="llama.cpp Conversation",
                unique_id=None,
                data={
                    CONF_PROMPT: llm.DEFAULT_INSTRUCTIONS_PROMPT,
                    CONF_LLM_HASS_API: [api_id_for(ENTRY_UNIQUE_ID)],
                    "chat_model": model,
                    "recommended": False,
                    "temperature": temperature,
                    "max_tokens": 1024,
                    "top_p": 1.0,
                },
            )
        ],
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    return _agent_entity(hass, entry)


def _agent_entity(hass: HomeAssistant, entry: MockConfigEntry) -> str:
    entities = er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
    ids = [e.entity_id for e in entities if e.domain == "conversation"]
    assert len(ids) == 1, ids
    return ids[0]


async def converse(
    hass: HomeAssistant, agent_id: str, text: str
) -> conversation.ConversationResult:
    """One user turn, in a new conversation."""
    return await conversation.async_converse(
        hass, text, None, Context(), agent_id=agent_id
    )


def speech(result: conversation.ConversationResult) -> str:
    """What the user hears."""
    text: str = result.response.speech.get("plain", {}).get("speech", "")
    return text


def markup_in(text: str) -> list[str]:
    """The call markup found in a spoken answer."""
    return [m for m in SPOKEN_MARKUP if m in text]
