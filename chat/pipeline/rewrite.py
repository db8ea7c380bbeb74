"""Follow-up questions → what to search, so retrieval sees the whole topic and nothing else.

chat.understanding.reference decides by rule how a question relates to the previous answer:
- it refers to that answer's papers ("which of these…", "the second one", "[3]"): no new search,
  the pipeline works on those sources (chat.pipeline.previous);
- it is an ellipsis ("what about since 2024?"): it borrows the previous topic, and keeps its own
  time window when it names one;
- it stands alone: it is searched as typed, nothing of earlier turns glued on.

Only an OpenAI-compatible model (the `openai` backend) may rewrite, and only a question the rules
did not find self-contained; a small local model once turned "hi" into a question about LLM
hallucination, so the `local` backend never rewrites.
"""

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from asgiref.sync import sync_to_async
from django.db import connection

from chat.llm import LLMError
from chat.pipeline import prompts
from chat.pipeline.previous import shown_papers
from chat.retrieval.named import papers_say, titled_elsewhere, writes_a_name
from chat.understanding.intent import what_is
from chat.understanding.reference import (
    SOURCES,
    STANDALONE,
    TOPIC,
    Reference,
    asks_for_papers,
    demonstrated_name,
    own_topic_words,
    resolve,
)

logger = logging.getLogger(__name__)

# Turns of history a follow-up is read against (what "it", "these", "the second one" refer to;
# what a model rewrites with); older ones rarely carry the topic of the new question.
HISTORY_TURNS = 3
# Turns looked back through for the topic an ellipsis borrows ("what about before 2023?"): the
# last turns may all be follow-ups on a list's papers ("which of these…", "what optimizers do
# they compare?", "summarize the second one"), which searched no topic of their own.
TOPIC_TURNS = 8
# A rewrite far longer than the question means the model answered instead of rewriting.
_MAX_REWRITE_GROWTH = 400

