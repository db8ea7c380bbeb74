"""Which size of a model a question asks about, and whether a sentence is about another size.

Papers report one setting per model size: "For the base model, we use a rate of Pdrop = 0.1"
and, a page later, "The Transformer (big) model ... used dropout rate Pdrop = 0.1, instead of
0.3". A question about the base model is answered by the first; the second shares more of its
words. The sentence scorers (chat.retrieval.chunks, chat.llm.extractive) weigh a sentence that
names only other sizes than the one asked OTHER_SIZE_WEIGHT times as much.
"""

from __future__ import annotations

import re
from functools import lru_cache

OTHER_SIZE_WEIGHT = 0.5
SIZES = frozenset("tiny mini small base medium large big huge giant xl xxl".split())
_WORD = re.compile(r"[a-z]+")
# A bare version number after a name's hyphen names a model of its own, not a size of the same
# one: "GPT-4" is not GPT-3's paper, "LLaMA-2" not LLaMA's ("OPT-175B", "ResNet-152" are sizes).
VERSION_TAIL = re.compile(r"\d(?:\.\d)?")


def versioned(name: str) -> bool:
    """A name with a version number after its hyphen: "GPT-4", "LLaMA-2", "GPT-3.5"."""
    head, _, tail = re.sub(r"[‐‑]", "-", name.strip()).rpartition("-")
    return bool(head) and bool(VERSION_TAIL.fullmatch(tail))


def sizes_in(text: str) -> set[str]:
    """The model-size words of a text ("ViT-Huge", "the base model", "BART-large")."""
    return {w for w in _WORD.findall(text.lower()) if w in SIZES}


def about_other_size(sentence: str, question: str) -> bool:
    """The question names a size and the sentence names sizes, none of them the asked one."""
    asked = _asked_sizes(question)
    if not asked:
        return False
    named = sizes_in(sentence)
    return bool(named) and not named & asked


@lru_cache(maxsize=64)
def _asked_sizes(question: str) -> frozenset[str]:
    """sizes_in(question), once a question (asked for each of hundreds of sentences)."""
    return frozenset(sizes_in(question))
