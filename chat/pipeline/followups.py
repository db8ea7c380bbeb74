"""Follow-up questions suggested under an answer, made by rule from what was understood and found.

No model is needed. Each suggestion is a whole sentence of its own built from the parts of the
question's analysis (chat.understanding): its topic words, its author, its date window, the two
sides of a comparison, and the papers cited (by arXiv id and first author). Neither the question
nor a paper title is ever pasted into a template: a question is not a noun phrase ("papers on
papers by X"), and a cut title reads as a fragment. A part that is missing drops the suggestions
that need it, so an author-only, a topic-only or a window-only question still gets sentences that
read well and that the catalogue can answer (each one parses back into a topic, an author, a year
or an arXiv id).
"""

import re
from collections.abc import Sequence
from datetime import date

from chat.understanding.intent import COMPARE, classify

MAX_SUGGESTIONS = 3
# A topic longer than this is a sentence the rules could not reduce, not a subject to name.
_TOPIC_WORDS = 8

# Question scaffolding around a topic ("What is new on X", "Tell me about X", "papers on X"):
# the suggestions put the bare topic into sentences of their own.
_SCAFFOLD = re.compile(
    r"^(?:(?:what|which)(?:'s|\s+is|\s+are|\s+were|\s+was|\s+has\s+been)?\s+"
    r"(?:(?:new|known|happening|published|written|(?:the\s+)?(?:state\s+of\s+the\s+art|latest|recent"
    r"|newest|main|key|best|important))\s+)?"
    r"(?:(?:the\s+)?(?:papers|work|research|results|advances|methods|ideas|preprints)\s+)?"
    r"(?:on|about|in|for|with|regarding)\s+"
    r"|(?:tell\s+me|show\s+me|give\s+me|find(?:\s+me)?|list|search(?:\s+for)?|summari[sz]e)\s+"
    r"(?:(?:some|the|all)\s+)?(?:(?:papers|work|research|preprints)\s+)?(?:on|about)?\s*"
    r"|(?:(?:the|some|any)\s+)?(?:papers|work|research|articles|preprints)\s+(?:on|about|in)\s+)",
    re.IGNORECASE,
)
# What is left is a question, not a subject: "How does X work", "Why do Y fail".
_STILL_A_QUESTION = re.compile(
    r"^(?:how|why|what|which|when|where|who|whom|whose|is|are|was|were|do|does|did|can|could"
    r"|should|would|will|has|have|had|compare|explain|describe)\b",
    re.IGNORECASE,
)
# Words that mean "papers" alone: a topic made only of them is no topic ("papers", "new work").
_GENERIC = {
    "paper", "papers", "work", "works", "research", "article", "articles", "preprint",
    "preprints", "publication", "publications", "result", "results", "the", "a", "an", "some",
    "any", "all", "new", "recent", "latest", "arxiv",
}


def _bare_topic(analysis: dict) -> str:
    """The analysis's topic as a noun phrase ('diffusion models'), or '' when it is none."""
    text = " ".join(str(analysis.get("query") or "").split()).strip(" ?.!,;:")
    for _ in range(2):  # "Tell me about papers on X": two layers of scaffold
        text = _SCAFFOLD.sub("", text, count=1).strip(" ?.!,;:")
    words = text.split()
    if not words or len(words) > _TOPIC_WORDS or _STILL_A_QUESTION.match(text):
        return ""
    if all(word.lower().strip(".,") in _GENERIC for word in words):
        return ""
    return text


def _first_author(source: dict) -> str:
    return (source.get("authors") or "").split(",")[0].strip()


def _day(value) -> date | None:
    try:
        return date.fromisoformat(str(value)[:10]) if value else None
    except ValueError:
        return None


def _unique(items: list[str]) -> list[str]:
    seen, kept = set(), []
    for item in items:
        key = item.lower()
        if item and key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


def _about(topic: str) -> str:
    return f" on {topic}" if topic else ""


def suggest_followups(
    query: str, analysis: dict, sources: Sequence[dict], today: date | None = None
) -> list[str]:
    """Up to three questions to ask next; none when nothing was found."""
    if not sources:
        return []
    analysis = analysis or {}
    today = today or date.today()
    topic = _bare_topic(analysis)
    authors = [str(name) for name in analysis.get("authors") or [] if name]
    author = authors[0] if authors else ""
    start, end = _day(analysis.get("start")), _day(analysis.get("end"))
    intent = classify(str(analysis.get("original") or query or ""), analysis, today)

    suggestions: list[str] = []
    if intent.kind == COMPARE and intent.subjects:
        topic = ""  # "A vs B" is two topics, each asked about on its own
        suggestions += [f"What are the most recent papers on {side}?" for side in intent.subjects]
    # Another window: the years before the one asked about, or last year after "the latest".
    if start and start.year > 1991:
        suggestions.append(f"What was published{_about(topic)} before {start.year}?")
    elif end and end < today:
        suggestions.append(f"What has been published{_about(topic)} since {end.year}?")
    elif intent.latest and (topic or author):
        who = f"did {author} publish" if author else "was published"
        suggestions.append(f"What {who}{_about(topic)} in {today.year - 1}?")
    elif topic and not author:
        suggestions.append(f"What are the most recent papers on {topic}?")
    if author:
        if topic:
            suggestions.append(f"What else has {author} written?")
        else:
            suggestions.append(f"What has {author} published in the last year?")
    elif topic:
        suggestions.append(f"What open problems do papers on {topic} mention?")
    arxiv_id = sources[0].get("arxiv_id")
    if arxiv_id:
        suggestions.append(f"Which papers are similar to arXiv:{arxiv_id}?")
    cited_author = next(
        (name for name in map(_first_author, sources) if name and name != author), ""
    )
    if cited_author:
        suggestions.append(f"What else has {cited_author} written{_about(topic)}?")
    return _unique(suggestions)[:MAX_SUGGESTIONS]
