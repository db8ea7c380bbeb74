"""The OpenAI backend, with the real SDK over real HTTP against a local fake of /v1/embeddings."""

import numpy as np
import pytest
from django.core.exceptions import ImproperlyConfigured

from papers.embeddings import EmbeddingError
from papers.embeddings.openai_api import TEXTS_PER_REQUEST, OpenAIEmbedder
from tests.fakes.openai_embeddings import FakeOpenAIEmbeddings, fake_vector


@pytest.fixture
def fake():
    with FakeOpenAIEmbeddings() as server:
        yield server


def embedder_for(fake, **options) -> OpenAIEmbedder:
    return OpenAIEmbedder(api_key="test-key", base_url=fake.base_url, **options)


def test_documents_come_back_in_order_as_unit_vectors(fake):
    embedder = embedder_for(fake)
    assert embedder.name == "openai:text-embedding-3-small@384"
    texts = ["protein folding", "galaxy survey", "protein folding"]
    vectors = embedder.embed_documents(texts)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors[1], fake_vector("galaxy survey", 384), atol=1e-6)
    assert np.array_equal(vectors[0], vectors[2])
    status, body = fake.requests[0]
    assert status == 200
    assert body["model"] == "text-embedding-3-small"
    assert body["dimensions"] == 384
    assert body["input"] == texts


def test_query_vector(fake):
    vector = embedder_for(fake).embed_query("what is dark matter?")
    assert vector.shape == (384,)
    assert abs(np.linalg.norm(vector) - 1) < 1e-5


def test_many_texts_go_in_several_requests(fake):
    texts = [f"text {i}" for i in range(TEXTS_PER_REQUEST + 5)]
    vectors = embedder_for(fake).embed_documents(texts)
    assert vectors.shape == (len(texts), 384)
    assert [len(body["input"]) for _, body in fake.requests] == [TEXTS_PER_REQUEST, 5]
    np.testing.assert_allclose(vectors[-1], fake_vector(texts[-1], 384), atol=1e-6)


def test_a_server_error_is_retried_then_succeeds(fake):
    fake.fail_next(500)
    vectors = embedder_for(fake, max_retries=2).embed_documents(["retry me"])
    assert [status for status, _ in fake.requests] == [500, 200]
    np.testing.assert_allclose(vectors[0], fake_vector("retry me", 384), atol=1e-6)


def test_errors_after_the_retries_are_an_embedding_error(fake):
    fake.fail_next(503)
    fake.fail_next(503)
    with pytest.raises(EmbeddingError, match="OpenAI embeddings failed"):
        embedder_for(fake, max_retries=1).embed_query("never")
    assert [status for status, _ in fake.requests] == [503, 503]


def test_vectors_of_the_wrong_size_are_refused(fake):
    fake.wrong_dimensions = True
    with pytest.raises(EmbeddingError, match=r"shape \(383,\)"):
        embedder_for(fake).embed_query("too short")


def test_needs_an_api_key(settings):
    settings.OPENAI_API_KEY = ""
    with pytest.raises(ImproperlyConfigured, match="OPENAI_API_KEY"):
        OpenAIEmbedder()


def test_counts_tokens_offline(fake):
    embedder = embedder_for(fake)
    assert embedder.max_tokens == 8191
    assert embedder.count_tokens("protein folding") == 2  # cl100k_base, not an estimate
