"""Follow-up questions → standalone questions, so retrieval sees the whole topic.

"What about since 2024?" after "diffusion models for video" must search "since 2024 diffusion
models for video". With a language model configured, the model rewrites using the thread's recent
turns (prompts.REWRITE_*); with the extractive backend (no model) a small rule does it: a question
that looks like a follow-up borrows the previous question's topic.
"""

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from chat.llm import LLMError
from chat.pipeline import prompts

logger = logging.getLogger(__name__)

# Turns of history the rewrite looks at; older ones rarely carry the topic of the new question.
HISTORY_TURNS = 3
# A rewrite far longer than the question means the model answered instead of rewriting.
_MAX_REWRITE_GROWTH = 400

_FOLLOW_UP_START = re.compile(
    r"^\s*(and|but|also|so|then|or|what about|how about|what else|anything else|more on|"
    r"tell me more|why|how so|which of (them|these|those)|compare|same)\b",
    re.IGNORECASE,
)
_LEADING_CONNECTIVE = re.compile(
    r"^\s*(and\s+what\s+about|and\s+how\s+about|what\s+about|how\s+about|and|but|also|so|then|or)"
    r"\b[\s,]*",
    re.IGNORECASE,
)
_ANAPHORA = re.compile(
    r"\b(it|its|they|them|their|this|that|these|those|such|same|above|former|latter|ones)\b",
    re.IGNORECASE,
)
# Enough to tell whether a follow-up brings its own time window ("since 2024", "last year").
_TIME_EXPRESSION = re.compile(
    r"\b((19|20)\d{2}|since|before|after|until|between|last|past|recent(ly)?|latest|newest|"
    r"this (year|month|week)|today|yesterday|ago)\b",
    re.IGNORECASE,
)
# Short questions with a pronoun are follow-ups; long ones usually carry their own topic.
_SHORT_QUESTION_WORDS = 12


@dataclass(frozen=True)
class Turn:
    """One earlier exchange of the thread, as the rewrite needs it."""

    question: str  # what the user typed
    query: str = ""  # the standalone question that was searched
    answer: str = ""
    topic: str = ""  # the query without its time expression, when the analysis knew it


def looks_like_follow_up(question: str) -> bool:
    if _FOLLOW_UP_START.match(question):
        return True
    return len(question.split()) <= _SHORT_QUESTION_WORDS and bool(_ANAPHORA.search(question))


def rule_rewrite(question: str, history: Sequence[Turn]) -> str:
    """The offline rewrite: a follow-up borrows the previous turn's topic (and its time window,
    unless the follow-up names its own)."""
    if not history or not looks_like_follow_up(question):
        return question
    previous = history[-1]
    own = _LEADING_CONNECTIVE.sub("", question).strip() or question.strip()
    if _TIME_EXPRESSION.search(own):
        context = previous.topic or _TIME_EXPRESSION.sub("", previous.query or previous.question)
    else:
        context = previous.query or previous.question
    context = " ".join(context.split()).rstrip("?. ")
    if not context or context.lower() in own.lower():
        return question
    return f"{own.rstrip('?. ')} — {context}"


def _clean_model_rewrite(text: str, question: str) -> str | None:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return None
    candidate = lines[0].strip().strip("\"'“”").strip()
    candidate = re.sub(r"^(standalone question|question)\s*:\s*", "", candidate, flags=re.I)
    if not candidate or len(candidate) > len(question) + _MAX_REWRITE_GROWTH:
        return None
    return candidate


async def standalone_question(question: str, history: Sequence[Turn], backend=None) -> str:
    """The question to search. Uses `backend.complete` when `backend` is a language model (not the
    extractive one); falls back to the rule when the model fails or answers off the point."""
    history = list(history)[-HISTORY_TURNS:]
    if not history:
        return question
    if backend is None or not getattr(backend, "supports_complete", False):
        return rule_rewrite(question, history)
    try:
        text = await backend.complete(prompts.rewrite_messages(question, history), max_tokens=120)
    except LLMError as exc:
        logger.warning("rewrite_failed code=%s; using the rule", exc.code)
        return rule_rewrite(question, history)
    return _clean_model_rewrite(text, question) or rule_rewrite(question, history)
