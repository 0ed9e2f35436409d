"""A tool's own sentences (``sentences``): what a user may say to run it
with no model, per language, in Home Assistant's sentence syntax.

``"sentences": {"en": ["what's the weather in {city}", "[the] weather in
{city}"]}``. A template is hassil's (the library Home Assistant matches
sentences with): ``[optional]`` words, ``(a|b)`` alternatives, ``{slot}``
slots. Each slot is a parameter of the tool: one whose schema has an
``enum`` is a list of those values (the template is written out once per
value, so only they match), any other string, number or integer is a
wildcard (the words said). Every required parameter is filled by a slot
that every way of saying the template has. Templates carry no punctuation
(Home Assistant strips it from what is said before matching). The rules
are in ``docs/tool-format.md`` ("A tool's own sentences"); the matching is
Home Assistant's (`sentences.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import itertools
import re
from typing import Any

from hassil.expression import Alternative, Group, ListReference, RuleReference
from hassil.parse_expression import parse_sentence
from hassil.parser import ParseError
from hassil.util import (
    PUNCTUATION_END,
    PUNCTUATION_END_WORD,
    PUNCTUATION_START,
    PUNCTUATION_START_WORD,
)

from .problems import FieldProblems, type_name

# A language code as Home Assistant writes them: "en", "de", "pt-BR".
LANGUAGE_RE = re.compile(r"^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$")
MAX_TEMPLATES = 50  # per language
MAX_TEMPLATE_LENGTH = 300
# Written-out templates of one template (enum values multiply).
MAX_VARIANTS = 100
# A slot's parameter types: what words said can become (`engine/arguments.py`
# converts "3" to 3 for an integer).
_WILDCARD_TYPES = frozenset({"string", "number", "integer"})
_SLOT = re.compile(r"(?<!\\)\{([^{}]*)\}")
# What a list value may not hold: the template syntax itself.
_SYNTAX = re.compile(r"[\[\]{}()|<>;\\]")

type Sentences = Mapping[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class SentenceVariant:
    """One template as Home Assistant matches it: its enum slots written out
    (their values in `arguments`), the rest wildcards."""

    language: str
    template: str
    arguments: tuple[tuple[str, Any], ...] = ()


def _has_punctuation(template: str) -> bool:
    """Home Assistant's own check of a trigger sentence (slots aside)."""
    text = _SLOT.sub("", template)
    return any(
        pattern.search(text)
        for pattern in (
            PUNCTUATION_START,
            PUNCTUATION_END,
            PUNCTUATION_START_WORD,
            PUNCTUATION_END_WORD,
        )
    )


def _always(expression: Any) -> frozenset[str]:
    """The slots every way of saying `expression` fills."""
    if isinstance(expression, ListReference):
        return frozenset({expression.slot_name})
    if isinstance(expression, Alternative):
        if expression.is_optional or not expression.items:
            return frozenset()
        sets = [_always(item) for item in expression.items]
        return frozenset.intersection(*sets)
    if isinstance(expression, Group):
        found: frozenset[str] = frozenset()
        for item in expression.items:
            found |= _always(item)
        return found
    return frozenset()


def _walk(expression: Any) -> list[Any]:
    """Every expression in `expression`, itself first."""
    found = [expression]
    if isinstance(expression, Group):
        for item in expression.items:
            found.extend(_walk(item))
    return found


def _slot_kind(name: str, schema: object) -> str | None:
    """Why parameter `name` cannot be a slot; None when it can."""
    if not isinstance(schema, Mapping):
        return f"parameter '{name}' has no schema a slot can fill"
    if isinstance(enum := schema.get("enum"), list):
        for value in enum:
            said = str(value)
            if (
                isinstance(value, (dict, list))
                or not said.strip()
                or _SYNTAX.search(said)
                or _has_punctuation(said)
            ):
                return (
                    f"parameter '{name}': the value {value!r} of its enum "
                    "cannot be said in a sentence (plain words only)"
                )
        return None
    if schema.get("type") not in _WILDCARD_TYPES:
        return (
            f"parameter '{name}' has type {schema.get('type')}: a slot "
            "fills only a string, number or integer parameter, or one with an enum"
        )
    return None


