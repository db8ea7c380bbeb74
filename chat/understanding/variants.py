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
