"""A tiny deterministic embedder for tests: hashed word unigrams and bigrams, no model at all.

Texts sharing words get similar vectors, so retrieval tests can reason about what should rank
first, and a few hundred texts embed in milliseconds. It is not a language model: its name says
so, and its vectors never mix with a real model's.
"""

import re
import zlib

import numpy as np
from django.conf import settings

from .base import check_texts, empty_matrix, l2_normalise

_WORD = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    name = "hashing-test"
    # The same window as MiniLM, counted in words, so passage splitting is exercised as in
    # production without loading the model.
    max_tokens = 256

    def __init__(self):
        self.dimensions = settings.EMBEDDING_DIMENSIONS

    def _words(self, text: str) -> list[str]:
        return _WORD.findall(text.lower())

    def count_tokens(self, text: str) -> int:
        return len(self._words(text)) + 2  # like [CLS] ... [SEP]

    def _vector(self, text: str) -> np.ndarray:
        words = self._words(text)[: self.max_tokens - 2]
        features = words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]
        vector = np.zeros(self.dimensions, dtype=np.float32)
        for feature in features:
            # crc32, not hash(): Python salts str hashes per process.
            h = zlib.crc32(feature.encode("utf-8"))
            sign = 1.0 if h & 0x80000000 else -1.0
            vector[h % self.dimensions] += sign
        if not vector.any():  # only punctuation: still a valid unit vector
            vector[0] = 1.0
        return vector

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        check_texts(texts)
        if not texts:
            return empty_matrix(self.dimensions)
        return l2_normalise(np.stack([self._vector(t) for t in texts]))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]
