"""Read the full text of a set of papers as one recorded run (IngestRun, source "fulltext"):
what `manage.py fetch_fulltext` and the nightly job call.

Counts: `new` papers read for the first time, `updated` a newer version replacing an older one,
`unchanged` already read at their version (no request made), `skipped` ids not in the catalogue;
each failure is an error naming the paper and the reason (also on its FullText row). A failure
never stops the run: the next paper proceeds.
"""

import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Exists, OuterRef
from tqdm import tqdm

from papers.embeddings import get_embedder
from papers.fulltext.read import ReadTimings, is_read, read_paper
from papers.identifiers import InvalidArxivId, matching_categories, parse_arxiv_id
from papers.indexing.lexical import BODIES, add_champions
from papers.ingest.runs import RunRecorder
from papers.ingest.upsert import UpsertCounts
from papers.models import FullText, IngestRun, Paper


@dataclass
class Selection:
    arxiv_ids: list[str]
    unknown: list[str]  # asked for, but not in the catalogue (or not an arXiv id)
    papers: list[Paper]


def select_papers(
    arxiv_ids: Iterable[str] = (),
    *,
    since: datetime | None = None,
    categories: Iterable[str] = (),
    limit: int | None = None,
    retry_failed: bool = False,
) -> Selection:
    """Papers named by id (always tried; read ones are then no-ops), or the papers published
    since `since` in `categories` that are not read at their current version yet, newest first.
    Papers that failed at their current version are left out unless `retry_failed`."""
    ids, unknown = [], []
    for text in arxiv_ids:
        try:
            ids.append(parse_arxiv_id(text)[0])
        except InvalidArxivId:
            unknown.append(text)
    papers = Paper.objects.all()
    if ids:
        papers = papers.filter(arxiv_id__in=ids)
    else:
        done = FullText.objects.filter(paper=OuterRef("pk"), version__gte=OuterRef("version"))
        done = (
            done.filter(status=FullText.Status.OK)
            if retry_failed
            else done.filter(status__in=[FullText.Status.OK, FullText.Status.FAILED])
        )
        papers = papers.filter(~Exists(done))
    if since is not None:
        papers = papers.filter(published__gte=since)
    if categories := list(categories):
        papers = papers.filter(categories__overlap=matching_categories(categories))
    papers = papers.order_by("-published", "pk")
    if limit is not None:
        papers = papers[:limit]
    found = list(papers)
    known = {p.arxiv_id for p in found}
    unknown += [i for i in ids if i not in known]
    return Selection(arxiv_ids=ids, unknown=unknown, papers=found)


def read_papers(
    selection: Selection,
    *,
    params: dict | None = None,
    progress: bool = False,
    force: bool = False,
) -> IngestRun:
    """Read the selection's papers; with `force`, those already read at their version too."""
    recorder = RunRecorder(IngestRun.Source.FULLTEXT, params or {})
    embedder = get_embedder()
    timings = ReadTimings()
    total = len(selection.papers)
    for arxiv_id in selection.unknown:
        recorder.add(UpsertCounts(skipped=1))
        recorder.error("not in the catalogue", arxiv_id=arxiv_id)
    bar = tqdm(
        selection.papers,
        total=total,
        unit="paper",
        desc="reading full text",
        file=sys.stderr,
        disable=not progress,
        dynamic_ncols=True,
    )
    started = time.monotonic()
    for done, paper in enumerate(bar, start=1):
        before = FullText.objects.filter(paper=paper).first()
        if not force and before is not None and is_read(before, paper, embedder.name):
            recorder.add(UpsertCounts(unchanged=1))
        else:
            had_text = bool(before and before.status == FullText.Status.OK)
            fulltext = read_paper(paper, force=force, embedder=embedder, timings=timings)
            if fulltext.status == FullText.Status.OK:
                recorder.add(UpsertCounts(updated=1) if had_text else UpsertCounts(new=1))
            else:
                recorder.error(fulltext.reason, arxiv_id=paper.arxiv_id)
        elapsed = time.monotonic() - started
        bar.set_postfix(read=recorder.counts.written, failed=recorder.error_count, refresh=False)
        recorder.save_progress(
            progress={
                "done": done,
                "total": total,
                "per_second": round(done / elapsed, 3) if elapsed else 0,
                "stage": "reading",
            }
        )
    bar.close()
    # Words the run made common in the bodies' BM25 index get their champion lists (until then
    # the search reads them whole: exact, but slower as the full text grows).
    add_champions(BODIES)
    return recorder.finish(**{k: round(v, 3) for k, v in timings.stages.items()})


def new_papers_in_fulltext_categories(since: datetime, categories: list[str]) -> Selection:
    """The nightly selection: new papers in FULLTEXT_CATEGORIES not read yet."""
    return select_papers(since=since, categories=categories)
