"""Are some visible papers still without vectors of a model? Asked by every search, answered
from the shared cache.

The exact question is an anti-join of every visible paper against the passages: when nothing
is pending (the usual state) PostgreSQL must read the whole papers table to prove it, which cost
about 140 ms of CPU per search at 57k papers (two parallel workers, docs/BENCHMARKS.md "CPU per
search"), more than all of the search itself, and grows with the catalogue. The answer only
decides a notice ("some papers are still being indexed..."), so it is kept in Django's cache
(shared by the web and job processes) for `PENDING_TTL` seconds, and forgotten at once by what
changes it in the normal course: new papers (papers.ingest.upsert), vectors written or replaced
(papers.indexing.vectors), papers hidden, shown or their vectors deleted in the admin. A change
made some other way shows within the TTL.
"""

from __future__ import annotations

from django.core.cache import cache

from papers.models import Paper

PENDING_TTL = 60  # seconds
_KEY = "papers:vectors-pending"  # {model name: bool}


def vectors_pending(model: str) -> bool:
    """Whether any visible paper is still without vectors of `model` (cached, see above)."""
    known = cache.get(_KEY) or {}
    if model in known:
        return known[model]
    pending = Paper.objects.visible().not_embedded_with(model).exists()
    cache.set(_KEY, {**known, model: pending}, PENDING_TTL)
    return pending


def forget_vectors_pending() -> None:
    """Papers or vectors changed: the next search asks the database again (call after commit)."""
    cache.delete(_KEY)
