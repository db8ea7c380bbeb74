"""Cut a paper's full text into chunks for the embedder: about 200-350 of its tokens (never past
its window), overlapping by a sentence or two, each inside one section and knowing its pages.

The packing is the abstracts' (papers/indexing/passages.split_passages: sentences packed greedily
into windows, spans of the original text); here it runs section by section, so a chunk never
straddles two headings, and a section too short to stand alone (a heading followed at once by
its first subsection) is joined to the next. A table (papers.fulltext.tables: its rows, caption
and header) is never cut when it fits one chunk, and a larger one only between its rows.
"""

from bisect import bisect_right
from dataclasses import dataclass

from django.conf import settings

from papers.embeddings import Embedder
from papers.fulltext.parse import ParsedPdf
from papers.fulltext.tables import find_tables
from papers.indexing.passages import split_passages

# Bump when a change here, in papers.fulltext.tables or in the heading rules
# (papers.fulltext.parse.heading_title) cuts different chunks from the same text: papers read
# before are then re-cut from their stored text (papers.fulltext.rechunk), no PDF fetched.
# 1: tables kept whole with caption and header, "Appendix B Search" headings.
# 2: a row printed over several lines while a parenthesis is open is one row (the Transformer's
#    and RWKV's tables of orders of growth: "Self-Attention O(n" / "2" / "· d) O(1) O(1)").
CHUNKER_VERSION = 2

# A chunk repeats this share of the window from the end of the previous one.
OVERLAP_FRACTION = 0.15
# A section region shorter than this (in tokens) is merged into the next one.
MIN_SECTION_TOKENS = 40


@dataclass(frozen=True, slots=True)
class Chunk:
    position: int
    start: int
    end: int
    page: int  # 1-based
    page_end: int
    section: str

    def text(self, document: str) -> str:
        return document[self.start : self.end]


def chunk_tokens(embedder: Embedder) -> int:
    """The chunk size: FULLTEXT_CHUNK_TOKENS, capped by the embedder's window (MiniLM: 256)."""
    return min(settings.FULLTEXT_CHUNK_TOKENS, embedder.max_tokens)


def chunker_signature(embedder: Embedder) -> str:
    """What cut a paper's chunks (FullText.chunker): the chunker's version and the chunk size,
    "1/256". A paper whose chunks carry another signature is re-cut."""
    return f"{CHUNKER_VERSION}/{chunk_tokens(embedder)}"


def _regions(parsed: ParsedPdf) -> list[tuple[int, int, str]]:
    """(start, end, section title) of each section, the text before the first heading included."""
    bounds = [(s["start"], s["title"]) for s in parsed.sections]
    if not bounds or bounds[0][0] > 0:
        bounds.insert(0, (0, ""))
    regions = []
    for i, (start, title) in enumerate(bounds):
        end = bounds[i + 1][0] if i + 1 < len(bounds) else len(parsed.text)
        if end > start:
            regions.append((start, end, title))
    return regions


def chunk_text(parsed: ParsedPdf, embedder: Embedder) -> list[Chunk]:
    max_tokens = chunk_tokens(embedder)
    overlap = int(max_tokens * OVERLAP_FRACTION)
    text = parsed.text
    chunks: list[Chunk] = []
    pending_start = None  # a short region waiting to be joined to the next
    regions = _regions(parsed)
    # A table stays in one chunk with its caption and header, so its numbers keep their meaning.
    tables = [(t.start, t.end) for t in find_tables(text)]
    for i, (start, end, title) in enumerate(regions):
        if pending_start is not None:
            start, pending_start = pending_start, None
        last = i == len(regions) - 1
        if not last and embedder.count_tokens(text[start:end]) < MIN_SECTION_TOKENS:
            pending_start = start
            continue
        whole = [(a - start, b - start) for a, b in tables if start <= a and b <= end]
        for span in split_passages(
            text[start:end], embedder.count_tokens, max_tokens, overlap, keep_whole=whole
        ):
            a, b = start + span.start, start + span.end
            chunks.append(
                Chunk(
                    position=len(chunks),
                    start=a,
                    end=b,
                    page=_page(parsed.page_starts, a),
                    page_end=_page(parsed.page_starts, b - 1),
                    section=title[:200],
                )
            )
    return chunks


def _page(page_starts: list[int], offset: int) -> int:
    return max(1, bisect_right(page_starts, offset))
