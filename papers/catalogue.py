"""What the catalogue holds and what is happening to it: the one answer that the home page,
/papers/, /papers/catalogue/ (JSON, polled while indexing), /healthz and search all show.

Counts and dates are public (anyone can page through /papers/); why an ingest failed is for
staff only (`last_ingest.reason`, dropped by `as_json(staff=False)`).
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection
from django.db.models import Count, Max, Min

from papers.fulltext.rechunk import stale_count
from papers.ingest.runs import active_run, lock_held
from papers.models import FullText, IngestRun, Paper, active_embedding_model

# Categories listed with their counts (by primary category), the most papers first.
TOP_CATEGORIES = 12
NIGHTLY_SCHEDULE = "nightly-arxiv-ingest"  # papers.schedules names it
_INGEST_SOURCES = (IngestRun.Source.ARXIV_API, IngestRun.Source.SNAPSHOT)
_COMPLETED = (IngestRun.Status.SUCCEEDED, IngestRun.Status.PARTIAL)
RECUTTING = "Re-cutting the full text of"


@dataclass
class IndexingProgress:
    run_id: int | None
    done: int
    total: int
    per_second: float = 0.0
    doing: str = "Indexing"  # or RECUTTING

    @property
    def seconds_left(self) -> float | None:
        if not self.per_second or self.total <= self.done:
            return None
        return (self.total - self.done) / self.per_second

    @property
    def text(self) -> str:
        """ "Indexing 1,240 of 2,998 papers, about 6 minutes left"."""
        text = f"{self.doing} {self.done:,} of {self.total:,} papers"
        if (left := self.seconds_left) is not None:
            text += f", about {_duration(left)} left"
        return text

    def as_json(self) -> dict:
        left = self.seconds_left
        return {
            "run": self.run_id,
            "done": self.done,
            "total": self.total,
            "per_second": round(self.per_second, 2),
            "seconds_left": round(left) if left is not None else None,
            "text": self.text,
        }


@dataclass
class IngestSummary:
    run_id: int
    source: str
    status: str
    finished_at: datetime | None
    reason: str = ""  # a failed run's one-line reason (staff only)

    def as_json(self, staff: bool) -> dict:
        body = {
            "run": self.run_id,
            "source": self.source,
            "status": self.status,
            "finished_at": _iso(self.finished_at),
        }
        if staff and self.reason:
            body["reason"] = self.reason
        return body


@dataclass
class Catalogue:
    papers: int
    oldest_published: datetime | None
    newest_published: datetime | None
    indexed: int  # visible papers with vectors of the active model
    pending_index: int
    indexing: bool  # an indexing run is active now
    ingesting: bool  # an arXiv ingest is active now
    progress: IndexingProgress | None
    last_ingest: IngestSummary | None
    last_success: IngestSummary | None
    next_ingest: datetime | None
    categories: list[tuple[str, int]] = field(default_factory=list)
    fulltext: "FullTextSummary | None" = None

    @property
    def vectors_pending(self) -> bool:
        """Some visible papers are found by BM25 only until their vectors are made."""
        return self.pending_index > 0

    def as_json(self, *, staff: bool = False) -> dict:
        return {
            "papers": self.papers,
            "oldest_published": _iso(self.oldest_published),
            "newest_published": _iso(self.newest_published),
            "indexed": self.indexed,
            "pending_index": self.pending_index,
            "vectors_pending": self.vectors_pending,
            "indexing": self.indexing,
            "ingesting": self.ingesting,
            "progress": self.progress.as_json() if self.progress else None,
            "last_ingest": self.last_ingest.as_json(staff) if self.last_ingest else None,
            "last_success": self.last_success.as_json(staff) if self.last_success else None,
            "next_ingest": _iso(self.next_ingest),
            "categories": [{"category": c, "papers": n} for c, n in self.categories],
            "fulltext": self.fulltext.as_json() if self.fulltext else None,
        }


@dataclass
class FullTextSummary:
    """Papers whose full text is read, how many of them an older chunker cut (re-cut from their
    stored text by papers.fulltext.rechunk), and the re-cut under way."""

    read: int
    stale: int
    recutting: bool
    progress: IndexingProgress | None

    @property
    def text(self) -> str:
        """ "Full text read for 120 papers; re-cutting the full text of 40 of 95 papers, about
        a minute left" (or "… 95 cut by an older chunker, waiting to be re-cut")."""
        text = f"Full text read for {self.read:,} paper{'s' if self.read != 1 else ''}"
        if self.progress is not None:
            return f"{text}; {self.progress.text[0].lower()}{self.progress.text[1:]}."
        if self.stale:
            return (
                f"{text}; {self.stale:,} of them cut into passages by an older chunker"
                f"{'' if self.recutting else ', waiting to be re-cut'}."
            )
        return f"{text}."

    def as_json(self) -> dict:
        return {
            "read": self.read,
            "stale": self.stale,
            "recutting": self.recutting,
            "progress": self.progress.as_json() if self.progress else None,
            "text": self.text,
        }


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def _duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    if seconds < 90:
        return "a minute"
    if minutes < 90:
        return f"{minutes} minutes"
    hours = seconds / 3600
    return f"{hours:.1f} hours" if hours < 10 else f"{round(hours)} hours"


