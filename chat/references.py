"""One numbered reference list per thread: a paper keeps the number it first got in the thread.

Each answer's sources are numbered 1..k for its own prompt (the model cites [1]..[k], and
chat.pipeline.citations checks them against that). What a reader sees is the thread's list: the
first answer's papers are [1]..[k]; a later answer's new papers continue the count, and a paper
shown earlier keeps its number ("[2]" in the third answer is the same paper as in the first).

The label of each card is given as its sources arrive (chat.runner, from the labels of the
thread's earlier answers that chat.turns read) and saved on the card; pages and exports
recompute the same labels with `thread_labels`, so live, reloaded and exported numbers agree.
"""

import re
from collections.abc import Iterable

_CITATION = re.compile(r"\[(\d{1,3})\](?!\()")


def paper_key(card: dict) -> str:
    """What makes two cards one reference: the paper (any version)."""
    return str(card.get("arxiv_id") or card.get("paper_id") or card.get("title", ""))


def label_cards(cards: list[dict], labels: dict[str, int]) -> list[dict]:
    """`cards` with their thread-wide `label`; `labels` (paper key -> label, the thread's so
    far) gains this answer's new papers."""
    labelled = []
    for card in cards:
        key = paper_key(card)
        if key not in labels:
            labels[key] = max(labels.values(), default=0) + 1
        labelled.append({**card, "label": labels[key]})
    return labelled


def labels_of(answers_sources: Iterable[list[dict]]) -> dict[str, int]:
    """The thread's labels after these answers' sources (in the thread's order)."""
    labels: dict[str, int] = {}
    for cards in answers_sources:
        label_cards(cards or [], labels)
    return labels


def thread_labels(answers_sources: Iterable[list[dict]]) -> list[list[dict]]:
    """Each answer's cards, labelled thread-wide (the answers in the thread's order)."""
    labels: dict[str, int] = {}
    return [label_cards(cards or [], labels) for cards in answers_sources]


def cite_labels(cards: list[dict]) -> dict[int, str]:
    """What a page shows for each of an answer's citations: the thread's label, and for a
    full-text card its pages ("1, p. 8"): a paper's cards share one label, and the reader asks
    which page says that. static/js/chat.js labels a streaming answer the same way."""
    return {
        int(c["number"]): f"{c.get('label') or c['number']}, {c['pages']}"
        if c.get("pages") else str(c.get("label") or c["number"])
        for c in cards
    }


def relabel(text: str, labels: dict[int, str]) -> str:
    """An answer's text with its [n] citations written as its page shows them (`cite_labels`)."""
    return _CITATION.sub(
        lambda m: f"[{labels.get(int(m.group(1)), m.group(1))}]", text or ""
    )
