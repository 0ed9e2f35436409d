"""English."""

from ..engine.speakable import ReadOutWords
from ..engine.words import phrase_set, word_set, words
from .base import Lexicon

LEXICON = Lexicon(
    language="en",
    marks=word_set("""
        the a an is are was were what what's whats how who where when which why
        do does did of to in on at for with my your it it's its this that there
        these those and or but not please can could would will you i me be been
        turn switch add remove delete send tell show list weather today tonight
        now
    """),
    narration=(
        r"\b(?:call(?:ed|ing|s)?|invok(?:e|ed|es|ing)|execut(?:e|ed|es|ing)|"
        r"us(?:e|ed|es|ing)|run(?:s|ning)?)\s+(?:the\s+|a\s+)?"
        r"(?:`?\w+`?\s+)?(?:tool|function)s?\b",
        r"\b(?:tool|function)\s+call(?:s|ed)?\b",
        r"\bcalled\s+with\b",
        r"\bthe\s+(?:tool|function)\s+`?[\w ]{2,40}?`?\s+"
        r"(?:returned|returns|called|with|gave|says)\b",
    ),
    call_followers=(r"with\b", r"called\b", r"for\s+(?:city|id|name)\b"),
    narration_openers=(
        r"(?-i:I\b)",
        "let",
        "call",
        "invok",
        "execut",
        r"us(?:e|ed|es|ing)\b",
        "run",
        "tool",
        "function",
    ),
    opener_words=words("i let call invoke execute use using run tool function"),
    claims=(
        r"\b(?:has|have)\s+(?:now\s+|just\s+|successfully\s+)?been\s+"
        r"(?:successfully\s+)?(?:added|removed|deleted|sent|set|updated|changed|"
        r"created|turned|switched|notified|scheduled|saved|put|placed|cleared)\b",
        r"\bI(?:'ve|\s+have)?\s+(?:just\s+|now\s+|successfully\s+)?"
        r"(?:added|removed|deleted|sent|set|updated|changed|created|turned|"
        r"switched|notified|scheduled|saved|put|placed|cleared|informed|told)\b",
        r"\b(?:has|have)\s+(?:now\s+|just\s+|successfully\s+)?(?:added|removed|"
        r"deleted|sent|set|updated|changed|created|turned|switched|notified|"
        r"saved|put|placed|cleared)\b",
        r"^\W*(?:added|removed|deleted|sent|updated|changed|created|turned on|"
        r"turned off|switched on|switched off|notified|saved)\b",
        r"\b(?:is|are)\s+now\s+(?:on|off|set|turned|switched|added|removed|gone)\b",
        # "The milk is now in the shopping list." (P4a, no request made)
        r"\b(?:is|are)\s+now\s+(?:in|on)\s+(?:the|your|my)\s+\w*\s*list\b",
        r"\b(?:is|are|was|were)\s+(?:turned|switched)\s+(?:on|off)\b",
        r"\b(?:successfully|now)\s+(?:added|removed|deleted|sent|updated|set)\b",
        r"^\W*done\b",
    ),
    action_words=words("""
        add put remove delete take send notify tell let set change update turn
        switch open close lock unlock start stop trigger ping make increase
        decrease clear erase create save buy dim raise lower
    """),
    # One to three words of a thing, "on" or "off", perhaps where and
    # "please"; never a sentence about a person ("I'm off to bed.").
    switch_phrases=(
        r"(?!(?:i|i'm|im|we|we're|you|you're|he|she|it|it's|they|they're|that|"
        r"that's|this|there|what|what's)\b)"
        r"(?:[a-z][\w'-]*\s+){1,3}(?:on|off)"
        r"(?:\s+(?:in|at)\s+(?:the\s+)?[a-z][\w'-]*(?:\s+[a-z][\w'-]*)?)?"
        r"(?:\s*,?\s*please)?",
    ),
    info_requests=(r"\b(?:tell|show|give)\s+me\b", r"\blet\s+me\s+know\b"),
    question_openers=(
        r"(?:is|are|was|were|does|do|did|has|have|had)\b",
        r"(?:what|what's|whats|which|who|whose|where|when|how|why)\b",
        r"(?:is|are)\s+there\b",
    ),
    request_openers=(
        r"(?:can|could|would|will)\s+(?:you|u)\b",
        r"(?:please|kindly)\b",
        r"(?:i\s+want|i'd\s+like|i\s+would\s+like|i\s+need)\b",
        r"(?:would\s+you\s+mind|do\s+you\s+mind)\b",
        r"how\s+about\b",
    ),
    instruction_echoes=(
        r"\bthe\s+user(?:'s\s+question\s+is|\s+asked)\s*[:\"“]",
        r"\btool\s+(?:results?|responses?)\s+(?:above|provides?)\b",
        r"\banswer\s+the\s+user's\s+question\b",
    ),
    says_failed=(
        r"can(?:no|')t",
        r"could(?: not|n't)",
        "unable",
        "failed",
        r"did(?: not|n't)",
        r"was(?: not|n't)",
        r"not (?:able|possible|found)",
        r"no (?:device|entity)",
        "error",
    ),
    acts={
        "add": words("add put insert create new"),
        "delete": words("delete remove erase take rid drop clear del"),
        "update": words("""
            update change set modify edit make increase decrease dim brighten
            patch
        """),
        "send": words("send notify tell let message ping trigger alert post"),
        "get": words("get read list show check fetch find search"),
        "turn_on": words("on open start"),
        "turn_off": words("off close stop"),
    },
    # A result read out (`engine/speakable.py`).
    read_out=ReadOutWords(
        and_word="and",
        yes="yes",
        no="no",
        nothing="nothing",
        items="{count} items",
        some_items="{count} of {total} items",
        pages_more="first {pages} pages, there are more",
        pages_failed="page {page} failed",
        decimal=".",
        keys={"temp": "temperature"},
    ),
    example_markers=(r"e\.g\.", "for example", "such as", "like"),
    common=word_set("""
        a an and are as at be by can for from in is it its of on or the this to
        what when where which who with you your call tool tools use get set
    """),
    # Whole answers (a phrase is matched word for word): `turn/hold.py`.
    topics={
        "weather": words("umbrella raining rainy sunny cloudy"),
    },
    stated_results=(
        r"\b(?:is|are) empty\b",
        r"\bthere are no items\b",
        r"\bnothing on (?:it|the|your)\b",
        r"\bneed (?:an|your|the) umbrella\b",
        r"\bit(?: is|'s) (?:raining|sunny|cloudy)\b",
    ),
    yes=phrase_set("""
        yes | yeah | yep | yup | sure | ok | okay | confirm | confirmed |
        correct | right | affirmative | do it | go ahead | yes please |
        please do
    """),
    no=phrase_set("""
        no | nope | nah | cancel | stop | don't | do not | never mind |
        no thanks | abort
    """),
    fillers=word_set("please thanks thank you it the pin code is my"),
    later=(
        "in {later} (second|seconds|minute|minutes|hour|hours)",
        "in (a|an|half an) (minute|hour)",
    ),
    joiners=word_set("and or versus vs"),
)
