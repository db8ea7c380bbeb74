"""Learned fusion (learning to rank) over each claim's candidates, cross-validated: the models and
features `manage.py bench_learned_fusion` compares (issue #16, docs/BENCHMARKS.md, session 17).

A claim's candidates are the papers of its dense and BM25 lists, each with raw scores (`RAW`);
`features` normalises them per claim. Three linear models, numpy only:

- coordinate ascent on mean nDCG@10 (Metzler & Croft 2007): one weight at a time moved by a
  few steps, kept when the training claims' nDCG@10 rises; the weights' absolute values sum to 1;
- pointwise logistic regression (Newton's method, L2), every claim weighing alike;
- pairwise logistic regression over each claim's (relevant, non-relevant) pairs (RankNet with a
  linear scorer: a RankSVM with a smooth loss), every claim weighing alike.

`cross_validate` ranks each claim with a model fitted on the other folds only: nothing is scored
by a model that saw it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from bench.evaluation import ndcg_at

# Raw scores of a candidate (NaN: missing). "dense_list" and "bm25_list": its score in that list,
# missing when the list did not find it; "passage", "bm25", "sentence": its best passage's
# similarity, its BM25 score and its best sentence's similarity, whichever list found it.
RAW = (
    "dense_list", "bm25_list", "passage", "bm25", "sentence", "title_bm25", "abstract_bm25",
    "coverage", "title_coverage", "passages", "length", "dense_rank", "bm25_rank",
)  # fmt: skip


@dataclass
class Claim:
    query_id: str
    docs: list[str]  # the candidates' document ids, in paper id order (ties break this way)
    raw: np.ndarray  # candidates x RAW
    terms: int  # the query's terms the index knows
    relevance: np.ndarray  # the candidates' grades


def min_max(values: np.ndarray) -> np.ndarray:
    """0..1 over the present values (all equal: 1); missing ones 0. As convex fusion does."""
    present = ~np.isnan(values)
    out = np.zeros(len(values))
    if present.any():
        high, low = values[present].max(), values[present].min()
        out[present] = (values[present] - low) / (high - low) if high > low else 1.0
    return out


def z_score(values: np.ndarray) -> np.ndarray:
    values = np.nan_to_num(values)
    spread = values.std()
    return (values - values.mean()) / spread if spread > 0 else np.zeros(len(values))


def features(claim: Claim) -> dict[str, np.ndarray]:
    """Per-claim normalisations of the raw scores, and a few interactions with query length."""
    raw = {name: claim.raw[:, i] for i, name in enumerate(RAW)}
    found_dense, found_bm25 = ~np.isnan(raw["dense_list"]), ~np.isnan(raw["bm25_list"])
    f = {
        # as the default fuses them: each list's own min-max, 0 where it did not find the paper
        "dense_list": min_max(raw["dense_list"]),
        "bm25_list": min_max(raw["bm25_list"]),
        # every candidate's own scores, min-max or z-scored over all the candidates
        **{f"{n}_mm": min_max(raw[n]) for n in ("passage", "bm25", "sentence")},
        **{f"{n}_z": z_score(raw[n]) for n in ("passage", "bm25", "sentence")},
        "title_bm25_mm": min_max(raw["title_bm25"]),
        "abstract_bm25_mm": min_max(raw["abstract_bm25"]),
        "coverage": np.nan_to_num(raw["coverage"]),
        "title_coverage": np.nan_to_num(raw["title_coverage"]),
        "dense_rr": np.where(found_dense, 60 / (60 + np.nan_to_num(raw["dense_rank"])), 0.0),
        "bm25_rr": np.where(found_bm25, 60 / (60 + np.nan_to_num(raw["bm25_rank"])), 0.0),
        "in_dense": found_dense.astype(float),
        "in_bm25": found_bm25.astype(float),
        "log_passages": np.log1p(np.nan_to_num(raw["passages"])),
        "log_length": np.log1p(np.nan_to_num(raw["length"])),
    }
    for name in ("passage", "bm25", "sentence"):
        f[f"terms_x_{name}"] = claim.terms / 10 * f[f"{name}_mm"]
    return f


class Features:
    """The feature matrices of every claim, computed once."""

    def __init__(self, claims: Sequence[Claim]):
        self.claims = list(claims)
        self._features = [features(c) for c in claims]

    def matrix(self, i: int, names: Sequence[str]) -> np.ndarray:
        return np.stack([self._features[i][n] for n in names], axis=1)

    def names(self) -> list[str]:
        return list(self._features[0]) if self._features else []


def ranking(claim: Claim, scores: np.ndarray) -> list[str]:
    """The candidates best first; ties in candidate order (paper id, as fusion breaks them)."""
    order = np.lexsort((np.arange(len(scores)), -np.asarray(scores)))
    return [claim.docs[j] for j in order]


def ndcg(claim: Claim, scores: np.ndarray, qrels: dict[str, int]) -> float:
    return ndcg_at(ranking(claim, scores), qrels, 10)


Fit = Callable[["Features", list[int], list[str]], np.ndarray]


def fit_coordinate_ascent(
    data: Features, train: list[int], names: list[str], *, qrels: dict, init: Sequence[float],
    rounds: int = 3, steps: Sequence[float] = (-0.5, -0.2, -0.1, -0.05, -0.02, 0.02, 0.05, 0.1, 0.2, 0.5),
) -> np.ndarray:  # fmt: skip
    """Weights raising the training claims' mean nDCG@10, one coordinate at a time from `init`."""
    matrices = [data.matrix(i, names) for i in train]
    judged = [qrels[data.claims[i].query_id] for i in train]
    claims = [data.claims[i] for i in train]

    def score(w):
        together = zip(claims, matrices, judged, strict=True)
        return np.mean([ndcg(c, m @ w, j) for c, m, j in together])

    weights = np.asarray(init, float) / (np.abs(init).sum() or 1.0)
    best = score(weights)
    for _ in range(rounds):
        improved = False
        for k in range(len(names)):
            for step in steps:
                trial = weights.copy()
                trial[k] += step
                if not np.abs(trial).sum():
                    continue
                trial /= np.abs(trial).sum()
                value = score(trial)
                if value > best + 1e-6:
                    best, weights, improved = value, trial, True
        if not improved:
            break
    return weights


