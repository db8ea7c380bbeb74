"""Sentence vectors (settings.SENTENCE_VECTORS): each sentence of a paper's title and abstract
embedded as a Passage of kind "sentence", by the indexing job after the abstracts, replaced
with them, and never mixed into what reads abstracts."""

import pytest

from papers.indexing.passages import document_text, sentence_spans
from papers.indexing.run import run_indexing
from papers.indexing.vectors import embed_missing, embed_sentences, reembed
from papers.ingest.upsert import upsert_papers
from papers.models import Paper, Passage
from tests.papers.conftest import make_record

# They write many passage rows: a later module on this process must not plan for their counts.
pytestmark = pytest.mark.usefixtures("tidy_passage_statistics")

ABSTRACT = "We study things carefully. Then we report what we find! Is that all? Yes."


def words(text: str) -> int:
    return len(text.split())


@pytest.fixture
def hashing(settings):
    settings.EMBEDDING_BACKEND = "hashing"


def test_the_title_and_each_sentence_are_a_span():
    text = document_text("A study of things", ABSTRACT)

    spans = sentence_spans(text, words, 64)

    assert [s.text(text) for s in spans] == [
        "A study of things", "We study things carefully.", "Then we report what we find!",
        "Is that all?", "Yes.",
    ]  # fmt: skip
    assert [s.position for s in spans] == [0, 1, 2, 3, 4]
    assert sentence_spans("  ", words, 64) == []


def test_a_sentence_longer_than_the_window_is_cut_between_words():
    text = "one two three four five six seven eight nine ten eleven twelve."

    spans = sentence_spans(text, words, 8)

    assert all(words(s.text(text)) <= 8 for s in spans) and len(spans) == 2
    assert " ".join(s.text(text) for s in spans) == text


def test_sentences_of_embedded_papers_only_once(hashing, db):
    upsert_papers([make_record("2401.00001", abstract=ABSTRACT), make_record("2401.00002")])
    embed_missing()
    upsert_papers([make_record("2401.00003")])  # not embedded yet: no sentences either

    result = embed_sentences()

    assert result.papers == 2
    first = Paper.objects.get(arxiv_id="2401.00001")
    assert first.passages.sentences().count() == 5
    assert first.passages.abstracts().count() == 1  # untouched
    assert embed_sentences().papers == 0
    assert Paper.objects.not_embedded_with("hashing-test").get().arxiv_id == "2401.00003"


def test_reembedding_a_paper_drops_its_sentences_for_the_next_run(hashing, db):
    upsert_papers([make_record("2401.00001", abstract=ABSTRACT)])
    embed_missing()
    embed_sentences()
    paper = Paper.objects.get()

    reembed([paper.pk])

    assert not paper.passages.sentences().exists()
    assert embed_sentences().passages == 5


def test_the_indexing_job_embeds_sentences_only_when_asked(hashing, db, settings):
    settings.SENTENCE_VECTORS = False
    upsert_papers([make_record("2401.00001", abstract=ABSTRACT)])
    run_indexing()
    assert not Passage.objects.sentences().exists()

    settings.SENTENCE_VECTORS = True
    upsert_papers([make_record("2401.00002", abstract=ABSTRACT)])
    run_indexing()

    assert Passage.objects.sentences().count() == 10
    assert Passage.objects.abstracts().count() == 2
