"""Write papers into the catalogue in bulk, keyed by arXiv id and version.

Rules (the same for the nightly API ingest, the snapshot import and an admin refresh):
- an id we do not have is inserted;
- a newer version replaces the paper's metadata, authors and full-text vector, and drops its stale
  passages so the embedder picks it up again; a paper whose full text had been read is queued to
  be read again at that version (papers.fulltext.queue);
- an older or equal version writes nothing, so importing the same data twice is free of writes.

Each batch costs a fixed handful of statements (one lookup of existing versions, one multi-row
INSERT, one UPDATE, two for authors, one for authorships), whatever its size: rows travel as
PostgreSQL arrays through `unnest`, and the tsvector is computed by PostgreSQL from plain text that
`tex_to_plain` prepared here.
"""

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from itertools import islice

from django.db import connection, transaction

from papers.models import Paper
from papers.text import author_key, clean_title, tex_to_plain

BATCH_SIZE = 1000


@dataclass(slots=True)
class PaperRecord:
    """One paper as a source describes it, before it touches the database."""

    arxiv_id: str  # without version
    version: int
    title: str
    abstract: str
    authors: list[str]
    primary_category: str
    categories: list[str]
    published: datetime  # first version
    updated: datetime  # latest version
    doi: str = ""
    journal_ref: str = ""
    comments: str = ""
    license: str = ""
    withdrawn: bool = False


@dataclass
class UpsertCounts:
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: int = 0

    @property
    def written(self) -> int:
        return self.new + self.updated

    def add(self, other: "UpsertCounts") -> None:
        self.new += other.new
        self.updated += other.updated
        self.unchanged += other.unchanged
        self.skipped += other.skipped

    def as_dict(self) -> dict[str, int]:
        return {
            "new": self.new,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "skipped": self.skipped,
        }


# --- Withdrawn papers ---------------------------------------------------------------------------

# "This paper has been withdrawn by the author", "Withdrawn.", "the submission was withdrawn".
_WITHDRAWN = re.compile(
    r"^\W*withdrawn\b|\b(?:has|have) been withdrawn\b|\b(?:paper|article|manuscript|submission|"
    r"preprint|version) (?:is|was) withdrawn\b|\bwithdrawn by the authors?\b",
    re.IGNORECASE,
)
# Long abstracts may discuss some other withdrawn work; a withdrawal notice is short.
_WITHDRAWAL_NOTICE_MAX_CHARS = 600


def looks_withdrawn(comments: str | None, abstract: str | None) -> bool:
    """arXiv keeps withdrawn papers as a new version whose comment (or abstract) says so."""
    if comments and _WITHDRAWN.search(comments):
        return True
    abstract = (abstract or "").strip()
    return len(abstract) <= _WITHDRAWAL_NOTICE_MAX_CHARS and bool(_WITHDRAWN.search(abstract))


# --- Field limits: a batch must never fail on one overlong value ---------------------------------


def _clean(text: str | None, limit: int | None = None) -> str:
    # PostgreSQL text cannot hold NUL; a handful of old abstracts contain one.
    text = (text or "").replace("\x00", "")
    return text[:limit] if limit else text


def _author_name(name: str) -> str:
    return clean_title(_clean(name))[:300]


# --- The upsert ---------------------------------------------------------------------------------


def _batches(records: Iterable[PaperRecord], size: int) -> Iterator[list[PaperRecord]]:
    iterator = iter(records)
    while batch := list(islice(iterator, size)):
        yield batch


def upsert_papers(records: Iterable[PaperRecord], batch_size: int = BATCH_SIZE) -> UpsertCounts:
    """Insert new papers and apply newer versions; one transaction per batch."""
    counts = UpsertCounts()
    for batch in _batches(records, batch_size):
        counts.add(upsert_batch(batch))
    return counts


