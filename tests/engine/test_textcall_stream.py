"""Property tests: the streaming filter does not depend on the chunking."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings, strategies as st

from custom_components.http_tools_agent.engine.textcalls import FilterOutput
from tests.markup import MARKUP

from .textcall_cases import CASE_TOOLS, CASES, FRAGMENTS, TOOLS, TRANSCRIPTS
from .textcall_run import filter_reply, filter_stream

PROPS = settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

PROSE_WORDS = [
    "The",
    " weather",
    " in",
    " Rome",
    " is",
    " sunny",
    ".",
    ",",
    "\n",
    " ",
    "é",
    "☀️",
    " 3",
    "°C",
    "!",
    "'s",
    "-",
    '"',
    ":",
    "(",
    ")",
]


def chunk(text: str, cuts: list[int]) -> list[str]:
    """``text`` split at the given positions (taken modulo its length)."""
    if not text:
        return []
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(points)]


def assert_clean(out: FilterOutput) -> None:
    for tag in MARKUP:
        assert tag not in out.text, (tag, out.text)
    assert all(p.startswith("Error: ") for p in out.problems)


mixed_text = st.lists(
    st.one_of(
        st.sampled_from(FRAGMENTS),
        st.sampled_from(PROSE_WORDS),
        st.sampled_from([c[1] for c in CASES]),
        st.text(
            alphabet='<>{}[]()|`"\\/=:,_ \nabcthinkfunctiolprmegATOLSRG', max_size=12
        ),
    ),
    max_size=14,
).map("".join)

cuts = st.lists(st.integers(min_value=0, max_value=10_000), max_size=40)


@PROPS
@given(text=mixed_text, cut=cuts)
def test_chunking_does_not_change_the_result(text: str, cut: list[int]) -> None:
    whole = filter_reply(text, CASE_TOOLS)
    streamed, _ = filter_stream(chunk(text, cut), CASE_TOOLS)
    assert streamed == whole
    assert_clean(whole)


@PROPS
@given(text=mixed_text)
def test_char_by_char_equals_whole(text: str) -> None:
    whole = filter_reply(text, CASE_TOOLS)
    streamed, _ = filter_stream(list(text), CASE_TOOLS)
    assert streamed == whole
    assert_clean(streamed)


@PROPS
@given(
    name=st.sampled_from(sorted(TRANSCRIPTS)),
    cut=cuts,
    extra=st.sampled_from(["", "\n", " Done.", "<think>x</think>", "```"]),
)
def test_transcripts_any_chunking(name: str, cut: list[int], extra: str) -> None:
    text = "".join(TRANSCRIPTS[name]) + extra
    whole = filter_reply(text, TOOLS)
    real, _ = filter_stream([*TRANSCRIPTS[name], extra], TOOLS)
    streamed, _ = filter_stream(chunk(text, cut), TOOLS)
    assert streamed == whole == real
    assert_clean(whole)


@PROPS
@given(
    text=st.text(
        alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]),
        max_size=60,
    ),
    frags=st.lists(st.sampled_from(FRAGMENTS), max_size=6),
    cut=cuts,
)
def test_garbage_never_raises(text: str, frags: list[str], cut: list[int]) -> None:
    mixed = "".join(f + text[i::3] for i, f in enumerate(frags)) + text
    whole = filter_reply(mixed, CASE_TOOLS)
    streamed, _ = filter_stream(chunk(mixed, cut), CASE_TOOLS)
    assert streamed == whole
    assert_clean(whole)


prose_piece = st.text(
    alphabet=st.characters(
        codec="utf-8",
        exclude_categories=["Cs"],
        # `}` too: a closing brace at a line's start is never speech.
        exclude_characters="<{[`}",
    ),
    min_size=1,
    max_size=8,
)


@PROPS
@given(
    first=st.sampled_from(["The", "Hello", "Sì", "42"]),
    deltas=st.lists(st.one_of(prose_piece, st.sampled_from(PROSE_WORDS)), max_size=30),
)
def test_prose_is_released_chunk_for_chunk(first: str, deltas: list[str]) -> None:
    """No '<', '{', '[', '}' or backtick: every delta comes out at once, as is."""
    deltas = [first, *deltas]
    _, steps = filter_stream(deltas, CASE_TOOLS)
    assert [s.text for s in steps[:-1]] == deltas
    assert steps[-1] == FilterOutput()
    assert all(not s.calls and not s.problems and not s.thinking for s in steps)


@PROPS
@given(
    before=st.lists(st.sampled_from(PROSE_WORDS), max_size=8).map("".join),
    after=st.lists(st.sampled_from(PROSE_WORDS), max_size=8).map("".join),
    call=st.sampled_from(
        [
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nRome\n"
            "</parameter>\n</function>\n</tool_call>",
            '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}'
            "</tool_call>",
            '<function=get_weather>{"city": "Rome"}</function>',
        ]
    ),
    cut=cuts,
)
def test_text_around_tagged_call_is_kept(
    before: str, after: str, call: str, cut: list[int]
) -> None:
    out, _ = filter_stream(chunk(before + call + after, cut), CASE_TOOLS)
    assert [(c.name, c.arguments) for c in out.calls] == [
        ("get_weather", {"city": "Rome"})
    ]
    assert out.text == (before + after).lstrip()
    assert out.problems == []
