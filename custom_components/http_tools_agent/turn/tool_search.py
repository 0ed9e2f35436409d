"""A search for large tool sets: the model is shown a few HTTP tools, not all.

Forty operations imported from an *arr app cost every request their
schemas (about 50 tokens a tool in Qwen's template) and leave a 0.5B model
a list it cannot choose from. Above `THRESHOLD` HTTP tools a turn shows
the model either the tools its user's words name (`PRESELECT`: ranked by
the sentence, the best `PRESELECTED`, no extra round) or one tool,
`find_tools(query)` (`SEARCH`): its result names the best `FOUND` tools,
and the next round offers their schemas, so the model calls the one it
wants as it calls any tool. Every tool still runs when called by its name
(the chat log's API holds them all): a capable model that knows the tool
it means loses nothing. Other APIs' tools (Assist's, the clock) are
always shown. `auto` preselects for the small profile only: measured
with 46 tools (bench/RESULTS.md, "A search for large tool sets"), the
0.5B model did better preselected than shown every tool and never used
the search, and a search costs a capable model rounds (P9 29/32).

The ranking is BM25 over each tool's name (counted twice), description
and parameters; a request's words in the agent's languages add the words
tools are written with (`Lexicon.topics`: "tempo" -> weather; `acts`:
"aggiungi" -> add).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
import math
import re
from typing import Any, override

from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm
from homeassistant.util.json import JsonValueType
from openai.types.chat import ChatCompletionFunctionToolParam
import probatio

from ..const import DOMAIN
from ..lexicon import ACTS, LEXICONS, every
from .messages import ChatTools, chat_tools

FIND_TOOLS = "find_tools"
# More HTTP tools than this and a turn shows only some of them: past 20
# tools the block is over 1,000 tokens (a quarter of a 4k context) and the
# 0.5B model picks among distractors (bench/RESULTS.md).
THRESHOLD = 20
# Tools shown by the sentence (`PRESELECT`), and named by a search.
PRESELECTED = 5
FOUND = 3

_SPLIT = re.compile(r"[^\w]+|_", re.UNICODE)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_BM25_K1 = 1.2
_BM25_B = 0.75


class SearchMode(StrEnum):
    """How a turn over `THRESHOLD` HTTP tools shows them (the agent's
    `tool_search` setting; `auto` chooses per profile: `mode_for`)."""

    OFF = "off"
    SEARCH = "search"
    PRESELECT = "preselect"


def _stem(word: str) -> str:
    """A plural's singular, roughly ("items" -> "item"), both sides alike."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    """The words of a name, description or request, lower case and stemmed
    (`addItem`, `add_item` and "add item" alike)."""
    split = _SPLIT.split(_CAMEL.sub(" ", text))
    return [_stem(w.lower()) for w in split if w and not w.isdigit()]


# Words that say nothing of a tool's domain, in every language.
_COMMON = frozenset(every(lambda lexicon: lexicon.common))


def _topics() -> dict[str, tuple[str, ...]]:
    """A request's word -> the words tools are written with ("tempo" ->
    weather)."""
    found: dict[str, list[str]] = {}
    for topic, word in every(
        lambda lex: ((t, w) for t, ws in lex.topics.items() for w in ws)
    ):
        found.setdefault(word, []).append(topic)
    return {word: tuple(topics) for word, topics in found.items()}


_TOPICS = _topics()


def _acts() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The stems that ask for an act -> the act's words ("turn_on" -> turn,
    on)."""
    return tuple(
        (stem, tuple(act.split("_")))
        for act in ACTS
        for stem in dict.fromkeys(
            s for lexicon in LEXICONS.values() for s in lexicon.acts.get(act, ())
        )
    )


_ACTS = _acts()


def query_words(text: str) -> list[str]:
    """The words a request is searched with: its own (common words aside)
    and, from the lexicons, the words tools use for what it names."""
    found: list[str] = []
    for raw in _SPLIT.split(text.lower()):
        if len(raw) < 2 or raw.isdigit() or raw in _COMMON:
            continue
        found.append(_stem(raw))
        found.extend(_stem(w) for w in _TOPICS.get(raw, ()))
        for stem, act in _ACTS:
            if raw == stem or (len(stem) > 3 and raw.startswith(stem)):
                found.extend(act)
    return list(dict.fromkeys(found))


def _tool_words(function: Mapping[str, Any]) -> list[str]:
    """What a tool is found by: its name twice, its description, its
    parameters' names and descriptions."""
    name = words(str(function.get("name", "")).rpartition("__")[2])
    found = [*name, *name, *words(str(function.get("description") or ""))]
    properties = (function.get("parameters") or {}).get("properties") or {}
    for key, schema in properties.items():
        found.extend(words(key))
        if isinstance(schema, Mapping):
            found.extend(words(str(schema.get("description") or "")))
    return [w for w in found if w not in _COMMON]


