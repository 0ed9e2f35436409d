"""Examples in the prompt that show a small model how to use its tools.

home-llm lifts small models with in-context examples; here an agent may add
them to its system prompt, where they stay byte-identical from turn to turn
(the server's prompt cache keeps them): written by the user, or generated
from the tools' names, descriptions and schemas. A generated example shows
one call per tool in the JSON form models write (`{"name": …,
"arguments": …}`) with its required arguments, their values taken from the
schema (`examples`, `default`, `enum`, an "e.g. …" in a description, else a
`<name>` placeholder), and what to do with a result and with small talk.
"""

from __future__ import annotations

from collections.abc import Mapping
import json
import re
from typing import Any

from ..const import EXAMPLES_CUSTOM, EXAMPLES_GENERATED
from ..lexicon import alternatives, every

HEADER = "Examples of requests and answers:"
# What introduces an example value in a description, in every language of
# `lexicon/` ("e.g.", "for example").
_EG_RE = re.compile(
    alternatives(every(lambda lex: lex.example_markers))
    + r"\s*[:,]?\s*['\"“]?([^'\"”,;)]+)",
    re.I,
)
_SAMPLE = {"integer": 2, "number": 1.5, "boolean": True}
_MAX_TOOLS = 12


def _sample(name: str, schema: Mapping[str, Any]) -> Any:
    """A plausible value for one argument, from what its schema says."""
    examples = schema.get("examples")
    if isinstance(examples, list) and examples:
        return examples[0]
    for key in ("default", "const"):
        if key in schema:
            return schema[key]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if kind in _SAMPLE:
        return _SAMPLE[kind]
    if kind == "array":
        items = schema.get("items")
        return [_sample(name, items)] if isinstance(items, Mapping) else []
    if kind == "object":
        return _arguments(schema)
    description = schema.get("description")
    if isinstance(description, str) and (match := _EG_RE.search(description)):
        return match.group(1).strip()
    return f"<{name}>"  # a placeholder, plainly


def _arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Sample arguments: the required ones."""
    properties = schema.get("properties")
    required = schema.get("required")
    if not isinstance(properties, Mapping) or not isinstance(required, list):
        return {}
    names = [n for n in properties if n in required]
    return {
        n: _sample(n, properties[n])
        for n in names
        if isinstance(properties[n], Mapping)
    }


def generated_examples(schemas: Mapping[str, Mapping[str, Any]]) -> str:
    """Examples made from the offered tools (name -> parameters schema)."""
    if not schemas:
        return ""
    lines = [
        HEADER,
        "To use a tool, reply with only one JSON object that names it, e.g.:",
    ]
    for name, schema in list(schemas.items())[:_MAX_TOOLS]:
        arguments = _arguments(schema)
        lines.append(
            json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
        )
    lines += [
        "When the tool's result comes back, answer the user in one short "
        "sentence that uses it.",
        "When no tool fits the request, answer in plain words without JSON: "
        'to "Thank you!" answer "You\'re welcome!".',
    ]
    return "\n".join(lines)


def examples_text(
    mode: str, custom: str, schemas: Mapping[str, Mapping[str, Any]]
) -> str:
    """The examples an agent adds to its system prompt ("" for none)."""
    if mode == EXAMPLES_GENERATED:
        return generated_examples(schemas)
    if mode == EXAMPLES_CUSTOM and custom.strip():
        return f"{HEADER}\n{custom.strip()}"
    return ""
