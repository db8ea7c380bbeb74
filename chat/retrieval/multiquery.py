"""Optional query reformulation (multi-query): an LLM rewrites the topic a few ways, each
rewrite is retrieved like the query itself (dense + BM25, same filters), and every list is fused
with the originals by the same fusion.

Off by default (settings.SEARCH_MULTI_QUERY) and only with a model that can `complete`: an LLM
round trip costs 0.7-6 s, far more than the whole offline search. A reply that is not a JSON
list of short strings, a timeout or an error gives no rewrites, never a failed search.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re

from chat.pipeline import prompts

log = logging.getLogger("chat.retrieval")

REWRITES = 2
TIMEOUT_S = 10.0
MAX_CHARS = 200

_ARRAY = re.compile(r"\[.*\]", re.DOTALL)


def parse_rewrites(reply: str, query: str, n: int = REWRITES) -> list[str]:
    """Up to n usable rewrites from a reply; [] when it holds none."""
    match = _ARRAY.search(reply or "")
    if not match:
        return []
    try:
        values = json.loads(match.group(0))
    except ValueError:
        return []
    if not isinstance(values, list):
        return []
    seen = {" ".join(query.lower().split())}
    rewrites = []
    for value in values:
        if not isinstance(value, str):
            continue
        text = " ".join(value.split())
        if not text or len(text) > MAX_CHARS or text.lower() in seen:
            continue
        seen.add(text.lower())
        rewrites.append(text)
    return rewrites[:n]


async def rewrite(query: str, llm, n: int = REWRITES, timeout: float = TIMEOUT_S) -> list[str]:
    """The LLM's rewrites of `query` ([] on any failure)."""
    messages = prompts.multi_query_messages(query, n)
    try:
        reply = await asyncio.wait_for(llm.complete(messages, max_tokens=200), timeout)
    except Exception as exc:  # the model's failure must not fail the search
        log.warning("multiquery llm failed error=%s", type(exc).__name__)
        return []
    return parse_rewrites(reply, query, n)
