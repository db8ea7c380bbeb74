"""The query-vector cache: one embedding per model and text, never shared across models."""

import numpy as np
import pytest

from papers.embeddings import query_cache
from papers.embeddings.hashing import HashingEmbedder
from papers.embeddings.query_cache import query_vector


class CountingModel(HashingEmbedder):
    """A stand-in model (the edge): the hashing vectors, flipped per `sign`, counting calls."""

    def __init__(self, name="model-a", sign=1.0):
        super().__init__()
        self.name, self.sign, self.calls = name, sign, 0

    def embed_query(self, text):
        self.calls += 1
        return self.sign * super().embed_query(text)


@pytest.fixture(autouse=True)
def empty_cache(settings):
    settings.QUERY_VECTOR_CACHE = 1024
    query_cache.clear()
    yield
    query_cache.clear()


def test_same_text_and_model_is_embedded_once():
    model = CountingModel()

    first = query_vector(model, "protein folding")
    second = query_vector(model, "protein folding")

    assert model.calls == 1
    assert np.array_equal(first, second)
    assert np.array_equal(first, HashingEmbedder().embed_query("protein folding"))


def test_two_models_never_share_a_vector():
    a, b = CountingModel("model-a", 1.0), CountingModel("model-b", -1.0)

    from_a = query_vector(a, "protein folding")
    from_b = query_vector(b, "protein folding")

    assert (a.calls, b.calls) == (1, 1)
    assert np.allclose(from_b, -from_a)
    assert np.array_equal(query_vector(a, "protein folding"), from_a)


def test_other_text_is_embedded_anew():
    model = CountingModel()
    query_vector(model, "protein folding")

    query_vector(model, "Protein folding")

    assert model.calls == 2


def test_a_caller_cannot_change_what_later_searches_get():
    model = CountingModel()
    vector = query_vector(model, "protein folding")

    with pytest.raises(ValueError, match="read-only"):
        vector[0] = 42.0
    assert np.array_equal(query_vector(model, "protein folding"), vector)


def test_least_recently_used_text_leaves_first(settings):
    settings.QUERY_VECTOR_CACHE = 2
    model = CountingModel()
    query_vector(model, "one")
    query_vector(model, "two")
    query_vector(model, "one")  # "two" is now the oldest

    query_vector(model, "three")
    query_vector(model, "one")
    assert model.calls == 3
    query_vector(model, "two")
    assert model.calls == 4


def test_size_zero_turns_it_off(settings):
    settings.QUERY_VECTOR_CACHE = 0
    model = CountingModel()

    query_vector(model, "protein folding")
    query_vector(model, "protein folding")

    assert model.calls == 2
