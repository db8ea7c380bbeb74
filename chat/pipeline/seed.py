"""The paper a question names by its arXiv id ("papers like 2309.00267", "summarize 2309.00267").

Search leaves that paper out of its results (it finds papers *like* it), but the answer must name
it first, and a question about the paper itself must be able to quote and cite it. This looks it
up in the catalogue and shapes it like any source card (chat.pipeline.answer.source_card).
"""

from __future__ import annotations

from papers.indexing.passages import document_text
from papers.models import Paper
from papers.templatetags.authors import author_entries


async def seed_card(arxiv_id: str | None, number: int = 0) -> dict | None:
    """The card of a visible paper with this id, or None (not in the catalogue, or hidden)."""
    if not arxiv_id:
        return None
    paper = await Paper.objects.visible().filter(arxiv_id=arxiv_id).afirst()
    if paper is None:
        return None
    return {
        "number": number,
        "paper_id": paper.pk,
        "arxiv_id": paper.arxiv_id,
        "title": " ".join(paper.title.split()),
        "authors": paper.authors_text,
        "author_links": author_entries(paper.authors_text),
        "published": paper.published.date().isoformat(),
        "primary_category": paper.primary_category,
        "categories": list(paper.categories or []),
        "score": 1.0,
        "passage": document_text(paper.title, paper.abstract),
        "kind": "abstract",
        "url": f"https://arxiv.org/abs/{paper.arxiv_id}",
    }
