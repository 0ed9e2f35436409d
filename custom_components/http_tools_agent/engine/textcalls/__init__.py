"""Tool calls that a model wrote as text, found in its streamed reply.

Small local models often write their calls into the reply text instead of
structured ``tool_calls``. :class:`TextCallFilter` takes the reply delta by
delta, returns the calls it finds (:class:`TextCall`) and releases the rest
as speakable text as it arrives: prose without ``<`` (or a ``{``, ``[`` or
fence at the start of a line) passes at once. Formats: Qwen3-Coder XML,
Hermes JSON in ``<tool_call>``, bare or fenced JSON; ``<think>`` goes to
thinking. The rules are in ``docs/text-calls.md``. Standard library only.
"""

from .filter import TextCallFilter
from .names import ToolNames
from .output import FilterOutput, TextCall

__all__ = ["FilterOutput", "TextCall", "TextCallFilter", "ToolNames"]
