"""A prompt whose beginning stays byte-identical, so the server's cache holds.

llama.cpp and llama-cpp-python reuse their KV cache only for the part of a
prompt identical to the previous request's, and chat templates render the
tools after the system text: anything in the system prompt that changes per
turn makes the server re-read the whole tools block. Home Assistant's own
clock line is left out because the HTTP tools come with a date-and-time tool
(`llm_api.DateTimeTool`). What remains are lines of the agent's prompt
template that call `now()`: they are rendered with each user message instead
(into the user message, which every chat template accepts), and remembered,
so an earlier turn is re-sent exactly as it was.
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import datetime
import re

from homeassistant.components import conversation
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import TemplateError
from homeassistant.helpers import intent, llm, template
from jinja2 import Environment, TemplateSyntaxError

_NOW_RE = re.compile(r"\bnow\s*\(")
# Notes of this many user messages are remembered (chat logs expire anyway).
MAX_NOTES = 512


def split_prompt_template(template: str) -> tuple[str, str]:
    """Split a prompt template into its stable lines and those using `now()`.

    Only whole lines move, and only when both parts stay valid templates on
    their own (a block spanning lines stays where it is: that prompt simply
    cannot be cached). Returns (stable, per message).
    """
    lines = template.splitlines()
    timed = [line for line in lines if _NOW_RE.search(line)]
    if not timed or len(timed) == len(lines):
        return template, ""
    stable = "\n".join(line for line in lines if not _NOW_RE.search(line))
    per_message = "\n".join(timed)
    if not (_parses(stable) and _parses(per_message)):
        return template, ""
    return stable, per_message


def _parses(text: str) -> bool:
    try:
        Environment(autoescape=True).parse(text)
    except TemplateSyntaxError:
        return False
    return True


class MessageNotes:
    """What each user message carries besides its text (the `now()` lines).

    Computed once, when the message is the newest, and kept: the same message
    is re-sent with the same note on every later request.
    """

    def __init__(self) -> None:
        """Start empty."""
        self._notes: OrderedDict[tuple[datetime, str], str] = OrderedDict()

    def remember(self, content: conversation.UserContent, note: str) -> None:
        """Keep the note of a new user message."""
        key = (content.created, content.content)
        self._notes[key] = note
        self._notes.move_to_end(key)
        while len(self._notes) > MAX_NOTES:
            self._notes.popitem(last=False)

    def note(self, content: conversation.UserContent) -> str:
        """The note of a user message ("" when it has none)."""
        return self._notes.get((content.created, content.content), "")


async def async_note(
    hass: HomeAssistant,
    chat_log: conversation.ChatLog,
    llm_context: llm.LLMContext,
    per_message_template: str,
) -> str:
    """The note of the turn's new user message: the prompt template's `now()`
    lines, rendered as Home Assistant renders the prompt."""
    if not per_message_template:
        return ""
    user_name = None
    if llm_context.context and llm_context.context.user_id:
        user = await hass.auth.async_get_user(llm_context.context.user_id)
        user_name = user.name if user else None
    try:
        note: str = template.Template(per_message_template, hass).async_render(
            {
                "ha_name": hass.config.location_name,
                "user_name": user_name,
                "llm_context": llm_context,
            },
            parse_result=False,
        )
    except TemplateError as err:
        response = intent.IntentResponse(language=llm_context.language or "")
        response.async_set_error(
            intent.IntentResponseErrorCode.UNKNOWN,
            "Sorry, I had a problem with my template",
        )
        raise conversation.ConverseError(
            "Error rendering prompt",
            conversation_id=chat_log.conversation_id,
            response=response,
        ) from err
    return note.strip()
