"""Local HTTP servers standing in for the outside world (OpenAI, arXiv): real clients, replayed answers."""

from pathlib import Path

# ../shared/data beside the checkout: the recordings the fakes replay and the tests' real data.
SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
