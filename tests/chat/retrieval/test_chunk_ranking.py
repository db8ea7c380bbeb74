"""Ranking a paper's chunks (chat.retrieval.chunks): BM25 over the candidate chunks, and the
body's evidence reordering the page. The search itself is tested in test_chunks.py."""

from chat.retrieval.chunks import Chunk, reordered_by_evidence, with_bm25


def test_bm25_over_chunks_counts_rare_words_more_than_common_ones():
    def chunk(pid, counts, length=40):
        return Chunk(pid, 1, "", 1, 1, "", 0, 0, 0.5, 0.0, length=length, counts=counts)

    common, rare = chunk(1, (("transform", 3),)), chunk(2, (("label", 1), ("smooth", 1)))
    others = [chunk(i, (("transform", 1),)) for i in range(3, 10)]
    scored = {c.passage_id: c.bm25 for c in with_bm25([common, rare, *others])}
    assert scored[2] > scored[1] > 0
    # Without a query word a chunk scores nothing (and stays out of the BM25 list).
    assert with_bm25([chunk(11, ())])[0].bm25 == 0


def test_the_bodys_evidence_reorders_the_page_and_leaves_papers_without_it_in_place():
    order = [10, 20, 30, 40]
    # 40 holds the question's rare words in its body: it moves up; 20 and 30 have none.
    assert reordered_by_evidence(order, {10: 1.0, 40: 9.0}) == [10, 40, 20, 30]
    assert reordered_by_evidence(order, {}) == order
