"""Measures the benchmarks share: percentiles, and for `manage.py bench_retrieval` the BEIR folder
layout, nDCG@k as BEIR/pytrec_eval compute it (graded gains, log2 discount, ideal DCG over the
judged relevant documents) and recall@k (relevant retrieved in the top k / relevant judged).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np


def ndcg_at(ranked: Sequence[str], relevant: dict[str, int], k: int = 10) -> float:
    gains = [relevant.get(doc, 0) for doc in ranked[:k]]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains) if g > 0)
    ideal = sorted((g for g in relevant.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at(ranked: Sequence[str], relevant: dict[str, int], k: int = 100) -> float:
    wanted = {doc for doc, g in relevant.items() if g > 0}
    if not wanted:
        return 0.0
    return len(wanted.intersection(ranked[:k])) / len(wanted)


@dataclass
class BeirSet:
    corpus: dict[str, tuple[str, str]]  # doc id -> (title, text)
    queries: dict[str, str]  # query id -> text, only those judged in the split
    qrels: dict[str, dict[str, int]]  # query id -> {doc id: grade}
    corpus_path: Path
    partial: bool = False  # only the first documents of the corpus file (bench --corpus-limit)


def load_beir(folder: Path, split: str = "test") -> BeirSet:
    """corpus.jsonl, queries.jsonl and qrels/<split>.tsv from a BEIR-layout folder."""
    folder = Path(folder)
    paths = {
        "corpus": folder / "corpus.jsonl",
        "queries": folder / "queries.jsonl",
        "qrels": folder / "qrels" / f"{split}.tsv",
    }
    for what, path in paths.items():
        if not path.is_file():
            raise FileNotFoundError(f"BEIR {what} file not found: {path}")
    corpus = {}
    with paths["corpus"].open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                doc = json.loads(line)
                corpus[str(doc["_id"])] = (doc.get("title") or "", doc.get("text") or "")
    qrels: dict[str, dict[str, int]] = {}
    with paths["qrels"].open(encoding="utf-8", newline="") as f:
        rows = csv.reader(f, delimiter="\t")
        for row in rows:
            if not row or row[0] in ("query-id", "query_id"):
                continue
            query_id, doc_id, grade = row[0], row[1], int(row[2])
            qrels.setdefault(query_id, {})[doc_id] = grade
    queries = {}
    with paths["queries"].open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                query = json.loads(line)
                if str(query["_id"]) in qrels:
                    queries[str(query["_id"])] = query["text"]
    return BeirSet(corpus, queries, qrels, paths["corpus"])


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def percentile(values: Sequence[float], pct: float) -> float:
    """The nearest-rank percentile (pct in 0..100) of a non-empty sequence."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


def interpolated_percentile(values: Sequence[float], pct: float) -> float:
    """The linearly interpolated percentile (pct in 0..100); NaN for no values."""
    values = sorted(values)
    if not values:
        return float("nan")
    k = (len(values) - 1) * pct / 100
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def paired_bootstrap(
    differences: Sequence[float], resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """95% percentile interval of the mean of per-query differences (variant - baseline),
    resampling queries with replacement: both runs are scored on the same resampled queries."""
    values = np.asarray(differences, dtype=float)
    if values.size == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, values.size, size=(resamples, values.size))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def compared(variant: Sequence[float], baseline: Sequence[float]) -> dict:
    """Per-query scores of a variant against a baseline's on the same queries: the mean
    difference, its paired bootstrap 95% interval, and the mean difference on the odd and on
    the even queries separately (a variant that wins by fitting noise rarely wins on both)."""
    diffs = [v - b for v, b in zip(variant, baseline, strict=True)]
    low, high = paired_bootstrap(diffs)
    return {
        "diff": round(mean(diffs), 4),
        "ci95": [round(low, 4), round(high, 4)],
        "odd": round(mean(diffs[1::2]), 4),
        "even": round(mean(diffs[0::2]), 4),
    }
