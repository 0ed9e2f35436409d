"""Configure the demo in a Home Assistant config dir, before HA starts.

    python -m dev.demo_setup CONFIG_DIR BASE_URL TOOLS_URL

Adds (once) an HTTP Tools Agent entry for BASE_URL whose tools call the demo
tool server at TOOLS_URL, with one agent on the Qwen model at temperature 0
that offers Assist (the house's lights and fans) beside the HTTP tools, an
Assist pipeline "HTTP Tools Agent demo" that uses that agent and prefers
handling commands locally (Home Assistant's own intents answer the lights
and fans; everything else reaches the agent), made the preferred one, and
the house (`dev/demo_house.py`: a few lights and fans in
areas, exposed to Assist). The storage files are written with Home
Assistant's own serializers (ConfigEntry.as_dict, Pipeline.to_json) and
registries; existing entries and pipelines are kept. Onboarding is
untouched: the newcomer creates the owner account in the browser as usual.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
import sys
from types import MappingProxyType
from typing import Any

from homeassistant import config_entries
from homeassistant.components.assist_pipeline import pipeline as ha_pipeline
from homeassistant.components.assist_pipeline.models import Pipeline
from homeassistant.config_entries import ConfigEntry, ConfigSubentryData
from homeassistant.const import CONF_LLM_HASS_API
from homeassistant.helpers import llm
from homeassistant.helpers.json import JSONEncoder
from homeassistant.util.ulid import ulid_now

from custom_components.http_tools_agent.config_flow import HttpToolsAgentConfigFlow
from custom_components.http_tools_agent.const import (
    CONF_AGENT_TOOLS,
    CONF_BASE_URL,
    CONF_TEMPERATURE,
    CONF_TOOLS,
    CONF_WARM_UP,
    DEFAULT_AI_TASK_NAME,
    DEFAULT_CONVERSATION_NAME,
    DOMAIN,
    SUBENTRY_AI_TASK,
    SUBENTRY_CONVERSATION,
)
from custom_components.http_tools_agent.flows.agent_form import (
    default_agent_data,
    default_task_data,
)
from custom_components.http_tools_agent.server.info import (
    KIND_LLAMA_CPP_PYTHON,
    entry_title,
)
from custom_components.http_tools_agent.tools.llm_api import api_id_for

from .demo_house import async_write_house
from .tool_server import DEMO_ENTRY_TOOLS, DEMO_TOOLS, tool_definitions

MODEL = "qwen2.5-coder-0.5b"
AGENT_ENTITY = "conversation.http_tools_agent"
PIPELINE_NAME = "HTTP Tools Agent demo"


def agent_subentry(
    entry_unique_id: str, model: str, settings: dict[str, Any] | None = None
) -> ConfigSubentryData:
    """The agent the config flow adds to a new entry (on `model`, with this
    entry's HTTP tools), with `settings` over its defaults."""
    return ConfigSubentryData(
        subentry_type=SUBENTRY_CONVERSATION,
        title=DEFAULT_CONVERSATION_NAME,
        unique_id=None,
        data={
            **default_agent_data(api_id_for(entry_unique_id), [model]),
            **(settings or {}),
        },
    )


def ai_task_subentry(
    entry_unique_id: str, model: str, settings: dict[str, Any] | None = None
) -> ConfigSubentryData:
    """An AI task (its settings are an agent's) on `model`, with this
    entry's HTTP tools, `settings` over the defaults."""
    return ConfigSubentryData(
        subentry_type=SUBENTRY_AI_TASK,
        title=DEFAULT_AI_TASK_NAME,
        unique_id=None,
        data={
            **default_task_data(api_id_for(entry_unique_id), [model]),
            **(settings or {}),
        },
    )


def load(path: Path, key: str, minor: int) -> dict[str, Any]:
    """Read a storage file, or return an empty one."""
    if path.exists():
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return data
    return {"version": 1, "minor_version": minor, "key": key, "data": {}}


def save(path: Path, data: dict[str, Any]) -> None:
    """Write a storage file atomically."""
    tmp = path.with_suffix(".demo-tmp")
    tmp.write_text(json.dumps(data, cls=JSONEncoder, indent=2), encoding="utf-8")
    tmp.replace(path)


def add_entry(storage: Path, base_url: str, tools_url: str) -> None:
    """Add the demo's config entry unless there is one for this server."""
    path = storage / config_entries.STORAGE_KEY
    data = load(path, config_entries.STORAGE_KEY, config_entries.STORAGE_VERSION_MINOR)
    entries: list[dict[str, Any]] = data["data"].setdefault("entries", [])
    if any(
        e["domain"] == DOMAIN and e["data"].get(CONF_BASE_URL) == base_url
        for e in entries
    ):
        print(f"demo_setup: an {DOMAIN} entry for {base_url} exists; kept")
        return
    unique_id = ulid_now()
    entry = ConfigEntry(
        domain=DOMAIN,
        # What the config flow names it: the model server scripts/demo runs.
        title=entry_title(KIND_LLAMA_CPP_PYTHON, MODEL, base_url),
        data={CONF_BASE_URL: base_url},
        options={
            CONF_TOOLS: [
                t for t in tool_definitions(tools_url) if t["name"] in DEMO_ENTRY_TOOLS
            ]
        },
        source=config_entries.SOURCE_USER,
        unique_id=unique_id,
        version=HttpToolsAgentConfigFlow.VERSION,
        minor_version=HttpToolsAgentConfigFlow.MINOR_VERSION,
        discovery_keys=MappingProxyType({}),
        subentries_data=[
            agent_subentry(
                unique_id,
                MODEL,
                {
                    CONF_TEMPERATURE: 0.0,
                    # The house's lights and fans beside the HTTP tools.
                    CONF_LLM_HASS_API: [llm.LLM_API_ASSIST, api_id_for(unique_id)],
                    # The model's six; `remove_item` answers its sentences only.
                    CONF_AGENT_TOOLS: list(DEMO_TOOLS),
                },
            ),
            # The AI task a new entry gets. No warm-up of its own: the one
            # model server keeps one prompt warm, the agent's, for the first
            # question asked in Assist.
            ai_task_subentry(
                unique_id, MODEL, {CONF_TEMPERATURE: 0.0, CONF_WARM_UP: "off"}
            ),
        ],
    )
    entries.append(entry.as_dict())
    save(path, data)
    print(f"demo_setup: added an {DOMAIN} entry for {base_url}, tools at {tools_url}")


def add_pipeline(storage: Path) -> None:
    """Add the demo pipeline (our agent) and make it the preferred one."""
    path = storage / ha_pipeline.STORAGE_KEY
    data = load(path, ha_pipeline.STORAGE_KEY, ha_pipeline.STORAGE_VERSION_MINOR)
    items: list[dict[str, Any]] = data["data"].setdefault("items", [])
    ours = [i for i in items if i.get("conversation_engine") == AGENT_ENTITY]
    if ours:
        pipeline_id = ours[0]["id"]
        # A pipeline of an earlier demo, made before the setting was set here;
        # one whose setting was switched off in the UI keeps it off.
        ours[0].setdefault("prefer_local_intents", True)
    else:
        pipeline = Pipeline(
            conversation_engine=AGENT_ENTITY,
            conversation_language="en",
            language="en",
            name=PIPELINE_NAME,
            stt_engine=None,
            stt_language=None,
            tts_engine=None,
            tts_language=None,
            tts_voice=None,
            wake_word_entity=None,
            wake_word_id=None,
            # On/off, brightness and the like answered by Home Assistant in
            # a fraction of a second, without the model (docs/voice.md).
            prefer_local_intents=True,
        )
        items.append(pipeline.to_json())
        pipeline_id = pipeline.id
    data["data"]["preferred_item"] = pipeline_id
    save(path, data)
    print(f"demo_setup: Assist pipeline {PIPELINE_NAME!r} is the preferred one")


def main() -> None:
    """Configure the demo."""
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    config, base_url, tools_url = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    storage = config / ".storage"
    storage.mkdir(parents=True, exist_ok=True)
    add_entry(storage, base_url, tools_url)
    add_pipeline(storage)
    asyncio.run(async_write_house(config))
    print(
        "demo_setup: the house (Kitchen, Bedroom, Living room) is in "
        "config/packages/demo_house.yaml, its lights and fans exposed to Assist"
    )


if __name__ == "__main__":
    main()
