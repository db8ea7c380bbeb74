"""Learned fusion on a BEIR folder, cross-validated over its claims (issue #16, session 17).

    manage.py bench_learned_fusion --beir ../shared/data/scifact --split train
                                   [--folds 5] [--seed 0] [--keep-db] [--json]

The corpus goes into the scratch database as `bench_retrieval` puts it there (the same vector
caches, sentence vectors included). For every claim: the production dense and BM25 lists (100
papers each) and, for every paper of either (the candidates), the raw scores of
bench/learned_fusion.py's RAW: its scores in the lists, its best passage, BM25 and best sentence
scores whichever list found it (chat.retrieval.refine.candidate_scores, what SEARCH_REFINE
"learned" reads), its title's and abstract's own BM25 and query-term coverage (bench/bm25f.py),
its passages and length. Then each model ranks every claim with weights fitted on the other
folds only (k-fold over the claims), and is compared with the default fusion of the same lists
in memory: nDCG@10, the difference with its paired bootstrap 95% interval, on the odd and on
the even claims, recall@100 (the first 100 candidates). Fixed-weight rows are not fitted here.

A screen: this does not go through search() (named papers, timing); the variant it picks is
measured by `bench_retrieval --variant learned`.
"""

from __future__ import annotations

import json
import time
from functools import partial
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

from bench import bm25f
from bench import learned_fusion as lf
from bench.evaluation import compared, load_beir, mean, ndcg_at, recall_at
from bench.management.commands.bench_retrieval import CANDIDATES
from bench.management.commands.bench_retrieval import Command as RetrievalBench
from bench.scratch_db import scratch_database
from chat.retrieval import refine
from chat.retrieval.dense import dense_search
from chat.retrieval.filters import SearchFilters
from chat.retrieval.fulltext import lexical_search
from papers.embeddings import get_embedder
from papers.models import Paper

LISTS = ["dense_list", "bm25_list", "sentence_mm"]
COMPLETE = ["passage_mm", "bm25_mm", "sentence_mm"]
Z = ["passage_z", "bm25_z", "sentence_z"]
FIELDS = ["title_bm25_mm", "abstract_bm25_mm", "coverage", "title_coverage"]
RANKS = ["dense_list", "bm25_list", "dense_rr", "bm25_rr", "in_dense", "in_bm25"]
SHAPE = ["log_passages", "log_length"]
# (label, feature names, weights): not fitted on the claims they are measured on, except the
# learned variant's own constants (fitted on SciFact train: in-sample there).
FIXED = [
    ("default: dense + BM25 lists, 0.5 each", ["dense_list", "bm25_list"], [0.5, 0.5]),
    ('"sentences": + the sentence list at 0.5', LISTS, [0.5, 0.5, 0.5]),
    ("every candidate's three scores, equal weights", COMPLETE, [1, 1, 1]),
    ('"learned": LEARNED_WEIGHTS (fitted on SciFact train)', COMPLETE, refine.LEARNED_WEIGHTS),
]
# (model, label, feature names, initial weights for coordinate ascent)
FITTED = [
    ("ascent", "three lists (as fused today)", LISTS, [0.5, 0.5, 0.5]),
    ("ascent", "every candidate's three scores, min-max", COMPLETE, [1, 1, 1]),
    ("ascent", "every candidate's three scores, z-score", Z, [1, 1, 1]),
    ("ascent", "three scores + title/abstract BM25, coverage", COMPLETE + FIELDS, [1, 1, 1, 0, 0, 0, 0]),
    ("ascent", "no sentences: passage + BM25 scores", COMPLETE[:2], [1, 1]),
    ("ascent", "no sentences: + title/abstract BM25, coverage", COMPLETE[:2] + FIELDS, [1, 1, 0, 0, 0, 0]),
    *[
        (model, label, names, None)
        for model in ("logistic", "pairwise")
        for label, names in [
            ("three lists (as fused today)", LISTS),
            ("every candidate's three scores, min-max", COMPLETE),
            ("every candidate's three scores, z-score", Z),
            ("z-scores + list scores, ranks, found-by", Z + RANKS),
            ("z-scores + fields, coverage, lengths", Z + FIELDS + SHAPE),
            ("every feature", None),
            ("no sentences: passage + BM25 scores", COMPLETE[:2]),
            ("no sentences: every other feature", "no-sentence"),
        ]
    ],
]  # fmt: skip


class Command(BaseCommand):
    help = "Learned fusion (linear learning to rank) on a BEIR folder, k-fold cross-validated."

    def add_arguments(self, parser):
        parser.add_argument("--beir", required=True, type=Path, help="BEIR folder (corpus.jsonl…)")
        parser.add_argument("--split", default="test", help="qrels/<split>.tsv (default test)")
        parser.add_argument("--folds", type=int, default=5)
        parser.add_argument("--seed", type=int, default=0, help="of the folds' shuffle")
        parser.add_argument("--limit-queries", type=int, default=None, metavar="N")
        parser.add_argument("--database", default="bench_beir", help="scratch database name")
        parser.add_argument("--keep-db", action="store_true", help="keep the scratch database")
        parser.add_argument("--cache-dir", type=Path, default=None, help="vector caches")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options):
        try:
            data = load_beir(options["beir"], options["split"])
        except (FileNotFoundError, ValueError, KeyError) as exc:
            raise CommandError(str(exc)) from None
        if options["folds"] < 2:
            raise CommandError("--folds must be at least 2")
        query_ids = sorted(data.queries)[: options["limit_queries"]]
        if len(query_ids) < options["folds"]:
            raise CommandError("fewer claims than folds")
        loader = RetrievalBench(stdout=self.stdout, stderr=self.stderr)
        loader.quiet = options["json"]
        cache_dir = options["cache_dir"] or Path(settings.DATA_DIR) / "bench"
        with scratch_database(options["database"], keep=options["keep_db"]):
            setup = loader.load(data, cache_dir, sentences=True)
            started = time.perf_counter()
            claims = candidates(data, query_ids)
            read = time.perf_counter() - started
        result = evaluate(claims, data.qrels, options["folds"], options["seed"])
        result["setup_seconds"], result["read_seconds"] = round(setup, 1), round(read, 1)
        result["claims"], result["folds"], result["seed"] = len(claims), options["folds"], options["seed"]
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2))
            return
        self.stdout.write(f"{len(claims)} claims, {options['folds']}-fold, seed {options['seed']}")
        self.stdout.write(f"{'row':70s} {'nDCG@10':>7s} {'diff':>8s} {'95% CI':>17s} "
                          f"{'odd':>7s} {'even':>7s} {'R@100':>6s}")  # fmt: skip
        for row in result["rows"]:
            low, high = row.get("ci95", [0, 0])
            self.stdout.write(
                f"{row['row'][:70]:70s} {row['ndcg@10']:7.4f} {row.get('diff', 0):+8.4f} "
                f"[{low:+.4f}, {high:+.4f}] {row.get('odd', 0):+7.4f} {row.get('even', 0):+7.4f} "
                f"{row['recall@100']:6.4f}"
            )


