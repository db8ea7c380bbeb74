"""The answer-behaviour suite (manage.py bench_answers): its checks, its runner on real answers,
and the composer's promise that every sentence it writes comes from its sources.

The whole suite runs once on the small slice (~365 papers, hashing embedder, offline composer)
in a scratch database of its own; the tests read that run. Pass rates are not asserted here
(docs/BENCHMARKS.md has them): what is asserted is that every case ran and was judged, that a
wrong expectation fails, and that no answer sentence is absent from its sources.
"""

import json
import os
from datetime import date
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import override_settings

from bench.answer_cases import INTENTS, Case, build_cases, months_back, start_of_last_month
from bench.answer_checks import (
    Answer,
    Catalogue,
    PaperFacts,
    by_author,
    cites_at_least,
    cites_only,
    grouped_by_period,
    is_previous_source,
    lists_papers,
    normalise,
    notes_age,
    retrieves_nothing,
    subset_of_previous,
    window_is,
)
from bench.answer_provenance import unsourced
from bench.answer_slice import SMALL, read_slice
from bench.answer_suite import load_catalogue, run_suite
from papers.indexing.lexical import index_missing
from papers.indexing.vectors import embed_missing
from papers.ingest.upsert import upsert_papers
from tests.fakes import SHARED_DATA

SNAPSHOT = SHARED_DATA / "arxiv-snapshot" / "arxiv-sample.jsonl.gz"
needs_snapshot = pytest.mark.skipif(not SNAPSHOT.is_file(), reason=f"needs {SNAPSHOT}")
OFFLINE = {
    "EMBEDDING_BACKEND": "hashing",
    "LLM_BACKEND": "extractive",
    "LLM_FALLBACK": "extractive",
}


# --- The checks, on answers written here ----------------------------------------------------------
def paper(arxiv_id, title="A paper", abstract="", authors=("Ada Lovelace",), day="2024-05-01"):
    return PaperFacts(
        arxiv_id=arxiv_id,
        title=title,
        text=normalise(f"{title} {abstract}"),
        authors=tuple(normalise(a) for a in authors),
        author_names=tuple(authors),
        published=date.fromisoformat(day),
        categories=("cs.CL",),
    )


def card(number, p: PaperFacts) -> dict:
    return {"number": number, "arxiv_id": p.arxiv_id, "title": p.title,
            "published": p.published.isoformat()}  # fmt: skip


CATALOGUE = Catalogue(
    papers={
        p.arxiv_id: p
        for p in [
            paper("2401.00001", "Denoising diffusion for video",
                  "We propose a video diffusion model. It improves FVD by 20%.", day="2023-01-10"),
            paper("2401.00002", "Transformers for speech",
                  "We show that transformers transcribe speech well.", authors=("Alan Turing",)),
            paper("2401.00003", "Graph networks", "Message passing on molecules.", day="2025-02-01"),
        ]
    },
    today=date(2026, 11, 23),
)  # fmt: skip
P1, P2, P3 = CATALOGUE.papers.values()


def answer(content, sources, citations, previous=None, analysis=None):
    return Answer(
        question="q", content=content, status="complete", query="q", analysis=analysis or {},
        sources=sources, citations=citations, timings={}, previous=previous,
    )  # fmt: skip


def test_cites_only_fails_on_a_paper_outside_the_rule_and_names_it():
    both = answer("x [1] y [2].", [card(1, P1), card(2, P2)], [1, 2])
    check = cites_only(by_author("Ada Lovelace"), "by Ada Lovelace")
    assert "2401.00002" in check(both, CATALOGUE)
    assert check(answer("x [1].", [card(1, P1), card(2, P2)], [1]), CATALOGUE) is None
    assert "cites 1" in cites_at_least(2)(answer("x [1].", [card(1, P1)], [1]), CATALOGUE)


