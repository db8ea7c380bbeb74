"""Retrieval quality on a BEIR folder: nDCG@10 and recall@100 for dense, BM25 and hybrid.

    manage.py bench_retrieval --beir ../shared/data/scifact --split train [--json]
                              [--limit-queries N] [--keep-db] [--variant all | NAME,...]

The corpus is written into a scratch database of its own (`bench_beir` on the same server,
created, migrated and dropped here), through the production code: upsert_papers (full-text
vector), papers.indexing.lexical (BM25), papers.indexing.vectors (passages and vectors of the active embedder),
then every query runs through the retrievers and through `chat.retrieval.search.search` itself
(with a literal analysis: a benchmark query is not a date question). The vectors of a corpus are
cached in DATA_DIR/bench/ so that a second run does not embed 5,000 abstracts again.

Also reported, from the same run: PostgreSQL's own `ts_rank` over an OR of the query lexemes
(the baseline BM25 replaces) and other fusion settings computed from the same two lists.

`--variant` (repeatable, or a comma list; "all" for every one in VARIANTS) names ranking
refinements (a settings.SEARCH_REFINE value, "+" joining several: chat/retrieval/refine.py;
"none" for no refinement at all, to measure what the configured default's add). Each
claim runs through `search()` with the default settings and with every variant, in an order that
rotates from claim to claim, so machine noise falls on all alike. For each variant: nDCG@10 and
recall@100, the difference in nDCG@10 with a paired bootstrap 95% interval (claims resampled),
the difference on the odd and on the even claims separately (a variant tuned to noise rarely
wins on both halves), and the ratio of its total search time to the default's.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from asgiref.sync import async_to_sync
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction
from django.test.utils import override_settings
from tqdm import tqdm

from bench import bm25f
from bench.evaluation import (
    BeirSet,
    compared,
    load_beir,
    mean,
    ndcg_at,
    percentile,
    recall_at,
)
from bench.scratch_db import scratch_database
from chat.retrieval import search as search_module
from chat.retrieval.dense import dense_search
from chat.retrieval.filters import SearchFilters
from chat.retrieval.fulltext import lexical_search
from chat.retrieval.fusion import Ranked, convex_fusion, list_weight, reciprocal_rank_fusion
from chat.retrieval.refine import parse as parse_refinements
from chat.retrieval.search import search
from chat.understanding.analysis import QueryAnalysis
from papers.embeddings import get_embedder
from papers.indexing.lexical import index_missing
from papers.indexing.vectors import embed_missing, embed_sentences
from papers.ingest.upsert import PaperRecord, upsert_papers
from papers.models import Paper, Passage

CANDIDATES = 100
CHECKPOINT_SECONDS = 120  # while embedding a corpus, save the vectors so far this often
PUBLISHED = datetime(2020, 1, 1, tzinfo=UTC)  # BEIR documents have no dates
# Every ranking variant tried for issue #16 (`--variant all`), as SEARCH_REFINE values.
VARIANTS = (
    "prf-bm25",
    "prf-bm25:3",
    "prf-dense",
    "prf-dense:1",
    "prf-bm25+prf-dense",
    "fusion-gap",
    "fusion-length",
    "passage-sum",
    "passage-top2",
    # BM25F over title and abstract (bench/bm25f.py; an index-time change): title weight 1, 2, 3.
    "bm25f:1",
    "bm25f:2",
    "bm25f:3",
    # Session 15: term proximity, sentence vectors (the default since), BM25 k1/b (index-time).
    "none",
    "proximity",
    "sentences+proximity",
    "bm25:0.9/0.4",
    "bm25:0.9/0.5",
    "bm25:1.2/0.3",
    # Session 17: learned fusion of every candidate's passage, BM25 and sentence scores.
    "learned",
)

_TS_RANK = """
SELECT p.arxiv_id FROM papers_paper p,
    (SELECT string_agg(quote_literal(l), ' | ')::tsquery AS q
     FROM unnest(tsvector_to_array(to_tsvector('english', %s))) AS l) query