def candidates(data, query_ids: list[str]) -> list[lf.Claim]:
    """Every claim's candidates with their raw scores (bench/learned_fusion.py RAW), read from
    the scratch database through the production retrievers."""
    embedder = get_embedder()
    arxiv_of = dict(Paper.objects.values_list("id", "arxiv_id"))
    with connection.cursor() as cursor:
        fields = bm25f.load(cursor)
        cursor.execute(
            "SELECT paper_id, count(*) FROM papers_passage WHERE model = %s AND kind = 'abstract'"
            " GROUP BY paper_id",
            [embedder.name],
        )
        passages = dict(cursor.fetchall())
    claims = []
    for query_id in query_ids:
        text = data.queries[query_id]
        vector = embedder.embed_query(text)
        with transaction.atomic(), connection.cursor() as cursor:
            dense = dense_search(cursor, vector, embedder.name, SearchFilters(), CANDIDATES)
            lexical = lexical_search(cursor, text, SearchFilters(), CANDIDATES)
            ids = sorted({h.paper_id for h in dense.hits} | {h.paper_id for h in lexical.hits})
            scores = {row[0]: row[1:] for row in refine.candidate_scores(
                cursor, vector, embedder.name, lexical.terms, ids)}  # fmt: skip
        by_field = bm25f.field_scores(fields, lexical.terms, ids)
        in_dense = {h.paper_id: (rank, h.similarity) for rank, h in enumerate(dense.hits, 1)}
        in_bm25 = {h.paper_id: (rank, h.score) for rank, h in enumerate(lexical.hits, 1)}
        missing = (np.nan, np.nan)
        rows = []
        for paper_id in ids:
            title_len, abstract_len = fields.lengths.get(paper_id, (0, 0))
            rows.append([
                in_dense.get(paper_id, missing)[1], in_bm25.get(paper_id, missing)[1],
                *(np.nan if v is None else v for v in scores.get(paper_id, (None,) * 3)),
                *by_field[paper_id], passages.get(paper_id, 0), 2 * title_len + abstract_len,
                in_dense.get(paper_id, missing)[0], in_bm25.get(paper_id, missing)[0],
            ])  # fmt: skip
        docs = [arxiv_of[p] for p in ids]
        judged = data.qrels[query_id]
        claims.append(lf.Claim(
            query_id, docs, np.array(rows, dtype=float).reshape(-1, len(lf.RAW)),
            len(lexical.terms), np.array([judged.get(d, 0) for d in docs], dtype=float),
        ))  # fmt: skip
    return claims


def evaluate(claims: list[lf.Claim], qrels: dict, folds: int, seed: int) -> dict:
    data = lf.Features(claims)
    judged = [qrels[c.query_id] for c in claims]

    def measured(label: str, scores) -> dict:
        rankings = [lf.ranking(c, s) for c, s in zip(claims, scores, strict=True)]
        per_claim = [ndcg_at(r, j, 10) for r, j in zip(rankings, judged, strict=True)]
        recall = mean([recall_at(r[:100], j, 100) for r, j in zip(rankings, judged, strict=True)])
        return {"row": label, "ndcg@10": round(mean(per_claim), 4),
                "recall@100": round(recall, 4), "_per_claim": per_claim}  # fmt: skip

    rows = []
    for label, names, weights in FIXED:
        w = np.asarray(weights, float)
        rows.append(measured(label, [data.matrix(i, names) @ w for i in range(len(claims))]))
    baseline = rows[0]["_per_claim"]
    everything = data.names()
    for model, label, names, init in FITTED:
        if names is None:
            names = everything
        elif names == "no-sentence":
            names = [n for n in everything if "sentence" not in n]
        if model == "ascent":
            fit = partial(_ascent, qrels=qrels, init=init)
        else:
            fit = lf.fit_logistic if model == "logistic" else lf.fit_pairwise
        scores, weights = lf.cross_validate(data, fit, names, folds=folds, seed=seed)
        row = measured(f"{model}: {label}", scores)
        row["weights"] = dict(zip(names, np.round(weights.mean(axis=0), 4).tolist(), strict=True))
        rows.append(row)
    for row in rows[1:]:
        row.update(compared(row["_per_claim"], baseline))
    for row in rows:
        del row["_per_claim"]
    return {"rows": rows}


def _ascent(data, train, names, *, qrels, init):
    return lf.fit_coordinate_ascent(data, train, names, qrels=qrels, init=init)
