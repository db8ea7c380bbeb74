"""Words of a question that only say what kind of thing its answer is, and the sentences that
give such a thing without saying the word.

"How long did the CiteSee deployment last?" is answered by "… for one to two weeks", "What
hardware was MuZero trained on?" by "For each game in Atari, we used 8 TPUs for training", "How
big is the Multi-LexSum dataset?" by "… a collection of 9,280 expert-authored summaries": none
says "long", "hardware" or "big". A sentence that gives the kind of answer asked for counts as
saying the question's asking word, as much as a sentence saying it would: in the composer's
scores (chat.llm.extractive.answering_scores) and in the sentence evidence that picks a paper's
chunks (chat.retrieval.chunks.sentence_evidence).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from chat.understanding.quantity import (
    DURATION_ASKING,
    NUMBER_WORDS,
    asks_for_duration,
    states_duration,
)

_FLAGS = re.IGNORECASE


@dataclass(frozen=True)
class AnswerKind:
    name: str
    asks: object  # question -> bool
    asking: frozenset[str]  # the question's words (lower case) that only ask for it
    gives: object  # sentence -> bool


# What the work ran on: a processor named by its kind or its model ("16 TPUs", "8 NVIDIA P100
# GPUs", "a single machine with a 12GB GPU", "NVIDIA A100").
_HARDWARE_ASKED = re.compile(r"\b(?:hardware|accelerators?)\b", _FLAGS)
HARDWARE_ASKING = frozenset("hardware accelerator accelerators".split())
_HARDWARE = re.compile(r"\b(?:[GTI]PU|CPU)s?\b|\bTPU\s*v\d\b|\b[AHKPV]\d{2,3}\b")

# How big a collection is: "How big / large is …", "What is the size of …", "What size is …";
# not a measured property ("What batch size did …": its value is the answer, chat.understanding
# .quantity).
_SIZE_ASKED = re.compile(
    r"\bhow\s+(?:big|large)\b|\bthe\s+sizes?\s+of\b|\bwhat\s+sizes?\s+(?:is|are|was|were)\b",
    _FLAGS,
)
SIZE_ASKING = frozenset("big large size sizes".split())
# A count of things: a number (or "a dozen", "three thousand") then at most two words before
# a plural noun: "9,280 expert-authored summaries", "4,539 instances", "40,119 source
# documents", "175 billion parameters", "about 2.3M question-answer pairs".
# (A count of one digit is seldom how big a collection is: "… per sample (which is 1 for SDS
# datasets)"; nor are words such as "for" part of what is counted.)
_COUNTED_WORDS = r"(?:(?!(?:for|of|in|on|at|to|per|the|an?|and|or|with|by|from|than)\b)[\w-]+\s+){0,2}"
_COUNT = re.compile(
    r"(?<![\w.,])(?:\d[\d,.]*\d\s*(?:[kKMB]\b|thousand|million|billion|trillion)?"
    r"|\d\s*(?:[kKMB]\b|thousand|million|billion|trillion))"
    r"\s+" + _COUNTED_WORDS + r"[a-z][a-z-]*[a-z]s\b"
    r"|\b(?:" + "|".join(sorted(NUMBER_WORDS)) + r")\s+(?:thousand|million|billion)\s+"
    + _COUNTED_WORDS + r"[a-z][a-z-]*[a-z]s\b",
    _FLAGS,
)
# A year counts nothing ("in 2019 papers"), nor does a duration say how big ("over a period of
# more than 10 years").
_NOT_A_COUNT = re.compile(
    r"^(?:1[89]|20)\d\d\b|\b(?:seconds|minutes|hours|days|weeks|months|years|decades|times)$",
    _FLAGS,
)


def _gives_count(sentence: str) -> bool:
    return any(not _NOT_A_COUNT.search(m.group(0)) for m in _COUNT.finditer(sentence))


# "How long are the passages …?" asks for a length (DPR's "100 words"), not a duration.
_LENGTH_ASKED = re.compile(r"\bhow\s+long\s+(?:is|are|was|were)\b", _FLAGS)


# An equation: "What is the key equation of the Transformer?" is answered by "Attention(Q, K, V)
# = softmax(QKT √ dk)V (1)", which says neither "equation" nor "key" (it quoted the sentences
# introducing the Transformer, and "None of these papers mentions “equation”"). A formula sets
# something equal to (or updates it with) an expression, not a hyper-parameter to a value
# ("β1 = 0.9" is a setting).
_EQUATION_ASKED = re.compile(
    r"\b(?:equations?|formulas?|formulae|formulations?|update\s+rules?)\b", _FLAGS
)
EQUATION_ASKING = frozenset(
    "equation equations formula formulas formulae formulation formulations key main core "
    "central".split()
)
_EQUATION = re.compile(
    r"[=←]\s*[^=←]*?(?:[+−·×√∑∏]|\b(?:softmax|max|min|exp|log|arg\s*min|arg\s*max|lim)\b"
    r"|\w\s*\([^()]*\)\s*\(\d{1,2}\))"
)


KINDS = (
    AnswerKind(
        "duration",
        lambda q: asks_for_duration(q) and not _LENGTH_ASKED.search(q),
        frozenset(DURATION_ASKING),
        states_duration,
    ),
    AnswerKind(
        "hardware",
        lambda q: bool(_HARDWARE_ASKED.search(q)),
        HARDWARE_ASKING,
        lambda s: bool(_HARDWARE.search(s)),
    ),
    AnswerKind("size", lambda q: bool(_SIZE_ASKED.search(q)), SIZE_ASKING, _gives_count),
    AnswerKind(
        "equation",
        lambda q: bool(_EQUATION_ASKED.search(q)),
        EQUATION_ASKING,
        lambda s: bool(_EQUATION.search(s)),
    ),
)


@lru_cache(maxsize=64)
def asked_kinds(question: str) -> tuple[AnswerKind, ...]:
    """The kinds of answer `question` asks for (asked for each of hundreds of sentences)."""
    return tuple(kind for kind in KINDS if kind.asks(question))


def asking_words(question: str) -> dict[str, AnswerKind]:
    """The question's words (lower case) that only ask for a kind of answer, with their kind."""
    kinds = asked_kinds(question)
    if not kinds:
        return {}
    words = re.findall(r"[a-z]+", question.lower())
    return {w: kind for kind in kinds for w in words if w in kind.asking}


def said_by_kind(sentence: str, question: str) -> set[str]:
    """The question's asking words (lower case) that `sentence` says by giving the kind of
    answer they ask for: {"hardware"} for "… we used 8 TPUs for training" and "What hardware
    was MuZero trained on?"."""
    return {w for w, kind in asking_words(question).items() if kind.gives(sentence)}
