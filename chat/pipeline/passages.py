"""What a model reads of each source: its best-matching sentences, not the whole abstract.

Eight abstracts make a 3,200-token prompt, which the local model needs 70 s to read; most of
it is background the question does not ask about. For a model backend the pipeline keeps, per
source, the PROMPT_SENTENCES sentences that match the question best, in their original order,
with "…" where sentences were skipped. The title always stays (prompts.SOURCE_ENTRY). The
extractive backend and the fallback still get the whole passage: they choose their own.

"Best" is lexical overlap with the question (stemmed content words, as BM25 sees them), earlier
sentences first on ties. `meaning=True` adds the embedder's cosine (the support scorer of
chat.pipeline.support), but embedding ~70 sentences takes ~2 s on two busy cores, paid before
the first token, so it is off in the pipeline. Measured: `manage.py bench_prompt_context
[--meaning]` (docs/BENCHMARKS.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from chat.llm.base import SourceText
from chat.llm.sentences import split_sentences
from chat.pipeline.support import lexical_overlap, sentence_similarity

PROMPT_SENTENCES = 3  # per source


def select_passages(
    question: str,
    sources: Sequence[SourceText],
    per_source: int = PROMPT_SENTENCES,
    *,
    meaning: bool = False,
    embedder=None,
) -> list[SourceText]:
    """`sources` with each text cut to its `per_source` sentences closest to `question`.
    With `meaning`, CPU-bound (the embedder): run it off the event loop."""
    split = [split_sentences(source.text) for source in sources]
    flat = [sentence for sentences in split for sentence in sentences]
    cosine = sentence_similarity([question], flat, embedder)[0] if meaning and flat else None
    selected, at = [], 0
    for source, sentences in zip(sources, split, strict=True):
        scores = [
            lexical_overlap(question, sentence)
            if cosine is None
            else (lexical_overlap(question, sentence) + float(cosine[at + i])) / 2
            for i, sentence in enumerate(sentences)
        ]
        at += len(sentences)
        if len(sentences) <= per_source:
            selected.append(source)
            continue
        keep = sorted(sorted(range(len(sentences)), key=lambda i: -scores[i])[:per_source])
        parts, previous = [], -1
        for i in keep:
            if i != previous + 1:
                parts.append("…")
            parts.append(sentences[i])
            previous = i
        if previous != len(sentences) - 1:
            parts.append("…")
        selected.append(
            SourceText(
                source.number, source.title, source.authors, source.published, " ".join(parts),
                arxiv_id=source.arxiv_id, where=source.where, section=source.section,
            )
        )
    return selected