def pending_vectors(model: str | None = None) -> int:
    """Visible papers without vectors of the active model (all of them when none loads)."""
    visible = Paper.objects.visible()
    model = model or active_embedding_model()
    return visible.not_embedded_with(model).count() if model else visible.count()


def vectors_pending(model: str, paper_ids: Iterable[int] | None = None) -> bool:
    """Cheaper than counting: is any visible paper (of `paper_ids`, when given) still without
    vectors of `model`?

    Searches pass the papers they found: over the whole catalogue the answer "none pending"
    needs an anti-join of every paper (73-212 ms at 20k papers, seconds at 1M: docs/BENCHMARKS.md,
    "BM25 and hybrid search at 1,000,000 papers"), over a result list it is a hundred index probes.
    """
    if paper_ids is None:
        return Paper.objects.visible().not_embedded_with(model).exists()
    # The same question in SQL: building it with the ORM cost more CPU than running it
    # (about 2 ms a search: docs/BENCHMARKS.md, "CPU per search").
    with connection.cursor() as cursor:
        cursor.execute(_PENDING_AMONG, [[int(i) for i in paper_ids], model])
        return cursor.fetchone()[0]


# = Paper.objects.visible().filter(pk__in=ids).not_embedded_with(model).exists()
_PENDING_AMONG = """
SELECT EXISTS (
    SELECT 1 FROM papers_paper p
    WHERE p.id = ANY(%s) AND NOT p.hidden AND NOT EXISTS (
        SELECT 1 FROM papers_passage s
        WHERE s.paper_id = p.id AND s.model = %s AND s.kind = 'abstract'
    )
)
"""


def _summary(run: IngestRun | None) -> IngestSummary | None:
    if run is None:
        return None
    reason = ""
    if run.status == IngestRun.Status.FAILED and run.errors:
        reason = str(run.errors[-1].get("error", "")).strip().splitlines()[0][:300]
    return IngestSummary(run.pk, run.source, run.status, run.finished_at, reason)


def run_progress_text(run: IngestRun) -> str:
    """How far a running run got, in words (the admin's ingest runs page)."""
    p = run.progress or {}
    if run.source in (IngestRun.Source.EMBED, IngestRun.Source.RECHUNK) and "total" in p:
        return IndexingProgress(
            run.pk,
            int(p.get("done", 0)),
            int(p["total"]),
            float(p.get("per_second", 0)),
            doing=RECUTTING if run.source == IngestRun.Source.RECHUNK else "Indexing",
        ).text
    if "planned_requests" in p:
        return f"{p.get('requests', 0):,} of about {p['planned_requests']:,} requests"
    written = run.new + run.updated + run.unchanged
    return f"{written:,} papers so far" if written else "starting"


def _indexing_progress() -> IndexingProgress | None:
    run = active_run(IngestRun.Source.EMBED)
    if run is None:
        return None
    p = run.progress or {}
    return IndexingProgress(
        run.pk, int(p.get("done", 0)), int(p.get("total", 0)), float(p.get("per_second", 0))
    )


def _fulltext_summary() -> FullTextSummary | None:
    """None while no paper's full text was ever read (a default install reads none)."""
    read = FullText.objects.exclude(text="").count()
    if not read:
        return None
    stale = stale_count(retry_failed=True)
    recutting = lock_held("rechunk")
    progress = None
    if recutting and (run := active_run(IngestRun.Source.RECHUNK)) is not None:
        p = run.progress or {}
        progress = IndexingProgress(
            run.pk,
            int(p.get("done", 0)),
            int(p.get("total", 0)),
            float(p.get("per_second", 0)),
            doing=RECUTTING,
        )
    return FullTextSummary(read=read, stale=stale, recutting=recutting, progress=progress)


def _next_ingest() -> datetime | None:
    from django_q.models import Schedule

    schedule = Schedule.objects.filter(name=NIGHTLY_SCHEDULE).only("next_run").first()
    return schedule.next_run if schedule else None


def catalogue_status(*, categories: int = TOP_CATEGORIES) -> Catalogue:
    visible = Paper.objects.visible()
    span = visible.aggregate(papers=Count("pk"), oldest=Min("published"), newest=Max("published"))
    pending = pending_vectors()
    indexing = lock_held("indexing")
    ingests = IngestRun.objects.filter(source__in=_INGEST_SOURCES).exclude(
        status=IngestRun.Status.RUNNING
    )
    top = []
    if categories and span["papers"]:
        top = list(
            visible.exclude(primary_category="")
            .values_list("primary_category")
            .annotate(n=Count("pk"))
            .order_by("-n", "primary_category")[:categories]
        )
    return Catalogue(
        papers=span["papers"],
        oldest_published=span["oldest"],
        newest_published=span["newest"],
        indexed=span["papers"] - pending,
        pending_index=pending,
        indexing=indexing,
        ingesting=lock_held("arxiv"),
        progress=_indexing_progress() if indexing else None,
        last_ingest=_summary(ingests.first()),
        last_success=_summary(ingests.filter(status__in=_COMPLETED).first()),
        next_ingest=_next_ingest(),
        categories=top,
        fulltext=_fulltext_summary(),
    )
