"""An arXiv API query for a question the catalogue could not answer, built by rules from the
question's analysis (chat.understanding.analysis): what a live search sends
(papers.ingest.live_search checks and runs it).

    authors     -> au:"Geoffrey Hinton"            (each author, ANDed)
    categories  -> cat:cs.CL                        (several: ORed in parentheses)
    topic words -> (ti:word OR abs:word)            (each content word, ANDed; at most MAX_WORDS)
    the window  -> submittedDate:[YYYYMMDDhhmm TO YYYYMMDDhhmm]

Content words are the answer path's own (chat.llm.sentences.content_words): the same stopwords
decide what counts as a topic everywhere.
"""

from datetime import UTC, datetime

from chat.llm.sentences import content_words

# More ANDed words than this and arXiv finds nothing for a paraphrased question.
MAX_WORDS = 5


def _quoted(text: str) -> str:
    return '"' + " ".join(text.replace('"', " ").split()) + '"'


def _stamp(value, end: bool) -> str:
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    moment = moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment.strftime("%Y%m%d") + ("2359" if end else "0000")


def arxiv_query(analysis: dict) -> str:
    """The query for an analysis dict (QueryAnalysis.to_dict()); "" when it has nothing to ask."""
    parts: list[str] = []
    for author in analysis.get("authors") or []:
        parts.append(f"au:{_quoted(author)}")
    categories = [c for c in analysis.get("categories") or [] if c]
    if len(categories) == 1:
        parts.append(f"cat:{categories[0]}")
    elif categories:
        parts.append("(" + " OR ".join(f"cat:{c}" for c in categories) + ")")
    words = list(dict.fromkeys(content_words(analysis.get("query") or "")))[:MAX_WORDS]
    parts += [f"(ti:{word} OR abs:{word})" for word in words]
    if not parts:
        return ""  # a window alone would fetch arbitrary papers
    start, end = analysis.get("start"), analysis.get("end")
    if start or end:
        low = _stamp(start, end=False) if start else "199101010000"
        high = _stamp(end, end=True) if end else datetime.now(UTC).strftime("%Y%m%d2359")
        parts.append(f"submittedDate:[{low} TO {high}]")
    return " AND ".join(parts)
