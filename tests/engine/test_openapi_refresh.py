"""A refresh's rules on the Swagger Petstore (3.0) as a service updates it.

Your edits stay (a field you changed, added or removed), an operation whose
`operationId` was renamed is found again by its verb and path, one that can
no longer be a tool goes with the reason, a new one is offered and added only
when asked for. No Home Assistant here: `engine/openapi/refresh.py` is pure.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from custom_components.http_tools_agent.engine.openapi.document import read_document
from custom_components.http_tools_agent.engine.openapi.mapping import OpenApiDocument
from custom_components.http_tools_agent.engine.openapi.refresh import (
    GONE,
    Source,
    apply_refresh,
    plan_refresh,
    recorded,
)

URL = "https://petstore3.swagger.io/api/v3/openapi.json?api_key=abc"
PETSTORE: dict[str, Any] = read_document(
    (
        Path(__file__).parents[1] / "fixtures" / "openapi" / "petstore-3.0.yaml"
    ).read_text()
).data
IMPORTED = ["findPetsByStatus", "getPetById", "deletePet", "updatePetWithForm"]


def document(data: dict[str, Any]) -> OpenApiDocument:
    """The document as the refresh reads it."""
    return OpenApiDocument(read_document(json.dumps(data), URL))


def imported() -> tuple[list[dict[str, Any]], Source]:
    """Four operations imported; the source the entry remembers."""
    doc = document(PETSTORE)
    result = doc.to_tools(IMPORTED)
    tools = [dict(t) for t in result.tools]
    return tools, recorded(Source(URL), doc, tools, result.operations)


def by_name(tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The tools by name."""
    return {t["name"]: t for t in tools}


def test_the_document_changes_your_edits_stay() -> None:
    """Fields you changed, added or removed are yours; the others follow."""
    tools, source = imported()
    assert [t.name for t in source.tools] == IMPORTED
    # Stored and read back as the options keep it.
    stored = Source.from_dict(json.loads(json.dumps(source.as_dict())))
    assert stored == source
    mine = by_name(tools)
    mine["findPetsByStatus"]["enabled"] = False
    del mine["findPetsByStatus"]["response"]
    mine["getPetById"]["description"] = "One pet, by its number."

    data = copy.deepcopy(PETSTORE)
    paths = data["paths"]
    by_status = paths["/pet/findByStatus"]["get"]
    by_status["summary"] = "Pets by status (available, pending, sold)."
    by_status["responses"]["200"]["content"]["application/json"]["schema"] = {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "id": {"type": "integer"},
                "name": {"type": "string"},
                "owner": {"type": "object"},
            },
        },
    }
    one = paths["/pet/{petId}"]["get"]
    one["operationId"] = "fetchPet"
    one["summary"] = "Fetch a pet."
    del paths["/pet/{petId}"]["delete"]
    # A form that now takes a file: it can no longer be a tool.
    form = paths["/pet/{petId}"]["post"]
    form["requestBody"] = {
        "required": True,
        "content": {"multipart/form-data": {"schema": {"type": "object"}}},
    }
    paths["/pet/{petId}/toys"] = {
        "get": {
            "operationId": "listToys",
            "summary": "A pet's toys.",
            "parameters": [
                {
                    "name": "petId",
                    "in": "path",
                    "required": True,
                    "schema": {"type": "integer"},
                }
            ],
            "responses": {"200": {"description": "OK"}},
        }
    }
    refresh = plan_refresh(document(data), source, tools)

    assert [(r.name, r.reason) for r in refresh.removed] == [
        ("deletePet", GONE),
        (
            "updatePetWithForm",
            "its request body is multipart/form-data: files and multipart "
            "forms are not sent, a tool sends JSON or a urlencoded form",
        ),
    ]
    changes = {c.name: c for c in refresh.changed}
    assert changes["findPetsByStatus"].fields == ("description", "response")
    assert changes["findPetsByStatus"].kept == ("response",)
    assert changes["getPetById"].fields == ("description",)
    assert changes["getPetById"].kept == ("description",)
    # Renamed, found by its route: neither gone nor new.
    assert [o.operation.key for o in refresh.added] == ["listToys"]

    after, updated = apply_refresh(refresh, tools, add=["listToys"])
    result = by_name(after)
    assert list(result) == ["findPetsByStatus", "getPetById", "listToys"]
    assert result["findPetsByStatus"]["enabled"] is False
    assert "response" not in result["findPetsByStatus"]
    assert result["findPetsByStatus"]["description"].startswith("Pets by status")
    assert result["getPetById"]["description"] == "One pet, by its number."
    assert result["listToys"]["url"] == (
        "https://petstore3.swagger.io/api/v3/pet/{petId}/toys"
    )
    assert [(t.name, t.operation) for t in updated.tools] == [
        ("findPetsByStatus", "findPetsByStatus"),
        ("getPetById", "fetchPet"),
        ("listToys", "listToys"),
    ]
    # Read again, the document is what the source remembers: nothing to do.
    assert not plan_refresh(document(data), updated, after).has_changes


def test_not_asked_for_nothing_new_and_your_deletions_forgotten() -> None:
    """A new operation left unticked is not added (nor offered again); a
    tool you deleted is forgotten, the others untouched."""
    tools, source = imported()
    kept = [t for t in tools if t["name"] != "deletePet"]
    data = copy.deepcopy(PETSTORE)
    data["paths"]["/pet/{petId}/toys"] = {
        "get": {"operationId": "listToys", "responses": {"200": {"description": "OK"}}}
    }
    refresh = plan_refresh(document(data), source, kept)
    assert refresh.untracked == ("deletePet",)
    assert (refresh.removed, refresh.changed) == ((), ())
    after, updated = apply_refresh(refresh, kept)
    assert after == kept
    assert [t.name for t in updated.tools] == [
        "findPetsByStatus",
        "getPetById",
        "updatePetWithForm",
    ]
    assert not plan_refresh(document(data), updated, after).has_changes


def test_a_stored_source_that_is_not_one_is_skipped() -> None:
    """Storage edited by hand: no URL, no source."""
    assert Source.from_dict({"tools": []}) is None
    assert Source.from_dict({"url": URL}) == Source(URL)