def test_a_list_names_its_papers_one_per_line():
    sources = [card(1, P1), card(2, P2)]
    listed = answer(
        "2 papers:\n1. **Denoising diffusion for video** (2023-01-10): We propose [1].\n"
        "2. **Transformers for speech** (2024-05-01): We show [2].",
        sources, [1, 2],
    )  # fmt: skip
    assert lists_papers(2)(listed, CATALOGUE) is None
    quotes = answer("- We propose a video diffusion model [1].\n- We show [2].", sources, [1, 2])
    assert lists_papers(2)(quotes, CATALOGUE) == "0 line(s) name a listed paper, wanted ≥2"


def test_window_is_exact_to_the_day():
    got = answer("", [], [], analysis={"start": "2025-01-01T00:00:00+00:00", "end": None})
    assert window_is(date(2025, 1, 1), CATALOGUE.today)(got, CATALOGUE) is None
    assert "wanted 2025-01-02" in window_is(date(2025, 1, 2), None)(got, CATALOGUE)
    calendar_year = answer("", [], [], analysis={"start": "2025-01-01", "end": "2025-12-31"})
    assert window_is(date(2025, 1, 1), CATALOGUE.today)(calendar_year, CATALOGUE)


def test_follow_up_checks_read_the_previous_answer():
    first = answer("list", [card(1, P1), card(2, P2)], [1, 2])
    inside = answer("x [1].", [card(1, P2)], [1], previous=first)
    outside = answer("x [1].", [card(1, P3)], [1], previous=first)
    assert subset_of_previous()(inside, CATALOGUE) is None
    assert "2401.00003" in subset_of_previous()(outside, CATALOGUE)
    assert is_previous_source(2)(inside, CATALOGUE) is None
    assert "wanted only the previous [1]" in is_previous_source(1)(inside, CATALOGUE)


def test_timeline_and_freshness_read_the_text():
    timeline = answer(
        "**2023** (1 paper):\n- a [1]\n**2025** (1 paper):\n- b [2]",
        [card(1, P1), card(2, P3)], [1, 2],
    )  # fmt: skip
    assert grouped_by_period()(timeline, CATALOGUE) is None
    flat = answer("- a [1]\n- b [2]", [card(1, P1), card(2, P3)], [1, 2])
    assert "0 period line" in grouped_by_period()(flat, CATALOGUE)
    aged = answer("The newest paper on this is from May 2026 (6 months before today).", [], [])
    assert notes_age()(aged, CATALOGUE) is None
    assert notes_age()(answer("Newest first:", [], []), CATALOGUE)


def test_relative_window_calendar():
    assert months_back(date(2026, 11, 23), 18) == date(2025, 5, 23)
    assert months_back(date(2024, 2, 29), 12) == date(2023, 2, 28)
    assert months_back(date(2026, 8, 31), 6) == date(2026, 2, 28)
    assert start_of_last_month(date(2026, 1, 15)) == date(2025, 12, 1)


def test_provenance_accepts_quotes_and_templates_and_catches_an_invented_sentence():
    sources = [card(1, P1), card(2, P2)]
    quoted = answer(
        "From the retrieved papers:\n\n- We propose a video diffusion model [1].\n"
        "- We show that transformers transcribe speech well [2].",
        sources, [1, 2],
    )  # fmt: skip
    assert unsourced(quoted, CATALOGUE) == []
    invented = answer(
        "From the retrieved papers:\n\n- We propose a video diffusion model [1]. "
        "It is the best model ever made [1].",
        sources, [1],
    )  # fmt: skip
    assert unsourced(invented, CATALOGUE) == ["It is the best model ever made."]
    # A list line with no quote (the composer's bare item) is a template filled with metadata.
    bare = answer("1. **Transformers for speech** (2024-05-01) [2]", sources, [2])
    assert unsourced(bare, CATALOGUE) == []
    # A quote from a paper that is not among the answer's sources does not count.
    elsewhere = answer("- Message passing on molecules [1].", sources, [1])
    assert unsourced(elsewhere, CATALOGUE) == ["Message passing on molecules."]


