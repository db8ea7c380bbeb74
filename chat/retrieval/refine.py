"""Ranking refinements after the first retrieval, each off unless named in settings.SEARCH_REFINE.

Issue #16 asked whether the method could still add to hybrid search; each idea lives here and is
measured on SciFact train by `manage.py bench_retrieval --variant ...` (docs/BENCHMARKS.md,
"Ranking variants"), against the default in the same process:

- "prf-bm25[:D]": RM3 pseudo-relevance feedback for BM25. The D (default 10) best papers of the
  first fused ranking are taken as relevant; P(t|R) = sum over them of their normalised score times
  P(t|d), P(t|d) being the paper's BM25 document weight of t over the sum of its weights; the
  PRF_TERMS most likely terms, mixed half and half with the query's own terms (Anserini's
  defaults: 10 papers, 10 terms, 0.5), each weighted by its IDF, are searched again.
- "prf-dense[:D]": Rocchio for the query vector: q + ROCCHIO_BETA * the mean vector of the D
  (default 3) best papers of the first fused ranking, normalised, searched again.
- "fusion-gap": each list's weight scaled by how far its best paper stands above its tenth
  (after the min-max normalisation of convex fusion): a list that is sure of its head counts more.
- "fusion-length": the dense weight grows with the number of query terms (LENGTH_PIVOT terms:
  0.5, +/- LENGTH_SLOPE a term, within 0.3-0.7): BM25 for keyword queries, dense for sentences.
- "passage-sum" / "passage-top2": a paper's dense score from all its passages (their sum, the
  mean of its best two) instead of its best passage only (the default, "max").

- "proximity": the BM25 list re-scored with a bonus for query terms that stand within
  PROXIMITY_WINDOW positions of each other in the query and in the paper (session 15).
- "sentences": a third list, the candidates of the other lists by their sentence closest to
  the query (Passage kind "sentence", settings.SENTENCE_VECTORS), fused at SENTENCE_WEIGHT.
- "learned" (session 17): learned fusion. Every candidate of the dense and BM25 lists gets all
  three scores, not only those of the lists that found it: its best passage's similarity, its
  BM25 score, its best sentence's similarity; each min-max normalised over the candidates and
  summed with LEARNED_WEIGHTS, fitted by coordinate ascent on nDCG@10 (SciFact train, checked by
  5-fold cross-validation: docs/BENCHMARKS.md, session 17). Needs SENTENCE_VECTORS too:
  without sentence vectors it changes nothing.

Result (809 SciFact train claims, docs/BENCHMARKS.md, "Ranking variants"): two beat the default
by more than noise, both reading sentence vectors: "sentences", +0.0085 nDCG@10 at 1.00x the
search time, and "learned", +0.012 held out (+0.014 with the constants fitted on the same
claims) at 1.10x. Their cost is at index time (~10 sentence vectors a paper), so both are
opt-in, off by default; none reaches the +0.02 issue #16 asked for. None of the others won
("passage-sum" was clearly worse, -0.038; Rocchio raised recall@100 without helping the top
10; proximity is noise at 1.11x; learned fusion without sentence vectors is noise).

Feedback comes from the first *fused* ranking (better than either list alone), so PRF costs a
second BM25 and/or dense query. The gate on absolute relevance (chat.retrieval.relevance) still
reads the first retrieval: it was calibrated on it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from papers.indexing.lexical import K1
from papers.text import american_spelling, tex_to_plain

from .dense import DenseHit, DenseResult, vector_literal
from .fulltext import LexicalResult, QueryTerm, idf, rank_terms, sparse_literal
from .fusion import Ranked

PRF_DOCS = 10
PRF_TERMS = 10
PRF_ORIGINAL_WEIGHT = 0.5
ROCCHIO_DOCS = 3
ROCCHIO_BETA = 0.5
GAP_RANK = 10
LENGTH_PIVOT = 8
LENGTH_SLOPE = 0.05
# Term proximity (session 15): query terms within PROXIMITY_WINDOW word positions of each other
# in the query and in a paper, either order; the bonus of each such pair, its IDFs' mean times
# its saturated count (BM25's k1), scaled by PROXIMITY_WEIGHT, is added to the paper's BM25 score.
PROXIMITY_WINDOW = 3
PROXIMITY_WEIGHT = 0.25
# Sentence vectors (session 15): a third list, each candidate paper scored by its sentence most
# similar to the query (settings.SENTENCE_VECTORS), fused at this convex weight beside dense and
# BM25 (0.5 each).
SENTENCE_WEIGHT = 0.5
# Learned fusion (session 17): the weights of (best passage, BM25, best sentence), each score
# min-max normalised over all the candidates, that coordinate ascent on nDCG@10 found on the
# 809 SciFact train claims (from equal weights; held out by 5-fold cross-validation the fit
# gave +0.013 nDCG@10 over the default, +0.004 over "sentences"). Richer features (title and
# abstract BM25, query-term coverage, ranks, lengths) and other models (logistic, pairwise)
# did no better held out.
LEARNED_WEIGHTS = (0.2441, 0.3779, 0.3779)

NAMES = (
    "prf-bm25", "prf-dense", "fusion-gap", "fusion-length", "passage-sum", "passage-top2",
    "proximity", "sentences", "learned",
)  # fmt: skip


@dataclass(frozen=True)
class Refinements:
    """What settings.SEARCH_REFINE turns on (empty: the default ranking)."""

    prf_bm25: int = 0  # feedback papers for BM25 (0: off)
    prf_dense: int = 0  # feedback papers for the query vector (0: off)
    fusion: str = ""  # "", "gap" or "length"
    passages: str = "max"  # "max", "sum" or "top2"
    proximity: bool = False  # BM25 scores plus a bonus for query terms found near each other
    sentences: bool = False  # a third list: the candidates by their best sentence's vector
    learned: bool = False  # one list: every candidate by LEARNED_WEIGHTS over its three scores

    @property
    def any(self) -> bool:
        return self != Refinements()

    @property
    def reads_sentences(self) -> bool:
        return self.sentences or self.learned

    @property
    def feedback(self) -> int:
        return max(self.prf_bm25, self.prf_dense)


def parse(value: str) -> Refinements:
    """'prf-bm25:5,fusion-gap' -> Refinements. Unknown names are a configuration error."""
    found = Refinements()
    for item in (part.strip().lower() for part in (value or "").split(",")):
        if not item:
            continue
        name, _, count = item.partition(":")
        if name not in NAMES:
            raise ImproperlyConfigured(
                f"SEARCH_REFINE: unknown refinement {name!r} (known: {', '.join(NAMES)})"
            )
        if count and (not count.isdigit() or int(count) < 1 or not name.startswith("prf-")):
            raise ImproperlyConfigured(f"SEARCH_REFINE: bad count in {item!r}")
        if name == "prf-bm25":
            found = replace(found, prf_bm25=int(count or PRF_DOCS))
        elif name == "prf-dense":
            found = replace(found, prf_dense=int(count or ROCCHIO_DOCS))
        elif name == "proximity":
            found = replace(found, proximity=True)
        elif name == "sentences":
            found = replace(found, sentences=True)
        elif name == "learned":
            found = replace(found, learned=True)
        elif name.startswith("fusion-"):
            found = replace(found, fusion=name.removeprefix("fusion-"))
        else:
            found = replace(found, passages=name.removeprefix("passage-"))
    return found


def active() -> Refinements:
    return parse(settings.SEARCH_REFINE)


# --- pseudo-relevance feedback -------------------------------------------------------------------

_DOC_WEIGHTS = "SELECT paper_id, weights::text FROM papers_paperlexicon WHERE paper_id = ANY(%s)"
_TERMS = """
SELECT t.id, t.lexeme, t.df, t.champion_floor,
       (SELECT documents FROM papers_lexicalstats WHERE id = 1)
