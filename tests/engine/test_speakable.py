"""Tool results read aloud when the model gives no answer."""

from __future__ import annotations

import pytest

from custom_components.http_tools_agent.engine.speakable import speakable


@pytest.mark.parametrize(
    ("result", "spoken"),
    [
        ("Rome: ☀️ +14°C\n", "Rome: ☀️ +14°C"),
        # Things with a name are said by it, with their one number.
        ('{"id": "4", "name": "bread", "qty": 1}', "bread (1)"),
        (
            '[{"id": "1", "name": "milk", "qty": 2}, {"id": "2", "name": "eggs", "qty": 12}]',
            "milk (2), eggs (12)",
        ),
        ('[{"title": "Rain tomorrow", "id": 7}]', "Rain tomorrow"),
        ('{"name": "lamp", "watts": 40, "lumens": 470}', "lamp"),
        # Other JSON is flattened to words.
        ('{"deleted": "3"}', "deleted 3"),
        ('{"ok": true, "note": null, "temp_c": 14.0}', "temp c 14"),
        # A webhook's acknowledgement: the message it received, not "ok yes".
        ('{"ok": true, "received": "Pizza tonight!"}', "received Pizza tonight!"),
        ('{"ok": false, "error": "full"}', "ok no, error full"),
        ("HTTP 204", "HTTP 204"),
    ],
)
def test_results_become_words(result: str, spoken: str) -> None:
    """JSON becomes words that sound like an answer; text keeps its words,
    not its layout."""
    assert speakable(result) == spoken


def test_long_results_are_cut_at_a_word() -> None:
    """A long result is cut at a word boundary with an ellipsis."""
    text = speakable(" ".join(["word"] * 200), limit=50)
    assert text.endswith("…")
    assert len(text) <= 51
    assert "wor…" not in text
