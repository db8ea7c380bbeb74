"""Learned fusion's models and cross-validation (bench/learned_fusion.py) on claims built here."""

import numpy as np
import pytest

from bench import learned_fusion as lf

NAN = np.nan


def claim(query_id: str, good: list[float], bad: list[float], relevant: list[int]) -> lf.Claim:
    """Candidates d0..dn; `good` and `bad` fill the raw passage and BM25 scores (every other raw
    score missing), `relevant` marks the candidates judged relevant."""
    raw = np.full((len(good), len(lf.RAW)), NAN)
    raw[:, lf.RAW.index("passage")] = good
    raw[:, lf.RAW.index("bm25")] = bad
    grades = np.array([1.0 if i in relevant else 0.0 for i in range(len(good))])
    return lf.Claim(query_id, [f"{query_id}-d{i}" for i in range(len(good))], raw, 3, grades)


def corpus(count: int = 12) -> tuple[lf.Features, dict]:
    """Claims whose relevant candidate has the best passage score and a middling BM25 score."""
    rng = np.random.default_rng(1)
    claims = []
    for n in range(count):
        size = 6
        target = int(rng.integers(size))
        good = rng.uniform(0.1, 0.5, size)
        bad = rng.uniform(1, 5, size)
        good[target], bad[target] = 0.9, 2.0
        claims.append(claim(f"q{n}", list(good), list(bad), [target]))
    qrels = {c.query_id: {c.docs[int(np.argmax(c.relevance))]: 1} for c in claims}
    return lf.Features(claims), qrels


def test_normalisations_leave_missing_scores_at_zero():
    assert lf.min_max(np.array([2.0, 4.0, NAN])).tolist() == [0.0, 1.0, 0.0]
    assert lf.min_max(np.array([3.0, 3.0])).tolist() == [1.0, 1.0]
    z = lf.z_score(np.array([1.0, 3.0]))
    assert z.tolist() == [-1.0, 1.0]


def test_cross_validation_never_scores_a_claim_with_a_model_that_saw_it():
    data, _ = corpus(10)
    seen: list[set[int]] = []

    def fit(features, train, names):
        seen.append(set(train))
        return np.ones(len(names))

    scores, weights = lf.cross_validate(data, fit, ["passage_mm"], folds=5, seed=3)

    assert len(seen) == 5 and weights.shape == (5, 1)
    held_out = [set(map(int, part)) for part in lf.folds_of(10, 5, 3)]
    for train, test in zip(seen, held_out, strict=True):
        assert not train & test and len(train | test) == 10
    assert all(s is not None for s in scores)


@pytest.mark.parametrize("model", ["ascent", "logistic", "pairwise"])
def test_every_model_learns_which_score_marks_the_relevant_paper(model):
    data, qrels = corpus()
    names = ["passage_mm", "bm25_mm"]
    if model == "ascent":
        def fit(features, train, names):
            return lf.fit_coordinate_ascent(features, train, names, qrels=qrels, init=[0.5, 0.5])
    else:
        fit = lf.fit_logistic if model == "logistic" else lf.fit_pairwise

    scores, weights = lf.cross_validate(data, fit, names, folds=3, seed=0)

    assert (weights[:, 0] > weights[:, 1]).all()
    held_out = [lf.ndcg(c, s, qrels[c.query_id]) for c, s in zip(data.claims, scores, strict=True)]
    assert np.mean(held_out) == pytest.approx(1.0)
    # Equal weights, the starting point, do not put it first: BM25 says the opposite.
    even = [lf.ndcg(c, data.matrix(i, names) @ np.ones(2), qrels[c.query_id])
            for i, c in enumerate(data.claims)]  # fmt: skip
    assert np.mean(even) < 1.0


def test_ties_keep_the_candidates_order():
    c = claim("q", [0.5, 0.5, 0.9], [1, 1, 1], [2])
    assert lf.ranking(c, np.array([1.0, 1.0, 2.0])) == ["q-d2", "q-d0", "q-d1"]