FROM papers_lexicalterm t WHERE t.id = ANY(%s)
"""


def _sparse(text: str) -> dict[int, float]:
    """pgvector's sparsevec text '{3:0.5,9:1.2}/1000000000' as {3: 0.5, 9: 1.2}."""
    body = text[1 : text.index("}")]
    pairs = (item.split(":") for item in body.split(",") if item)
    return {int(i): float(w) for i, w in pairs}


def feedback_model(documents: dict[int, dict[int, float]], scores: dict[int, float]) -> dict:
    """RM3's P(t|R): sum over feedback papers of P(d) * P(t|d), P(d) their normalised scores."""
    total = sum(max(scores.get(d, 0.0), 0.0) for d in documents) or 1.0
    model: dict[int, float] = defaultdict(float)
    for paper_id, weights in documents.items():
        mass = sum(weights.values())
        if mass <= 0:
            continue
        prior = max(scores.get(paper_id, 0.0), 0.0) / total
        for term_id, weight in weights.items():
            model[term_id] += prior * weight / mass
    return model


def expanded_weights(
    query: Sequence[QueryTerm], model: dict[int, float], idfs: dict[int, float], terms: int
) -> dict[int, float]:
    """Term id -> weight of the RM3 query: (1-l) P(t|R) over its top terms + l P(t|Q), times IDF."""
    top = sorted(model.items(), key=lambda item: (-item[1], item[0]))[:terms]
    mass = sum(p for _, p in top) or 1.0
    mixed: dict[int, float] = defaultdict(float)
    for term in query:
        mixed[term.id] += PRF_ORIGINAL_WEIGHT / len(query)
    for term_id, p in top:
        mixed[term_id] += (1 - PRF_ORIGINAL_WEIGHT) * p / mass
    return {term_id: w * idfs[term_id] for term_id, w in mixed.items() if term_id in idfs}


