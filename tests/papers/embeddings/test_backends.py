"""Choosing a backend, and the deterministic hashing backend other tests rely on."""

import numpy as np
import pytest
from django.core.exceptions import ImproperlyConfigured

from papers.embeddings import Embedder, get_embedder


def test_default_backend_comes_from_settings(settings, hashing):
    settings.EMBEDDING_BACKEND = "hashing"
    assert get_embedder() is hashing


def test_unknown_backend_is_a_clear_error():
    with pytest.raises(ImproperlyConfigured, match="unknown embedding backend 'bert'.*minilm"):
        get_embedder("bert")


def test_hashing_backend_is_deterministic_normalised_and_lexical(hashing):
    assert isinstance(hashing, Embedder)
    assert hashing.name == "hashing-test"
    docs = hashing.embed_documents(["protein folding dynamics", "galaxy cluster survey"])
    assert docs.shape == (2, 384) and docs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-6)
    query = hashing.embed_query("protein folding")
    assert query @ docs[0] > 0.5 > query @ docs[1]
    assert np.array_equal(query, hashing.embed_query("Protein   folding!"))
    assert hashing.count_tokens("three little words") == 5


def test_hashing_backend_rejects_empty_text(hashing):
    with pytest.raises(ValueError, match="text #0 is empty"):
        hashing.embed_query("")
