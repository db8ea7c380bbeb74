"""`manage.py bench_import PATH`: how fast the snapshot import is, on a scratch database.

Creates a throw-away database on the same PostgreSQL server (like the test runner does), migrates
it, imports PATH twice (the first import writes everything; the re-run must write nothing), reports
papers/s and peak memory, and drops the database. The user's catalogue is never touched.
"""

import json
import os
import resource
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from bench.scratch_db import scratch_database
from papers.ingest.snapshot import import_snapshot, open_snapshot, parse_snapshot_record


def _peak_rss_mb() -> float:
    # Linux reports ru_maxrss in KiB.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Command(BaseCommand):
    help = "Benchmark the snapshot import (first import and re-run) on a scratch database."

    def add_arguments(self, parser):
        parser.add_argument(
            "path", help="a snapshot file, e.g. ../shared/data/arxiv-snapshot/arxiv-sample.jsonl.gz"
        )
        parser.add_argument("--limit", type=int, help="only the first N papers")
        parser.add_argument("--batch-size", type=int, default=1000)

    def handle(self, *args, path, limit, batch_size, **options):
        if not os.path.isfile(path):
            raise CommandError(f"snapshot file not found: {path}")
        baseline = self._parse_only(path, limit)
        self.stdout.write(
            f"baseline  read+parse only (no database): {baseline['papers']} papers in "
            f"{baseline['seconds']:.1f} s = {baseline['papers'] / baseline['seconds']:.0f} papers/s"
        )
        scratch = f"bench_import_{os.getpid()}"
        self.stdout.write(f"scratch database {scratch}: creating and migrating…")
        with scratch_database(scratch):
            first = import_snapshot(path, limit=limit, batch_size=batch_size)
            first_rss = _peak_rss_mb()
            again = import_snapshot(path, limit=limit, batch_size=batch_size)
            again_rss = _peak_rss_mb()
        for label, result, rss in (("first", first, first_rss), ("re-run", again, again_rss)):
            c = result.counts
            self.stdout.write(
                f"{label:6}  {c.new} new, {c.updated} updated, {c.unchanged} unchanged, "
                f"{result.problems} skipped lines in {result.seconds:.1f} s = "
                f"{result.papers_per_second:.0f} papers/s; peak RSS {rss:.0f} MB; "
                f"timings {json.dumps(result.run.timings)}"
            )
        self.stdout.write(
            f"re-run is {first.seconds / again.seconds:.1f}x faster than the first import; "
            f"first import runs at {first.papers_per_second / (baseline['papers'] / baseline['seconds']):.2f}"
            " of the parse-only rate"
        )
        if again.counts.written:
            raise CommandError(
                f"the re-run wrote {again.counts.written} papers; it must write none"
            )

    def _parse_only(self, path, limit) -> dict:
        """Same-run baseline: decompress, decode JSON and build records, nothing else."""
        started = time.monotonic()
        papers = 0
        snapshot = open_snapshot(Path(path))
        try:
            for line in snapshot.lines:
                try:
                    parse_snapshot_record(json.loads(line))
                except ValueError:
                    continue
                papers += 1
                if limit and papers >= limit:
                    break
        finally:
            snapshot.close()
        return {"papers": papers, "seconds": time.monotonic() - started}