def expand_bm25(cursor, first: LexicalResult, feedback: dict[int, float], filters, n: int):
    """BM25 again with the RM3 query built from the `feedback` papers (id -> fused score)."""
    if not first.terms or not feedback:
        return first
    cursor.execute(_DOC_WEIGHTS, [list(feedback)])
    documents = {paper_id: _sparse(text) for paper_id, text in cursor.fetchall()}
    model = feedback_model(documents, feedback)
    top_ids = [t for t, _ in sorted(model.items(), key=lambda i: (-i[1], i[0]))[:PRF_TERMS]]
    cursor.execute(_TERMS, [top_ids + [t.id for t in first.terms]])
    terms = {}
    for term_id, lexeme, df, floor, count in cursor.fetchall():
        if df and count:
            terms[term_id] = QueryTerm(term_id, lexeme, df, idf(df, count), floor)
    weights = expanded_weights(first.terms, model, {i: t.idf for i, t in terms.items()}, PRF_TERMS)
    used = [terms[i] for i in weights]
    result = rank_terms(cursor, first.lexemes, used, weights, filters, n)
    # Highlighting and the relevance gate keep the query's own words.
    result.terms = first.terms
    return result


_MEAN_VECTOR = """
SELECT avg(embedding)::text FROM papers_passage
WHERE paper_id = ANY(%s) AND model = %s AND kind = 'abstract'
"""


def rocchio(cursor, vector, feedback: list[int], model: str) -> np.ndarray:
    """q + ROCCHIO_BETA * the mean passage vector of the feedback papers, unit length."""
    query = np.asarray(vector, dtype=np.float32)
    cursor.execute(_MEAN_VECTOR, [feedback, model])
    row = cursor.fetchone()
    if not feedback or not row or row[0] is None:
        return query
    centroid = np.array([float(x) for x in row[0].strip("[]").split(",")], dtype=np.float32)
    moved = query / (np.linalg.norm(query) or 1.0) + ROCCHIO_BETA * centroid
    return moved / (np.linalg.norm(moved) or 1.0)


# --- doc-then-passage scoring --------------------------------------------------------------------

_PASSAGE_SIMILARITIES = """
SELECT paper_id, 1 - (embedding <=> %s::vector) FROM papers_passage
WHERE paper_id = ANY(%s) AND model = %s AND kind = 'abstract'
"""


def aggregate(similarities: Sequence[float], how: str) -> float:
    """A paper's dense score from its passages' similarities."""
    best = sorted(similarities, reverse=True)
    if how == "sum":
        return sum(best)
    if how == "top2":
        return sum(best[:2]) / len(best[:2])
    return best[0]


def rescore_passages(cursor, dense: DenseResult, vector, model: str, how: str) -> DenseResult:
    """The dense candidates re-ranked by `aggregate` over all their passages."""
    if how == "max" or not dense.hits:
        return dense
    cursor.execute(
        _PASSAGE_SIMILARITIES, [vector_literal(vector), [h.paper_id for h in dense.hits], model]
    )
    by_paper: dict[int, list[float]] = defaultdict(list)
    for paper_id, similarity in cursor.fetchall():
        by_paper[paper_id].append(float(similarity))
    hits = []
    for hit in dense.hits:
        score = aggregate(by_paper.get(hit.paper_id) or [hit.similarity], how)
        hits.append(DenseHit(hit.paper_id, hit.passage_id, 1.0 - score, hit.published))
    hits.sort(key=lambda h: (h.distance, h.paper_id))
    return DenseResult(hits, dense.plan)


# --- query-adaptive fusion ------------------------------------------------------------------------


def head_gap(scores: Sequence[float], rank: int = GAP_RANK) -> float:
    """1 - the min-max normalised score at `rank`: near 1 when the head stands out."""
    if len(scores) < 2:
        return 1.0
    high, low = max(scores), min(scores)
    if high <= low:
        return 0.0
    at = scores[min(rank, len(scores)) - 1]
    return 1.0 - (at - low) / (high - low)


