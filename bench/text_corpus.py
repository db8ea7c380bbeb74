"""A catalogue of N papers with real-looking text, grown from the 57k arXiv sample (`--text N`).

BM25 at scale depends on the term statistics of real abstracts (a few very common words, a long
tail, words that co-occur by topic), which synthetic text from a word list does not have. So each
new paper is grown from a paper of the sample (its "source"):

- title, authors and categories: the source's (so title words keep their arXiv frequencies);
- abstract: as many sentences as the source has, each drawn at random from the sentences of all
  sample papers of the same primary category (so words still co-occur by topic, and document
  frequencies scale with N the way they would in a larger arXiv);
- date: the source's first-version date moved by up to a year either way, clipped to
  [1991-08-01, `END`] (the sample's skew to recent years stays);
- id: a new-style arXiv id numbered in sequence from 1501.00001 (unrelated to the date: the
  identifier grammar is strict about which months have 4 or 5 digits, and ids play no part in
  ranking).

The rows go into the catalogue in bulk (bench.text_scale: COPY, then the tsvector computed by
PostgreSQL as the ingest computes it) and are indexed by the real `papers.indexing.lexical`.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import defaultdict
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path

from papers.ingest.snapshot import MalformedRecord, parse_snapshot_record
from papers.text import clean_title, tex_to_plain

FIRST = datetime(1991, 8, 1, tzinfo=UTC)
END = datetime(2026, 11, 21, tzinfo=UTC)
JITTER_DAYS = 365
# A sentence ends at . ! ? followed by space and an upper-case letter, digit or TeX/quote.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\\$(\"'])")


def sentences(abstract: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(" ".join(abstract.split())) if s.strip()]


def _sample(snapshot: Path) -> list[dict]:
    papers = []
    with gzip.open(snapshot, "rt", encoding="utf-8") as lines:
        for line in lines:
            data = json.loads(line)
            versions = data.get("versions") or []
            try:
                created = parsedate_to_datetime(versions[0]["created"])
            except (IndexError, KeyError, TypeError, ValueError):
                continue
            parts = sentences(data.get("abstract") or "")
            if not parts or not (data.get("title") or "").strip():
                continue
            try:
                names = parse_snapshot_record(data).authors
            except MalformedRecord:
                continue
            papers.append(
                {
                    "title": data["title"],
                    "authors": data.get("authors") or "",
                    "authors_parsed": data.get("authors_parsed") or [],
                    # As the ingest reads them (for the catalogue's authors_text).
                    "author_names": names,
                    "categories": data.get("categories") or "cs.LG",
                    "primary": (data.get("categories") or "cs.LG").split()[0],
                    "sentences": parts,
                    "created": created.astimezone(UTC),
                }
            )
    return papers


def sample_tables(snapshot: Path, say) -> tuple[list[tuple], list[tuple]]:
    """The sample as two tables for growing papers inside PostgreSQL (GROW):
    papers (sid, title, title_plain, authors_text, authors_plain, primary_category,
    categories, created, sentences, pool_start, pool_length) and sentences (pos, text, plain),
    each category's sentences contiguous from its pool_start. Text as the ingest stores it
    (titles and names cleaned, TeX turned to plain words: per sentence, each sentence once)."""
    sample = _sample(snapshot)
    by_category: dict[str, list[str]] = defaultdict(list)
    for paper in sample:
        by_category[paper["primary"]].extend(paper["sentences"])
    sentences, pools, plain = [], {}, {}
    for category, texts in sorted(by_category.items()):
        pools[category] = (len(sentences), len(texts))
        for text in texts:
            if text not in plain:
                plain[text] = tex_to_plain(text)
            sentences.append((len(sentences), text, plain[text]))
    papers = []
    for sid, paper in enumerate(sample):
        title = clean_title(paper["title"])
        authors = ", ".join(clean_title(a)[:300] for a in paper["author_names"] if a.strip())
        start, length = pools[paper["primary"]]
        papers.append((
            sid, title, tex_to_plain(title), authors, tex_to_plain(authors), paper["primary"],
            paper["categories"].split(), paper["created"], len(paper["sentences"]), start, length,
        ))  # fmt: skip
    say(f"  {len(papers)} sample papers, {len(sentences)} sentences ({len(plain)} distinct)")
    return papers, sentences


# A pseudo-random number in [0, 1) from integers, by PostgreSQL's own 64-bit hash: random()
# inside the per-paper subquery was cached by the planner (Memoize: the 1M papers of a first
# build shared 144 abstracts a 20k), a hash of the paper number cannot be.
def _uniform(expression: str) -> str:
    return f"((hashint8({expression})::bigint + 2147483648) / 4294967296.0)"


# Papers lo..hi-1 grown from the sample tables, as rows `v` for the catalogue's INSERT: a source
# paper (title, authors, categories, as many sentences), each sentence drawn from the source's
# category pool, the date moved by up to JITTER_DAYS and clipped, the id from the row number
# (99,999 a month from 1501.00001 on). Draws are hashes of (paper number, draw): the same N
# gives the same papers.
GROW = f"""
SELECT
    lpad((15 + r.i / 99999 / 12)::text, 2, '0') || lpad((mod(r.i / 99999, 12) + 1)::text, 2, '0')
        || '.' || lpad((mod(r.i, 99999) + 1)::text, 5, '0') AS arxiv_id,
    s.title, a.abstract, s.authors_text, s.primary_category, s.categories,
    date_trunc('second', least(greatest(s.created + r.shift * interval '1 day',
        '{FIRST.isoformat()}'::timestamptz), '{END.isoformat()}'::timestamptz)) AS published,
    s.title_plain, a.abstract_plain, s.authors_plain
FROM (
    SELECT g AS i, floor({_uniform("g::bigint * 4096")} * %(sample)s)::int AS sid,
           ({_uniform("g::bigint * 4096 + 1")} * 2 - 1) * {JITTER_DAYS} AS shift
    FROM generate_series(%(lo)s, %(hi)s - 1) AS g
) r
JOIN bench_sample s ON s.sid = r.sid
CROSS JOIN LATERAL (
    SELECT string_agg(x.text, ' ' ORDER BY k.k) AS abstract,
           string_agg(x.plain, ' ' ORDER BY k.k) AS abstract_plain
    FROM (SELECT k, s.pool_start
                 + floor({_uniform("r.i::bigint * 4096 + 2 + k")} * s.pool_length)::int AS pos
          FROM generate_series(1, s.sentences) AS k) k
    JOIN bench_sentence x ON x.pos = k.pos
) a
"""