@dataclass(frozen=True, slots=True)
class ToolIndex:
    """BM25 over the tools' words."""

    docs: Mapping[str, Counter[str]]
    frequency: Mapping[str, int]
    average: float

    @classmethod
    def of(cls, functions: Iterable[Mapping[str, Any]]) -> ToolIndex:
        """Index the tools (the `function` of each `tools` entry)."""
        docs = {str(f["name"]): Counter(_tool_words(f)) for f in functions}
        frequency: Counter[str] = Counter()
        for counts in docs.values():
            frequency.update(counts.keys())
        total = sum(sum(counts.values()) for counts in docs.values())
        return cls(docs, frequency, total / len(docs) if docs else 0.0)

    def rank(self, text: str) -> list[str]:
        """The tools the words of `text` match, best first (ties in the
        tools' order); none when nothing matches."""
        terms = query_words(text)
        count = len(self.docs)
        scored: list[tuple[float, int, str]] = []
        for order, (name, counts) in enumerate(self.docs.items()):
            length = sum(counts.values()) or 1
            score = 0.0
            for term in terms:
                if not (tf := counts.get(term, 0)):
                    continue
                df = self.frequency[term]
                idf = math.log(1 + (count - df + 0.5) / (df + 0.5))
                norm = 1 - _BM25_B + _BM25_B * length / (self.average or 1)
                score += idf * tf * (_BM25_K1 + 1) / (tf + _BM25_K1 * norm)
            if score > 0:
                scored.append((-score, order, name))
        return [name for _, _, name in sorted(scored)]


@dataclass(slots=True)
class ToolSearch:
    """What one turn shows of its HTTP tools, and what its searches found."""

    mode: SearchMode
    index: ToolIndex
    # The HTTP tools the next request shows (the others are always shown).
    shown: set[str] = field(default_factory=set)
    searchable: frozenset[str] = frozenset()

    def visible(self, name: str) -> bool:
        """Whether the next request offers the tool `name`."""
        return name not in self.searchable or name in self.shown

    def find(self, query: str) -> list[str]:
        """The best tools for `query`; the next request offers them."""
        found = self.index.rank(query)[:FOUND]
        self.shown.update(found)
        return found


def mode_for(setting: str, small: bool) -> SearchMode:
    """The mode a turn over the threshold runs with: the setting, or for
    `auto` what measured best for the profile (bench/RESULTS.md)."""
    if setting != "auto":
        return SearchMode(setting)
    return SearchMode.PRESELECT if small else SearchMode.OFF


def tool_search(
    mode: SearchMode,
    tools: Sequence[ChatCompletionFunctionToolParam],
    searchable: frozenset[str],
    question: str,
) -> ToolSearch | None:
    """The turn's search, or None when it shows every tool (mode off, or
    `THRESHOLD` HTTP tools or fewer). `tools`: the `tools` array."""
    if mode is SearchMode.OFF or len(searchable) <= THRESHOLD:
        return None
    index = ToolIndex.of(
        t["function"] for t in tools if t["function"]["name"] in searchable
    )
    search = ToolSearch(mode, index, searchable=searchable)
    if mode is SearchMode.PRESELECT:
        search.shown.update(index.rank(question)[:PRESELECTED])
    return search


class FindTools(llm.Tool):
    """The search a turn over the threshold offers (`SearchMode.SEARCH`)."""

    name = FIND_TOOLS
    description = (
        "Find the tool for the user's request: give a few words of what they "
        "want (e.g. 'weather', 'add item'). The tools found can be called next."
    )
    parameters = probatio.Schema({probatio.Required("query"): str})
    annotations = llm.ToolAnnotations(
        read_only=True, destructive=False, idempotent=True, open_world=False
    )
    integration = DOMAIN

    def __init__(self, search: ToolSearch, functions: Mapping[str, Any]) -> None:
        """Search the turn's tools (`functions`: each one's `function`)."""
        self.search = search
        self.functions = functions

    @override
    async def async_call(
        self,
        hass: HomeAssistant,
        tool_input: llm.ToolInput,
        llm_context: llm.LLMContext,
    ) -> llm.ToolResult:
        """The names, descriptions and parameters of the best tools."""
        query = str(tool_input.tool_args.get("query") or "")
        found: list[JsonValueType] = []
        for name in self.search.find(query):
            function = self.functions[name]
            properties = (function.get("parameters") or {}).get("properties") or {}
            found.append(
                {
                    "name": name,
                    "description": function.get("description", ""),
                    "parameters": [str(key) for key in properties],
                }
            )
        return llm.ToolResult(data={"tools": found})


def with_search(
    llm_api: llm.APIInstance | None,
    offered: ChatTools,
    mode: SearchMode,
    question: str,
) -> tuple[ChatTools, ToolSearch | None]:
    """What a turn offers, and its search (None: every tool is shown). In
    `SEARCH` mode the turn's API gets `find_tools`, so the chat log runs its
    calls as any tool's."""
    search = tool_search(mode, offered.tools, offered.http, question)
    if search is None or mode is not SearchMode.SEARCH or llm_api is None:
        return offered, search
    functions = {t["function"]["name"]: t["function"] for t in offered.tools}
    llm_api.tools.append(FindTools(search, functions))
    return chat_tools(llm_api), search
