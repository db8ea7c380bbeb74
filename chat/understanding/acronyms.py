"""The acronyms a question writes ("RAG", "ViT", "LLMs"), and the question written with their
long forms beside them (pure; what the catalogue says they stand for is
chat.retrieval.acronyms's to find)."""

from __future__ import annotations

import re

from papers.indexing.names import acronym_singular

MAX_ACRONYMS = 2  # of one question
# An acronym as a question writes it: two capitals at least, letters and digits ("RAG", "ViT",
# "DPR", "RLHF", "LLMs"), not a model size ("175B") nor a plain capitalised word.
_ACRONYM = re.compile(
    r"(?<![\w-])(?=[A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*[A-Z])[A-Za-z][A-Za-z0-9-]{1,11}(?![\w-])"
)
# Hardware, units and scores: what is counted or measured, never a question's topic ("How many
# GPUs …" is not about graphics processing units).
_MEASURES = frozenset(
    "gpu tpu cpu flop flops ram gb tb mb kb ms fps bleu rouge f1 auc mse rmse map mrr ndcg em "
    "url pdf api id".split()
)


def acronyms_in(text: str) -> list[str]:
    """The acronyms `text` writes, at most MAX_ACRONYMS (pure)."""
    found: list[str] = []
    for m in _ACRONYM.finditer(text):
        word = m[0]
        if acronym_singular(word).lower() in _MEASURES or word in found:
            continue
        found.append(word)
    return found[:MAX_ACRONYMS]


def expand(text: str, forms: dict[str, str]) -> str:
    """`text` with each acronym of `forms` written with its long form before it: "RAG papers" ->
    "retrieval-augmented generation (RAG) papers" (pure)."""
    for acronym, long in forms.items():
        text = re.sub(
            rf"(?<![\w-]){re.escape(acronym)}(?![\w-])",
            lambda m, long=long: f"{long} ({m[0]})",
            text,
            count=1,
        )
    return text
