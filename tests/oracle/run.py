"""Run one P9 scenario through Home Assistant and score it.

A scenario passes for a profile when every call the oracle makes runs, in
its round (a call that waits for the user's yes after the yes: the runner
says it whenever the agent asks), no tool request runs that the oracle did not make, and each of
its answers is spoken unchanged (a turn the agent answered by reading out
results that said all the model could, without asking it, is counted apart:
`read_outs`). Used by the tests (`test_oracle.py`) and
the benchmark (`bench/bench_oracle.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from homeassistant.const import CONF_LLM_HASS_API
from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm

from custom_components.http_tools_agent.const import CONF_PROFILE
from dev.tool_server import DemoToolServer
from tests.house import async_demo_house
from tests.kit import (
    API_ID,
    add_agent,
    conversation_messages,
    converse,
    server_entry,
    speech,
)
from tests.many_tools import arr_tools

from .model import YES, OracleModel
from .scenarios import Scenario

# The profile settings P9 compares; `auto` on a model whose size nothing
# tells (`local`): what a new user of a 7B model behind an alias gets.
PROFILES = ("capable", "auto", "small")
FORMATS = ("structured", "text")
# The 2026 families' formats (`bench.bench_oracle --families`): each
# scenario's calls written so instead of its own text format.
FAMILY_FORMATS = ("pythonic", "mistral", "gemma4", "harmony")
# The count of turns the agent answered by reading out their results.
READ_OUT = "answered_by_read_out"
# Questions a turn may ask before it acts (one per held call).
MAX_CONFIRMATIONS = 3
# The assist tools a scenario may call (everything else is an HTTP tool).
ASSIST_TOOLS = frozenset({"HassTurnOn", "HassTurnOff"})


@dataclass(slots=True)
class Outcome:
    """How a scenario went for one profile and call format."""

    scenario: str
    kind: str
    every_call_ran: bool
    answers_spoken: bool
    unasked_requests: int
    spoken: list[str]
    expected: list[str]
    # Turns the agent answered with its read-out of results that said all
    # the model could, without asking it (their words are not compared).
    read_outs: int = 0

    @property
    def passed(self) -> bool:
        """Every call ran in its round, nothing else ran, answers unchanged."""
        return self.every_call_ran and self.answers_spoken and not self.unasked_requests


async def run_scenario(
    hass: HomeAssistant,
    scenario: Scenario,
    profile: str,
    fmt: str,
    agent: dict[str, Any] | None = None,
    *,
    distractors: int = 0,
) -> Outcome:
    """One conversation of the scenario with the oracle on a fresh agent
    (`distractors`: that many imported operations offered before the
    scenario's tools, `tests/many_tools.py`)."""
    text_format = (
        scenario.text_format
        if fmt == "text"
        else fmt
        if fmt in FAMILY_FORMATS
        else "structured"
    )
    apis = [API_ID, llm.LLM_API_ASSIST] if scenario.assist else [API_ID]
    if scenario.assist:
        await async_demo_house(hass)
    async with (
        DemoToolServer() as tools,
        OracleModel(steps=scenario.steps, fmt=text_format) as oracle,
    ):
        entry = server_entry(
            oracle.base_url,
            options={
                "tools": [
                    *(arr_tools(tools.url, distractors) if distractors else ()),
                    *tools.tools(list(scenario.tools), sentences=False),
                ]
            },
            agent={CONF_PROFILE: profile, CONF_LLM_HASS_API: apis, **(agent or {})},
        )
        agent_id = await add_agent(hass, entry)
        spoken: list[str] = []
        read_outs = 0
        quirks = entry.runtime_data.model_quirks
        conversation_id = None
        for step in scenario.steps:
            answers, agent_read = len(oracle.answers), quirks[READ_OUT]
            result = await converse(
                hass, step.user, agent_id=agent_id, conversation_id=conversation_id
            )
            conversation_id = result.conversation_id
            for _ in range(MAX_CONFIRMATIONS):
                if entry.runtime_data.held.waiting(conversation_id) is None:
                    break
                # The agent asks before a call that needs the user's yes:
                # the user says it (`turn/hold.py`).
                result = await converse(
                    hass, YES, agent_id=agent_id, conversation_id=conversation_id
                )
            assert result.conversation_id is not None
            oracle.score_turn(conversation_messages(hass, result.conversation_id))
            if len(oracle.answers) == answers and quirks[READ_OUT] > agent_read:
                # The agent read the results out without asking for the
                # answer (`Rules.own_answer`): only when its read-out says
                # all of them, so the model's words would have said no more.
                read_outs += 1
                continue
            spoken.append(speech(result))
        http_calls = sum(
            len([c for c in seen.calls if c.name not in ASSIST_TOOLS])
            for seen in oracle.seen
        )
        await hass.config_entries.async_unload(entry.entry_id)
        return Outcome(
            scenario.name,
            scenario.kind,
            oracle.every_call_ran,
            spoken == oracle.answers,
            max(len(tools.requests) - http_calls, 0),
            spoken,
            list(oracle.answers),
            read_outs,
        )
