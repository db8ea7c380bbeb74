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
from pathlib import Path

from papers.ingest.snapshot import MalformedRecord, parse_snapshot_record
from papers.ingest.upsert import PaperRecord

# Primary-category prefixes of the machine-learning side of the sample.
_CS_PREFIXES = ("cs.", "eess.", "stat.")


@dataclass(frozen=True)
class Slice:
    name: str
    old_step: int  # cs/eess/stat papers first submitted up to 2024
    new_step: int  # cs/eess/stat papers of 2025-2026
    quantum_step: int  # quant-ph papers (any year)

    def keeps(self, record: PaperRecord, counters: dict[str, int]) -> bool:
        primary = record.primary_category
        if primary == "quant-ph":
            group, step = "quantum", self.quantum_step
        elif primary.startswith(_CS_PREFIXES):
            recent = record.published.year >= 2025
            group, step = ("new", self.new_step) if recent else ("old", self.old_step)
        else:
            return False
        counters[group] = counters.get(group, 0) + 1
        return (counters[group] - 1) % step == 0


DEFAULT = Slice("default", old_step=1, new_step=25, quantum_step=200)
SMALL = Slice("small", old_step=8, new_step=200, quantum_step=2000)
SLICES = {s.name: s for s in (DEFAULT, SMALL)}


def read_slice(path: Path, spec: Slice) -> list[PaperRecord]:
    """The slice's papers, parsed by the importer's own parser (malformed lines are skipped)."""
    records: list[PaperRecord] = []
    counters: dict[str, int] = {}
    with gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path) as lines:
        for line in lines:
            try:
                record = parse_snapshot_record(json.loads(line))
            except (MalformedRecord, ValueError):
                continue
            if not record.withdrawn and spec.keeps(record, counters):
                records.append(record)
    return records
