"""What must never reach the user: call markup and thinking."""

from __future__ import annotations

MARKUP = (
    "<tool_call",
    "</tool_call>",
    "<function=",
    "<parameter=",
    "<think>",
    "</think>",
)


def assert_no_markup(text: str) -> None:
    """Fail when `text` holds any call markup or thinking tag."""
    for marker in MARKUP:
        assert marker not in text, f"{marker!r} leaked into {text!r}"
