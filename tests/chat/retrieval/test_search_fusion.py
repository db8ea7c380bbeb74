"""Fusion and recency blending: pure functions, exact numbers."""

from datetime import UTC, datetime, timedelta

import pytest

from chat.retrieval.fusion import Ranked, convex_fusion, fuse, list_weight, reciprocal_rank_fusion
from chat.retrieval.recency import blend, recency_score

NOW = datetime(2026, 11, 21, tzinfo=UTC)


def test_rrf_sums_reciprocal_ranks_and_breaks_ties_by_id():
    lists = [Ranked("dense", [3, 1], [0.9, 0.8]), Ranked("fulltext", [1, 2], [5.0, 4.0])]

    fused = reciprocal_rank_fusion(lists, k=60)

    assert [f.paper_id for f in fused] == [1, 3, 2]  # 1 in both; 3 first (1/61) > 2 (1/62)
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61)
    assert fused[0].ranks == {"dense": 2, "fulltext": 1}
    tied = reciprocal_rank_fusion([Ranked("a", [9], [1.0]), Ranked("b", [4], [1.0])])
    assert [f.paper_id for f in tied] == [4, 9]


def test_convex_fusion_normalises_each_list():
    lists = [
        Ranked("dense", [1, 2, 3], [0.9, 0.5, 0.1], 0.5),
        Ranked("fulltext", [3, 1], [10.0, 2.0], 0.5),
    ]

    fused = {f.paper_id: f.score for f in convex_fusion(lists)}

    assert fused[1] == pytest.approx(0.5 * 1.0 + 0.5 * 0.0)
    assert fused[2] == pytest.approx(0.5 * 0.5)
    assert fused[3] == pytest.approx(0.5 * 0.0 + 0.5 * 1.0)


def test_fuse_rejects_unknown_methods_and_weights_lists(settings):
    with pytest.raises(ValueError, match="unknown fusion method"):
        fuse([], "borda")
    settings.SEARCH_FUSION = "rrf"
    assert list_weight("dense") == list_weight("fulltext") == 1.0
    settings.SEARCH_FUSION = "convex"
    assert list_weight("dense") + list_weight("fulltext") == pytest.approx(1.0)


def test_recency_halves_every_half_life(settings):
    settings.RECENCY_HALF_LIFE_DAYS = 100
    assert recency_score(NOW, NOW) == 1.0
    assert recency_score(NOW - timedelta(days=100), NOW) == pytest.approx(0.5)
    assert recency_score(NOW - timedelta(days=300), NOW) == pytest.approx(0.125)
    assert recency_score(NOW + timedelta(days=3), NOW) == 1.0  # dated after "now": new


def test_zero_weight_changes_nothing():
    items = [(5, 0.2, NOW - timedelta(days=4000)), (1, 0.1, NOW)]

    assert blend(items, 0.0, NOW) == [(5, 0.2), (1, 0.1)]


def test_recency_prefers_newer_relevant_papers_but_not_irrelevant_ones():
    old_relevant = (1, 1.0, NOW - timedelta(days=3650))
    new_relevant = (2, 0.9, NOW - timedelta(days=10))
    new_irrelevant = (3, 0.1, NOW)  # below the relevance floor after scaling
    weakest = (4, 0.0, NOW - timedelta(days=9000))

    order = [
        paper for paper, _ in blend([old_relevant, new_relevant, new_irrelevant, weakest], 0.8, NOW)
    ]

    assert order == [2, 1, 3, 4]


@pytest.mark.parametrize("weight", [-0.1, 1.5])
def test_weight_out_of_range(weight):
    with pytest.raises(ValueError, match="recency weight"):
        blend([(1, 1.0, NOW)], weight, NOW)