def _check_template(
    template: object,
    where: str,
    properties: Mapping[str, Any],
    required: list[str],
    out: FieldProblems,
) -> str | None:
    """One template; None (and its problems recorded) when it is unusable."""
    if not isinstance(template, str):
        out.add(where, f"must be a string, got {type_name(template)}")
        return None
    if not template.strip():
        out.add(where, "must not be empty")
        return None
    if len(template) > MAX_TEMPLATE_LENGTH:
        out.add(where, f"must be at most {MAX_TEMPLATE_LENGTH} characters")
        return None
    if _has_punctuation(template):
        out.add(
            where,
            f"'{template}': no punctuation (what is said is matched without it)",
        )
        return None
    try:
        parsed = parse_sentence(template)
    except (ParseError, ValueError, IndexError) as err:
        out.add(where, f"'{template}' is not a valid sentence template: {err}")
        return None
    before = out.count
    slots: list[str] = []
    for expression in _walk(parsed.expression):
        if isinstance(expression, RuleReference):
            out.add(
                where,
                f"'<{expression.rule_name}>': expansion rules are not available "
                "here; write the words out",
            )
        elif isinstance(expression, ListReference):
            if expression.list_name != expression.slot_name or expression.is_capture:
                out.add(
                    where,
                    f"'{{{expression.list_name}:{expression.slot_name}}}': "
                    "write a slot as the parameter's name alone, e.g. {city}",
                )
            elif expression.slot_name not in properties:
                known = ", ".join(sorted(properties)) or "none"
                out.add(
                    where,
                    f"slot '{{{expression.slot_name}}}' is no parameter of the "
                    f"tool (parameters: {known})",
                )
            elif (
                why := _slot_kind(
                    expression.slot_name, properties[expression.slot_name]
                )
            ) is not None:
                out.add(where, why)
            elif expression.slot_name not in slots:
                slots.append(expression.slot_name)
    filled = _always(parsed.expression)
    for name in required:
        if name not in filled:
            out.add(
                where,
                f"no slot fills the required parameter '{name}' "
                f"(write {{{name}}} outside [optional] parts)",
            )
    if out.count == before and _count_variants(slots, properties) > MAX_VARIANTS:
        out.add(
            where,
            f"its enum slots write it out more than {MAX_VARIANTS} times: "
            "use fewer enum slots, or a parameter without an enum",
        )
    return template if out.count == before else None


def _enum(schema: Mapping[str, Any]) -> list[Any] | None:
    enum = schema.get("enum")
    return enum if isinstance(enum, list) else None


def _count_variants(slots: list[str], properties: Mapping[str, Any]) -> int:
    count = 1
    for name in slots:
        if (values := _enum(properties[name])) is not None:
            count *= max(len(values), 1)
    return count


def check_sentences(
    raw: object, parameters: Mapping[str, Any] | None, out: FieldProblems
) -> dict[str, tuple[str, ...]]:
    """The ``sentences`` field: each language's templates, checked against
    the tool's ``parameters`` (None: they are invalid, only the syntax is
    checked then)."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        out.add(
            "sentences",
            f"must be an object of language codes to lists of sentences, "
            f"got {type_name(raw)}",
        )
        return {}
    properties: Mapping[str, Any] = {}
    required: list[str] = []
    if parameters is not None:
        props = parameters.get("properties")
        properties = props if isinstance(props, Mapping) else {}
        req = parameters.get("required")
        required = (
            [r for r in req if isinstance(r, str)] if isinstance(req, list) else []
        )
    found: dict[str, tuple[str, ...]] = {}
    for language, templates in raw.items():
        where = f"sentences.{language}"
        if not isinstance(language, str) or not LANGUAGE_RE.fullmatch(language):
            out.add(where, "is not a language code (en, de, pt-BR...)")
            continue
        if not isinstance(templates, list) or not templates:
            out.add(
                where,
                f"must be a non-empty list of sentences, got {type_name(templates)}",
            )
            continue
        if len(templates) > MAX_TEMPLATES:
            out.add(where, f"must hold at most {MAX_TEMPLATES} sentences")
            continue
        kept: list[str] = []
        for index, template in enumerate(templates):
            checked = _check_template(
                template, f"{where}[{index}]", properties, required, out
            )
            if checked is not None and checked not in kept:
                kept.append(checked)
        if kept:
            found[language] = tuple(kept)
    return found


def sentence_variants(
    sentences: Sentences, parameters: Mapping[str, Any]
) -> tuple[SentenceVariant, ...]:
    """Every template as Home Assistant matches it: an enum slot written out
    with each of its values (bound in `arguments`), other slots left as
    wildcards."""
    props = parameters.get("properties")
    properties: Mapping[str, Any] = props if isinstance(props, Mapping) else {}
    variants: list[SentenceVariant] = []
    for language, templates in sentences.items():
        for template in templates:
            names = list(dict.fromkeys(_SLOT.findall(template)))
            listed = [
                (name, values)
                for name in names
                if isinstance(properties.get(name), Mapping)
                and (values := _enum(properties[name])) is not None
            ]
            for chosen in itertools.product(*(values for _, values in listed)):
                text = template
                for (name, _), value in zip(listed, chosen, strict=True):
                    text = text.replace(f"{{{name}}}", str(value))
                arguments = tuple(
                    (name, value)
                    for (name, _), value in zip(listed, chosen, strict=True)
                )
                variants.append(SentenceVariant(language, text, arguments))
    return tuple(variants)