def length_dense_weight(terms: int) -> float:
    return min(0.7, max(0.3, 0.5 + LENGTH_SLOPE * (terms - LENGTH_PIVOT)))


def adapt_weights(lists: list[Ranked], how: str, query_terms: int) -> list[Ranked]:
    """The lists with weights for this query; their total weight is unchanged."""
    if not how or len(lists) < 2:
        return lists
    total = sum(r.weight for r in lists)
    if how == "length":
        dense = length_dense_weight(query_terms)
        raw = [dense if r.name.startswith("dense") else 1 - dense for r in lists]
    elif how == "gap":
        raw = [r.weight * head_gap(r.scores) for r in lists]
    else:
        raise ImproperlyConfigured(f"unknown adaptive fusion {how!r}")
    if sum(raw) <= 0:
        return lists
    scale = total / sum(raw)
    return [replace(r, weight=w * scale) for r, w in zip(lists, raw, strict=True)]


# --- term proximity -------------------------------------------------------------------------------

_QUERY_POSITIONS = "SELECT lexeme, positions::int[] FROM unnest(to_tsvector('english', %s))"
_PAPER_POSITIONS = """
SELECT p.id, u.lexeme, u.positions::int[] FROM papers_paper p
CROSS JOIN LATERAL unnest(p.search_vector) AS u
WHERE p.id = ANY(%s) AND u.lexeme = ANY(%s)
"""


def near_pairs(positions: dict[str, Sequence[int]], window: int = PROXIMITY_WINDOW) -> list:
    """The pairs of distinct query lexemes that stand within `window` positions of each other in
    the query (stopwords keep their positions in a tsvector), in query order, each once."""
    sequence = sorted((p, lexeme) for lexeme, ps in positions.items() for p in ps or ())
    pairs: dict[tuple[str, str], None] = {}
    for i, (p, a) in enumerate(sequence):
        for q, b in sequence[i + 1 :]:
            if q - p > window:
                break
            if a != b:
                pairs[(a, b)] = None
    return list(pairs)


def near_count(first: Sequence[int], second: Sequence[int], window: int = PROXIMITY_WINDOW) -> int:
    """How many occurrences of the first lexeme have the second within `window` positions."""
    others = set(second)
    return sum(
        1 for p in first if any(p + d in others or p - d in others for d in range(1, window + 1))
    )


def proximity_scores(query: dict[str, Sequence[int]], papers: dict, idfs: dict[str, float]):
    """paper -> sum over the query's near pairs found near each other in the paper of
    mean IDF x count (k1 + 1) / (count + k1). `papers`: paper -> lexeme -> positions."""
    bonus: dict[int, float] = defaultdict(float)
    pairs = [(a, b) for a, b in near_pairs(query) if a in idfs and b in idfs]
    for paper_id, lexemes in papers.items():
        for a, b in pairs:
            if a in lexemes and b in lexemes:
                count = near_count(lexemes[a], lexemes[b])
                if count:
                    weight = (idfs[a] + idfs[b]) / 2
                    bonus[paper_id] += weight * count * (K1 + 1) / (count + K1)
    return bonus


def add_proximity(cursor, lexical: LexicalResult, text: str) -> LexicalResult:
    """The BM25 list re-ranked by score + PROXIMITY_WEIGHT x the proximity bonus: one read of
    the positions of the query's lexemes in the listed papers (their `search_vector`)."""
    if len(lexical.terms) < 2 or not lexical.hits:
        return lexical
    cursor.execute(_QUERY_POSITIONS, [american_spelling(tex_to_plain(text))])
    query = {lexeme: positions for lexeme, positions in cursor.fetchall()}
    idfs = {t.lexeme: t.idf for t in lexical.terms}
    cursor.execute(_PAPER_POSITIONS, [[h.paper_id for h in lexical.hits], list(idfs)])
    papers: dict[int, dict[str, list[int]]] = defaultdict(dict)
    for paper_id, lexeme, positions in cursor.fetchall():
        papers[paper_id][lexeme] = positions or []
    bonus = proximity_scores(query, papers, idfs)
    if not bonus:
        return lexical
    hits = [
        replace(h, score=h.score + PROXIMITY_WEIGHT * bonus.get(h.paper_id, 0.0))
        for h in lexical.hits
    ]
    hits.sort(key=lambda h: (-h.score, h.paper_id))
    return replace(lexical, hits=hits)


