"""Whether a model's replies start inside thinking that its prompt opened.

Some chat templates end the prompt with ``<think>`` (Qwen3.5, QwQ, the
DeepSeek-R1 distills, GLM-4.7, Nemotron): the model writes its reasoning,
a lone ``</think>``, then the answer. llama.cpp's ``llama-server`` and
Ollama take the reasoning apart themselves (``reasoning_content``); other
servers (llama-cpp-python, vLLM without a reasoning parser) send it as the
answer's text. For those the agent holds a reply's first words until a
``</think>`` says they were thinking, or the reply ends without one. Such a
model is known by its name, or learned from its first lone ``</think>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import re

from .info import KIND_LLAMA_CPP, KIND_OLLAMA

# Families whose templates open `<think>` in the prompt (their templates in
# llama.cpp's test set, `.models/chat_templates/`).
_OPENS_THINKING = re.compile(
    r"qwen3\.5|qwq|deepseek-r1|(?:^|[-_/])r1(?:$|[-_.])|glm-4\.7|nemotron|thinking",
    re.IGNORECASE,
)
# Servers that take the reasoning apart from the answer themselves.
_SEPARATING = frozenset({KIND_LLAMA_CPP, KIND_OLLAMA})


@dataclass(slots=True)
class OpenThinking:
    """The models whose replies begin inside thinking, as far as known."""

    learned: set[str] = field(default_factory=set)

    def holds(self, server_kind: str, model: str) -> bool:
        """Whether a reply of ``model`` starts as possible thinking."""
        if server_kind in _SEPARATING:
            return False
        return model in self.learned or bool(_OPENS_THINKING.search(model))

    def learn(self, model: str) -> None:
        """A reply of ``model`` closed thinking it never opened."""
        self.learned.add(model)
