"""Measure the extractive answerer on SciFact: does it quote the right paper, and does it say
"not enough" when no paper fits? (This produced MIN_COVERAGE in chat/llm/extractive.py.)

    .venv/bin/python -m bench.llm_extractive [--claims 400] [--min-coverage 0.3]
                                             [--data ../shared/data/scifact]
    .venv/bin/python -m bench.llm_extractive --shapes [--claims 100]

For each training claim with a gold abstract: 8 sources = the gold abstract + 7 random ones
(answerable), then 8 random non-gold abstracts (unanswerable). Reports how often the answer
cites the gold paper (and cites it first), how often it refuses the unanswerable set, and the
time to compose one answer. Deterministic (seeded).

`--shapes` times the intent-shaped composer (chat.llm.shapes) on the same 8-source sets, per
intent, against the plain composer in the same process, with the default embedder
(EMBEDDING_BACKEND, MiniLM offline): "cold" empties the sentence-vector cache before each answer
(a question on papers never quoted before), "warm" does not. It also reports how often the
overview cites the gold paper, beside the plain composer's rate.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import time
from pathlib import Path

from bench import SHARED_DATA


def _load(folder: Path):
    corpus = {}
    with open(folder / "corpus.jsonl") as lines:
        for line in lines:
            doc = json.loads(line)
            corpus[doc["_id"]] = doc
    with open(folder / "queries.jsonl") as lines:
        queries = {q["_id"]: q["text"] for q in map(json.loads, lines)}
    gold: dict[str, list[str]] = {}
    for line in (folder / "qrels" / "train.tsv").read_text().splitlines()[1:]:
        query_id, corpus_id, _ = line.split("\t")
        gold.setdefault(query_id, []).append(corpus_id)
    return corpus, queries, gold


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=400)
    parser.add_argument(
        "--data",
        type=Path,
        default=SHARED_DATA / "scifact",
        help="a BEIR-layout SciFact folder (default ../shared/data/scifact)",
    )
    parser.add_argument("--min-coverage", type=float, help="try another MIN_COVERAGE")
    parser.add_argument("--shapes", action="store_true", help="time the intent-shaped composer")
    parser.add_argument("--shortlist", type=int, help="try another shapes.SHORTLIST")
    parser.add_argument("--intents", default="", help="comma-separated intents to time (all)")
    args = parser.parse_args(argv)

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "flatuniverse.settings")
    import django

    django.setup()
    from chat.llm import SourceText, extractive
    from chat.llm.extractive import compose_answer

    if args.min_coverage is not None:
        extractive.MIN_COVERAGE = args.min_coverage

    corpus, queries, gold = _load(args.data)
    ids = sorted(corpus)
    rng = random.Random(0)
    if args.shapes:
        _shapes(args, corpus, queries, gold, ids, rng)
        return

    def sources(doc_ids):
        return [
            SourceText(
                n,
                corpus[d]["title"],
                "",
                "2020-01-01",
                f"{corpus[d]['title']}\n\n{corpus[d]['text']}",
            )
            for n, d in enumerate(doc_ids, start=1)
        ]

    cited = first = refused = 0
    times = []
    claims = list(gold.items())[: args.claims]
    for query_id, gold_ids in claims:
        docs = [gold_ids[0], *rng.sample(ids, 7)]
        rng.shuffle(docs)
        started = time.perf_counter()
        answer = compose_answer(queries[query_id], sources(docs))
        times.append(time.perf_counter() - started)
        numbers = [int(n) for n in re.findall(r"\[(\d+)\]", answer)]
        gold_number = docs.index(gold_ids[0]) + 1
        cited += gold_number in numbers
        first += bool(numbers) and numbers[0] == gold_number
        unrelated = [d for d in rng.sample(ids, 9) if d not in gold_ids][:8]
        refused += "not enough" in compose_answer(queries[query_id], sources(unrelated))
    n = len(claims)
    print(f"claims: {n}, MIN_COVERAGE {extractive.MIN_COVERAGE}")
    print(f"answerable: gold paper cited {cited / n:.3f}, cited first {first / n:.3f}")
    print(f"unanswerable: says 'not enough' {refused / n:.3f}")
    print(f"compose time per answer (8 abstracts): p50 {1000 * statistics.median(times):.1f} ms")


def _shapes(args, corpus, queries, gold, ids, rng) -> None:
    from datetime import date

    from chat.llm import AnswerRequest, SourceText, meaning, shapes
    from chat.llm.extractive import compose_answer
    from chat.llm.shapes import compose_shaped
    from chat.understanding.intent import Intent
    from papers.embeddings import get_embedder

    if args.shortlist:
        shapes.SHORTLIST = args.shortlist
    get_embedder().embed_query("load the model before timing")

    def sources(doc_ids):
        return [
            SourceText(
                n,
                corpus[d]["title"],
                "",
                f"{2015 + n % 8}-0{1 + n % 9}-15",
                f"{corpus[d]['title']}\n\n{corpus[d]['text']}",
                arxiv_id=d,
            )
            for n, d in enumerate(doc_ids, start=1)
        ]

    def ms(values):
        values = sorted(values)
        return (
            f"p50 {1000 * statistics.median(values):6.1f} ms, "
            f"p90 {1000 * values[int(0.9 * (len(values) - 1))]:6.1f} ms"
        )

    claims = list(gold.items())[: args.claims]
    times: dict[str, list[float]] = {}
    cited = {"plain": 0, "overview": 0}
    for query_id, gold_ids in claims:
        docs = [gold_ids[0], *rng.sample(ids, 7)]
        rng.shuffle(docs)
        srcs = sources(docs)
        question = queries[query_id]
        gold_number = docs.index(gold_ids[0]) + 1
        seed = sources([gold_ids[0]])[0]
        cases = {
            "overview": Intent("overview"),
            "list": Intent("list"),
            "seed": Intent("seed"),
            "named_paper": Intent("named_paper", title=corpus[gold_ids[0]]["title"]),
            "compare": Intent("compare", subjects=tuple(question.split()[:2])),
            "timeline": Intent("timeline"),
        }
        started = time.perf_counter()
        plain = compose_answer(question, srcs)
        times.setdefault("plain (before)", []).append(time.perf_counter() - started)
        cited["plain"] += f"[{gold_number}]" in plain
        for name, intent in cases.items():
            if args.intents and name not in args.intents.split(","):
                continue
            request = AnswerRequest(
                question=question,
                sources=srcs,
                messages=[],
                intent=intent,
                analysis={"query": question, "arxiv_id": gold_ids[0]},
                seed=seed if name == "seed" else None,
                today=date(2026, 11, 23),
            )
            for state in ("cold", "warm"):
                if state == "cold":
                    meaning._cache.clear()
                started = time.perf_counter()
                answer = compose_shaped(request)
                times.setdefault(f"{name} ({state})", []).append(time.perf_counter() - started)
            if name == "overview":
                cited["overview"] += f"[{gold_number}]" in answer
    n = len(claims)
    print(
        f"claims: {n}, 8 sources each, embedder {get_embedder().name}, shortlist {shapes.SHORTLIST}"
    )
    for name, values in times.items():
        print(f"  {name:22} {ms(values)}")
    print(
        f"gold paper cited: plain {cited['plain'] / n:.3f}, "
        f"overview by meaning {cited['overview'] / n:.3f}"
    )


if __name__ == "__main__":
    main()
