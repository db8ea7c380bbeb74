"""Text embeddings for papers and queries, one interface over several backends.

    from papers.embeddings import get_embedder
    embedder = get_embedder()              # settings.EMBEDDING_BACKEND, loaded once per process
    embedder.embed_query("protein folding")            # (384,) float32, unit length
    embedder.embed_documents([text1, text2])           # (2, 384)
    embedder.name                          # what Passage.model stores

Backends: "minilm" (offline default), "openai" (when OPENAI_API_KEY is set), "hashing" (tests).
"""

import threading

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .base import Embedder, EmbeddingError
from .hashing import HashingEmbedder
from .minilm import MiniLMEmbedder
from .openai_api import OpenAIEmbedder

__all__ = ["BACKENDS", "Embedder", "EmbeddingError", "get_embedder"]

BACKENDS = ("minilm", "openai", "hashing")

_cache: dict[str, Embedder] = {}
_lock = threading.Lock()


def _create(backend: str) -> Embedder:
    # Each backend imports its heavy library (onnxruntime, openai) itself, on first use.
    if backend == "minilm":
        return MiniLMEmbedder()
    if backend == "openai":
        return OpenAIEmbedder()
    if backend == "hashing":
        return HashingEmbedder()
    raise ImproperlyConfigured(
        f"unknown embedding backend {backend!r}; choose one of {', '.join(BACKENDS)}"
    )


def get_embedder(backend: str | None = None) -> Embedder:
    """The embedder for `backend` (default: settings.EMBEDDING_BACKEND), created once per process.

    The model loads on first use and is shared by every thread afterwards.
    """
    backend = (backend or settings.EMBEDDING_BACKEND).strip().lower()
    embedder = _cache.get(backend)
    if embedder is None:
        with _lock:
            embedder = _cache.get(backend)
            if embedder is None:
                embedder = _cache[backend] = _create(backend)
    return embedder
