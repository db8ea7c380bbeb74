"""Searches shaped by what the question asks, on top of the one `search()` it already ran.

- "Latest papers on X": the newest of the relevant papers, and first those of the catalogue's last
  LATEST_DAYS. Recency weighting alone reorders the candidates relevance found, and the newest
  papers on X may not be among them (bench_answers: 74 -> 76 of 84 cases).
- "How did X develop over the years?": the relevant papers cluster where the catalogue holds
  most of X (diffusion models: 2022-24), so the papers on X from before the earliest year found
  are searched too ("Attention Is All You Need" for "evolution of transformer models from 2017
  to 2024", which began in 2020 without it).
- "A vs B": papers on each side, taken in turn, then the joint search's. One search for both
  finds mostly whichever side the catalogue holds more of ("LoRA compared with prompt tuning"
  found no prompt-tuning paper). A paper whose passage names both sides comes right after each
  side's best: it is where the two are set side by side.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from django.conf import settings

from chat.llm.shapes import names_topic, on_topic
from chat.retrieval.chunks import CHUNKS_PER_PAPER
from chat.retrieval.search import SearchError, search
from chat.understanding.intent import (
    COMPARE,
    LIST,
    TIMELINE,
    Intent,
    compare_context,
    timeline_topic,
)

LATEST_DAYS = 180
LATEST_SCORE_SHARE = 0.6  # of the recent window's best score, to count as on the topic
# Candidates read from the recent window, in CHAT_SOURCES: the newest papers on a topic are not
# the ones nearest its words (EGG, "an Expert-Guided Agent Framework" of LLMs, was 22nd of the
# last 180 days' papers for "large language model agents").
LATEST_POOL = 3


async def shape_hits(intent: Intent, understood, hits: list, now: datetime,
                     newest_day: date | None, paper_ids=None) -> list:
    """`hits` of the question's search, reshaped for its `intent`; `newest_day` is the
    catalogue's newest paper's date (None for an empty catalogue); `paper_ids` the scope every
    further search stays in (as the question's own search did)."""
    hits = _newest_of_pool(intent, hits, settings.CHAT_SOURCES)
    if intent.latest and not (understood.start or understood.end):
        hits = await _recent_first(understood, hits, now, newest_day, paper_ids)
    if intent.kind == TIMELINE and hits:
        hits = await _earlier_periods(understood, hits, now, paper_ids)
    if intent.kind == COMPARE and len(intent.subjects) >= 2:
        hits = await _both_sides(intent.subjects, understood, hits, now, paper_ids)
    return hits


def _newest_of_pool(intent: Intent, hits: list, default: int) -> list:
    """For "latest papers on X": the `default` newest of the (twice as many) most relevant hits,
    newest first; other intents keep the relevance order."""
    if intent.kind != LIST or not intent.latest or intent.by_filter:
        return hits
    return sorted(hits, key=lambda hit: hit.published, reverse=True)[:default]


async def _recent_first(understood, hits: list, now: datetime, newest_day: date | None,
                        paper_ids=None) -> list:
    """The relevant papers of the catalogue's last LATEST_DAYS, newest first, then `hits`."""
    if newest_day is None or understood.authors or understood.categories or understood.arxiv_id:
        return hits
    start = newest_day - timedelta(days=LATEST_DAYS)
    topic = understood.query or understood.original
    try:
        recent = await search(
            topic, k=LATEST_POOL * settings.CHAT_SOURCES, now=now,
            overrides={"start": start.isoformat()}, paper_ids=paper_ids,
            chunks_per_paper=CHUNKS_PER_PAPER,
        )
    except SearchError:
        return hits
    if recent.nothing_relevant or not recent.hits:
        return hits
    # What scores near the best of the recent window, or names every word that tells the topic
    # apart: a thin topic's tail, or a paper sharing one word of it, is padding.
    floor = LATEST_SCORE_SHARE * recent.hits[0].score
    fresh = sorted(
        (h for h in recent.hits if h.score >= floor or names_topic(h.title, h.abstract, topic)),
        key=lambda h: h.published, reverse=True,
    )  # fmt: skip
    seen = {h.paper_id for h in fresh}
    wanted = max(len(hits), min(len(fresh), settings.CHAT_SOURCES))
    return (fresh + [h for h in hits if h.paper_id not in seen])[:wanted]


async def _both_sides(subjects, understood, hits: list, now: datetime, paper_ids=None) -> list:
    """Each side's papers in turn (two or more sides: "OPT, RWKV and ViT"), then the joint
    search's, CHAT_SOURCES in all."""
    window = {"start": understood.start, "end": understood.end}
    per_side = max(2, settings.CHAT_SOURCES // len(subjects))
    # Each side in what the question compares them in: "diffusion models medical image
    # generation", not every paper on diffusion models (a survey's link to its repository and
    # GAN distillation for image editing answered "compare diffusion models and GANs for
    # medical image generation", beside a paper comparing the two for brain MR images).
    context = compare_context(understood.query or understood.original, tuple(subjects))
    sides = []
    for subject in subjects:
        try:
            found = await search(
                f"{subject} {context}".strip(), k=per_side, now=now, overrides=window,
                paper_ids=paper_ids, chunks_per_paper=CHUNKS_PER_PAPER,
            )  # fmt: skip
            if context and found.nothing_relevant:
                found = await search(
                    subject, k=per_side, now=now, overrides=window, paper_ids=paper_ids,
                    chunks_per_paper=CHUNKS_PER_PAPER,
                )
        except SearchError:
            return hits
        # A side the catalogue knows nothing about adds nothing (the gate's own test).
        sides.append([] if found.nothing_relevant else found.hits)
    merged, seen = [], set()
    alternating = [h for pair in zip(*sides, strict=False) for h in pair]
    # A passage naming both sides is where a paper sets them side by side ("BERT … uses a
    # denoising … task, while the GPT line of work uses language modeling" in ViT's): right
    # after each side's best paper, or the best papers' extra chunk cards (source_cards) push
    # it out of the answer's cards ("GPT vs BERT" lost the line "BERT vs GPT" had).
    beside = [h for h in hits + [h for side in sides for h in side] if _names_both(h, subjects)]
    for hit in alternating[: len(sides)] + beside[:BESIDE_PAPERS] + alternating + [
        h for side in sides for h in side
    ] + hits:
        if hit.paper_id not in seen:
            seen.add(hit.paper_id)
            merged.append(hit)
    return merged[: settings.CHAT_SOURCES]


# Papers whose passage names both sides of a comparison, kept among its first cards.
BESIDE_PAPERS = 2


def _names_both(hit, subjects) -> bool:
    """Whether one passage of `hit` (its best, or one of its next chunks) names both sides."""
    passages = [hit.passage_text or hit.abstract] + [c.text for c in hit.more_chunks]
    return any(all(names_topic("", text, side) for side in subjects) for text in passages)


EARLIER_SHARE = 4  # papers from before the earliest year found, in place of the weakest ones


async def _earlier_periods(understood, hits: list, now: datetime, paper_ids=None) -> list:
    """`hits` on the topic with the papers on it from before the earliest year among them
    (within the question's window), at most EARLIER_SHARE, in place of as many of the weakest
    hits (the search's tail, off the topic, goes first: an eigenvalue paper of 2007 is no
    period of diffusion models, nor where to look before)."""
    topic = timeline_topic(understood.query or understood.original)
    hits = [h for h in hits if on_topic(h.title, h.abstract, topic)] or hits
    earliest = min(h.published for h in hits)
    end = datetime(earliest.year, 1, 1, tzinfo=UTC) - timedelta(microseconds=1)
    if understood.start is not None and understood.start > end:
        return hits
    overrides = {"start": understood.start, "end": end}
    if understood.authors:
        overrides["authors"] = list(understood.authors)
    if understood.categories:
        overrides["categories"] = list(understood.categories)
    try:
        found = await search(
            topic or understood.query or understood.original, k=2 * EARLIER_SHARE, now=now,
            overrides=overrides, paper_ids=paper_ids, chunks_per_paper=CHUNKS_PER_PAPER,
        )
    except SearchError:
        return hits
    if found.nothing_relevant:
        return hits
    seen = {h.paper_id for h in hits}
    earlier = [
        h for h in found.hits
        if h.paper_id not in seen and names_topic(h.title, h.abstract, topic)
    ][:EARLIER_SHARE]  # fmt: skip
    if not earlier:
        return hits
    return hits[: max(len(hits) - len(earlier), 1)] + earlier