# --- sentence vectors -----------------------------------------------------------------------------

_BEST_SENTENCES = """
SELECT paper_id, max(1 - (embedding <=> %s::vector)) AS similarity FROM papers_passage
WHERE paper_id = ANY(%s) AND model = %s AND kind = 'sentence'
GROUP BY paper_id ORDER BY similarity DESC, paper_id
"""


def sentence_list(cursor, vector, model: str, paper_ids: Sequence[int]) -> Ranked:
    """The candidates (`paper_ids`: those of the dense and BM25 lists) ranked by their sentence
    closest to the query: one read of their sentence vectors by paper id (~10 a paper, no
    index walk). A paper without sentence vectors is left out, as a list leaves out a paper
    it did not find."""
    cursor.execute(_BEST_SENTENCES, [vector_literal(vector), list(paper_ids), model])
    rows = cursor.fetchall()
    return Ranked("sentences", [r[0] for r in rows], [float(r[1]) for r in rows], SENTENCE_WEIGHT)


# --- learned fusion -------------------------------------------------------------------------------

# One pass over the candidates' passages and sentences (by paper id: the unique (paper, model,
# kind, position) B-tree), 1.6 ms for 170 papers against 2.6 ms for a subquery per paper.
_CANDIDATE_SCORES = """
WITH v AS (
    SELECT paper_id,
           max(1 - (embedding <=> %(q)s::vector)) FILTER (WHERE kind = 'abstract') AS passage,
           max(1 - (embedding <=> %(q)s::vector)) FILTER (WHERE kind = 'sentence') AS sentence
    FROM papers_passage
    WHERE paper_id = ANY(%(ids)s) AND model = %(model)s AND kind IN ('abstract', 'sentence')
    GROUP BY paper_id
)
SELECT c.id, v.passage, -(l.weights <#> %(qv)s::sparsevec), v.sentence
FROM unnest(%(ids)s::bigint[]) AS c(id)
LEFT JOIN v ON v.paper_id = c.id
LEFT JOIN papers_paperlexicon l ON l.paper_id = c.id
"""


def min_max(values: Sequence[float | None]) -> list[float]:
    """Each value scaled to 0..1 over those present (all equal: 1); a missing one is 0."""
    present = [v for v in values if v is not None]
    if not present:
        return [0.0] * len(values)
    high, low = max(present), min(present)
    return [
        0.0 if v is None else ((v - low) / (high - low) if high > low else 1.0) for v in values
    ]


def learned_scores(rows: Sequence[tuple], weights: Sequence[float] | None = None) -> dict:
    """paper -> sum over its scores (passage, BM25, sentence; None when it has none) of weight
    (LEARNED_WEIGHTS unless given) x the score min-max normalised over every candidate (`rows`:
    (paper, passage, bm25, sentence))."""
    weights = LEARNED_WEIGHTS if weights is None else weights
    columns = [min_max([row[k] for row in rows]) for k in (1, 2, 3)]
    return {
        row[0]: sum(w * column[i] for w, column in zip(weights, columns, strict=True))
        for i, row in enumerate(rows)
    }


def candidate_scores(cursor, vector, model: str, terms: Sequence[QueryTerm], paper_ids) -> list:
    """(paper, best passage similarity, BM25 score, best sentence similarity) of each paper of
    `paper_ids`, None where it has no such vector or no BM25 weights: one read by paper id."""
    # No term the index knows: every BM25 score is 0, the same for all, which ranks nothing.
    qv = sparse_literal({t.id: t.idf for t in terms})
    cursor.execute(
        _CANDIDATE_SCORES,
        {"q": vector_literal(vector), "model": model, "qv": qv, "ids": list(paper_ids)},
    )
    return [
        (int(row[0]), *(None if v is None else float(v) for v in row[1:]))
        for row in cursor.fetchall()
    ]


def learned_list(
    cursor, vector, model: str, terms: Sequence[QueryTerm], paper_ids
) -> Ranked | None:
    """The candidates (`paper_ids`: those of the dense and BM25 lists) ranked by learned fusion
    of their three scores (`candidate_scores`); None when none has sentence vectors (the
    weights were fitted with them: without, the default fusion stays)."""
    rows = candidate_scores(cursor, vector, model, terms, paper_ids)
    if all(row[3] is None for row in rows):
        return None
    scores = learned_scores(rows)
    ordered = sorted(scores, key=lambda pid: (-scores[pid], pid))
    return Ranked("learned", ordered, [scores[pid] for pid in ordered], 1.0)