def upsert_batch(batch: list[PaperRecord]) -> UpsertCounts:
    counts = UpsertCounts()
    latest: dict[str, PaperRecord] = {}
    for record in batch:
        if not record.arxiv_id or not record.title.strip():
            counts.skipped += 1
            continue
        seen = latest.get(record.arxiv_id)
        if seen is None or record.version > seen.version:
            # One id twice in a batch: keep the newest version, the other is simply unchanged.
            if seen is not None:
                counts.unchanged += 1
            latest[record.arxiv_id] = record
        else:
            counts.unchanged += 1
    if not latest:
        return counts

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT arxiv_id, version FROM papers_paper WHERE arxiv_id = ANY(%s::text[])",
            [list(latest)],
        )
        existing = dict(cursor.fetchall())
        to_insert = [r for r in latest.values() if r.arxiv_id not in existing]
        to_update = [
            r
            for r in latest.values()
            if r.arxiv_id in existing and r.version > existing[r.arxiv_id]
        ]
        counts.unchanged += len(latest) - len(to_insert) - len(to_update)
        if not to_insert and not to_update:
            return counts

        inserted = _insert_papers(cursor, to_insert) if to_insert else {}
        updated = _update_papers(cursor, to_update) if to_update else {}
        # Rows another writer got to first (a concurrent ingest) were not written by us.
        counts.unchanged += len(to_insert) - len(inserted) + len(to_update) - len(updated)
        counts.new += len(inserted)
        counts.updated += len(updated)
        if updated:
            ids = list(updated.values())
            cursor.execute(
                "DELETE FROM papers_authorship WHERE paper_id = ANY(%s::bigint[])", [ids]
            )
            # The text changed: its vectors describe an older version.
            cursor.execute("DELETE FROM papers_passage WHERE paper_id = ANY(%s::bigint[])", [ids])
            # ... and so do the chunks of a read body: that paper is read again at its new
            # version (it had been read for a reason). Its chunks went with the passages while
            # its full text still said "read": importing a snapshot holding OPT v2 left OPT
            # answered from its abstract alone ("how many GPUs was OPT-175B trained on?").
            cursor.execute(
                "SELECT paper_id FROM papers_fulltext WHERE paper_id = ANY(%s::bigint[])"
                " AND status = 'ok'",
                [ids],
            )
            reread = [row[0] for row in cursor.fetchall()]
            # (imported here: the job paths papers.fulltext.queue leads to import the ingest)
            from papers.fulltext.queue import request_fulltext

            for paper in Paper.objects.filter(pk__in=reread):
                request_fulltext(paper)  # queued now, read once the batch is committed
        paper_ids = {**inserted, **updated}
        _write_authors(cursor, [latest[arxiv_id] for arxiv_id in paper_ids], paper_ids)
    return counts


# The column list shared by INSERT and UPDATE, in the order of `_paper_columns`.
_VALUES = """unnest(
    %s::text[], %s::int[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[],
    %s::timestamptz[], %s::timestamptz[], %s::text[], %s::text[], %s::text[], %s::text[],
    %s::bool[], %s::text[], %s::text[], %s::text[]
) AS v(arxiv_id, version, title, abstract, authors_text, primary_category, categories,
       published, updated, doi, journal_ref, comments, license,
       withdrawn, title_plain, abstract_plain, authors_plain)"""

# The catalogue's tsvector of a row `v` of plain texts (also bench.text_scale's bulk load).
SEARCH_VECTOR = """
    setweight(to_tsvector('english', v.title_plain), 'A')
    || setweight(to_tsvector('english', v.abstract_plain), 'B')
    || setweight(to_tsvector('english', v.authors_plain), 'C')"""


def _paper_columns(records: list[PaperRecord]) -> list[list]:
    columns: list[list] = [[] for _ in range(17)]
    for r in records:
        authors_text = ", ".join(_author_name(a) for a in r.authors if a.strip())
        title = clean_title(_clean(r.title))
        abstract = _clean(r.abstract).strip()
        row = (
            r.arxiv_id,
            r.version,
            title,
            abstract,
            authors_text,
            _clean(r.primary_category, 40),
            " ".join(_clean(c, 40) for c in r.categories if c),
            r.published,
            r.updated,
            _clean(r.doi, 200),
            _clean(r.journal_ref),
            _clean(r.comments),
            _clean(r.license, 200),
            # Whatever the source said, the notice in the text counts (one rule for all sources).
            r.withdrawn or looks_withdrawn(r.comments, abstract),
            tex_to_plain(title),
            tex_to_plain(abstract),
            tex_to_plain(authors_text),
        )
        for column, value in zip(columns, row, strict=True):
            column.append(value)
    return columns


