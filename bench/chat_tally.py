"""What `bench_chat concurrent` streams and how it checks that every answer was kept.

The fake LLM's answer must read as an answer to the product: `chat.pipeline.citations.
only_citations` treats a text without a word of two letters as "citations only" and has the
composer write another answer instead (so "w0 w1 … [1]." was never saved, and every chat paid
for a second, extractive answer). The check then compares, chat by chat, what the client was
streamed, what `done` said, and what the row holds, instead of looking for the fake's ending
(answers the relevance gate or a direct count writes never reach the LLM).
"""

from collections import Counter
from dataclasses import dataclass, field

# Plain words, so the text passes every check a real answer passes; cycled to the length asked.
_WORDS = (
    "the method improves retrieval on long documents while keeping the model small and the "
    "results stable across several benchmarks of scientific text"
).split()


def fake_answer(words: int) -> str:
    """A deterministic answer of `words` words ending with a citation of the first source."""
    body = [_WORDS[i % len(_WORDS)] for i in range(max(words - 1, 1))]
    return " ".join(body) + " [1]."


@dataclass
class Tally:
    chats: int
    done: int = 0  # `done` events received
    saved: int = 0  # row complete, with exactly the content `done` carried
    # The tokens streamed add up to that content (citations are checked as the text streams:
    # chat.pipeline.citations.CitationStream); only a looping tail trimmed at the end
    # (chat.llm.repetition.trim_loop) is shown and then not saved.
    streamed: int = 0
    by: Counter = field(default_factory=Counter)  # who wrote the saved answer

    def line(self) -> str:
        who = ", ".join(f"{name} {n}" for name, n in self.by.most_common())
        return (
            f"done events: {self.done}/{self.chats}; saved complete as sent: "
            f"{self.saved}/{self.chats}; streamed text = saved text: {self.streamed}/{self.chats}"
            f" (answered by: {who or 'nobody'})"
        )


def tally(results: list[dict], rows: dict) -> Tally:
    """`results`: one dict per chat from the clients (thread, text streamed, done_content);
    `rows`: thread id -> its assistant Message."""
    counts = Tally(chats=len(results))
    for result in results:
        row = rows.get(result.get("thread"))
        if "done_content" in result:
            counts.done += 1
        if row is None:
            counts.by["no row"] += 1
            continue
        fallback = (row.timings or {}).get("fallback_code")
        counts.by[f"{row.backend or 'no LLM'}" + (f" after {fallback}" if fallback else "")] += 1
        if row.status == "complete" and row.content == result.get("done_content"):
            counts.saved += 1
            counts.streamed += result.get("text") == row.content
    return counts
