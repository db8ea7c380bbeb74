"""Triage before retrieval: is this message small talk, a question about Flatuniverse itself, or a
research question to search for?

"hi" once retrieved eight papers and quoted a 2007 abstract on "HI absorption". The rules below
accept a message as small talk or meta only when the *whole* message is one of a few fixed forms
(greetings, thanks, goodbyes, "what can you do?", "who are you?", "help"), give or take
punctuation, emoji and a name ("hi there", "thanks a lot!", "hello Flatuniverse"). Anything else
is research, so "hi-c chromatin", "HI absorption lines" or "GANs" are searched as before: a
wrong "research" costs one search that the relevance gate then answers honestly, a wrong
"small talk" loses a question.

`sure` is False for short messages that are neither clearly chat nor clearly a topic ("ok so",
"hello world?", "good question"): an OpenAI-compatible model may look at those
(`triage_with_model`); without one they are searched. The table of cases the rules are measured
on is tests/chat/understanding/test_triage.py.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

logger = logging.getLogger(__name__)

SMALLTALK = "smalltalk"
META = "meta"
RESEARCH = "research"
KINDS = (SMALLTALK, META, RESEARCH)


@dataclass(frozen=True)
class Triage:
    kind: str  # SMALLTALK | META | RESEARCH
    reason: str  # "greeting", "thanks", "goodbye", "capabilities", "identity", "help", "research"
    sure: bool = True

    @property
    def searches(self) -> bool:
        return self.kind == RESEARCH


# Trailing noise around a chat message: punctuation, emoji, a name for the assistant.
_NOISE = re.compile(r"[\s!?.,;:~*()\-—–'\"“”‘’…]+|[^\w\s]", re.UNICODE)
_ADDRESS = r"(?:\s+(?:there|all|everyone|again|flatuniverse|bot|assistant|friend|mate|buddy))*"

_GREETING = re.compile(
    r"(?:hi+|hello+|hey+|heya|hiya|howdy|yo|sup|hallo|hola|bonjour|greetings|good\s+(?:morning|"
    r"afternoon|evening|day)|morning|evening|hi\s+hi)"
    + _ADDRESS
    + r"(?:\s+(?:how\s+are\s+you|how\s+are\s+you\s+doing|how\s+is\s+it\s+going|how's\s+it\s+going"
    r"|what's\s+up|whats\s+up))?",
)
_HOW_ARE_YOU = re.compile(
    r"(?:how\s+are\s+you(?:\s+doing)?(?:\s+today)?|how's\s+it\s+going|what's\s+up)"
)
_THANKS = re.compile(
    r"(?:(?:ok(?:ay)?|great|perfect|awesome|cool|nice|excellent|wonderful|brilliant|good|super)"
    r"\s+)?(?:thanks?(?:\s+(?:you|a\s+lot|so\s+much|very\s+much|a\s+bunch|again))*|thx|ty|tysm"
    r"|cheers|much\s+appreciated|appreciate\s+it|thank\s+you(?:\s+(?:so|very)\s+much)?(?:\s+again)?)"
    + _ADDRESS
    + r"|(?:ok(?:ay)?|great|perfect|awesome|cool|nice|excellent|wonderful|brilliant|got\s+it"
    r"|that\s+helps|that\s+was\s+helpful|very\s+helpful|helpful|good\s+job|well\s+done|neat|sweet"
    r"|understood|i\s+see|makes\s+sense|alright|all\s+right|fine|sure|yes|no|yep|nope|lol|wow)"
    r"(?:\s+(?:thanks?|thank\s+you))?",
)
_GOODBYE = re.compile(
    r"(?:bye+|goodbye|bye\s+bye|see\s+you(?:\s+later|\s+soon)?|see\s+ya|later|good\s+night"
    r"|that's\s+all|thats\s+all|that\s+is\s+all)" + _ADDRESS,
)
_CAPABILITIES = re.compile(
    r"(?:what\s+(?:can|could|do|should)\s+(?:you|i)\s+(?:do|ask(?:\s+you)?|help\s+(?:me\s+)?with)"
    r"(?:\s+(?:here|for\s+me|with\s+(?:this|you)))?"
    r"|what\s+are\s+you\s+(?:able\s+to\s+do|good\s+(?:at|for)|for)"
    r"|how\s+(?:do|does|can|should)\s+(?:i\s+use\s+(?:this|you|it|flatuniverse)|(?:this|it|flatuniverse)\s+work)"
    r"|how\s+can\s+you\s+help(?:\s+me)?"
    r"|what\s+(?:papers|topics|fields|subjects|data)\s+(?:do\s+you\s+(?:have|know|cover)|are\s+(?:in\s+)?(?:here|covered|the\s+catalogue))"
    r"|what\s+(?:do\s+you\s+(?:know|cover)|is\s+in\s+(?:the|your)\s+(?:catalogue|catalog|database))"
    r"|what\s+can\s+i\s+ask|what\s+should\s+i\s+ask|any\s+(?:examples?|suggestions?|ideas?)"
    r"|give\s+me\s+(?:some\s+)?(?:examples?|ideas?))",
)
_IDENTITY = re.compile(
    r"(?:who|what)\s+(?:are|r)\s+(?:you|u)(?:\s+exactly)?"
    r"|what\s+is\s+(?:this|flatuniverse)(?:\s+(?:site|app|thing|place))?"
    r"|are\s+you\s+(?:a\s+)?(?:bot|robot|human|an?\s+ai|chatgpt|gpt|real|an?\s+llm)"
    r"|who\s+(?:made|built|created)\s+you|what\s+model\s+are\s+you|introduce\s+yourself",
)
_HELP = re.compile(
    r"(?:help|help\s+me|i\s+need\s+help|\?|how\s+does\s+this\s+work|usage|instructions|menu|start|test|testing)"
)

# Chat forms, whole-message: (pattern, kind, reason). Order matters only for the reason shown.
_FORMS: list[tuple[re.Pattern, str, str]] = [
    (_GREETING, SMALLTALK, "greeting"),
    (_HOW_ARE_YOU, SMALLTALK, "greeting"),
    (_THANKS, SMALLTALK, "thanks"),
    (_GOODBYE, SMALLTALK, "goodbye"),
    (_CAPABILITIES, META, "capabilities"),
    (_IDENTITY, META, "identity"),
    (_HELP, META, "help"),
]
# A greeting in front of one of the others: "hi, what can you do?", "hey thanks".
_LEADING_GREETING = re.compile(r"^(?:hi+|hello+|hey+|hiya|ok(?:ay)?|so|well|um+|and)\s+")
# Words short messages are made of when they are chat and not a topic: what makes a short
# message one a model may look at (e.g. "hello world?", "good question").
_CHATTY = frozenset(
    "hi hello hey ok okay yes no thanks thank you good great nice cool well so um hmm oh "
    "question questions again please sorry wait what who how huh test one more another".split()
)
# At most this many words may be "unsure"; longer messages are research questions.
_UNSURE_MAX_WORDS = 3


# Longest message read as two pleasantries in a row.
_PAIR_MAX_WORDS = 8


def _small_talk(text: str) -> str | None:
    """The reason when `text` is one small-talk form (not a meta question), else None."""
    for pattern, kind, reason in _FORMS:
        if kind == SMALLTALK and pattern.fullmatch(text):
            return reason
    return None


def _normalise(text: str) -> str:
    text = text.replace("’", "'").lower()
    return " ".join(_NOISE.sub(" ", text).split())


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.replace("’", "'").lower())


def triage(question: str, history: Sequence = ()) -> Triage:
    """Rules only (pure, microseconds). `history` is accepted for the contract and for the model
    step: the rules judge the message alone, since "thanks" means thanks after any answer."""
    text = _normalise(question)
    # Apostrophes cut by the noise pattern come back for the forms that have them.
    text = re.sub(r"\b(what|that|how|it)\s+s\b", r"\1's", text)
    if not text:
        return Triage(META, "help") if question.strip() else Triage(RESEARCH, "research")
    candidates = [text]
    stripped = _LEADING_GREETING.sub("", text)
    if stripped != text:
        candidates.append(stripped)
    for candidate in candidates:
        for pattern, kind, reason in _FORMS:
            if pattern.fullmatch(candidate):
                return Triage(kind, reason)
    # Two pleasantries in a row: "thanks, that was helpful", "great, bye".
    parts = stripped.split()
    if len(parts) <= _PAIR_MAX_WORDS:
        for cut in range(1, len(parts)):
            first = _small_talk(" ".join(parts[:cut]))
            if first and _small_talk(" ".join(parts[cut:])):
                return Triage(SMALLTALK, first)
    words = _words(question)
    if len(words) <= _UNSURE_MAX_WORDS and words and all(w in _CHATTY for w in words[:1]):
        # Starts like chat, is short, and is not one of the forms: a model may decide.
        return Triage(RESEARCH, "research", sure=False)
    return Triage(RESEARCH, "research")


async def triage_with_model(question: str, history: Sequence, complete) -> Triage | None:
    """An OpenAI-compatible model's verdict for a message the rules were unsure of, or None when
    the model fails or answers something else (then the rules' verdict stands)."""
    from chat.llm.base import LLMError
    from chat.pipeline import prompts

    try:
        reply = await complete(prompts.triage_messages(question), max_tokens=5)
    except LLMError as exc:
        logger.warning("triage_model_failed code=%s", exc.code)
        return None
    word = (_words(reply) or [""])[0]
    if word in KINDS:
        return Triage(word, "model" if word != RESEARCH else "research")
    return None
