"""BM25F over title and abstract, computed in memory for `bench_retrieval` (issue #16).

Today's index (papers/indexing/lexical.py) counts a title occurrence TITLE_WEIGHT times and
normalises one length, title and abstract together. BM25F (Robertson, Zaragoza & Taylor 2004)
normalises each field by its own length and average, then saturates once:

    tf~(t, d) = sum over fields f of  w_f * tf_f(t, d) / (1 - b_f + b_f * len_f(d) / avglen_f)
    score(d, q) = sum over t in q of  idf(t) * tf~ * (k1 + 1) / (tf~ + k1)

It is an index-time change (the document side of the sum; the query side, the IDF vector, and
so the query's cost would stay as they are), so the benchmark only needs its ranking: it reads
each paper's field term frequencies from `Paper.search_vector` (title = weight A, abstract = B:
the same tokenizer and stemmer as the index) and scores every paper holding a query term, exactly.
Only if it won would it move into the index.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from papers.indexing.lexical import K1, B

_FIELD_TFS = """
SELECT p.id, x.lexeme,
       cardinality(array_positions(x.weights, 'A'::text)),
       cardinality(x.weights) - cardinality(array_positions(x.weights, 'A'::text))
FROM papers_paper p CROSS JOIN LATERAL unnest(p.search_vector) AS x
WHERE p.search_vector IS NOT NULL
"""


@dataclass
class FieldIndex:
    postings: dict[str, list[tuple[int, int, int]]]  # lexeme -> (paper, title tf, abstract tf)
    lengths: dict[int, tuple[int, int]]  # paper -> (title length, abstract length)
    averages: tuple[float, float]


def load(cursor) -> FieldIndex:
    cursor.execute(_FIELD_TFS)
    postings: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    lengths: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for paper_id, lexeme, title_tf, other_tf in cursor.fetchall():
        # tsvector weights: one per position, positionless lexemes count once in the abstract.
        title_tf, other_tf = title_tf or 0, max(other_tf or 0, 0 if title_tf else 1)
        postings[lexeme].append((paper_id, title_tf, other_tf))
        lengths[paper_id][0] += title_tf
        lengths[paper_id][1] += other_tf
    count = max(len(lengths), 1)
    averages = (
        max(sum(v[0] for v in lengths.values()) / count, 1e-9),
        max(sum(v[1] for v in lengths.values()) / count, 1e-9),
    )
    return FieldIndex(dict(postings), {k: (v[0], v[1]) for k, v in lengths.items()}, averages)


def rank(
    index: FieldIndex,
    terms,  # chat.retrieval.fulltext.QueryTerm: lexeme and IDF
    n: int,
    *,
    title_weight: float,
    b_title: float = 0.5,
    b_abstract: float = 0.75,
) -> tuple[list[int], list[float]]:
    """The n best papers by BM25F (ids, scores), ties by id."""
    avg_title, avg_abstract = index.averages
    scores: dict[int, float] = defaultdict(float)
    for term in terms:
        for paper_id, title_tf, abstract_tf in index.postings.get(term.lexeme, ()):
            len_title, len_abstract = index.lengths[paper_id]
            tf = title_weight * title_tf / (1 - b_title + b_title * len_title / avg_title)
            tf += abstract_tf / (1 - b_abstract + b_abstract * len_abstract / avg_abstract)
            scores[paper_id] += term.idf * tf * (K1 + 1) / (tf + K1)
    best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:n]
    return [p for p, _ in best], [s for _, s in best]


def rank_bm25(
    index: FieldIndex, terms, n: int, *, k1: float, b: float, title_weight: float = 2
) -> tuple[list[int], list[float]]:
    """The n best papers by today's index formula (papers/indexing/lexical.py: title
    occurrences counted `title_weight` times, one length) at other `k1` and `b`: the ranking
    a rebuild with those constants would give (ids, scores), ties by id."""
    lengths = {p: title_weight * t + a for p, (t, a) in index.lengths.items()}
    average = max(sum(lengths.values()) / max(len(lengths), 1), 1e-9)
    scores: dict[int, float] = defaultdict(float)
    for term in terms:
        for paper_id, title_tf, abstract_tf in index.postings.get(term.lexeme, ()):
            tf = title_weight * title_tf + abstract_tf
            norm = k1 * (1 - b + b * lengths[paper_id] / average)
            scores[paper_id] += term.idf * tf * (k1 + 1) / (tf + norm)
    best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:n]
    return [p for p, _ in best], [s for _, s in best]


def field_scores(index: FieldIndex, terms, paper_ids, *, b: float = B) -> dict:
    """paper -> (BM25 of its title alone, of its abstract alone, the share of the query's IDF
    its title or abstract holds, the share its title holds), for learned fusion's features
    (bench/learned_fusion.py). Each field normalised by its own length and average."""
    avg_title, avg_abstract = index.averages
    wanted = set(paper_ids)
    total = sum(t.idf for t in terms) or 1.0
    out = {p: [0.0, 0.0, 0.0, 0.0] for p in wanted}
    for term in terms:
        for paper_id, title_tf, abstract_tf in index.postings.get(term.lexeme, ()):
            if paper_id not in wanted:
                continue
            len_title, len_abstract = index.lengths[paper_id]
            scores = out[paper_id]
            if title_tf:
                tf = title_tf / (1 - b + b * len_title / avg_title)
                scores[0] += term.idf * tf * (K1 + 1) / (tf + K1)
                scores[3] += term.idf / total
            if abstract_tf:
                tf = abstract_tf / (1 - b + b * len_abstract / avg_abstract)
                scores[1] += term.idf * tf * (K1 + 1) / (tf + K1)
            scores[2] += term.idf / total
    return {p: tuple(v) for p, v in out.items()}
