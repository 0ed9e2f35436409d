"""The `confirm`, `confirm_question` and `pin` fields of a tool definition:
when a call waits for the user's yes, what is asked, the PIN's secret."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.http_tools_agent.engine.definitions import (
    ToolDefinitionError,
    missing_secrets,
    parse_tools,
)


def tool(**fields: Any) -> dict[str, Any]:
    return {
        "name": "delete_item",
        "parameters": {
            "type": "object",
            "properties": {"item_id": {"type": "string"}},
        },
        "url": "http://127.0.0.1:9/items/{item_id}",
        "method": "DELETE",
        **fields,
    }


@pytest.mark.parametrize(
    ("fields", "asks"),
    [
        ({}, True),  # auto: a DELETE asks
        ({"method": "POST"}, False),
        ({"method": "GET", "confirm": "always"}, True),
        ({"confirm": "never"}, False),
        ({"method": "POST", "pin": "{secret:pin}"}, True),  # a PIN always asks
    ],
)
def test_when_a_call_waits(fields: dict[str, Any], asks: bool) -> None:
    (definition,) = parse_tools([tool(**fields)])
    assert definition.needs_confirmation is asks


def test_the_fields_round_trip_and_the_question_is_filled() -> None:
    raw = tool(
        confirm="always",
        confirm_question="Delete item {item_id} from the list?",
        pin="{secret:list_pin}",
    )
    (definition,) = parse_tools([raw])
    assert definition.as_dict() == {"description": "", **raw}
    assert definition.confirmation.ask({"item_id": "3"}) == (
        "Delete item 3 from the list?"
    )
    assert definition.confirmation.ask({}) == "Delete item from the list?"
    assert definition.secret_names == frozenset({"list_pin"})
    (missing,) = missing_secrets([definition], [])
    assert (
        str(missing) == "tool #0 'delete_item': pin: secret 'list_pin' is not defined"
    )


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"confirm": "sometimes"}, "confirm: must be one of auto, always, never"),
        ({"confirm_question": 3}, "confirm_question: must be a string"),
        (
            {"confirm_question": "Delete {name}?"},
            "confirm_question: placeholder '{name}' names no declared parameter",
        ),
        (
            {"confirm_question": "Key {secret:k}?"},
            "confirm_question: must not use a secret",
        ),
        ({"pin": "1234"}, "pin: must be a secret reference, {secret:name}"),
        ({"pin": "{secret:"}, "pin: must be a secret reference, {secret:name}"),
        (
            {"confirm_question": "x" * 201},
            "confirm_question: must be at most 200 characters",
        ),
        (
            {"confirm_question": "Delete {item_id?"},
            "confirm_question: invalid placeholder at position 7",
        ),
        (
            {"pin": "{secret:p}", "confirm": "never"},
            'pin: a tool with a PIN cannot have confirm "never"',
        ),
    ],
)
def test_bad_values_name_the_field(fields: dict[str, Any], problem: str) -> None:
    with pytest.raises(ToolDefinitionError) as err:
        parse_tools([tool(**fields)])
    assert str(err.value).startswith(f"tool #0 'delete_item': {problem}")
    # A PIN written out is never echoed back in the error.
    assert "1234" not in str(err.value)
