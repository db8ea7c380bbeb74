"""OpenAI embeddings (text-embedding-3-*), asked for EMBEDDING_DIMENSIONS so the vectors fit the
same pgvector column and HNSW index as the offline model's.

Retries with backoff on 429, 5xx and network errors are the `openai` SDK's own
(OPENAI_MAX_RETRIES); OPENAI_BASE_URL points it at a compatible server or a local fake.
"""

import importlib.util
import logging
import os
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .base import EmbeddingError, check_texts, empty_matrix, l2_normalise

log = logging.getLogger("papers.embeddings")

# OpenAI accepts up to 2048 inputs per request; smaller requests keep one retry cheap.
TEXTS_PER_REQUEST = 256
# text-embedding-3-small/large and ada-002 all take at most 8191 tokens per input.
MAX_TOKENS = 8191


def _tiktoken_encoding():
    """cl100k_base (the text-embedding-3 tokenizer), from the files llama-index ships, offline."""
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        spec = importlib.util.find_spec("llama_index.core")
        if spec and spec.submodule_search_locations:
            cache = Path(spec.submodule_search_locations[0]) / "_static" / "tiktoken_cache"
            if cache.is_dir():
                os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    try:
        import tiktoken

        return tiktoken.get_encoding("cl100k_base")
    except Exception as exc:  # no cached file and no internet: fall back to an estimate
        log.warning("tiktoken unavailable, estimating OpenAI token counts: %s", exc)
        return None


class OpenAIEmbedder:
    max_tokens = MAX_TOKENS

    def __init__(
        self,
        *,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
    ):
        import openai

        api_key = api_key or settings.OPENAI_API_KEY
        if not api_key:
            raise ImproperlyConfigured("EMBEDDING_BACKEND=openai needs OPENAI_API_KEY")
        self.model = model or settings.OPENAI_EMBEDDING_MODEL
        self.dimensions = settings.EMBEDDING_DIMENSIONS
        self.name = f"openai:{self.model}@{self.dimensions}"
        self._client = openai.OpenAI(
            api_key=api_key,
            base_url=base_url or settings.OPENAI_BASE_URL,
            timeout=timeout if timeout is not None else settings.OPENAI_TIMEOUT,
            max_retries=max_retries if max_retries is not None else settings.OPENAI_MAX_RETRIES,
        )
        self._encoding = _tiktoken_encoding()

    def count_tokens(self, text: str) -> int:
        if self._encoding is None:
            return len(text) // 3 + 1  # English averages ~4 characters a token: err long
        return len(self._encoding.encode(text, disallowed_special=()))

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        check_texts(texts)
        if not texts:
            return empty_matrix(self.dimensions)
        parts = [
            self._request(texts[i : i + TEXTS_PER_REQUEST])
            for i in range(0, len(texts), TEXTS_PER_REQUEST)
        ]
        return np.concatenate(parts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]

    def _request(self, texts: list[str]) -> np.ndarray:
        import openai

        try:
            response = self._client.embeddings.create(
                model=self.model, input=texts, dimensions=self.dimensions
            )
        except openai.OpenAIError as exc:
            raise EmbeddingError(f"OpenAI embeddings failed ({self.model}): {exc}") from exc
        data = sorted(response.data, key=lambda d: d.index)
        if [d.index for d in data] != list(range(len(texts))):
            raise EmbeddingError(f"OpenAI returned {len(data)} embeddings for {len(texts)} texts")
        vectors = np.asarray([d.embedding for d in data], dtype=np.float32)
        if vectors.shape != (len(texts), self.dimensions):
            raise EmbeddingError(
                f"OpenAI returned vectors of shape {vectors.shape[1:]}, expected "
                f"({self.dimensions},); does {self.model} support `dimensions`?"
            )
        return l2_normalise(vectors)