# --- The runner, on a few real papers in the test database ---------------------------------------
@needs_snapshot
@pytest.mark.django_db(transaction=True)
def test_a_wrong_expectation_fails_and_a_right_one_passes(settings):
    for name, value in OFFLINE.items():
        setattr(settings, name, value)
    upsert_papers(read_slice(SNAPSHOT, SMALL)[:80])
    index_missing()
    embed_missing()
    catalogue = load_catalogue(date.today())
    question = "papers on diffusion models in 2023"
    right = Case("right", "window", question, (window_is(date(2023, 1, 1), date(2023, 12, 31)),))
    wrong = Case("wrong", "window", question, (window_is(date(2019, 1, 1), date(2019, 12, 31)),))
    # A research question with no window retrieves papers: "retrieves nothing" must fail.
    research = Case("research", "overview", "how do transformers work?", (retrieves_nothing(),))
    results = {r.case.name: r for r in run_suite([right, wrong, research], catalogue)}

    assert results["right"].passed, results["right"].reason
    assert not results["wrong"].passed
    assert results["wrong"].reason == (
        "window 2023-01-01 → 2023-12-31, wanted 2019-01-01 → 2019-12-31"
    )
    assert not results["research"].passed
    assert results["research"].reason.startswith("shows 8 source(s)")


# --- The whole suite on the small slice ----------------------------------------------------------
@pytest.fixture(scope="module")
def small_run(django_db_setup, django_db_blocker):
    if not SNAPSHOT.is_file():
        pytest.skip(f"needs {SNAPSHOT}")
    out = StringIO()
    with django_db_blocker.unblock(), override_settings(**OFFLINE):
        call_command(
            "bench_answers", "--slice", "small", "--fresh", "--json",
            "--database", f"bench_answers_t{os.getpid()}", stdout=out,
        )  # fmt: skip
    return json.loads(out.getvalue())


@pytest.mark.slow
def test_the_suite_runs_every_case_of_every_intent_and_judges_it(small_run):
    summary, cases = small_run["summary"], small_run["cases"]
    assert summary["cases"] == len(cases) >= 60
    assert set(summary["by_intent"]) == set(INTENTS)
    assert sum(row["cases"] for row in summary["by_intent"].values()) == len(cases)
    assert summary["passed"] == sum(c["passed"] for c in cases)
    for case in cases:
        assert case["answer"] is not None, case  # asked and answered
        assert case["checks"], case["name"]
        assert case["passed"] == (case["reason"] == ""), case["name"]
    follow_ups = [c for c in cases if c["before"]]
    assert follow_ups and all(c["intent"].startswith(("followup", "smalltalk")) for c in follow_ups)
    assert summary["setup"]["papers"] > 300
    assert summary["overhead_ms"]["n"] == summary["composer_ms"]["n"] == len(cases)


@pytest.mark.slow
def test_every_sentence_of_every_suite_answer_is_from_its_sources(small_run):
    """apart from the composer's fixed templates (bench.answer_provenance)."""
    offenders = {c["name"]: c["unsourced"] for c in small_run["cases"] if c["unsourced"]}
    assert offenders == {}
    quoted = [c for c in small_run["cases"] if c["answer"]["sources"]]
    assert len(quoted) > 40  # the check read real answers, not only small talk


@needs_snapshot
@pytest.mark.django_db
def test_cases_are_made_from_the_slice_by_their_rules():
    records = read_slice(SNAPSHOT, SMALL)
    papers = {
        r.arxiv_id: PaperFacts(
            r.arxiv_id, r.title, normalise(f"{r.title} {r.abstract}"),
            tuple(normalise(a) for a in r.authors), tuple(r.authors), r.published.date(),
            tuple(r.categories),
        )
        for r in records
    }  # fmt: skip
    cases = build_cases(Catalogue(papers, date(2026, 11, 23)))
    assert len(cases) >= 60 and len({c.name for c in cases}) == len(cases)
    for case in cases:
        if case.intent == "list-author":
            (rule,) = [e.describe for e in case.expects if e.describe.startswith("cites only by ")]
            name = rule.removeprefix("cites only by ")
            assert name in case.question
            assert sum(normalise(name) in p.authors for p in papers.values()) >= 3, case.question
        if case.intent in ("seed", "named-paper"):
            assert any(
                p.arxiv_id in case.question or p.title in case.question for p in papers.values()
            )
