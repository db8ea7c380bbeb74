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

# Question understanding (chat.retrieval.llm_analysis), when the rules are unsure.
ANALYSIS_SYSTEM = """\
You read a researcher's search over arXiv papers and return the filters it asks for.
Today is {today} (UTC).

Reply with exactly one JSON object, no prose, no code fence:
{{"is_temporal": true|false,
  "start": "YYYY-MM-DD" or null,
  "end": "YYYY-MM-DD" or null,
  "recency_weight": a number from 0 to 1,
  "query": "the topic, with dates, authors and categories removed",
  "authors": ["surname or full name", ...],
  "categories": ["arXiv category such as cs.CL", ...]}}

Rules:
- start and end are inclusive days; null means no bound on that side. A year is
  YYYY-01-01 to YYYY-12-31.
- "last year" alone means the previous calendar year; "the past year", "in the last year" mean
  the 12 months up to today. "since X" runs to today.
- An event as a bound ("since ChatGPT") is the event's date as you know it.
- recency_weight: 0.8 when the question wants the newest work ("latest", "state of the art"),
  0.6 for "recent", 0.3-0.4 for a window reaching today, otherwise 0.
- Leave "start" and "end" null and recency_weight 0 when the question names no time.
- Only list authors and categories the question names.

A rule-based parser read it as: {rules}"""

# Multi-query (chat.retrieval.multiquery): the topic rewritten a few ways for retrieval.
MULTI_QUERY_SYSTEM = (
    "You rewrite a literature search query to find more relevant research papers: use "
    "synonyms, the field's technical terms and expanded acronyms. Keep the same topic; add no "
    "dates, authors or other constraints. Reply with only a JSON array of strings."
)
MULTI_QUERY_USER = "Query: {query}\n\nGive {n} different rewrites as a JSON array of strings."

# The LLM reranker (chat.retrieval.rerank): the head of the fused list, in relevance order.
RERANK_SYSTEM = (
    "You rank research papers by how well they answer a search query. Reply with only a JSON "
    "array of the paper numbers, most relevant first, e.g. [3, 1, 2]."
)
RERANK_USER = "Query: {query}\n\nPapers:\n{papers}\n\nJSON array of paper numbers, best first:"
# One paper in RERANK_USER: its title and the start of its abstract.
RERANK_PAPER = "[{number}] {title}: {abstract}"
RERANK_ABSTRACT_CHARS = 400


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


def multi_query_messages(query: str, n: int) -> list[dict]:
    return [
        {"role": "system", "content": MULTI_QUERY_SYSTEM},
        {"role": "user", "content": MULTI_QUERY_USER.format(query=query, n=n)},
    ]


def rerank_messages(query: str, hits: Sequence) -> list[dict]:
    """Chat messages asking for the order of `hits` (they have title and abstract)."""
    papers = "\n".join(
        RERANK_PAPER.format(
            number=n, title=" ".join(hit.title.split()),
            abstract=" ".join(hit.abstract.split())[:RERANK_ABSTRACT_CHARS],
        )
        for n, hit in enumerate(hits, start=1)
    )
    return [
        {"role": "system", "content": RERANK_SYSTEM},
        {"role": "user", "content": RERANK_USER.format(query=query, papers=papers)},
    ]


# Triage (chat.understanding.triage): only for short messages the rules are unsure of, and only
# with an OpenAI-compatible model.
TRIAGE_SYSTEM = """\
You sort messages sent to Flatuniverse, an assistant that answers research questions from a \
catalogue of arXiv papers. Reply with exactly one word:
smalltalk: a greeting, thanks, goodbye or chit-chat;
meta: a question about the assistant itself or what it can do;
research: anything that could be a research topic or question, however short (e.g. "GANs", \
"hi-c chromatin").\
"""


def triage_messages(question: str) -> list[dict]:
    return [
        {"role": "system", "content": TRIAGE_SYSTEM},
        {"role": "user", "content": question[:500]},
    ]