WHERE p.search_vector @@ query.q
ORDER BY ts_rank(p.search_vector, query.q, 1) DESC, p.id
LIMIT %s
"""


class Command(BaseCommand):
    help = "nDCG@10 and recall@100 of dense, BM25 and hybrid search on a BEIR folder."

    def add_arguments(self, parser):
        parser.add_argument("--beir", required=True, type=Path, help="BEIR folder (corpus.jsonl…)")
        parser.add_argument("--split", default="test", help="qrels/<split>.tsv (default test)")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument("--limit-queries", type=int, default=None, metavar="N")
        parser.add_argument("--database", default="bench_beir", help="scratch database name")
        parser.add_argument("--keep-db", action="store_true", help="keep the scratch database")
        parser.add_argument(
            "--corpus-limit",
            type=int,
            default=None,
            metavar="N",
            help="only the first N documents of corpus.jsonl, and the queries whose judged "
            "documents are all among them (a smaller run: embedding 5k abstracts is slow)",
        )
        parser.add_argument(
            "--variant",
            action="append",
            default=[],
            metavar="NAME[,NAME]",
            help="ranking variants to compare with the default in the same run ('all': VARIANTS)",
        )
        parser.add_argument(
            "--cache-dir",
            type=Path,
            default=None,
            help="where corpus vectors are cached (default DATA_DIR/bench)",
        )

    def handle(self, *args, **options):
        try:
            data = load_beir(options["beir"], options["split"])
        except (FileNotFoundError, ValueError, KeyError) as exc:
            raise CommandError(str(exc)) from None
        limit = options["limit_queries"]
        if limit is not None and limit < 1:
            raise CommandError("--limit-queries must be at least 1")
        if options["corpus_limit"] is not None:
            if options["corpus_limit"] < 1:
                raise CommandError("--corpus-limit must be at least 1")
            data = _first_documents(data, options["corpus_limit"])
        query_ids = sorted(data.queries)[:limit] if limit else sorted(data.queries)
        self.quiet = options["json"]
        variants = _variants(options["variant"])
        cache_dir = options["cache_dir"] or Path(settings.DATA_DIR) / "bench"

        sentences = any(_needs_sentences(name) for name in variants) or _needs_sentences(
            settings.SEARCH_REFINE.replace(",", "+")
        )
        with scratch_database(options["database"], keep=options["keep_db"]):
            load_seconds = self.load(data, cache_dir, sentences=sentences)
            result = self.evaluate(data, query_ids, variants)
        result["setup_seconds"] = round(load_seconds, 1)
        result["dataset"] = {
            "folder": str(options["beir"]),
            "split": options["split"],
            "documents": len(data.corpus),
            "queries": len(query_ids),
        }
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2))
        else:
            self.report(result)

    # --- loading ---------------------------------------------------------------------------

    def say(self, message: str) -> None:
        if not self.quiet:
            self.stderr.write(message)

    def load(self, data, cache_dir: Path, *, sentences: bool = False) -> float:
        started = time.perf_counter()
        if Paper.objects.count() != len(data.corpus):
            self.say(f"writing {len(data.corpus)} documents into the scratch database")
            records = [
                PaperRecord(
                    arxiv_id=doc_id,
                    version=1,
                    title=title.strip() or text[:80] or doc_id,
                    abstract=text,
                    authors=[],
                    primary_category="beir",
                    categories=["beir"],
                    published=PUBLISHED,
                    updated=PUBLISHED,
                )
                for doc_id, (title, text) in data.corpus.items()
            ]
            upsert_papers(records)
        self.say("BM25 index")
        index_missing()
        embedder = get_embedder()
        part = f"-first{len(data.corpus)}" if data.partial else ""
        cache = cache_dir / f"{_fingerprint(data.corpus_path)}{part}-{embedder.name}.npz"
        self.ensure_vectors(embedder, cache)
        if sentences:
            self.ensure_sentences(embedder, cache.with_name(cache.name.replace(
                f"-{embedder.name}.npz", f"-sentences-{embedder.name}.npz")))  # fmt: skip
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
        return time.perf_counter() - started

    def ensure_vectors(self, embedder, cache: Path) -> None:
        if Passage.objects.abstracts().filter(model=embedder.name).exists():
            return
        if cache.is_file():
            self.say(f"vectors from {cache}")
            _load_vectors(cache, embedder.name)
            return
        # Resume: the vectors of any earlier run on the same corpus file (a --corpus-limit
        # prefix, or a checkpoint of a run that was cut) are valid here; embed only the rest.
        checkpoint = cache.with_name(
            cache.name.replace(f"-{embedder.name}.npz", "-partial") + f"-{embedder.name}.npz"
        )
        seed = _largest_earlier_cache(cache, embedder.name)
        if seed is not None:
            self.say(f"resuming from {seed}")
            _load_vectors(seed, embedder.name)
        self.say(f"embedding the corpus with {embedder.name} (once; cached in {cache})")
        saved_at = time.monotonic()

        def checkpoint_now(result) -> None:
            nonlocal saved_at
            if time.monotonic() - saved_at >= CHECKPOINT_SECONDS:
                _save_vectors(checkpoint, embedder.name)
                saved_at = time.monotonic()

        embed_missing(progress=True, on_batch=checkpoint_now)  # bars on stderr, even with --json
        _save_vectors(cache, embedder.name)

    def ensure_sentences(self, embedder, cache: Path) -> None:
        """The corpus's sentence vectors (SEARCH_REFINE "sentences"): from `cache`, or embedded
        through the product's embed_sentences, resuming from and saving a checkpoint."""
        sentence = Passage.Kind.SENTENCE
        if Passage.objects.sentences().filter(model=embedder.name).exists():
            return
        if cache.is_file():
            self.say(f"sentence vectors from {cache}")
            _load_vectors(cache, embedder.name, sentence)
            return
        checkpoint = cache.with_name(cache.name.replace("-sentences-", "-sentences-partial-"))
        if checkpoint.is_file():
            self.say(f"resuming from {checkpoint}")
            _load_vectors(checkpoint, embedder.name, sentence)
        self.say(f"embedding the corpus's sentences with {embedder.name} (once; cached in {cache})")
        saved_at = time.monotonic()

        def checkpoint_now(result) -> None:
            nonlocal saved_at
            if time.monotonic() - saved_at >= CHECKPOINT_SECONDS:
                _save_vectors(checkpoint, embedder.name, sentence)
                saved_at = time.monotonic()

        embed_sentences(progress=True, on_batch=checkpoint_now)
        _save_vectors(cache, embedder.name, sentence)

    # --- evaluation ------------------------------------------------------------------------

    def evaluate(self, data, query_ids: list[str], refinements: list[str]) -> dict:
        embedder = get_embedder()
        default_refine = settings.SEARCH_REFINE  # what "the default" searches with
        arxiv_of = dict(Paper.objects.values_list("id", "arxiv_id"))
        run_search = async_to_sync(search)
        if refinements:
            # Every variant of a claim searches with the vector embedded once: the embedding is
            # the same for all, and on a loaded machine it dominated and blurred the time ratios.
            embedder = _RememberedQuery(embedder)
            search_module._embedders[settings.EMBEDDING_BACKEND] = embedder
        runs: dict[str, list[list[str]]] = {
            name: [] for name in ("dense", "fulltext", "fulltext_ts_rank", "hybrid")
        }
        variants: dict[str, list[list[str]]] = {}
        latencies, exact_bm25 = [], 0
        refined: dict[str, list[list[str]]] = {name: [] for name in refinements}
        in_memory: list[list[str]] = []  # the index-time variants' control (below)
        # BM25F and BM25 k1/b variants re-rank the same dense list with another BM25 list
        # (index-time: untimed).
        fields = {n: w for n in refinements if (w := _index_time(n)) is not None}
        timed = [name for name in refinements if name not in fields]
        seconds: dict[str, float] = dict.fromkeys(["", *timed], 0.0)
        field_index = None
        if fields:
            with connection.cursor() as cursor:
                field_index = bm25f.load(cursor)
        self.say(f"{len(query_ids)} queries")
        claims = tqdm(query_ids, desc="claims", unit="claim", mininterval=10)
        for number, query_id in enumerate(claims):
            text = data.queries[query_id]
            vector = embedder.embed_query(text)
            with transaction.atomic(), connection.cursor() as cursor:
                dense = dense_search(cursor, vector, embedder.name, SearchFilters(), CANDIDATES)
                lexical = lexical_search(cursor, text, SearchFilters(), CANDIDATES)
                cursor.execute(_TS_RANK, [text, CANDIDATES])
                runs["fulltext_ts_rank"].append([row[0] for row in cursor.fetchall()])
            exact_bm25 += lexical.exact
            runs["dense"].append([arxiv_of[h.paper_id] for h in dense.hits])
            runs["fulltext"].append([arxiv_of[h.paper_id] for h in lexical.hits])

            analysis = QueryAnalysis(
                query=text, original=text, is_temporal=False, start=None, end=None, year=None,
                recency_weight=0.0, phrase="",
            )  # fmt: skip
            if fields:
                # Their control: today's BM25 list fused the same way, in memory. search()'s own
                # hybrid is not: it also puts papers the claim names first (chat.retrieval.named),
                # which moved nDCG@10 by ~0.002 on SciFact train (docs/BENCHMARKS.md, session 15).
                fused = convex_fusion([
                    Ranked("dense", [h.paper_id for h in dense.hits],
                           [h.similarity for h in dense.hits], list_weight("dense")),
                    Ranked("fulltext", [h.paper_id for h in lexical.hits],
                           [h.score for h in lexical.hits], list_weight("fulltext")),
                ])  # fmt: skip
                in_memory.append([arxiv_of[f.paper_id] for f in fused[:CANDIDATES]])
            for name, how in fields.items():
                if isinstance(how, tuple):  # "bm25:K1/B"
                    ids, scores_ = bm25f.rank_bm25(field_index, lexical.terms, CANDIDATES,
                                                   k1=how[0], b=how[1])  # fmt: skip
                else:
                    ids, scores_ = bm25f.rank(field_index, lexical.terms, CANDIDATES,
                                              title_weight=how)  # fmt: skip
                fused = convex_fusion([
                    Ranked("dense", [h.paper_id for h in dense.hits],
                           [h.similarity for h in dense.hits], list_weight("dense")),
                    Ranked("fulltext", ids, scores_, list_weight("fulltext")),
                ])  # fmt: skip
                refined[name].append([arxiv_of[f.paper_id] for f in fused[:CANDIDATES]])
            order = ["", *timed]  # "": the default; rotated so no variant always runs first
            shift = number % len(order)
            for name in order[shift:] + order[:shift]:
                with override_settings(SEARCH_REFINE=_refine_value(name, default_refine)):
                    started = time.perf_counter()
                    response = run_search(text, k=CANDIDATES, analysis=analysis)
                    elapsed = time.perf_counter() - started
                seconds[name] += elapsed
                ranking = [hit.arxiv_id for hit in response.hits]
                if name:
                    refined[name].append(ranking)
                else:
                    latencies.append(elapsed * 1000)
                    runs["hybrid"].append(ranking)

            lists = [
                ("dense", [h.paper_id for h in dense.hits], [h.similarity for h in dense.hits]),
                ("fulltext", [h.paper_id for h in lexical.hits], [h.score for h in lexical.hits]),
            ]
            for rrf_k in (10, 30, 60, 100):
                fused = reciprocal_rank_fusion([Ranked(n, i, s) for n, i, s in lists], k=rrf_k)
                variants.setdefault(f"rrf k={rrf_k}", []).append(
                    [arxiv_of[f.paper_id] for f in fused[:CANDIDATES]]
                )
            for weight in (0.3, 0.4, 0.5, 0.6, 0.7):
                ranked = [
                    Ranked(n, i, s, weight if n == "dense" else 1 - weight) for n, i, s in lists
                ]
                fused = convex_fusion(ranked)
                variants.setdefault(f"convex dense={weight}", []).append(
                    [arxiv_of[f.paper_id] for f in fused[:CANDIDATES]]
                )

        def scores(ranked_lists):
            pairs = list(zip(query_ids, ranked_lists, strict=True))
            return {
                "ndcg@10": round(mean([ndcg_at(r, data.qrels[q], 10) for q, r in pairs]), 4),
                "recall@100": round(mean([recall_at(r, data.qrels[q], 100) for q, r in pairs]), 4),
            }

        result = {name: scores(lists) for name, lists in runs.items()}
        result["variants"] = {name: scores(lists) for name, lists in variants.items()}

        if in_memory:
            result["index_time_control"] = scores(in_memory)
        search_module._embedders.pop(settings.EMBEDDING_BACKEND, None)  # the real one again

        def per_query(rankings):
            pairs = zip(query_ids, rankings, strict=True)
            return [ndcg_at(r, data.qrels[q], 10) for q, r in pairs]

        baseline = per_query(runs["hybrid"])
        control = per_query(in_memory) if in_memory else baseline
        result["refinements"] = {
            name: dict(
                scores(refined[name]),
                **compared(per_query(refined[name]), control if name in fields else baseline),
                time_ratio=(
                    round(seconds[name] / seconds[""], 3)
                    if seconds.get(name) and seconds[""]
                    else None
                ),
            )
            for name in refinements
        }
        result["settings"] = {
            "embedder": embedder.name,
            "fusion": settings.SEARCH_FUSION,
            "rrf_k": settings.RRF_K,
            "refine": default_refine,
            "candidates": CANDIDATES,
        }
        result["bm25_exact_share"] = round(exact_bm25 / max(len(query_ids), 1), 4)
        result["search_ms"] = {
            "p50": round(statistics.median(latencies), 1) if latencies else None,
            "p95": round(percentile(latencies, 95), 1) if latencies else None,
        }
        return result

    def report(self, result: dict) -> None:
        out = self.stdout.write
        ds = result["dataset"]
        out(f"{ds['folder']} ({ds['split']}): {ds['documents']} documents, {ds['queries']} queries")
        out(f"embedder {result['settings']['embedder']}, fusion {result['settings']['fusion']}")
        out(f"{'run':28s} {'nDCG@10':>8s} {'R@100':>8s}")
        for name in ("dense", "fulltext", "fulltext_ts_rank", "hybrid"):
            s = result[name]
            out(f"{name:28s} {s['ndcg@10']:8.4f} {s['recall@100']:8.4f}")
        out("fusion variants (same lists):")
        for name, s in result["variants"].items():
            out(f"  {name:26s} {s['ndcg@10']:8.4f} {s['recall@100']:8.4f}")
        if result["refinements"]:
            out(
                f"ranking variants vs the default hybrid ({result['hybrid']['ndcg@10']:.4f}), "
                "same process:"
            )
            if "index_time_control" in result:
                out(
                    "  (index-time variants, untimed, vs the same fusion in memory of today's "
                    f"lists: {result['index_time_control']['ndcg@10']:.4f})"
                )
            out(
                f"  {'variant':22s} {'nDCG@10':>8s} {'diff':>8s} {'95% CI':>17s} {'odd':>7s} "
                f"{'even':>7s} {'R@100':>7s} {'time':>6s}  wins?"
            )
            for name, s in result["refinements"].items():
                low, high = s["ci95"]
                out(
                    f"  {name:22s} {s['ndcg@10']:8.4f} {s['diff']:+8.4f} "
                    f"[{low:+.4f}, {high:+.4f}] {s['odd']:+7.4f} {s['even']:+7.4f} "
                    f"{s['recall@100']:7.4f} "
                    + (f"{s['time_ratio']:5.2f}x  " if s["time_ratio"] else " index  ")
                    + ("yes" if _wins(s, _control(result, s)) else "no")
                )
        out(
            f"BM25 exact for {result['bm25_exact_share']:.1%} of queries; search() k=100 "
            f"p50 {result['search_ms']['p50']} ms, p95 {result['search_ms']['p95']} ms; "
            f"setup {result['setup_seconds']} s"
        )