def _standardiser(data: Features, train: list[int], names: list[str]):
    rows = np.concatenate([data.matrix(i, names) for i in train])
    spread = rows.std(axis=0)
    spread[spread == 0] = 1.0
    return rows.mean(axis=0), spread


def _newton_logistic(x: np.ndarray, y: np.ndarray, weight: np.ndarray, l2: float) -> np.ndarray:
    w = np.zeros(x.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-np.clip(x @ w, -30, 30)))
        gradient = x.T @ (weight * (p - y)) + l2 * w
        hessian = (x * (weight * p * (1 - p))[:, None]).T @ x + l2 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def fit_logistic(data: Features, train: list[int], names: list[str], *, l2: float = 1.0):
    """P(relevant | features), each claim's candidates weighing 1 in all (an intercept, unused
    for ranking). Returns weights on the raw (unstandardised) features."""
    mean, spread = _standardiser(data, train, names)
    x = np.concatenate([(data.matrix(i, names) - mean) / spread for i in train])
    x = np.hstack([x, np.ones((len(x), 1))])
    y = np.concatenate([data.claims[i].relevance > 0 for i in train]).astype(float)
    weight = np.concatenate([np.full(len(data.claims[i].docs), 1 / len(data.claims[i].docs))
                             for i in train])  # fmt: skip
    return _newton_logistic(x, y, weight * 100, l2)[:-1] / spread


def fit_pairwise(data: Features, train: list[int], names: list[str], *, l2: float = 1.0):
    """P(relevant above non-relevant) = logistic(w . (x_rel - x_non)), over each training claim's
    pairs, each claim weighing 1 in all. Returns weights on the raw features."""
    mean, spread = _standardiser(data, train, names)
    pairs, weights = [], []
    for i in train:
        x = (data.matrix(i, names) - mean) / spread
        relevant = data.claims[i].relevance > 0
        if relevant.any() and not relevant.all():
            diff = (x[relevant][:, None, :] - x[~relevant][None, :, :]).reshape(-1, x.shape[1])
            pairs.append(diff)
            weights.append(np.full(len(diff), 1 / len(diff)))
    x = np.concatenate(pairs)
    return _newton_logistic(x, np.ones(len(x)), np.concatenate(weights) * 100, l2) / spread


def folds_of(count: int, folds: int, seed: int) -> list[np.ndarray]:
    return np.array_split(np.random.default_rng(seed).permutation(count), folds)


def cross_validate(data: Features, fit: Fit, names: list[str], *, folds: int = 5, seed: int = 0):
    """Each claim's scores from a model fitted on the other folds: (scores per claim, the
    folds' weights)."""
    scores: list[np.ndarray | None] = [None] * len(data.claims)
    fitted = []
    parts = folds_of(len(data.claims), folds, seed)
    for k, held_out in enumerate(parts):
        train = sorted(int(i) for j, part in enumerate(parts) if j != k for i in part)
        weights = fit(data, train, names)
        fitted.append(weights)
        for i in held_out:
            scores[int(i)] = data.matrix(int(i), names) @ weights
    return scores, np.array(fitted)
