"""Follow-ups answered from the previous answer's papers instead of a new search.

"the second one" and "tell me more about [3]" read that one paper (its whole abstract, from the
database); "which of these use transformers?" keeps the previous sources that mention the rest
of the question, by their words (title and abstract) or by meaning (the active embedder's
cosine between those words and the paper's passages, at the relevance gate's threshold for that
model); "compare them" keeps them all. The papers keep their identity (id, arXiv id, title) and
the order they had; the answer numbers them afresh, [1] first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from asgiref.sync import sync_to_async
from django.db import connection

from chat.retrieval.dense import vector_literal
from chat.retrieval.relevance import THRESHOLDS
from chat.retrieval.search import SearchHit
from chat.understanding.analysis import analyse
from chat.understanding.reference import Reference, own_topic_words
from papers.embeddings import get_embedder
from papers.embeddings.query_cache import query_vector
from papers.indexing.passages import document_text

_PAPERS = """
SELECT id, arxiv_id, title, authors_text, published, primary_category, categories, abstract
FROM papers_paper WHERE id = ANY(%s) AND NOT hidden
"""
_BEST_PASSAGE = """
SELECT paper_id, max(1 - (embedding <=> %s::vector)) FROM papers_passage
WHERE paper_id = ANY(%s) AND model = %s AND kind = 'abstract' GROUP BY paper_id
"""


@dataclass
class PreviousPapers:
    hits: list[SearchHit]  # the papers to answer from, in the previous answer's order
    numbers: list[int]  # their numbers in the previous answer
    topic: str  # what the answer should look for in them
    asked: list[int]  # the previous numbers the question referred to
    filter_words: list[str]  # "which of these use transformers" -> ["transformers"]


def _stem(word: str) -> str:
    for suffix in ("ies", "es", "s", "ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def mentions(text: str, words: Sequence[str]) -> bool:
    """Every filter word occurs in `text` (as a word start, so "transformer" finds
    "Transformers" and "transformer-based")."""
    lower = text.lower()
    return all(re.search(rf"(?<![a-z0-9]){re.escape(_stem(w))}", lower) for w in words)


def _read(paper_ids: list[int]) -> dict[int, tuple]:
    with connection.cursor() as cursor:
        cursor.execute(_PAPERS, [paper_ids])
        return {row[0]: row for row in cursor.fetchall()}


def _similarities(paper_ids: list[int], text: str) -> tuple[dict[int, float], str]:
    embedder = get_embedder()
    vector = query_vector(embedder, text)
    with connection.cursor() as cursor:
        cursor.execute(_BEST_PASSAGE, [vector_literal(vector), paper_ids, embedder.name])
        return {pid: float(sim) for pid, sim in cursor.fetchall()}, embedder.name


def _hit(row: tuple, score: float) -> SearchHit:
    paper_id, arxiv_id, title, authors, published, primary, categories, abstract = row
    return SearchHit(
        paper_id=paper_id, arxiv_id=arxiv_id, title=title, authors_text=authors,
        published=published, primary_category=primary, categories=list(categories or []),
        abstract=abstract, score=score, dense_rank=None, fulltext_rank=None,
        passage_text=document_text(title, abstract), snippet_html="",
    )  # fmt: skip


# A question that picks some of the papers ("which of these…", "do any of them…", "only those
# with…"); others ("what do these have in common?", "summarize them") read all of them.
_SELECTS = re.compile(
    r"\b(?:which|what)\s+(?:of|ones?)\b|\bany\s+of\b|\bdo\s+any\b|\bonly\b|\bamong\b"
    r"|\b(?:those|ones|papers)\s+(?:that|which|with|about|on)\b|\bis\s+there\s+one\b",
    re.IGNORECASE,
)


async def previous_papers(
    reference: Reference, sources: Sequence[dict], now: datetime, question: str = ""
) -> PreviousPapers:
    """The previous answer's papers that `reference` points at (see the module docstring); a
    time window in the rest of the question ("which of these are from 2024?") filters too.
    Given the `question`, only one that picks papers filters them by its words."""
    asked = [s for s in sources if int(s.get("number", 0)) in reference.numbers]
    rows = await sync_to_async(_read)([int(s["paper_id"]) for s in asked])
    asked = [s for s in asked if int(s["paper_id"]) in rows]  # hidden since: left out
    window = analyse(reference.rest, now) if reference.rest else None
    words = own_topic_words(window.query if window else "")
    kept = asked
    if window is not None and (window.start or window.end):
        kept = [
            s for s in kept
            if (window.start is None or rows[int(s["paper_id"])][4] >= window.start)
            and (window.end is None or rows[int(s["paper_id"])][4] <= window.end)
        ]  # fmt: skip
    selects = not question or bool(_SELECTS.search(question))
    if words and len(kept) > 1 and selects:
        similar, model = await sync_to_async(_similarities)(
            [int(s["paper_id"]) for s in kept], " ".join(words)
        )
        limits = THRESHOLDS.get(model)

        def keep(card: dict) -> bool:
            row = rows[int(card["paper_id"])]
            if mentions(f"{row[2]} {row[7]}", words):
                return True
            return limits is not None and similar.get(int(card["paper_id"]), 0.0) >= limits.dense

        kept = [s for s in kept if keep(s)]
    topic = " ".join(words)
    if not topic and len(kept) == 1:
        topic = " ".join(rows[int(kept[0]["paper_id"])][2].split())  # its title: what it is about
    return PreviousPapers(
        hits=[_hit(rows[int(s["paper_id"])], float(s.get("score", 0.0))) for s in kept],
        numbers=[int(s["number"]) for s in kept],
        topic=topic or reference.rest,
        asked=[int(s["number"]) for s in asked],
        filter_words=words,
    )
