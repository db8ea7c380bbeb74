"""Run the answer-behaviour cases (bench.answer_cases) through the real chat, and judge them.

Each case gets a thread of its own owned by a bench user; its earlier turns (`before`) and then
its question are asked through `chat.service.ask`, exactly as the socket and the API do, so
follow-ups see the thread's real history. Each answer is read back from its saved message (the
text, the source cards, the kept citations, the understood filters, the timings) and given to
the case's checks together with the catalogue's own facts.

Times, from the saved timings: `overhead_ms` (the ask → the answer's request handed to the
composer: saving the turn, understanding, retrieval, the prompt) and `composer_ms` (that → done:
composing and streaming the text, with the extractive backend's pause between words set to 0 so
that only work is counted).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from datetime import date

from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import override_settings

from bench.answer_cases import INTENTS, Case
from bench.answer_checks import Answer, Catalogue, PaperFacts, normalise
from bench.answer_provenance import unsourced as unsourced_sentences
from bench.evaluation import interpolated_percentile as percentile
from chat import lanes, service
from chat.llm import get_llm
from chat.models import Message, Thread
from papers.models import Paper

BENCH_USER = "bench-answers"
# A case whose answer has not ended by then is a failure, not a stuck benchmark.
ANSWER_TIMEOUT_S = 120


@dataclass
class CaseResult:
    case: Case
    answer: Answer | None
    failures: list[str] = field(default_factory=list)
    error: str = ""
    # Sentences of this case's answers (its earlier turns too) that come from no source.
    unsourced: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures and not self.error

    @property
    def reason(self) -> str:
        return self.error or "; ".join(self.failures)

    def as_dict(self) -> dict:
        answer = self.answer
        return {
            "name": self.case.name,
            "intent": self.case.intent,
            "question": self.case.question,
            "before": list(self.case.before),
            "passed": self.passed,
            "reason": self.reason,
            "checks": [e.describe for e in self.case.expects],
            "unsourced": self.unsourced,
            "answer": None
            if answer is None
            else {
                "content": answer.content,
                "query": answer.query,
                "cited": answer.cited_ids(),
                "sources": answer.source_ids(),
                "window": [answer.analysis.get("start"), answer.analysis.get("end")],
                "overhead_ms": answer.timings.get("overhead_ms"),
                "composer_ms": composer_ms(answer),
            },
        }


def composer_ms(answer: Answer) -> float | None:
    timings = answer.timings or {}
    if "total_ms" in timings and "overhead_ms" in timings:
        return timings["total_ms"] - timings["overhead_ms"]
    return None


# --- The catalogue's facts ------------------------------------------------------------------------
def load_catalogue(today: date) -> Catalogue:
    papers = {}
    rows = Paper.objects.visible().prefetch_related("authors").order_by("pk")
    for paper in rows:
        names = [a.name for a in paper.authors.all()] or [
            n.strip() for n in paper.authors_text.split(",") if n.strip()
        ]
        papers[paper.arxiv_id] = PaperFacts(
            arxiv_id=paper.arxiv_id,
            title=" ".join(paper.title.split()),
            text=normalise(f"{paper.title} {paper.abstract}"),
            authors=tuple(normalise(n) for n in names),
            author_names=tuple(names),
            published=paper.published.date(),
            categories=tuple(paper.categories or ()),
        )
    return Catalogue(papers=papers, today=today)


# --- Asking ---------------------------------------------------------------------------------------
def _read_answer(message_id, previous: Answer | None) -> Answer:
    m = Message.objects.get(pk=message_id)
    user_message = (
        Message.objects.filter(thread=m.thread, role="user", created_at__lte=m.created_at)
        .order_by("-created_at")
        .first()
    )
    return Answer(
        question=user_message.content if user_message else "",
        content=m.content,
        status=m.status,
        query=m.query,
        analysis=m.analysis or {},
        sources=m.sources or [],
        citations=[int(n) for n in (m.citations or [])],
        timings=m.timings or {},
        previous=previous,
    )


async def _db(fn, *args, **kwargs):
    """Run a short ORM call on a worker thread and close its connection after, so no connection
    outlives the suite (a test database with one open could not be dropped)."""

    def call():
        try:
            return fn(*args, **kwargs)
        finally:
            connection.close()

    return await sync_to_async(call, thread_sensitive=False)()


async def _ask(user, thread_id, question: str, previous: Answer | None) -> Answer:
    running = await service.ask(user, thread_id, question)
    await asyncio.wait_for(running.done.wait(), ANSWER_TIMEOUT_S)
    return await _db(_read_answer, running.message_id, previous)


async def _run_case(user, case: Case, catalogue: Catalogue) -> CaseResult:
    thread = await _db(Thread.objects.create, owner=user)
    previous = None
    try:
        for question in case.before:
            previous = await _ask(user, thread.pk, question, previous)
        answer = await _ask(user, thread.pk, case.question, previous)
    except Exception as exc:  # a benchmark reports a broken case and goes on
        return CaseResult(case, None, error=f"{type(exc).__name__}: {exc}")
    failures = []
    for expect in case.expects:
        try:
            reason = expect(answer, catalogue)
        except Exception as exc:  # a check that crashes on an odd answer is a failure
            reason = f"check {expect.describe!r} crashed: {type(exc).__name__}: {exc}"
        if reason:
            failures.append(reason)
    unsourced = []
    turn = answer
    while turn is not None:
        unsourced += unsourced_sentences(turn, catalogue)
        turn = turn.previous
    return CaseResult(case, answer, failures, unsourced=unsourced)


def run_suite(cases: list[Case], catalogue: Catalogue, progress=None) -> list[CaseResult]:
    """Ask every case (one after another: the times are per answer, not under load)."""
    backend = get_llm()
    delay = getattr(backend, "chunk_delay", None)
    if delay is not None:
        backend.chunk_delay = 0  # the pause between streamed words is pacing, not work
    User = get_user_model()
    User.objects.filter(username=BENCH_USER).delete()
    user = User.objects.create_user(BENCH_USER)

    async def run_all():
        results = []
        for case in cases:
            results.append(await _run_case(user, case, catalogue))
            if progress:
                progress(results[-1])
        await service.wait_for_running_answers()
        return results

    try:
        with override_settings(CHAT_RATE_LIMIT_PER_MINUTE=0):
            return asyncio.run(run_all())
    finally:
        if delay is not None:
            backend.chunk_delay = delay
        lanes.close_connections()  # the answers' database lanes, in their threads
        User.objects.filter(username=BENCH_USER).delete()


# --- Summary ----------------------------------------------------------------------------------------
def summarise(results: list[CaseResult]) -> dict:
    by_intent = {}
    for intent in INTENTS:
        rows = [r for r in results if r.case.intent == intent]
        if rows:
            passed = sum(r.passed for r in rows)
            by_intent[intent] = {"passed": passed, "cases": len(rows), "rate": passed / len(rows)}
    passed = sum(r.passed for r in results)
    answers = [r.answer for r in results if r.answer is not None]
    overhead = [a.timings["overhead_ms"] for a in answers if "overhead_ms" in a.timings]
    composer = [c for a in answers if (c := composer_ms(a)) is not None]
    return {
        "cases": len(results),
        "passed": passed,
        "rate": passed / len(results) if results else 0.0,
        "by_intent": by_intent,
        # Answers (with their earlier turns) quoting a sentence found in none of their sources.
        "unsourced_cases": [r.case.name for r in results if r.unsourced],
        "overhead_ms": _percentiles(overhead),
        "composer_ms": _percentiles(composer),
    }


def _percentiles(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "p50": round(percentile(values, 50), 1),
        "p95": round(percentile(values, 95), 1),
        "max": round(max(values), 1),
    }


def elapsed(started: float) -> float:
    return round(time.perf_counter() - started, 1)
