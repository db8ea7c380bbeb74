"""How close in meaning sentences are to a question, by the catalogue's own embedder.

The default embedder (MiniLM on the CPU) makes about 70-100 sentence vectors a second here, so
an answer cannot embed every sentence of eight abstracts (~70) inside its budget: the composer
embeds a shortlist (chat.llm.shapes.SHORTLIST), and vectors are kept in a small in-process cache
because the same papers come back in follow-ups and related questions. Numbers: docs/BENCHMARKS.md
(`python -m bench.llm_extractive --shapes`).

Returns None when the embedder cannot run (not installed, misconfigured): callers then rank by
words alone, as the composer did before.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict

import numpy as np

from papers.embeddings import EmbeddingError, get_embedder

logger = logging.getLogger(__name__)

CACHE_SIZE = 20_000  # sentence vectors (384 floats each: ~30 MB at most)

_cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_lock = threading.Lock()


def _embedder():
    return get_embedder()


def vectors(embedder, texts: list[str]) -> np.ndarray:
    """Vectors of `texts`, embedding only those not cached, in one call: every embedder embeds a
    query exactly as a document (papers.embeddings), so the anchor joins the sentences' batch and
    the model runs once per answer rather than twice. Also the support check's vectors
    (chat.pipeline.support), which embeds the sentences of the sources an answer cites."""
    keys = [(embedder.name, t) for t in texts]
    with _lock:
        found = {k: _cache[k] for k in keys if k in _cache}
        for k in found:
            _cache.move_to_end(k)
    missing = list(dict.fromkeys(k for k in keys if k not in found))
    if missing:
        made = embedder.embed_documents([k[1] for k in missing])
        with _lock:
            for k, vector in zip(missing, made, strict=True):
                _cache[k] = found[k] = np.asarray(vector, dtype=np.float32)
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    return np.stack([found[k] for k in keys])


def similarities(anchor: str, texts: list[str]) -> list[float] | None:
    """Cosine similarity of each text to `anchor` (a question, or a seed paper's text)."""
    if not texts or not anchor.strip():
        return [0.0] * len(texts) if texts else []
    try:
        found = vectors(_embedder(), [anchor, *texts])
    except (EmbeddingError, OSError, RuntimeError, ValueError) as exc:
        # The embedder cannot run (not installed, misconfigured, out of memory): words alone.
        logger.warning("sentence_similarity_unavailable error=%s", exc)
        return None
    return [float(v) for v in found[1:] @ found[0]]