def _insert_papers(cursor, records: list[PaperRecord]) -> dict[str, int]:
    cursor.execute(
        f"""
        INSERT INTO papers_paper (
            arxiv_id, version, title, abstract, authors_text, primary_category, categories,
            published, updated, doi, journal_ref, comments, license, withdrawn, hidden,
            search_vector, created_at, modified_at)
        SELECT v.arxiv_id, v.version, v.title, v.abstract, v.authors_text, v.primary_category,
               string_to_array(v.categories, ' '), v.published, v.updated, v.doi, v.journal_ref,
               v.comments, v.license, v.withdrawn, false, {SEARCH_VECTOR}, now(), now()
        FROM {_VALUES}
        ON CONFLICT (arxiv_id) DO NOTHING
        RETURNING arxiv_id, id
        """,
        _paper_columns(records),
    )
    return dict(cursor.fetchall())


def _update_papers(cursor, records: list[PaperRecord]) -> dict[str, int]:
    # `p.version < v.version` makes a concurrent or repeated update a no-op; `hidden` is curation
    # and survives new versions.
    cursor.execute(
        f"""
        UPDATE papers_paper AS p SET
            version = v.version, title = v.title, abstract = v.abstract,
            authors_text = v.authors_text, primary_category = v.primary_category,
            categories = string_to_array(v.categories, ' '), published = v.published,
            updated = v.updated, doi = v.doi, journal_ref = v.journal_ref,
            comments = v.comments, license = v.license, withdrawn = v.withdrawn,
            search_vector = {SEARCH_VECTOR}, modified_at = now()
        FROM {_VALUES}
        WHERE p.arxiv_id = v.arxiv_id AND p.version < v.version
        RETURNING p.arxiv_id, p.id
        """,
        _paper_columns(records),
    )
    return dict(cursor.fetchall())


def _write_authors(cursor, records: list[PaperRecord], paper_ids: dict[str, int]) -> None:
    names_by_key: dict[str, str] = {}
    links: list[tuple[int, str, int]] = []  # (paper id, author key, position)
    for record in records:
        position = 0
        for raw_name in record.authors:
            name = _author_name(raw_name)
            key = author_key(name)[:300]
            if not key:
                continue
            names_by_key.setdefault(key, name)
            links.append((paper_ids[record.arxiv_id], key, position))
            position += 1
    if not links:
        return
    keys = list(names_by_key)
    cursor.execute(
        """
        INSERT INTO papers_author (name, key)
        SELECT * FROM unnest(%s::text[], %s::text[])
        ON CONFLICT (key) DO NOTHING
        """,
        [[names_by_key[k] for k in keys], keys],
    )
    cursor.execute("SELECT key, id FROM papers_author WHERE key = ANY(%s::text[])", [keys])
    author_ids = dict(cursor.fetchall())
    cursor.execute(
        """
        INSERT INTO papers_authorship (paper_id, author_id, position)
        SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::int[])
        """,
        [
            [paper_id for paper_id, _, _ in links],
            [author_ids[key] for _, key, _ in links],
            [position for _, _, position in links],
        ],
    )


def refresh_text_index(paper_ids: Iterable[int]) -> int:
    """Recompute authors_text and search_vector of these papers from what is stored now (after a
    curator edited a title or the author list in the admin). Returns how many were updated."""
    ids = sorted({int(i) for i in paper_ids})
    if not ids:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT p.id, p.title, p.abstract,
                   coalesce(string_agg(a.name, ', ' ORDER BY s.position), '')
            FROM papers_paper p
            LEFT JOIN papers_authorship s ON s.paper_id = p.id
            LEFT JOIN papers_author a ON a.id = s.author_id
            WHERE p.id = ANY(%s::bigint[])
            GROUP BY p.id
            """,
            [ids],
        )
        rows = cursor.fetchall()
        cursor.execute(
            f"""
            UPDATE papers_paper AS p SET authors_text = v.authors_text,
                search_vector = {SEARCH_VECTOR}, modified_at = now()
            FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::text[], %s::text[])
                AS v(id, authors_text, title_plain, abstract_plain, authors_plain)
            WHERE p.id = v.id
            """,
            [
                [row[0] for row in rows],
                [row[3] for row in rows],
                [tex_to_plain(row[1]) for row in rows],
                [tex_to_plain(row[2]) for row in rows],
                [tex_to_plain(row[3]) for row in rows],
            ],
        )
        return cursor.rowcount
