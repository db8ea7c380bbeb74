"""`bench_fulltext --word-lists`: how well each word list of the search finds the paper a body
question is about, alone: BM25 over the abstracts, the chunk word search (a paper by its best
chunk), and BM25 over each read paper's body as one document (papers.indexing.lexical.BODIES).
For each question, the rank of its paper in each list (all the papers of the scratch catalogue
ranked); reported as MRR and hits at 1 and 3."""

from __future__ import annotations

from django.db import connection

from chat.retrieval.chunks import chunk_word_search
from chat.retrieval.filters import SearchFilters
from chat.retrieval.fulltext import lexical_search, query_terms
from papers.embeddings import get_embedder
from papers.indexing.lexical import BODIES

LISTS = ("abstracts", "chunks", "bodies")


def ranks(cases: list[dict]) -> dict[str, list[int | None]]:
    """list name -> for each case, the 1-based rank of its paper in that list (None: absent)."""
    model = get_embedder().name
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, arxiv_id FROM papers_paper")
        arxiv = dict(cursor.fetchall())
    n = len(arxiv)
    found: dict[str, list[int | None]] = {name: [] for name in LISTS}
    for case in cases:
        question, everything = case["question"], SearchFilters()
        with connection.cursor() as cursor:
            lexemes, _ = query_terms(cursor, question)
            lists = {
                "abstracts": [h.paper_id for h in lexical_search(cursor, question, everything, n).hits],
                "chunks": [h.paper_id for h in chunk_word_search(cursor, lexemes, model, everything, n)],
                "bodies": [
                    h.paper_id
                    for h in lexical_search(BODIES.cursor(cursor), question, everything, n).hits
                ],
            }  # fmt: skip
        for name, ids in lists.items():
            papers = [arxiv[i] for i in ids]
            rank = papers.index(case["arxiv_id"]) + 1 if case["arxiv_id"] in papers else None
            found[name].append(rank)
    return found


def summary(found: dict[str, list[int | None]]) -> list[str]:
    lines = [f"{'word list':10} {'MRR':>6} {'@1':>8} {'@3':>8} {'found':>8}"]
    for name, ranked in found.items():
        n = len(ranked)
        mrr = sum(1 / r for r in ranked if r) / n if n else 0.0
        at = [sum(1 for r in ranked if r and r <= k) for k in (1, 3)]
        present = sum(1 for r in ranked if r)
        lines.append(f"{name:10} {mrr:6.3f} {at[0]:>4}/{n} {at[1]:>4}/{n} {present:>4}/{n}")
    return lines
