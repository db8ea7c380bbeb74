"""Query vectors kept for the next time the same text is asked: `query_vector(embedder, text)`.

Embedding a query is the largest single CPU cost of a search that the database does not pay
(MiniLM: about 5 ms of CPU; docs/BENCHMARKS.md "CPU per search"), and the same texts come back
often: a chat's follow-ups re-ask its topic, the search page re-runs a query with another date
chip, and the query analysis strips date phrases, so "X since 2020" and "X in 2016" both embed
"X". A query vector depends only on the model and the text, never on the catalogue, so
re-embedding papers cannot make one stale; the key holds the embedder's name (what
Passage.model stores) and its dimensions, so two models never share an entry.

Least recently used first out, `settings.QUERY_VECTOR_CACHE` entries per process (1.5 KB each
at 384 dimensions); 0 turns it off. The vectors handed out are read-only: a caller that
modified one would otherwise change what every later search gets.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np
from django.conf import settings

from .base import Embedder

_entries: OrderedDict[tuple[str, int, str], np.ndarray] = OrderedDict()
_lock = threading.Lock()


def query_vector(embedder: Embedder, text: str) -> np.ndarray:
    """`embedder.embed_query(text)`, from the cache when this model embedded this text lately."""
    size = settings.QUERY_VECTOR_CACHE
    if size <= 0:
        return embedder.embed_query(text)
    key = (embedder.name, embedder.dimensions, text)
    with _lock:
        vector = _entries.get(key)
        if vector is not None:
            _entries.move_to_end(key)
            return vector
    # Embedded outside the lock: two threads asking for one new text both embed it (same result).
    vector = np.array(embedder.embed_query(text), dtype=np.float32)
    vector.setflags(write=False)
    with _lock:
        _entries[key] = vector
        _entries.move_to_end(key)
        while len(_entries) > size:
            _entries.popitem(last=False)
    return vector


def remember(embedder: Embedder, text: str, vector) -> None:
    """Hand out `vector` for `text` from now on, as if `embedder` had embedded it (benchmarks:
    query vectors drawn from the same distribution as synthetic passage vectors)."""
    vector = np.array(vector, dtype=np.float32)
    vector.setflags(write=False)
    with _lock:
        _entries[(embedder.name, embedder.dimensions, text)] = vector
        _entries.move_to_end((embedder.name, embedder.dimensions, text))
        while len(_entries) > max(settings.QUERY_VECTOR_CACHE, 0):
            _entries.popitem(last=False)


def clear() -> None:
    """Forget every cached vector (tests; a model replaced under the same name)."""
    with _lock:
        _entries.clear()
