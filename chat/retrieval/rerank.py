"""The reranking stage, behind one interface: `await get_reranker().rerank(query, hits)`.

- "fusion" (default, offline): the fused order is final. No cross-encoder weights can be
  installed offline here (docs: /work/shared/DEPENDENCIES.md), so fusion is the offline reranker.
- "llm" (settings.RERANKER = "llm" and an LLM that can `complete`): the model orders the head of
  the list by relevance. Its reply must be a JSON list of the passage numbers; anything else
  (bad JSON, unknown numbers, an error, a timeout) keeps the fused order: a reranker can improve
  a ranking, never break a search.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Protocol

from django.conf import settings

from chat.llm import get_llm
from chat.pipeline import prompts

log = logging.getLogger("chat.retrieval")

# How many hits the LLM sees, and how long it may take.
LLM_RERANK_DEPTH = 20
LLM_RERANK_TIMEOUT_S = 20.0


class Reranker(Protocol):
    name: str

    async def rerank(self, query: str, hits: list) -> list:
        """The same hits, possibly reordered (never dropped or added)."""
        ...


class FusionReranker:
    name = "fusion"

    async def rerank(self, query: str, hits: list) -> list:
        return list(hits)


class LLMReranker:
    name = "llm"

    def __init__(self, llm, depth: int = LLM_RERANK_DEPTH, timeout: float = LLM_RERANK_TIMEOUT_S):
        self.llm = llm
        self.depth = depth
        self.timeout = timeout

    async def rerank(self, query: str, hits: list) -> list:
        head, tail = list(hits[: self.depth]), list(hits[self.depth :])
        if len(head) < 2:
            return list(hits)
        try:
            reply = await asyncio.wait_for(
                self.llm.complete(prompts.rerank_messages(query, head), max_tokens=200),
                self.timeout,
            )
        except Exception as exc:  # noqa: BLE001 - any failure keeps the fused order
            log.warning("rerank llm failed error=%s", type(exc).__name__)
            return list(hits)
        order = parse_order(reply, len(head))
        if order is None:
            log.warning("rerank llm unreadable reply=%r", reply[:200])
            return list(hits)
        return [head[i] for i in order] + tail


_ARRAY = re.compile(r"\[[^\[\]]*\]")


def parse_order(reply: str, count: int) -> list[int] | None:
    """0-based order from a reply like "[3, 1, 2]"; the numbers it leaves out keep their order
    after the ones it gives. None when the reply holds no usable list."""
    match = _ARRAY.search(reply or "")
    if not match:
        return None
    try:
        values = json.loads(match.group(0))
    except ValueError:
        return None
    order: list[int] = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int | str):
            return None
        try:
            number = int(value)
        except ValueError:
            return None
        if 1 <= number <= count and number - 1 not in order:
            order.append(number - 1)
    if not order:
        return None
    return order + [i for i in range(count) if i not in order]


def get_reranker() -> Reranker:
    """settings.RERANKER: "fusion" (default) or "llm" (falls back to fusion without an LLM)."""
    name = (settings.RERANKER or "fusion").strip().lower()
    if name == "fusion":
        return FusionReranker()
    if name == "llm":
        llm = get_llm()
        if getattr(llm, "follows_instructions", False):
            return LLMReranker(llm)
        return FusionReranker()
    raise ValueError(f"unknown RERANKER {settings.RERANKER!r}: choose fusion or llm")
