"""Everything the `small` profile changes in a turn, in one place.

A capable model gets the plain loop (`turn/loop.py`): every call of every
round runs, after the checks of the call gate that apply to every profile
(`turn/calls.py`: arguments, repeats, calls copied from results, ids
nobody read, the turn's cap), and the model decides what comes next. A
small model (below 2 B parameters, `server/profiles.py`) does things a
model that plans does not; each rule below guards against one of them,
measured with Qwen2.5-Coder-0.5B on llama-cpp-python (bench/RESULTS.md: P4
on the tuning and the held-out requests, and what each rule costs a model
that is right, P9). `rules_for` gives a turn its rules, among them what the
model is sent of earlier turns (`history`). The rules' steps live in
`small/guards.py` (the gate's guards) and `small/answer.py` (the request
for the answer, and when it is not needed).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..agent_options import AgentOptions
    from ..server.profiles import ProfileChoice


@dataclass(frozen=True, slots=True)
class Rules:
    """Which small-model rules a turn applies."""

    # Once a round's calls all succeeded, the next request asks for the
    # answer (the instruction rides on the last tool result: `answer_nudge`)
    # and only a call of a tool the turn used, for more of what the user
    # named, still runs (`MoreOf`); then a closing request without tools.
    # Offered any call after a result, the 0.5B model calls other tools.
    answer_request: bool = False
    # A reply that says an action was done ("Eggs have been added") when the
    # user asked for one and no tool that changes something ran is not
    # spoken: asked once more, then the agent says nothing was done
    # (`honesty.claims_action`).
    claims_need_calls: bool = False
    # A call that changes something and that nothing in the user's words
    # of this turn asks for runs not (`asks_for`): "Add milk to the list."
    # drew the add, the weather for Paris, the list and a notification to
    # the family; "What is 2 plus 2?" a call to every tool. Alone in its
    # reply or beside others: a change is asked for or it does not run, and
    # words with no action word ask for none.
    unasked_changes: bool = False
    # A question asks for no change at all, whatever the model calls: "Is
    # the bed light on?" drew HassTurnOn ("on" is a word of turning on);
    # "Is the garage open?" names `open_garage`'s verb and noun.
    # A request asked as a question ("Can you turn on the light?") still
    # asks for its change (`honesty.is_question`).
    questions_change_nothing: bool = False
    # In a turn in which no tool ran, a reply that states what a tool would
    # have returned (the shape of an earlier result with other values, or
    # a number about what a reading tool tells) is not spoken: asked once
    # more, then nothing was done (`honesty.makes_up_result`). The 0.5B
    # model answered "And in Paris?" with "Paris: sunny, 18°C." after
    # Rome's result, no call made.
    results_need_calls: bool = False
    # An Assist intent's `area` or `floor` that is no area or floor of the
    # house and not in the user's words is left out of the call (`places`):
    # the 0.5B model turned "Turn on the kitchen lights." into HassTurnOn
    # with an invented floor, which matched no device.
    invented_places: bool = False
    # A reading call's optional text argument that is none of the user's
    # words is left out: a filter nobody asked for finds nothing. "What's on
    # my shopping list?" drew `list_items` with `{"search": "shoes"}`.
    invented_filters: bool = False
    # A change refused for an id nobody read (`lookup.guessed_ids`)
    # reads the collection first (its `GET` tool), and the agent changes the
    # one item whose name the user said: "remove the bread" drew
    # `delete_item` with an id the 0.5B model invented (the apples went).
    reads_first: bool = False
    # A round whose calls all succeeded and whose answer the agent has
    # without the model is answered so, with no request for the answer:
    # each call's own sentence (a tool's `speech`, or what Home Assistant's
    # agent says of an Assist intent: `turn/intent_speech.py`), or the
    # read-out (`turn/read_out.py`) of the change a request to act asked
    # for, or of the reads a request for no change asked for, when it says
    # all the model could read in them and the model would only be asked
    # for the answer (`answer_request`), unless the request joins several
    # things and may get another call (`answer.may_ask_more`); after the
    # request for the answer ran such calls, no closing request either.
    # With the 0.5B model those requests were most of a turn's seconds and
    # the read-out was said after them all the same (bench/RESULTS.md,
    # "Spoken templates" and "No model round that cannot change the
    # answer"). A capable model still answers itself; it gets the sentence
    # only as the read-out when it leaves the results unsaid.
    own_answer: bool = False
    # What the model is sent of earlier turns when its agent leaves it to
    # the profile (`turn/request.py`): bench/RESULTS.md, P4m, with
    # Qwen2.5-Coder-0.5B: with no earlier turn the follow-ups made the right
    # requests 14/18 and 12/17 times (tuning / held-out conversations), with
    # all of them 10/18 and 5/17, and 0 and 2 answers were made up against
    # 3 and 7. The model copies what it sees; it guesses the rest from the
    # words.
    history: str = "all"


PLAIN = Rules()
SMALL_RULES = Rules(
    answer_request=True,
    claims_need_calls=True,
    unasked_changes=True,
    questions_change_nothing=True,
    results_need_calls=True,
    invented_places=True,
    invented_filters=True,
    reads_first=True,
    own_answer=True,
    history="none",
)


def rules_for(options: AgentOptions, profile: ProfileChoice) -> Rules:
    """The rules a turn applies: its profile's, with the agent's
    `chain_calls` choice over the request for the answer."""
    rules = SMALL_RULES if profile.small else PLAIN
    if options.chain_calls is not None:
        rules = replace(rules, answer_request=not options.chain_calls)
    return rules
