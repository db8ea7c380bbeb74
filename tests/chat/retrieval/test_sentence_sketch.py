"""Sentence sketches (chat.retrieval.sentence_sketch): what each sentence of a chunk can score,
kept from when the chunk got its words. The sketch must bound every sentence it was made from
(so the best-chunk stage keeps the same chunks), bound tighter than the chunk's words as a whole
(so it reads fewer), and be used only for the text and the code that made it."""

import random
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from chat.llm.sentences import stems, term_set
from chat.models import ChunkSketch
from chat.retrieval import chunks as module
from chat.retrieval import sentence_sketch
from chat.retrieval.chunks import Chunk, _by_sentences, best_chunks
from chat.retrieval.fulltext import query_terms
from papers.embeddings import get_embedder
from papers.models import FullText, Paper
from tests.chat.fulltext_helpers import add_fulltext
from tests.chat.retrieval.random_pools import ASKED, random_pools, random_text


def _masks(idf: dict[str, float]) -> list[tuple[int, float]]:
    return [(sentence_sketch.term_mask(t), w) for t, w in idf.items()]


def test_the_signature_covers_the_sketchs_own_layout_and_the_sentence_analysis():
    """A sketch read by code that lays sketches out otherwise would be misread: the signature is
    taken from this module's source too, beside the splitter's."""
    from chat.llm import sentences
    from papers.fulltext import tables

    sources = sentence_sketch.signature_sources()
    assert sentence_sketch in sources and sentences in sources and tables in sources
    assert len(sentence_sketch.SIGNATURE) == 16


def test_a_sketch_bounds_each_sentence_and_is_tighter_than_the_chunks_words():
    draw = random.Random(3)
    tighter = 0
    for _ in range(300):
        text = random_text(draw)
        idf = {stem: draw.uniform(0.3, 3.0) for stem in stems(draw.sample(ASKED, 3))}
        filters = sentence_sketch.sentence_filters(text)
        analysed = sentence_sketch.analysed_sentences(text)
        assert len(filters) == len(analysed)
        best = max(sum(w for t, w in idf.items() if t in terms) for _, terms in analysed)
        bound = sentence_sketch.bound(filters, _masks(idf))
        assert bound >= best - 1e-12  # never below what a sentence holds
        whole = sum(w for t, w in idf.items() if t in term_set(text))
        tighter += bound < whole
    assert tighter > 100  # the query's words spread over sentences count apart


def test_with_sketches_the_same_chunks_are_kept_and_fewer_are_read(monkeypatch):
    """The randomised check of test_chunk_ranking, each chunk with and without its sketch: the
    same first `kept` chunks with the same scores as reading every chunk, fewer chunks read."""
    read = []
    real = module.sentence_evidence
    monkeypatch.setattr(module, "sentence_evidence", lambda *args: read.append(1) or real(*args))
    without = with_sketch = 0
    for question, quantity, idf, pool, kept in random_pools(seed=7, count=400):
        sketched = [module._changed(c, filters=sentence_sketch.sentence_filters(c.text))
                    for c in pool]  # fmt: skip
        every = _by_sentences(pool, idf, question, quantity)[:kept]
        read.clear()
        plain = _by_sentences(pool, idf, question, quantity, kept)
        without += len(read)
        read.clear()
        first = _by_sentences(sketched, idf, question, quantity, kept)
        with_sketch += len(read)
        expected = [(c.passage_id, c.score) for c in every]
        assert [(c.passage_id, c.score) for c in plain] == expected
        assert [(c.passage_id, c.score) for c in first] == expected
    assert with_sketch < without  # (0.91x here: random words meet in sentences more than real ones)


def _chunks(paper, question: str, per_paper: int = 1):
    embedder = get_embedder()
    with connection.cursor() as cursor:
        lexemes, _ = query_terms(cursor, question)
        ranked = best_chunks(cursor, [paper.pk], embedder.embed_query(question), embedder.name,
                             lexemes, per_paper=per_paper)  # fmt: skip
        cursor.execute(
            "SELECT id, start, \"end\" FROM papers_passage WHERE paper_id = %s AND kind = 'fulltext'",
            [paper.pk],
        )
        spans = cursor.fetchall()
        every = module.with_texts(
            cursor,
            [Chunk(pid, paper.pk, "", 1, 1, "", a, b, 0.0, 0.0) for pid, a, b in spans],
        )
    return ranked.by_paper[paper.pk], every


