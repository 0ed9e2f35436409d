"""What must never reach the user: call markup and thinking.

No Home Assistant import: the engine tests use it too.
"""

from __future__ import annotations

# The 2026 families' markers (`engine/textcalls/markers.py`): a whole one
# never reaches the user, wherever it stands.
FAMILY_MARKERS = (
    "[TOOL_CALLS]",
    "[ARGS]",
    "[CALL_ID]",
    "[THINK]",
    "[/THINK]",
    "<|tool_call>",
    "<tool_call|>",
    "<|tool_call|>",
    "<|tool_call_start|>",
    "<|tool_call_end|>",
    "<|python_tag|>",
    "<|python_start|>",
    "<|channel>",
    "<channel|>",
    "<|channel|>",
    "<|message|>",
    "<|start|>",
    "<|end|>",
    "<|call|>",
    "<|eot_id|>",
    "<|im_end|>",
    "<TOOLCALL>",
    "</TOOLCALL>",
    "<start_function_call>",
    "<end_function_call>",
    "<end_of_turn>",
    "</s>",
)
# Call markup and thinking tags (what the text-call filter removes).
MARKUP = (
    "<tool_call",
    "</tool_call>",
    "<function=",
    "</function>",
    "<parameter=",
    "</parameter>",
    "<think>",
    "</think>",
    "<tool_response>",
    "</tool_response>",
    *FAMILY_MARKERS,
)
# What a call can leave in an answer: markup (cut tags too), the key of a
# bare JSON call, its fence.
SPOKEN_MARKUP = (
    "<tool_call",
    "</tool_call>",
    "<function",
    "</function>",
    "<parameter",
    "</parameter>",
    "<think",
    "</think>",
    "<tool_response",
    "</tool_response>",
    '"arguments"',
    "```json",
)


def assert_no_markup(text: str) -> None:
    """Fail when `text` holds any call markup or thinking tag."""
    for marker in MARKUP:
        assert marker not in text, f"{marker!r} leaked into {text!r}"


def markup_in(text: str) -> list[str]:
    """What of SPOKEN_MARKUP an answer holds."""
    return [m for m in SPOKEN_MARKUP if m in text]


def assert_clean(text: str, *also: str) -> None:
    """Fail when an answer holds anything of SPOKEN_MARKUP, or of `also`."""
    for marker in (*SPOKEN_MARKUP, *also):
        assert marker not in text, f"{marker!r} reached the user: {text!r}"
