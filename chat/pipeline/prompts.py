"""Every prompt Flatuniverse sends to a language model, in one place.

Prompts are module constants; the functions below only fill them in (the current date and the
numbered sources are injected, never concatenated ad hoc elsewhere).
"""

from collections.abc import Sequence
from datetime import date

from chat.understanding import intent as intents

ANSWER_SYSTEM = """\
You are Flatuniverse, a research assistant that answers questions about arXiv papers.
Today's date is {today}.

Rules:
- Answer ONLY from the numbered sources given in the user's message. Do not use outside knowledge.
- Cite every claim with the number of the source it comes from, in square brackets, like [1] or [2][3].
  Only cite numbers that appear in the list of sources.
- If the sources are not enough to answer, say so plainly and say what is missing.
- When the question asks about recent work, prefer the most recent sources and give their dates.
- The sources carry no citation counts: never state how often a paper is cited or rank by it.
- Be concise: a short paragraph or a few bullet points. Use Markdown; no HTML.
- A source read from a paper's full text says its page ("Pages: p. 7"); when you use it, you may
  name the page after the citation, like [2, p. 7].
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
{where}{text}"""
# The line SOURCE_ENTRY adds for a full-text passage: where in the paper it was read.
SOURCE_WHERE = "Pages: {where} (full text)\n"

NO_SOURCES = "(No sources were found for this question.)"

# How to shape the answer for each intent (chat.understanding.intent), appended to ANSWER_SYSTEM.
# They ask a model for the shapes the offline composer (chat.llm.shapes) writes.
INTENT_INSTRUCTIONS = {
    "list": """The user wants a list of papers. Answer with a numbered list, one line per source paper, in the
order given (or newest first if they ask for the latest): the title in bold, its date, then one
sentence saying what the paper contributes (what it proposes, shows or introduces), cited [n].
The sources were selected by the user's filters (author, category, topic): never answer that they
do not mention the author's name or the category; list them.""",
    "seed": """The user wants papers similar to a seed paper, given below as "Seed paper" (do not cite it with a
number). Start by naming the seed paper (title and date), then list the sources, one line each:
title in bold, date, and one sentence on how it relates to the seed paper, cited [n].""",
    "named_paper": """The user asks about one paper, named in the question. Find it among the sources; report what it
contributes and what it finds (its main results), citing it [n]. If it is not among the sources,
say so.""",
    "overview": """Answer the question with what the papers did and found (their contributions and results), not
the background their abstracts open with. Group the points by paper or by approach, and cite
every point [n].""",
    "compare": """The user wants a comparison of: {subjects}. Give the evidence for each side under its own label,
each point cited [n], then what the sources say about the difference between them. If the
sources say nothing about one side, say so instead of filling the gap.""",
    "timeline": """The user wants to see how the topic evolved. Group the sources by period (year, or era when they
span many years), oldest first; for each period give its number of papers and its key papers
with one cited sentence each [n], so the evolution shows.""",
}
# Follow-ups on the previous answer's papers (chat.pipeline.previous), whatever the intent.
SELECTION_RULE = """The user asks which of the {referred} papers of your previous answer fit the question. The
sources are the {kept} whose own text says so: for each, one line with its title in bold, its date
and the sentence of its passage that says so, quoted and cited [n]; add nothing they do not say.
Then name the others, which do not say so: {left_out}.
"""
SIDE_BY_SIDE_RULE = """The user wants the sources side by side: for each paper in turn, what it proposes and what it
finds, cited [n]; then, only where the sources say it, how they differ.
"""
# Added for any intent when the question asks for the newest work.
LATEST_INSTRUCTION = """The user wants the latest work: give each paper's date, and if the newest source is more than a
month older than today, say how old it is ("The newest paper on this in the catalogue is from
May 2026.")."""

# The paper of "papers like <arXiv id>", shown before the numbered sources.
SEED_ENTRY = """Seed paper (arXiv {arxiv_id}, not a source; do not cite it):
{title}
Published: {published}
{text}"""

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


def format_source(number: int, title: str, authors: str, published: str, text: str,
                  where: str = "") -> str:
    return SOURCE_ENTRY.format(
        number=number,
        title=" ".join(title.split()),
        authors=authors or "unknown",
        published=published or "unknown",
        where=SOURCE_WHERE.format(where=where) if where else "",
        text=text.strip(),
    )


def intent_instructions(intent) -> str:
    """The shaping instructions for an intent (chat.understanding.intent.Intent), or ""."""
    if intent is None:
        return ""
    parts = []
    if intent.kind in INTENT_INSTRUCTIONS:
        subjects = " versus ".join(getattr(intent, "subjects", ()) or ()) or "the two sides"
        parts.append(INTENT_INSTRUCTIONS[intent.kind].format(subjects=subjects))
    if getattr(intent, "asks", ""):
        parts.append(RECORD_INSTRUCTIONS[intent.asks])
    if getattr(intent, "latest", False):
        parts.append(LATEST_INSTRUCTION)
    return "\n\n".join(parts)


# Questions about a paper's record (chat.understanding.intent: AUTHORS, DATE, ORIGIN): the
# answer is in each source's header, not in its text.
RECORD_INSTRUCTIONS = {
    intents.AUTHORS: "It asks who wrote the paper: open with its authors as the source lists "
    "them, citing it.",
    intents.DATE: "It asks when the paper appeared: open with the date the source gives, citing "
    "it.",
    intents.ORIGIN: "It asks which paper introduced a name: open with that paper's title, date "
    "and authors, citing it, then quote where it introduces the name.",
}


# The question names a paper by what it introduced (chat.retrieval.named).
NAMED_PAPER_RULE = (
    "\nThe question asks about {name}, the work of sources {numbers}: answer from those "
    "sources. If they do not state what is asked, say so; never give another paper's value "
    "as {name}'s.\n"
)


def answer_messages(
    question: str, sources: Sequence, today: date, *, intent=None, seed=None, named=(),
    previous: dict | None = None,
) -> list[dict]:
    """Chat messages for an answer. `sources` have number, title, authors, published, text;
    `intent` shapes the answer, `seed` is the paper of "papers like <id>" (same fields);
    `named`: (name, its paper's source numbers) for each paper the question names; `previous`:
    what a follow-up on the previous answer's papers kept (chat.pipeline.previous summary)."""
    body = "\n\n".join(
        format_source(s.number, s.title, s.authors, str(s.published), s.text, s.where)
        for s in sources
    )
    if seed is not None and getattr(intent, "kind", None) == "seed":
        seed_entry = SEED_ENTRY.format(
            arxiv_id=seed.arxiv_id, title=" ".join(seed.title.split()),
            published=seed.published or "unknown", text=seed.text.strip(),
        )
        body = f"{seed_entry}\n\n{body or NO_SOURCES}"
    system = ANSWER_SYSTEM.format(today=today.isoformat())
    shaping = intent_instructions(intent)
    if shaping:
        system = f"{system}\nHow to shape this answer:\n{shaping}\n"
    for name, numbers in named:
        system += NAMED_PAPER_RULE.format(
            name=name, numbers=", ".join(f"[{n}]" for n in numbers)
        )
    if previous and previous.get("filtered"):
        system += SELECTION_RULE.format(
            referred=previous.get("referred", 0), kept=previous.get("kept", 0),
            left_out="; ".join(previous.get("left_out") or []) or "none",
        )  # fmt: skip
    elif previous and previous.get("side_by_side"):
        system += SIDE_BY_SIDE_RULE
    return [
        {"role": "system", "content": system},
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
