"""Benchmarks: development tools, never imported by chat or papers (docs/BENCHMARKS.md)."""

from pathlib import Path

# ../shared/data beside the checkout: the default of every benchmark's data argument. Plain
# path arithmetic (no settings): the `python -m bench.*` scripts read it before django.setup().
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
