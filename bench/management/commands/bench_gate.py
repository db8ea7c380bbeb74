"""The relevance gate (chat.retrieval.relevance): calibrated on one half of a labelled question
set, measured on the other.

    manage.py bench_gate [--papers 200] [--seed 11] [--json]

Runs against the configured database, which must hold an indexed catalogue (BM25 and vectors of
the active embedder). Questions:

- in the catalogue: for `--papers` papers drawn at random (seeded) from the visible ones, a short
  topic made of their title's first content words, as a user would type it ("papers on diffusion
  language models protein"): there is at least that paper to answer from;
- out of the catalogue: bench.gate_questions.OUT_OF_CATALOGUE (cooking, travel, sport...).

Every question goes through `chat.retrieval.search.search` (no LLM), which records the two
signals. Questions are split in two halves (seeded): the thresholds are chosen on the first
(the lowest gate that loses at most 2% of in-catalogue questions, then the most out-of-catalogue
ones caught) and reported on the second, with the thresholds in the code for comparison.
"""

from __future__ import annotations

import json
import random
import re
import time

from asgiref.sync import async_to_sync
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from bench.gate_questions import OUT_OF_CATALOGUE
from chat.retrieval import relevance
from chat.retrieval.relevance import Signals, Thresholds
from chat.retrieval.search import search
from papers.embeddings import get_embedder
from papers.models import Paper

# Most in-catalogue questions the chosen thresholds may gate away on the calibration half.
MAX_LOST = 0.02
_STOP = frozenset(
    "a an the of for and or in on with to via by from at as is are be we our its their this that "
    "towards toward using based into over under new novel approach study analysis".split()
)


def topic_from_title(title: str, words: int = 4) -> str:
    kept = [w for w in re.findall(r"[A-Za-z][A-Za-z0-9-]+", title) if w.lower() not in _STOP]
    return " ".join(kept[:words]).lower()


def _gated(signals: Signals, limits: Thresholds) -> bool:
    dense = signals.dense_top or 0.0
    lexical = signals.lexical_top or 0.0
    return dense < limits.dense and lexical < limits.lexical


def _scores(cases, limits: Thresholds) -> dict:
    inside = [s for s, label in cases if label]
    outside = [s for s, label in cases if not label]
    caught = sum(_gated(s, limits) for s in outside)
    lost = sum(_gated(s, limits) for s in inside)
    gated = caught + lost
    return {
        "thresholds": {"dense": limits.dense, "lexical": limits.lexical},
        "in_catalogue": len(inside),
        "out_of_catalogue": len(outside),
        "gate_precision": round(caught / gated, 3) if gated else None,
        "gate_recall": round(caught / len(outside), 3) if outside else None,
        "in_catalogue_gated": round(lost / len(inside), 3) if inside else None,
    }


def _choose(cases) -> Thresholds:
    """The thresholds that catch most out-of-catalogue questions while gating away at most
    MAX_LOST of the in-catalogue ones (ties: the lower, more lenient thresholds)."""
    inside = [s for s, label in cases if label]
    outside = [s for s, label in cases if not label]
    best, best_key = Thresholds(0.0, 0.0), (-1, 0.0)
    for dense in [round(0.05 * i, 2) for i in range(0, 17)]:
        for lexical in [round(0.05 * i, 2) for i in range(0, 31)]:
            limits = Thresholds(dense, lexical)
            lost = sum(_gated(s, limits) for s in inside)
            if inside and lost / len(inside) > MAX_LOST:
                continue
            caught = sum(_gated(s, limits) for s in outside)
            key = (caught, -(dense + lexical))
            if key > best_key:
                best, best_key = limits, key
    return best


class Command(BaseCommand):
    help = "Calibrate and measure the relevance gate on the current catalogue."

    def add_arguments(self, parser):
        parser.add_argument("--papers", type=int, default=200, help="in-catalogue questions")
        parser.add_argument("--seed", type=int, default=11)
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, papers, seed, **options):
        rng = random.Random(seed)

        # Only embedded papers: a paper without vectors is not yet searchable by meaning.
        embedded = Paper.objects.visible().embedded_with(get_embedder().name)
        ids = list(embedded.values_list("id", flat=True).order_by("id"))
        if len(ids) < 20:
            raise CommandError("import and index a catalogue first (at least 20 papers)")
        chosen = Paper.objects.filter(id__in=rng.sample(ids, min(papers, len(ids))))
        questions = [(topic_from_title(p.title), True) for p in chosen.order_by("id")]
        questions = [(q, label) for q, label in questions if len(q.split()) >= 2]
        questions += [(q, False) for q in OUT_OF_CATALOGUE]
        started = time.perf_counter()
        cases, model = [], ""
        for text, label in questions:
            response = async_to_sync(search)(text, k=settings.CHAT_SOURCES)
            model = response.model
            cases.append((response.signals, label, text))
        seconds = time.perf_counter() - started
        rng.shuffle(cases)
        calibration = [(s, label) for s, label, _ in cases[::2]]
        held_out = [(s, label) for s, label, _ in cases[1::2]]
        chosen_limits = _choose(calibration)
        in_code = relevance.THRESHOLDS.get(model)
        dense_only = _choose([(Signals(s.dense_top, 0.0), lbl) for s, lbl in calibration])
        lexical_only = _choose([(Signals(0.0, s.lexical_top), lbl) for s, lbl in calibration])
        result = {
            "model": model,
            "questions": len(cases),
            "seconds": round(seconds, 1),
            "calibration": _scores(calibration, chosen_limits),
            "held_out": _scores(held_out, chosen_limits),
            "held_out_with_code_thresholds": _scores(held_out, in_code) if in_code else None,
            "held_out_dense_only": _scores(
                [(Signals(s.dense_top, 0.0), lbl) for s, lbl in held_out], dense_only
            ),
            "held_out_lexical_only": _scores(
                [(Signals(0.0, s.lexical_top), lbl) for s, lbl in held_out], lexical_only
            ),
            "gated_in_catalogue_examples": [
                t for s, lbl, t in cases if lbl and in_code and _gated(s, in_code)
            ][:8],
            "missed_out_of_catalogue": [
                t for s, lbl, t in cases if not lbl and in_code and not _gated(s, in_code)
            ],
        }
        self.stdout.write(json.dumps(result, indent=2) if options["json"] else self._report(result))

    def _report(self, r: dict) -> str:
        lines = [
            f"relevance gate, embedder {r['model']}, {r['questions']} questions ({r['seconds']} s)"
        ]
        for name in (
            "calibration",
            "held_out",
            "held_out_with_code_thresholds",
            "held_out_dense_only",
            "held_out_lexical_only",
        ):
            s = r[name]
            if s is None:
                continue
            lines.append(
                f"  {name:32} dense<{s['thresholds']['dense']:.2f} & lexical<"
                f"{s['thresholds']['lexical']:.2f}: precision {s['gate_precision']}, recall "
                f"{s['gate_recall']}, in-catalogue gated {s['in_catalogue_gated']} "
                f"({s['in_catalogue']} in, {s['out_of_catalogue']} out)"
            )
        lines.append(f"  in-catalogue gated (code thresholds): {r['gated_in_catalogue_examples']}")
        lines.append(f"  out-of-catalogue missed: {r['missed_out_of_catalogue']}")
        return "\n".join(lines)
