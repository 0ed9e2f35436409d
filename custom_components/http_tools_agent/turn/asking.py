"""The agent asks before it acts: the question about a held call, spoken in
the user's language, and the call kept for this conversation and device
(`turn/hold.py` keeps it; the next turn answers it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm

from ..engine.confirm import Confirmation
from .hold import HeldCall
from .named import removal_of
from .say import agent_words, async_confirm_question

if TYPE_CHECKING:
    from ..runtime import HttpToolsRuntime
    from .state import Turn


async def async_ask_to_confirm(
    hass: HomeAssistant,
    runtime: HttpToolsRuntime,
    turn: Turn,
    agent_id: str,
    call: llm.ToolInput,
) -> None:
    """A call waits for the user's yes: the agent asks, and keeps the call
    for this conversation and device."""
    # An intent on a lock (`turn/sensitive.py`) or another API's tool has
    # no settings of its own: the question is built from its name.
    confirmation = turn.offered.confirm.get(call.tool_name, Confirmation())
    removes = removal_of(turn.chat_log.content, call, turn.offered.listers)
    question = await async_confirm_question(
        hass, turn.language, call, confirmation, removes
    )
    held = runtime.held
    held.hold(
        HeldCall(
            conversation_id=turn.chat_log.conversation_id,
            device_id=turn.device_id,
            agent_id=agent_id,
            call=call,
            request=turn.question,
            question=question,
            language=turn.language,
            expires=held.deadline(),
            pin=confirmation.pin,
        )
    )
    turn.asked = True
    runtime.record_quirk("call_held_for_confirmation")
    turn.chat_log.async_add_assistant_content_without_tools(
        agent_words(agent_id, question, question)
    )