def _first_documents(data: BeirSet, count: int) -> BeirSet:
    """The first `count` documents, and the queries all of whose judged documents are in them."""
    corpus = dict(list(data.corpus.items())[:count])
    qrels = {
        q: judged
        for q, judged in data.qrels.items()
        if q in data.queries and all(doc in corpus for doc, g in judged.items() if g > 0)
    }
    queries = {q: text for q, text in data.queries.items() if q in qrels}
    return BeirSet(corpus, queries, qrels, data.corpus_path, partial=count < len(data.corpus))


class _RememberedQuery:
    """An embedder that embeds each query text once (the last one is remembered)."""

    def __init__(self, embedder):
        self._embedder = embedder
        self._last: tuple[str, object] | None = None

    def __getattr__(self, name):
        return getattr(self._embedder, name)

    def embed_query(self, text: str):
        if self._last is None or self._last[0] != text:
            self._last = (text, self._embedder.embed_query(text))
        return self._last[1]


def _variants(values: list[str]) -> list[str]:
    """--variant values as a list of SEARCH_REFINE values ("+" joins refinements), checked."""
    names: list[str] = []
    for value in values:
        for name in (part.strip() for part in value.split(",")):
            if not name:
                continue
            for one in VARIANTS if name == "all" else (name,):
                if _index_time(one) is not None:
                    names.append(one)
                    continue
                try:
                    parse_refinements(_refine_value(one, ""))
                except ImproperlyConfigured as exc:
                    raise CommandError(f"--variant: {exc}") from None
                if one not in names:
                    names.append(one)
    return names


