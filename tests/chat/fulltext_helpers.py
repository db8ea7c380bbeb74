"""Full text for chat tests: a paper's pages stored and chunked as papers/fulltext stores them
(FullText with page offsets; Passage rows of kind 'fulltext' with page, section and span),
embedded with the configured embedder. Chunks here are paragraphs; the real chunker's are longer."""

from django.utils import timezone

from papers.embeddings import get_embedder
from papers.fulltext.read import index_words
from papers.models import FullText, Passage


def add_fulltext(paper, pages: list[list[str]], section: str = "") -> FullText:
    """Store `pages` (each a list of paragraphs) as `paper`'s read full text, one chunk per
    paragraph."""
    text, page_starts, spans = "", [], []
    for number, paragraphs in enumerate(pages, start=1):
        page_starts.append(len(text))
        for paragraph in paragraphs:
            spans.append((len(text), len(text) + len(paragraph), number))
            text += paragraph + "\n\n"
    fulltext, _ = FullText.objects.update_or_create(
        paper=paper,
        defaults=dict(
            version=paper.version, status=FullText.Status.OK, text=text, page_starts=page_starts,
            pages=len(pages), fetched_at=timezone.now(), parser="test",
        ),
    )
    embedder = get_embedder()
    vectors = embedder.embed_documents([text[start:end] for start, end, _ in spans])
    Passage.objects.filter(paper=paper, kind=Passage.Kind.FULLTEXT).delete()
    Passage.objects.bulk_create(
        Passage(
            paper=paper, model=embedder.name, kind=Passage.Kind.FULLTEXT, position=position,
            start=start, end=end, page=page, page_end=page, section=section,
            published=paper.published, embedding=vector,
        )
        for position, ((start, end, page), vector) in enumerate(zip(spans, vectors, strict=True))
    )
    index_words(paper, text)
    return fulltext
