"""Every prompt Flatuniverse sends to a language model, in one place.

Prompts are module constants; the functions below only fill them in (the current date and the
numbered sources are injected, never concatenated ad hoc elsewhere).
"""

from collections.abc import Sequence
from datetime import date

ANSWER_SYSTEM = """\
You are Flatuniverse, a research assistant that answers questions about arXiv papers.
Today's date is {today}.

Rules:
- Answer ONLY from the numbered sources given in the user's message. Do not use outside knowledge.
- Cite every claim with the number of the source it comes from, in square brackets, like [1] or [2][3].
  Only cite numbers that appear in the list of sources.
- If the sources are not enough to answer, say so plainly and say what is missing.
- When the question asks about recent work, prefer the most recent sources and give their dates.
- Be concise: a short paragraph or a few bullet points. Use Markdown; no HTML.
"""

ANSWER_USER = """\
Sources:

{sources}

Question: {question}
"""

# One source in ANSWER_USER. The passage is the part of the paper that retrieval matched.
SOURCE_ENTRY = """\
[{number}] {title}
Authors: {authors}
Published: {published}
{text}"""

NO_SOURCES = "(No sources were found for this question.)"

REWRITE_SYSTEM = """\
You rewrite a follow-up question from a conversation about research papers into one standalone
search question. Keep every time expression (years, "recent", "last 2 years") and every named
topic, method, author or category. If the question already stands alone, return it unchanged.
Reply with the rewritten question only, on one line, without quotes or explanations.
"""

REWRITE_USER = """\
Conversation so far:
{history}

Follow-up question: {question}

Standalone question:"""

# How much of each earlier turn the rewrite prompt sees: enough for the topic, not the whole text.
REWRITE_ANSWER_CHARS = 300


def format_source(number: int, title: str, authors: str, published: str, text: str) -> str:
    return SOURCE_ENTRY.format(
        number=number,
        title=" ".join(title.split()),
        authors=authors or "unknown",
        published=published or "unknown",
        text=text.strip(),
    )


def answer_messages(question: str, sources: Sequence, today: date) -> list[dict]:
    """Chat messages for an answer. `sources` have number, title, authors, published, text."""
    body = "\n\n".join(
        format_source(s.number, s.title, s.authors, str(s.published), s.text) for s in sources
    )
    return [
        {"role": "system", "content": ANSWER_SYSTEM.format(today=today.isoformat())},
        {"role": "user", "content": ANSWER_USER.format(sources=body or NO_SOURCES, question=question)},
    ]


def rewrite_messages(question: str, history: Sequence) -> list[dict]:
    """Chat messages asking for a standalone question. `history` items have question, answer."""
    lines = []
    for turn in history:
        lines.append(f"User: {turn.question}")
        answer = " ".join(turn.answer.split())
        if answer:
            lines.append(f"Assistant: {answer[:REWRITE_ANSWER_CHARS]}")
    return [
        {"role": "system", "content": REWRITE_SYSTEM},
        {"role": "user", "content": REWRITE_USER.format(history="\n".join(lines), question=question)},
    ]
