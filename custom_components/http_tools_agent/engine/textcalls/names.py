"""Which offered tool a name written by the model means."""

from __future__ import annotations

from collections.abc import Mapping
import re
from typing import Any

# Verbs small models swap for the one in a tool's name ("remove_item" for
# "delete_item"): each maps to the first of its group.
_VERB_GROUPS = (
    ("delete", "remove", "erase", "del"),
    ("add", "create", "insert", "new"),
    ("update", "change", "modify", "edit", "patch"),
    ("get", "fetch", "read", "retrieve", "show", "check"),
    ("send", "post", "trigger"),
)
_VERB = {verb: group[0] for group in _VERB_GROUPS for verb in group}
_WORD_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _bare(name: str) -> str:
    """A name without case and separators."""
    return re.sub(r"[^0-9a-z]", "", name.lower())


def _verb_key(name: str) -> tuple[str, ...] | None:
    """The name's words, its first word (a known verb) made canonical."""
    words = [word.lower() for word in _WORD_RE.findall(name)]
    if len(words) < 2 or words[0] not in _VERB:
        return None
    return (_VERB[words[0]], *words[1:])


class ToolNames:
    """The offered tools: resolves written names, knows parameter schemas."""

    __slots__ = (
        "_bare", "_exact", "_lower", "_offered", "_prefixes", "_suffix",
        "_verbs",
    )  # fmt: skip

    def __init__(self, tools: Mapping[str, Mapping[str, Any]]) -> None:
        """Index ``tools`` (offered name -> JSON Schema ``parameters``)."""
        self._exact: dict[str, Mapping[str, Any]] = {}
        self._lower: dict[str, list[str]] = {}
        self._suffix: dict[str, list[str]] = {}
        self._verbs: dict[tuple[str, ...], list[str]] = {}
        self._bare: dict[str, list[str]] = {}
        for name, schema in tools.items():
            self._exact[name] = schema if isinstance(schema, Mapping) else {}
            self._lower.setdefault(name.lower(), []).append(name)
            start = name.find("__")
            while start != -1:
                tail = name[start + 2 :]
                if tail:
                    self._suffix.setdefault(tail, []).append(name)
                start = name.find("__", start + 1)
            if (key := _verb_key(name.rpartition("__")[2])) is not None:
                self._verbs.setdefault(key, []).append(name)
            for form in {name, name.rpartition("__")[2]}:
                self._bare.setdefault(_bare(form), []).append(name)
        offered = frozenset(self._exact) | frozenset(self._suffix)
        self._prefixes = frozenset(
            form[:k] for form in offered for k in range(1, len(form) + 1)
        )

    def __bool__(self) -> bool:
        """Whether any tool is offered."""
        return bool(self._exact)

    def resolve(self, written: str) -> str | None:
        """Offered name for ``written``, or None.

        Exact match; else the unique case-insensitive match; else the unique
        offered name ending with ``"__" + written`` (namespaced tool APIs);
        else the unique offered name that differs only by a synonym of its
        first word, the verb (``remove_item`` for ``delete_item``); else the
        unique one that differs only in case and separators (``GetWeather``,
        ``http-tools__GetWeather`` for ``http-tools__get_weather``); else
        what the name after its last ``__`` resolves to.
        """
        written = written.strip()
        if written in self._exact:
            return written
        found = self._lower.get(written.lower())
        if found is not None and len(found) == 1:
            return found[0]
        found = self._suffix.get(written)
        if found is not None and len(found) == 1:
            return found[0]
        key = _verb_key(written)
        found = self._verbs.get(key) if key is not None else None
        if found is not None and len(found) == 1:
            return found[0]
        # Spelled another way: `GetWeather`, `get-weather` for `get_weather`.
        found = self._bare.get(_bare(written))
        if found is not None and len(set(found)) == 1:
            return found[0]
        # A namespace written wrong or in part (`assist__HassTurnOn`,
        # `assistant__intent__HassTurnOn` for `assist__intent__HassTurnOn`):
        # the name after it, when only one offered tool has it.
        prefix, _, tail = written.rpartition("__")
        if prefix and tail:
            return self.resolve(tail)
        return None

    def required(self, tool: str) -> list[str]:
        """The parameters a call of ``tool`` must give, in the schema's order;
        a tool of one parameter requires it (positional values fill these)."""
        schema = self._exact.get(tool) or {}
        required = schema.get("required")
        if isinstance(required, list) and required:
            return [key for key in required if isinstance(key, str)]
        props = schema.get("properties")
        return list(props) if isinstance(props, Mapping) and len(props) == 1 else []

    def exact(self, written: str) -> str | None:
        """The offered name written exactly (or after its namespace's
        ``__``): a call whose markers the server stripped must name its tool
        so, never by a near spelling."""
        if written in self._exact:
            return written
        found = self._suffix.get(written)
        return found[0] if found is not None and len(found) == 1 else None

    def may_start(self, word: str) -> bool:
        """Whether ``word`` begins an offered name (or one after its ``__``)."""
        return word in self._prefixes

    def param_schema(self, tool: str, param: str) -> Mapping[str, Any] | None:
        """JSON Schema of one parameter of an offered tool, if declared."""
        schema = self._exact.get(tool)
        if schema is None:
            return None
        props = schema.get("properties")
        if not isinstance(props, Mapping):
            return None
        found = props.get(param)
        return found if isinstance(found, Mapping) else None