def _index_time(name: str) -> float | tuple[float, float] | None:
    """An index-time variant's parameters: the title weight of "bm25f:W", (k1, b) of
    "bm25:K1/B"; None for any other name."""
    prefix, _, values = name.partition(":")
    if prefix != "bm25":
        return _bm25f_weight(name)
    try:
        k1, b = (float(v) for v in values.split("/"))
    except ValueError:
        raise CommandError(f"--variant: write bm25:K1/B, not {name!r}") from None
    return k1, b


def _bm25f_weight(name: str) -> float | None:
    """The title weight of a "bm25f:W" variant, None for any other name."""
    prefix, _, weight = name.partition(":")
    if prefix != "bm25f":
        return None
    try:
        return float(weight or 2)
    except ValueError:
        raise CommandError(f"--variant: bad title weight in {name!r}") from None


def _control(result: dict, variant: dict) -> dict:
    """What a variant was compared with: an index-time one (untimed) with the in-memory fusion
    of today's lists, the others with search()'s hybrid."""
    if variant["time_ratio"] is None and "index_time_control" in result:
        return result["index_time_control"]
    return result["hybrid"]


def _wins(variant: dict, baseline: dict, max_time_ratio: float = 1.2) -> bool:
    """More than noise (CI above 0, both halves better), < 20% more time, recall not lower."""
    return (
        variant["ci95"][0] > 0
        and variant["odd"] > 0
        and variant["even"] > 0
        and (variant["time_ratio"] or 0) < max_time_ratio
        and variant["recall@100"] >= baseline["recall@100"]
    )


