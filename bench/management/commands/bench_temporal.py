"""Time the rule-based query analysis: `python manage.py bench_temporal [--queries 400] [--repeat 20]`.

Builds a few hundred varied questions (plain topics, date phrases of every kind, question
phrasings, authors, categories, arXiv ids and URLs), calls `analyse()` on each `--repeat` times
and prints mean/p50/p95/p99/max per call, and per question the fastest of its passes (its own
cost without the scheduler's pauses). As a same-run baseline for the machine's speed it also
times one precompiled regex scan of each question. No database is touched.
"""

from __future__ import annotations

import gc
import json
import random
import re
import statistics
import time
from datetime import UTC, datetime

from django.core.management.base import BaseCommand, CommandError

from bench.evaluation import percentile
from chat.understanding.analysis import analyse

TOPICS = [
    "diffusion models", "graph neural networks", "quantum error correction", "protein folding",
    "retrieval augmented generation", "vision transformers", "reinforcement learning from human "
    "feedback", "topological insulators", "dark matter direct detection", "federated learning",
    "mixture of experts", "contrastive learning", "neural radiance fields", "large language model "
    "agents", "speech recognition", "causal inference", "Bayesian optimisation", "quantum key "
    "distribution", "gravitational waves", "sparse attention", "code generation", "time series "
    "forecasting", "adversarial robustness", "knowledge distillation", "molecular dynamics",
    "ResNet-50 pruning", "GPT-4 evaluation", "COVID-19 epidemiology", "3D point clouds",
    "entanglement entropy",
]  # fmt: skip
DATE_PHRASES = [
    "in 2021", "from 2019", "2018-2020", "2015–2019", "between 2018 and 2020",
    "from 2018 to 2020", "2019 to present", "in the 2010s", "from the 90s", "in March 2024",
    "Mar 2024", "2024-03", "Q1 2025", "in the first half of 2023", "H2 2022",
    "from the last 6 months", "in the past two years", "over the past 12 months",
    "in the last 90 days", "this week", "today", "last year", "in the last year", "this year",
    "from the last decade", "this month", "last month", "since 2023", "after June 2021",
    "before 2015", "pre-2020", "post-2019", "up to 2022", "newer than 2021", "older than 2010",
    "from 2018 onwards", "2020 and later", "since 2023-05-01", "in the last three months",
    "two years ago", "since ChatGPT", "in recent years",
]  # fmt: skip
TEMPLATES = [
    "{topic}",
    "{topic} {date}",
    "papers on {topic} {date}",
    "{date}, {topic}",
    "What are the latest papers on {topic}?",
    "show me {topic} papers {date}",
    "What has been published {date} about {topic}?",
    "recent advances in {topic}",
    "state of the art {topic}",
    "papers by Geoffrey Hinton on {topic} {date}",
    "{topic} by Ho {date}",
    "{topic} in cs.LG {date}",
    "cs.CL or stat.ML papers on {topic}",
    "Which {topic} methods {date} work best on small data?",
    "How did {topic} evolve {date}, and which papers matter most?",
    "Compare {topic} approaches {date} with the newest ones",
    "top 10 papers on {topic}",
]
IDS = [
    "2401.12345", "arXiv:2310.06825v2", "https://arxiv.org/abs/1706.03762v7",
    "arxiv.org/pdf/2005.14165.pdf", "hep-th/9901001", "papers like 2312.00752 since 2024",
]  # fmt: skip


def build_queries(count: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    queries = list(IDS)
    while len(queries) < count:
        template = rng.choice(TEMPLATES)
        queries.append(template.format(topic=rng.choice(TOPICS), date=rng.choice(DATE_PHRASES)))
    return queries[:count]


def summary(nanoseconds: list[int]) -> dict[str, float]:
    micros = sorted(n / 1000 for n in nanoseconds)
    return {
        "mean_us": round(statistics.fmean(micros), 1),
        "p50_us": round(percentile(micros, 50), 1),
        "p95_us": round(percentile(micros, 95), 1),
        "p99_us": round(percentile(micros, 99), 1),
        "max_us": round(micros[-1], 1),
    }


def time_calls(function, queries: list[str], repeat: int) -> list[int]:
    timings: list[int] = []
    clock = time.perf_counter_ns
    for _ in range(repeat):
        for query in queries:
            started = clock()
            function(query)
            timings.append(clock() - started)
    return timings


class Command(BaseCommand):
    help = "Time the rule-based query analysis (dates, recency, authors, categories, ids) per question."

    def add_arguments(self, parser):
        parser.add_argument("--queries", type=int, default=400, help="how many questions")
        parser.add_argument("--repeat", type=int, default=20, help="passes over the questions")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="print the numbers as JSON"
        )

    def handle(self, *args, queries: int, repeat: int, seed: int, as_json: bool, **options):
        if queries < 1 or repeat < 1:
            raise CommandError("--queries and --repeat must be at least 1")
        now = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
        questions = build_queries(queries, seed)
        analyses = [analyse(q, now) for q in questions]  # warm up, and describe the set
        scan = re.compile(r"\d{4}")

        gc.disable()  # a collection in the middle of one call is noise, not the parser's cost
        try:
            rules = time_calls(lambda q: analyse(q, now), questions, repeat)
            baseline = time_calls(scan.search, questions, repeat)
        finally:
            gc.enable()

        # On a shared machine one call now and then waits for the CPU for milliseconds; the
        # fastest of a question's passes is its own cost, free of that noise.
        best = [min(rules[i :: len(questions)]) for i in range(len(questions))]
        result = {
            "queries": len(questions),
            "calls": len(rules),
            "temporal_share": round(sum(a.is_temporal for a in analyses) / len(analyses), 3),
            "unsure_share": round(sum(not a.confident for a in analyses) / len(analyses), 3),
            "analyse": summary(rules),
            "analyse_best_of_passes": summary(best),
            "baseline_regex_scan": summary(baseline),
        }
        result["analyse_vs_baseline_p50"] = round(
            result["analyse"]["p50_us"] / max(result["baseline_regex_scan"]["p50_us"], 0.001), 1
        )
        if as_json:
            self.stdout.write(json.dumps(result, indent=2))
            return
        self.stdout.write(
            f"{result['queries']} questions x {repeat} passes = {result['calls']} calls; "
            f"{result['temporal_share']:.0%} temporal, {result['unsure_share']:.0%} not confident"
        )
        for name in ("analyse", "analyse_best_of_passes", "baseline_regex_scan"):
            row = result[name]
            self.stdout.write(
                f"{name:22} mean {row['mean_us']:7.1f} µs  p50 {row['p50_us']:7.1f}  "
                f"p95 {row['p95_us']:7.1f}  p99 {row['p99_us']:7.1f}  max {row['max_us']:8.1f}"
            )
        self.stdout.write(f"analyse p50 = {result['analyse_vs_baseline_p50']}x one regex scan")
