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

The result is a snapshot file in the arXiv format, imported by the real `import_snapshot` and
indexed by the real `papers.indexing.lexical`, so the benchmark measures the project's own path.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime
from pathlib import Path

import numpy as np

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
            papers.append(
                {
                    "title": data["title"],
                    "authors": data.get("authors") or "",
                    "authors_parsed": data.get("authors_parsed") or [],
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


def write_snapshot(snapshot: Path, n: int, out: Path, say, seed: int = 16) -> dict:
    """Write `n` grown papers to `out` (gzip JSON lines). Returns what was written."""
    rng = np.random.default_rng(seed)
    sample = _sample(snapshot)
    pools: dict[str, list[str]] = defaultdict(list)
    for paper in sample:
        pools[paper["primary"]].extend(paper["sentences"])
    sources = rng.integers(0, len(sample), n)
    shifts = rng.uniform(-JITTER_DAYS, JITTER_DAYS, n)
    tmp = out.with_suffix(".partial")
    with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=1) as file:
        for i in range(n):
            source = sample[sources[i]]
            pool = pools[source["primary"]]
            picks = rng.integers(0, len(pool), len(source["sentences"]))
            created = source["created"] + timedelta(days=float(shifts[i]))
            created = min(max(created, FIRST), END).replace(microsecond=0)
            record = {
                "id": _identifier(i),
                "submitter": None,
                "authors": source["authors"],
                "title": source["title"],
                "comments": None,
                "journal-ref": None,
                "doi": None,
                "report-no": None,
                "categories": source["categories"],
                "license": None,
                "abstract": " ".join(pool[j] for j in picks),
                "versions": [{"version": "v1", "created": format_datetime(created, usegmt=True)}],
                "update_date": created.date().isoformat(),
                "authors_parsed": source["authors_parsed"],
            }
            file.write(json.dumps(record) + "\n")
            if (i + 1) % 100_000 == 0:
                say(f"  {i + 1}/{n} papers written")
    tmp.rename(out)
    return {"sample_papers": len(sample), "sentences": sum(len(p) for p in pools.values())}
