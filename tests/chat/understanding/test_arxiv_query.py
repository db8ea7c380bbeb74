"""The arXiv query a live search sends, built by rules from the question's analysis."""

from datetime import UTC, datetime

from chat.understanding.analysis import analyse
from chat.understanding.arxiv_query import arxiv_query

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def _query(question: str) -> str:
    return arxiv_query(analyse(question, NOW).to_dict())


def test_authors_categories_topic_words_and_window():
    analysis = {
        "query": "capsule networks for routing",
        "authors": ["Geoffrey Hinton"],
        "categories": ["cs.LG", "cs.CV"],
        "start": "2023-01-01T00:00:00+00:00",
        "end": "2024-12-31T23:59:59.999999+00:00",
    }
    assert arxiv_query(analysis) == (
        'au:"Geoffrey Hinton" AND (cat:cs.LG OR cat:cs.CV) AND (ti:capsule OR abs:capsule) AND '
        "(ti:networks OR abs:networks) AND (ti:routing OR abs:routing) AND "
        "submittedDate:[202301010000 TO 202412312359]"
    )


def test_from_a_question():
    query = _query("What is new on software testing since 2024?")
    assert query == (
        "(ti:software OR abs:software) AND (ti:testing OR abs:testing) AND "
        "submittedDate:[202401010000 TO 202611232359]"
    )


def test_a_window_alone_asks_nothing():
    assert arxiv_query({"query": "what is new", "start": "2024-01-01T00:00:00+00:00"}) == ""


def test_quotes_cannot_break_out_of_an_author():
    assert arxiv_query({"query": "", "authors": ['Ann "x" OR all:y']}) == 'au:"Ann x OR all:y"'