def _fingerprint(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:12]


def _largest_earlier_cache(cache: Path, model: str) -> Path | None:
    """The biggest other vector cache of the same corpus file and model, if any (same
    fingerprint: a prefix run's "-firstN" cache or a cut run's "-partial" checkpoint)."""
    fingerprint = cache.name.split("-", 1)[0]
    earlier = [
        path
        for path in cache.parent.glob(f"{fingerprint}-*-{model}.npz")
        if path != cache and path.is_file() and "-sentences-" not in path.name
    ]
    return max(earlier, key=lambda path: path.stat().st_size, default=None)


def _needs_sentences(name: str) -> bool:
    """Whether a --variant reads sentence vectors (SEARCH_REFINE "sentences", "learned")."""
    return _index_time(name) is None and parse_refinements(_refine_value(name, "")).reads_sentences


def _refine_value(name: str, default: str) -> str:
    """The SEARCH_REFINE value of a --variant ("+" joins refinements; "none": no refinement at
    all, to measure what the default's refinements add), `default` for the default ("")."""
    if not name:
        return default
    return "" if name == "none" else name.replace("+", ",")


def _save_vectors(cache: Path, model: str, kind: str = Passage.Kind.ABSTRACT) -> None:
    """Every passage of `model` and `kind` (by document id, span) and its vector, to a .npz."""
    rows = list(
        Passage.objects.filter(model=model, kind=kind)
        .order_by("paper__arxiv_id", "position")
        .values_list("paper__arxiv_id", "position", "start", "end", "embedding")
    )
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        cache,
        doc_ids=np.array([r[0] for r in rows]),
        spans=np.array([(r[1], r[2], r[3]) for r in rows], dtype=np.int32),
        vectors=np.stack([np.asarray(r[4], dtype=np.float32) for r in rows]),
    )


def _load_vectors(cache: Path, model: str, kind: str = Passage.Kind.ABSTRACT) -> None:
    saved = np.load(cache)
    paper_of = dict(Paper.objects.values_list("arxiv_id", "id"))
    published = dict(Paper.objects.values_list("id", "published"))
    passages = []
    for doc_id, (position, start, end), vector in zip(
        saved["doc_ids"], saved["spans"], saved["vectors"], strict=True
    ):
        paper_id = paper_of.get(str(doc_id))
        if paper_id is None:
            continue
        passages.append(
            Passage(
                paper_id=paper_id,
                model=model,
                kind=kind,
                position=int(position),
                start=int(start),
                end=int(end),
                published=published[paper_id],
                embedding=vector,
            )
        )
    Passage.objects.bulk_create(passages, batch_size=1000)
