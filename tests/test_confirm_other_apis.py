"""Ask before another API's tool acts: with a real MCP server set up through
Home Assistant's own `mcp` integration (its tools an LLM API beside the HTTP
tools), a call of a tool whose annotations say it is destructive waits for
the user's yes, as the agent's own delete does; a read runs at once. The
agent's *Ask before other APIs' tools act* says which tools ask.

The MCP server is the `mcp` SDK's FastMCP on loopback
(`tests/recordings_mcp.py`); the model a scripted server through the real
openai client.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_LLM_HASS_API, CONF_URL
from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.http_tools_agent.const import CONF_CONFIRM_OTHER_TOOLS

from .house import async_demo_doors
from .kit import API_ID, agent_with_tools, speech
from .recordings_mcp import RecordingsServer
from .said import said
from .servers import FakeLLMServer, text_stream, tool_calls_stream
from .test_confirm import say

type Call = tuple[str, dict[str, str]]

# The model's calls: Home Assistant names each tool with its API's namespace.
DELETE: Call = ("recordings__delete_recording", {"recording_id": "7"})
RENAME: Call = ("recordings__rename_recording", {"recording_id": "7", "name": "Mail"})
LIST: Call = ("recordings__list_recordings", {})
ARCHIVE: Call = ("recordings__archive_recording", {"recording_id": "7"})


@pytest.fixture
async def recordings(socket_enabled: None) -> AsyncGenerator[RecordingsServer]:
    """The recordings MCP server on 127.0.0.1."""
    async with RecordingsServer() as server:
        yield server


async def setup(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    recordings: RecordingsServer,
    ask: str | None = None,
    *more_apis: str,
) -> None:
    """Home Assistant's `mcp` integration on the recordings server (its
    tools the "Recordings" API), and our agent given that API beside the
    HTTP tools (and `more_apis`; `ask`: its setting; None: the default)."""
    entry = MockConfigEntry(
        domain="mcp", title="Recordings", data={CONF_URL: recordings.mcp_url}
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    assert entry.state is ConfigEntryState.LOADED
    settings = {} if ask is None else {CONF_CONFIRM_OTHER_TOOLS: ask}
    await agent_with_tools(
        hass,
        llm_server.base_url,
        agent={
            CONF_LLM_HASS_API: [API_ID, f"mcp-{entry.entry_id}", *more_apis],
            **settings,
        },
    )


def offered(llm_server: FakeLLMServer) -> set[str]:
    return {tool["function"]["name"] for tool in llm_server.requests[0]["tools"]}


async def test_a_destructive_tool_waits_for_the_yes_and_runs_once(
    hass: HomeAssistant, llm_server: FakeLLMServer, recordings: RecordingsServer
) -> None:
    """The delete is not sent to the MCP server: the agent asks and the
    satellite listens again; the yes runs exactly it, once."""
    await setup(hass, llm_server, recordings)
    llm_server.add(tool_calls_stream(DELETE))

    asked = await say(hass, "Delete recording 7.")

    assert {DELETE[0], LIST[0]} <= offered(llm_server)
    assert speech(asked) == said(
        "confirm_question", action="delete recording", details="recording id 7"
    )
    assert asked.continue_conversation is True
    assert recordings.calls == []

    llm_server.add(text_stream("Recording 7 is deleted."))
    done = await say(hass, "yes", asked.conversation_id)

    assert recordings.calls == [("delete_recording", {"recording_id": "7"})]
    assert speech(done) == "Recording 7 is deleted."
    # The model read the MCP server's own result.
    assert "Recording 7 deleted." in str(llm_server.requests[-1]["messages"])

    llm_server.add(text_stream("Nothing to confirm."))
    await say(hass, "yes", asked.conversation_id)
    assert len(recordings.calls) == 1


async def test_a_no_never_calls_the_destructive_tool(
    hass: HomeAssistant, llm_server: FakeLLMServer, recordings: RecordingsServer
) -> None:
    await setup(hass, llm_server, recordings)
    llm_server.add(tool_calls_stream(DELETE))
    asked = await say(hass, "Delete recording 7.")

    declined = await say(hass, "no", asked.conversation_id)

    assert speech(declined) == said("confirm_declined")
    assert recordings.calls == []


async def test_a_read_runs_at_once(
    hass: HomeAssistant, llm_server: FakeLLMServer, recordings: RecordingsServer
) -> None:
    """A tool that says it only reads asks nothing, whatever the setting
    (Home Assistant's defaults leave it `destructive`: reading wins)."""
    await setup(hass, llm_server, recordings, ask="changes")
    llm_server.add(tool_calls_stream(LIST), text_stream("Two: front door and garden."))

    result = await say(hass, "Which recordings are there?")

    assert recordings.calls == [("list_recordings", {})]
    assert speech(result) == "Two: front door and garden."
    assert result.continue_conversation is False


@pytest.mark.parametrize(
    ("ask", "call", "held"),
    [
        # The default asks before a destructive tool only (one that says
        # nothing is destructive to Home Assistant) ...
        (None, RENAME, False),
        (None, ARCHIVE, True),
        # ... *Every change* before any tool that is not read-only ...
        ("changes", RENAME, True),
        ("changes", DELETE, True),
        # ... and *Never* lets even the delete run at once.
        ("never", DELETE, False),
    ],
)
async def test_the_setting_says_which_tools_ask(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    recordings: RecordingsServer,
    ask: str | None,
    call: Call,
    held: bool,
) -> None:
    await setup(hass, llm_server, recordings, ask=ask)
    llm_server.add(tool_calls_stream(call), text_stream("Done."))

    # The user says the id (a change by an id nobody said is refused).
    result = await say(hass, "Recording 7: delete, archive, or call it Mail.")

    assert result.continue_conversation is held
    name = call[0].removeprefix("recordings__")
    assert recordings.calls == ([] if held else [(name, call[1])])


async def test_assist_keeps_its_own_rule(
    hass: HomeAssistant, llm_server: FakeLLMServer, recordings: RecordingsServer
) -> None:
    """Assist's intents say they change something too, yet ask only by
    *Ask before unlocking and opening* (off here): the lock opens at once."""
    await async_demo_doors(hass)
    await setup(hass, llm_server, recordings, "changes", llm.LLM_API_ASSIST)
    llm_server.add(
        tool_calls_stream(("HassTurnOff", {"name": "Front Door"})),
        text_stream("Unlocked."),
    )

    result = await say(hass, "Unlock the front door.")
    await hass.async_block_till_done()

    assert result.continue_conversation is False
    state = hass.states.get("lock.front_door")
    assert state is not None
    assert state.state in ("unlocked", "unlocking")
