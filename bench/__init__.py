"""Benchmarks: development tools, never imported by chat or papers (docs/BENCHMARKS.md)."""