_LEADING_CONNECTIVE = re.compile(
    r"^\s*(and\s+what\s+about|and\s+how\s+about|what\s+about|how\s+about|and|but|also|so|then|or)"
    r"\b[\s,]*",
    re.IGNORECASE,
)
# Enough to tell whether a follow-up brings its own time window ("since 2024", "last year");
# a year, not an arXiv id's first digits ("papers like 2004.04906").
_TIME_EXPRESSION = re.compile(
    r"\b((19|20)\d{2}(?![.\d])|since|before|after|until|between|last|past|recent(ly)?|latest|newest|"
    r"this (year|month|week)|today|yesterday|ago)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Turn:
    """One earlier exchange of the thread, as the rewrite needs it."""

    question: str  # what the user typed
    query: str = ""  # the standalone question that was searched
    answer: str = ""
    topic: str = ""  # the query without its time expression, when the analysis knew it
    sources: tuple = ()  # the answer's source cards, as saved on its message
    # Answered from an earlier answer's papers (its analysis's `followup_of`), not a search.
    on_sources: bool = False
    # One of those that asked something of all of them, picking none ("how do they retrieve
    # documents?" after a list): "these" after it are still all of them.
    of_all: bool = False
    # The papers its question named (chat.retrieval.named: "the Transformer"): (the name as the
    # question wrote it, arXiv id). What the thread is about while its next questions name
    # nothing else.
    named: tuple[tuple[str, str], ...] = ()


def looks_like_follow_up(question: str, history: Sequence[Turn] = ()) -> bool:
    """Whether the question needs an earlier turn to be understood (see reference.resolve)."""
    return resolve(question, list(history) or [Turn(question="")]).kind != STANDALONE


# "more like that", "anything similar?", "find similar papers": more papers like the one the
# previous answer was about, or on its topic.
_MORE_LIKE = re.compile(
    r"^\s*(?:(?:show|find|give|get)\s+(?:me\s+)?|(?:are\s+there|any)\s+)?(?:some\s+|any\s+)?"
    r"(?:more|others?|anything|something|papers?|ones?|work)?\s*(?:(?:like|similar\s+to)\s+"
    r"(?:that|this|it|these|those|them)(?:\s+(?:one|paper))?|similar(?:\s+(?:ones|papers|work))?)"
    r"\s*[?.!]*\s*$",
    re.IGNORECASE,
)


def _more_like(turn: Turn) -> str:
    """What "more like that" searches after `turn`: papers like its one cited paper (the seed
    search, by arXiv id), else its topic."""
    cited = shown_papers(turn.sources, turn.answer) if turn.answer else []
    cited = [cards for cards in cited if re.search(rf"\[{cards[0].get('number')}\]", turn.answer)]
    if len(cited) == 1 and cited[0][0].get("arxiv_id"):
        return f"papers similar to arXiv:{cited[0][0]['arxiv_id']}"
    return turn.query or turn.question


def rule_rewrite(question: str, history: Sequence[Turn]) -> str:
    """The offline rewrite: an elliptical follow-up borrows the previous turn's topic (and its
    time window, unless the follow-up names its own); "more like that" searches papers like the
    paper the previous answer was about; anything else is searched as typed."""
    if history and _MORE_LIKE.match(question):
        return _more_like(history[-1])
    if not history or resolve(question, history).kind != TOPIC:
        return question
    # The latest turn that searched a topic: a follow-up on its sources ("tell me more about
    # [3]") has none to borrow.
    previous = next(
        (
            turn
            for i, turn in reversed(list(enumerate(history)))
            if not turn.on_sources and resolve(turn.question, history[:i]).kind != SOURCES
        ),
        history[-1],
    )
    own = _LEADING_CONNECTIVE.sub("", question).strip() or question.strip()
    if _TIME_EXPRESSION.search(own):
        context = previous.topic or _TIME_EXPRESSION.sub("", previous.query or previous.question)
    else:
        context = previous.query or previous.question
    context = " ".join(context.split()).rstrip("?. ")
    if not context or context.lower() in own.lower():
        return question
    return f"{own.rstrip('?. ')} — {context}"


# A thread stays on the papers its latest search named for at most this many of them ("RAG-Sequence
# vs RAG-Token" is one paper; a question naming four is a survey, not a paper being read).
THREAD_PAPERS = 2
_ARXIV_ID = re.compile(r"\b\d{4}\.\d{4,5}\b")
# Two things compared are the question's own topic ("compare dense and sparse retrieval").
_COMPARES = re.compile(r"\b(?:compar\w*|versus|vs\.?|differ\w*)(?=\s|$)", re.I)


def threads_papers(history: Sequence[Turn]) -> tuple[tuple[str, str], ...]:
    """The papers the thread is on, (name, arXiv id): those its latest search (not a follow-up
    on an answer's sources) named, when it was one of the last HISTORY_TURNS turns."""
    for turn in reversed(list(history)[-HISTORY_TURNS:]):
        if not turn.on_sources:
            return turn.named if len(turn.named) <= THREAD_PAPERS else ()
    return ()


def _says_all(arxiv_ids: list[str], words: str) -> bool:
    with connection.cursor() as cursor:
        return papers_say(cursor, arxiv_ids, words)


def _another_papers_subject(arxiv_ids: list[str], words: str) -> bool:
    with connection.cursor() as cursor:
        return titled_elsewhere(cursor, arxiv_ids, words)


async def on_the_threads_papers(question: str, history: Sequence[Turn]) -> str:
    """A question that stands alone but names nothing of its own, asked while the thread is on a
    paper ("How is positional information encoded?" after questions on the Transformer), is
    asked of that paper: its name goes into the search, where chat.retrieval.named finds it and
    puts it first, as if the question had named it. A question pointing elsewhere is searched
    as typed: one that writes a name ("How does BERT …"), an arXiv id, asks for papers ("papers
    on protein folding"), a time window ("since 2024") or a comparison, or whose topic words the
    thread's papers never say together ("how does batch normalization reduce internal
    covariate shift?" after the Transformer is the batch normalization paper's question), or
    that asks what a thing is in general whose name another paper's title gives ("what is
    residual learning?" after the Transformer, which says "residual" and "learning", is the
    ResNet paper's question; "what is the encoder?" asks of the thread's)."""
    papers = threads_papers(history)
    if (
        not papers
        or writes_a_name(question)
        or _ARXIV_ID.search(question)
        or asks_for_papers(question)
        or _TIME_EXPRESSION.search(question)
        or _COMPARES.search(question)
    ):
        return question
    words = " ".join(own_topic_words(question))
    ids = [arxiv_id for _, arxiv_id in papers]
    if not await sync_to_async(_says_all)(ids, words):
        return question
    defined = what_is(question)
    if defined and not defined[1]:
        if await sync_to_async(_another_papers_subject)(ids, " ".join(own_topic_words(defined[0]))):
            return question
    the = lambda name: f"the {name}" if re.fullmatch(r"[A-Z][a-z]+", name) else name  # noqa: E731
    names = " and ".join(the(name) for name, _ in papers)
    return f"{question.strip().rstrip('?. ')} in {names}?"


def model_may_rewrite(backend) -> bool:
    """Only a model that follows instructions (an OpenAI-compatible one, not the small `local`
    model) is trusted to rewrite or triage questions."""
    return getattr(backend, "follows_instructions", False) and getattr(
        backend, "supports_complete", False
    )


def _clean_model_rewrite(text: str, question: str) -> str | None:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return None
    candidate = lines[0].strip().strip("\"'“”").strip()
    candidate = re.sub(r"^(standalone question|question)\s*:\s*", "", candidate, flags=re.I)
    if not candidate or len(candidate) > len(question) + _MAX_REWRITE_GROWTH:
        return None
    return candidate


async def understand_followup(
    question: str, history: Sequence[Turn], backend=None
) -> tuple[str, Reference]:
    """What to search for `question`, and how it relates to the previous answer (its last
    HISTORY_TURNS turns; the topic an ellipsis borrows may be older: TOPIC_TURNS)."""
    history = list(history)[-TOPIC_TURNS:]
    recent = history[-HISTORY_TURNS:]
    if not history:
        return question, Reference(STANDALONE)
    if _MORE_LIKE.match(question):  # a new search, never a filter of "these"
        return _more_like(history[-1]), Reference(TOPIC)
    # "Which paper proposed that optimizer?": the thing the previous answer named ("Adam"), a
    # question of its own about it, never one about the previous answer's paper.
    question = demonstrated_name(question, history[-1]) or question
    reference = resolve(question, recent)
    if reference.kind == STANDALONE:
        return await on_the_threads_papers(question, history), reference
    if reference.kind != TOPIC or not model_may_rewrite(backend):
        return rule_rewrite(question, history), reference
    try:
        text = await backend.complete(prompts.rewrite_messages(question, recent), max_tokens=120)
    except LLMError as exc:
        logger.warning("rewrite_failed code=%s; using the rule", exc.code)
        return rule_rewrite(question, history), reference
    return _clean_model_rewrite(text, question) or rule_rewrite(question, history), reference


async def standalone_question(question: str, history: Sequence[Turn], backend=None) -> str:
    """The question to search (see understand_followup)."""
    query, _ = await understand_followup(question, history, backend)
    return query