@pytest.mark.django_db(transaction=True)
def test_a_read_paper_is_sketched_and_its_sketch_serves_only_its_text_and_code(catalogue):
    paper = Paper.objects.get(arxiv_id="2510.00003")
    pages = [
        ["We train for 10 epochs with the Adam optimizer.", "Dropout is 0.1 on every layer."],
        ["The warmup schedule is linear for 4000 steps. Label smoothing is 0.1."],
    ]
    add_fulltext(paper, pages)  # index_words sends fulltext_indexed: the chat sketches it

    sketch = ChunkSketch.objects.get(paper=paper)
    assert sketch.signature == sentence_sketch.SIGNATURE
    assert sentence_sketch.stale_papers() == []
    best, every = _chunks(paper, "Which warmup schedule was used?")
    assert best[0].text.startswith("The warmup schedule")
    assert all(c.filters == sentence_sketch.sentence_filters(c.text) for c in every)
    assert len(every) == 3 and len(every[2].filters) == 2  # its two sentences

    # Its chunks' BM25 lengths come from the sketch; without one, from their words, the same.
    def lengths():
        best, _ = _chunks(paper, "Which warmup schedule was used?", per_paper=8)
        return {c.passage_id: c.length for c in best}

    sketched = lengths()
    assert len(sketched) == 3 and all(n > 0 for n in sketched.values())
    data = bytes(sketch.data)
    ChunkSketch.objects.filter(paper=paper).update(signature="older-code")
    assert lengths() == sketched
    # A sketch that lacks a chunk (only the first is kept here): that chunk's from its words.
    first = min(every, key=lambda c: c.start)
    partial = sentence_sketch.pack([(first.start, first.end, first.text,
                                     sentence_sketch.Sketch(data).length(first.start, first.end))])
    ChunkSketch.objects.filter(paper=paper).update(signature=sentence_sketch.SIGNATURE, data=partial)
    assert lengths() == sketched
    sentence_sketch.sketch_papers([paper.pk])

    # A chunk whose text is no longer the sketched one (same span) gets no filters from it.
    text = FullText.objects.get(paper=paper).text
    FullText.objects.filter(paper=paper).update(text=text.replace("Adam", "Lion"))
    _, every = _chunks(paper, "Which optimizer?")
    assert [c.filters is None for c in every] == [True, False, False]

    # A sketch made by other code is not used, and the stale job makes it again.
    ChunkSketch.objects.filter(paper=paper).update(signature="older-code")
    best_old, every = _chunks(paper, "Which warmup schedule was used?")
    assert all(c.filters is None for c in every)
    assert [c.passage_id for c in best_old] == [c.passage_id for c in best]
    assert sentence_sketch.stale_papers() == [paper.pk]
    out = StringIO()
    call_command("sketch_chunks", stdout=out, stderr=StringIO())
    assert out.getvalue().strip() == "1 papers sketched (1 lacked a current sketch)"
    _, every = _chunks(paper, "Which warmup schedule was used?")
    assert all(c.filters is not None for c in every)
    assert sentence_sketch.stale_papers() == []


@pytest.mark.django_db(transaction=True)
def test_the_nightly_indexing_signal_queues_remaking_stale_sketches(catalogue):
    from django_q.models import OrmQ

    from chat import jobs
    from papers.signals import catalogue_indexed

    paper = Paper.objects.get(arxiv_id="2510.00003")
    add_fulltext(paper, [["The warmup schedule is linear for 4000 steps."]])
    ChunkSketch.objects.filter(paper=paper).update(signature="older-code")
    catalogue_indexed.send(sender=None, result=None)
    assert [t for t in OrmQ.objects.all() if t.func() == jobs.SKETCH_JOB]
    assert jobs.sketch_stale_job() == {"stale": 1, "sketched": 1}
    assert ChunkSketch.objects.get(paper=paper).signature == sentence_sketch.SIGNATURE
