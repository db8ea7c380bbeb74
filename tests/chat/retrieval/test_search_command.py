"""`manage.py search`: the analysis and ranked papers, as text or JSON."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from .search_corpus import build_corpus


@pytest.fixture
def corpus(db, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    return build_corpus()


def run(*args) -> str:
    out = StringIO()
    call_command("search", *args, stdout=out)
    return out.getvalue()


def test_json_shape(corpus):
    data = json.loads(
        run("diffusion models since 2025", "--now", "2026-11-21", "--k", "2", "--json")
    )

    analysis = data["analysis"]
    assert analysis["is_temporal"] is True
    assert analysis["start"] == "2025-01-01T00:00:00+00:00"
    assert analysis["end"].startswith("2026-11-21T23:59:59")
    assert analysis["query"] == "diffusion models"
    assert "weight" in analysis
    assert len(data["results"]) == 2
    first = data["results"][0]
    assert {"arxiv_id", "title", "published", "score"} <= set(first)
    assert first["published"] >= "2025-01-01"


def test_text_output_lists_analysis_and_papers(corpus):
    text = run("quantum error correction by Alan Turing", "--now", "2026-11-21")

    assert "query:      quantum error correction" in text
    assert "authors:    Alan Turing" in text
    assert "2202.00010" in text
    assert "1805.00009" not in text  # no authors at all
    assert "why:" in text and "timings (ms):" in text


@pytest.mark.parametrize(
    "args, message",
    [
        (["diffusion", "--now", "yesterday"], "--now must be a date"),
        (["diffusion", "--k", "0"], "k must be"),
        (["   "], "empty"),
    ],
)
def test_bad_arguments(corpus, args, message):
    with pytest.raises(CommandError, match=message):
        run(*args)
