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
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path

import numpy as np

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


def _identifier(i: int) -> str:
    """The i-th id (from 0): 99,999 a month from January 2015 on."""
    month, number = divmod(i, 99_999)
    year, month = divmod(month, 12)
    if year > 84:
        raise ValueError("too many papers for the identifier space")
    return f"{15 + year:02d}{month + 1:02d}.{number + 1:05d}"


# One row a grown paper, in the order of `COLUMNS` (the COPY into the staging table).
COLUMNS = (
    "arxiv_id", "title", "abstract", "authors_text", "primary_category", "categories",
    "published", "title_plain", "abstract_plain", "authors_plain",
)  # fmt: skip


def grow(snapshot: Path, n: int, say, seed: int = 16) -> Iterator[tuple]:
    """`n` grown papers as rows of COLUMNS, with the text the ingest would store (titles and
    names cleaned, TeX turned to plain words per sentence: each sentence once, not per paper)."""
    rng = np.random.default_rng(seed)
    sample = _sample(snapshot)
    pools: dict[str, list[tuple[str, str]]] = defaultdict(list)
    plain: dict[str, str] = {}
    for paper in sample:
        for sentence in paper["sentences"]:
            if sentence not in plain:
                plain[sentence] = tex_to_plain(sentence)
            pools[paper["primary"]].append((sentence, plain[sentence]))
        paper["title"] = clean_title(paper["title"])
        paper["title_plain"] = tex_to_plain(paper["title"])
        paper["authors_text"] = ", ".join(
            clean_title(a)[:300] for a in paper["author_names"] if a.strip()
        )
        paper["authors_plain"] = tex_to_plain(paper["authors_text"])
        paper["category_list"] = paper["categories"].split()
    say(f"  {len(sample)} sample papers, {len(plain)} distinct sentences")
    sources = rng.integers(0, len(sample), n)
    shifts = rng.uniform(-JITTER_DAYS, JITTER_DAYS, n)
    for i in range(n):
        source = sample[sources[i]]
        pool = pools[source["primary"]]
        picks = [pool[j] for j in rng.integers(0, len(pool), len(source["sentences"]))]
        created = source["created"] + timedelta(days=float(shifts[i]))
        created = min(max(created, FIRST), END).replace(microsecond=0)
        yield (
            _identifier(i),
            source["title"],
            " ".join(text for text, _ in picks),
            source["authors_text"],
            source["primary"],
            source["category_list"],
            created,
            source["title_plain"],
            " ".join(words for _, words in picks),
            source["authors_plain"],
        )
