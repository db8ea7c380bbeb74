"""What every embedding backend provides, and the checks they share."""

from typing import Protocol, runtime_checkable

import numpy as np


class EmbeddingError(RuntimeError):
    """A backend could not produce vectors (model missing, API failure, wrong shape)."""


@runtime_checkable
class Embedder(Protocol):
    #: Stored in Passage.model; vectors of two names are never compared.
    name: str
    #: Always settings.EMBEDDING_DIMENSIONS, so one HNSW index serves every backend.
    dimensions: int
    #: The model's window in its own tokens, special tokens included.
    max_tokens: int

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dimensions) float32, each row L2-normalised."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """(dimensions,) float32, L2-normalised."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens the model would see for `text` without truncation, special tokens included."""
        ...


def check_texts(texts: list[str]) -> None:
    """Reject what no backend can embed meaningfully, with the offending position."""
    if isinstance(texts, str):
        raise TypeError("embed_documents takes a list of strings, not one string")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"text #{i} is {type(text).__name__}, not str")
        if not text.strip():
            raise ValueError(f"text #{i} is empty: there is nothing to embed")


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length, as float32 (a zero row stays zero instead of becoming NaN)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


def empty_matrix(dimensions: int) -> np.ndarray:
    return np.zeros((0, dimensions), dtype=np.float32)
