"""The collection's lister of a change (`lookup.lister_of`) is its read-only
tool, whatever its verb: a GET that acts is none, a POST that lists is one."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.http_tools_agent.engine.definitions import parse_tools
from custom_components.http_tools_agent.engine.lookup import item_name, lister_of

BASE = "http://lists.lan/api/items"


def tools(**lister: Any) -> list[Any]:
    """A delete of an item and a tool on the collection's URL."""
    return parse_tools(
        [
            {
                "name": "delete_item",
                "url": BASE + "/{id}",
                "method": "DELETE",
                "parameters": {
                    "type": "object",
                    "properties": {"id": {"type": "string"}},
                    "required": ["id"],
                },
            },
            {"name": "lister", "url": BASE, **lister},
        ]
    )


@pytest.mark.parametrize(
    ("lister", "found"),
    [
        ({"method": "GET"}, True),
        ({"method": "GET", "read_only": False}, False),
        ({"method": "POST"}, False),
        ({"method": "POST", "read_only": True}, True),
    ],
)
def test_the_lister_is_the_read_only_tool(lister: dict[str, Any], found: bool) -> None:
    """By `read_only`, not by the verb."""
    delete, other = tools(**lister)
    assert (lister_of(delete, [delete, other]) is other) is found


@pytest.mark.parametrize(
    ("text", "item_id", "name"),
    [
        ('[{"id": "7", "name": "bread", "qty": 1}]', "7", "bread"),
        ('{"items": [{"item_id": 3, "title": "milk"}]}', "3", "milk"),
        # Another item's id, no name of its own, or no list at all: none.
        ('[{"id": "7", "name": "bread"}]', "8", None),
        ('[{"id": "7", "qty": 1}]', "7", None),
        ("3 items: apples (3).", "3", None),
    ],
)
def test_an_id_read_from_a_list_has_its_name(
    text: str, item_id: str, name: str | None
) -> None:
    """What "Should I remove the bread?" names instead of "id 7"."""
    assert item_name(text, item_id) == name
