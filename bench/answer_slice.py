"""The catalogue the answer-behaviour suite runs on: a fixed, rule-made slice of the arXiv sample.

The 57k-paper sample (../shared/data/arxiv-snapshot/arxiv-sample.jsonl.gz) is mostly quant-ph
from 1992-2009 and cs from 2025-2026, with ~2,100 cs/eess/stat papers in between. A slice keeps
every `old_step`-th of those in-between papers (first version up to 2024), every `new_step`-th
of the 2025-2026 ones and every `quantum_step`-th quant-ph paper, so it spans 1995 → June 2026,
has authors with several papers, several years of each topic, and a physics corner that the
machine-learning questions must not stray into. Deterministic: the same file gives the same slice.

    DEFAULT: ~2,900 papers (all 2,098 in-between, 1/25 of 2025-26, 1/200 of quant-ph)
    SMALL:   ~350 papers, for the tests (fast with the hashing embedder)
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from papers.ingest.snapshot import MalformedRecord, parse_snapshot_record
from papers.ingest.upsert import PaperRecord, looks_withdrawn

# Primary-category prefixes of the machine-learning side of the sample.
_CS_PREFIXES = ("cs.", "eess.", "stat.")


@dataclass(frozen=True)
class Slice:
    name: str
    old_step: int  # cs/eess/stat papers first submitted up to 2024
    new_step: int  # cs/eess/stat papers of 2025-2026
    quantum_step: int  # quant-ph papers (any year)

    def group(self, primary: str, year: int) -> tuple[str, int] | None:
        """Which stride a paper falls under, or None for papers the slice never takes."""
        if primary == "quant-ph":
            return "quantum", self.quantum_step
        if primary.startswith(_CS_PREFIXES):
            return ("new", self.new_step) if year >= 2025 else ("old", self.old_step)
        return None


DEFAULT = Slice("default", old_step=1, new_step=25, quantum_step=200)
SMALL = Slice("small", old_step=8, new_step=200, quantum_step=2000)
SLICES = {s.name: s for s in (DEFAULT, SMALL)}


def _first_year(data: dict) -> int | None:
    """The year of the first version ("Mon, 2 Apr 2007 19:18:42 GMT"), read without parsing the
    whole record: most lines are not kept, and parsing all 57k takes seconds."""
    try:
        return int(data["versions"][0]["created"].split()[3])
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        return None


@lru_cache(maxsize=4)
def read_slice(path: Path, spec: Slice) -> tuple[PaperRecord, ...]:
    """The slice's papers, parsed by the importer's own parser (malformed lines are skipped)."""
    records: list[PaperRecord] = []
    counters: dict[str, int] = {}
    with gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path) as lines:
        for line in lines:
            try:
                data = json.loads(line)
                primary = (data.get("categories") or "").split()[0]
            except (ValueError, AttributeError, IndexError):
                continue
            year = _first_year(data)
            if year is None or spec.group(primary, year) is None:
                try:  # an unusual line: let the importer's parser decide
                    record = parse_snapshot_record(data)
                except MalformedRecord:
                    continue
                primary, year = record.primary_category, record.published.year
            group = spec.group(primary, year)
            # Withdrawn papers and lines the importer would reject are not counted.
            if (
                group is None
                or not _complete(data)
                or looks_withdrawn(_text(data, "comments"), _text(data, "abstract"))
            ):
                continue
            name, step = group
            counters[name] = counters.get(name, 0) + 1
            if (counters[name] - 1) % step:
                continue
            try:
                record = parse_snapshot_record(data)
            except MalformedRecord:
                continue
            records.append(record)
    return tuple(records)


def _text(data: dict, key: str) -> str:
    value = data.get(key)
    return value.strip() if isinstance(value, str) else ""


def _complete(data: dict) -> bool:
    return all(_text(data, key) for key in ("id", "title", "abstract"))
