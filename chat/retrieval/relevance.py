"""Is anything retrieved relevant at all? The relevance gate in front of the answer.

A search always returns its k best papers, even for "recipes for sourdough bread" in a catalogue
of machine-learning preprints. The fused scores cannot tell: both fusions are relative to the
lists they fuse (RRF is rank-based, convex fusion min-max normalises each list, so the best paper
scores the same however poor it is). Two absolute signals can:

- `dense_top`: the cosine similarity between the question and the best passage of any paper in
  the window (the dense list's first hit);
- `lexical_top`: the share of the question's BM25 weight the best paper matches, i.e. its BM25
  score over the sum of the IDFs of every query lexeme (a lexeme the index has never seen counts
  with the IDF of the rarest known one): 1.0 is roughly "every query word once".

The gate says "nothing relevant" only when both are below their thresholds. The thresholds
belong to the embedding model (a cosine of 0.3 means different things to different models) and
were chosen on one half of a labelled set and measured on the other (`manage.py bench_gate`,
numbers in docs/BENCHMARKS.md). Models without calibrated thresholds are never gated.

Never gated: questions whose filters selected the papers (authors, categories, "papers like
<arXiv id>"), and questions with no topic (a listing): those papers are what was asked for.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Signals:
    dense_top: float | None  # cosine of the best passage; None without a dense search
    lexical_top: float | None  # best BM25 score / the query's IDF mass; None without terms

    def to_dict(self) -> dict:
        return {k: (round(v, 4) if v is not None else None) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class Thresholds:
    dense: float
    lexical: float


# Per embedding model (Passage.model). Chosen by `manage.py bench_gate` on the calibration half;
# see docs/BENCHMARKS.md for the held-out precision and recall.
THRESHOLDS: dict[str, Thresholds] = {
    "all-MiniLM-L6-v2-int8": Thresholds(dense=0.40, lexical=0.80),
    # The tests' bag-of-words embedder: shared words are all it knows.
    "hashing-test": Thresholds(dense=0.20, lexical=0.80),
}


def lexical_share(top_score: float | None, lexemes, terms) -> float | None:
    """The best BM25 score over the IDF mass of the query (see the module docstring)."""
    if top_score is None or not terms:
        return 0.0 if lexemes else None
    idfs = {t.lexeme: t.idf for t in terms}
    rarest = max(idfs.values())
    mass = sum(idfs.get(lexeme, rarest) for lexeme in set(lexemes))
    return top_score / mass if mass > 0 else None


def nothing_relevant(analysis, signals: Signals | None, model: str) -> bool:
    """True when the question has a topic, no filter chose the papers, and neither signal
    reaches its calibrated threshold for `model`."""
    if signals is None or not (analysis.query or "").strip():
        return False
    if analysis.authors or analysis.categories or analysis.arxiv_id:
        return False
    limits = THRESHOLDS.get(model)
    if limits is None:
        return False
    dense = signals.dense_top if signals.dense_top is not None else 0.0
    lexical = signals.lexical_top if signals.lexical_top is not None else 0.0
    return dense < limits.dense and lexical < limits.lexical
