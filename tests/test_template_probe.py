"""Which chat templates take a user message right after a tool result: the
real templates of llama.cpp's test set, rendered as the probe renders them.
Where one does, the closing request asks for the answer in a message of its
own; where it refuses (Mistral), a user message there would fail the turn."""

from __future__ import annotations

import pytest

from custom_components.http_tools_agent.template_probe import takes_user_after_tool

from .chat_templates import FAMILIES, templates_dir

TAKES_USER_AFTER_TOOL = {
    "qwen2.5": True,
    "qwen3": True,
    "qwen3.5": True,
    "llama3.1": True,
    "llama3.2": True,
    "llama3.3": True,
    "mistral-nemo": False,
    "mistral-small-3.2": False,
    "ministral-3": False,
    "gemma4": True,
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_real_templates(family: str) -> None:
    source = (templates_dir() / FAMILIES[family]).read_text(encoding="utf-8")
    assert takes_user_after_tool(source) is TAKES_USER_AFTER_TOOL[family]


@pytest.mark.parametrize(
    "template",
    [
        "{{ raise_exception('roles must alternate') }}",
        "{% for m in messages %}{{ m.content }}{% endfor %",  # syntax error
        "{{ messages[0].content.upper() }}",  # no tool result in the prompt
        "{% for m in messages|reverse %}{{ m.content }}\n{% endfor %}",  # order
        "{{ ''.__class__.__mro__ }}",  # the sandbox refuses
    ],
    ids=["refuses", "broken", "drops-results", "reversed", "unsafe"],
)
def test_templates_that_do_not_show_it_in_order(template: str) -> None:
    assert takes_user_after_tool(template) is False


def test_a_plain_template_does() -> None:
    template = "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}"
    assert takes_user_after_tool(template) is True
