"""Follow-up questions suggested under an answer, made by rule from what was retrieved.

No model is needed: the suggestions reuse the answer's topic, its sources' titles and authors,
and the time window that was understood, so each one leads somewhere the catalogue can answer.
"""

from collections.abc import Sequence

# Titles longer than this are cut in a suggestion, which should stay one line.
_TITLE_CHARS = 60
MAX_SUGGESTIONS = 3


def _short(title: str) -> str:
    title = " ".join(title.split())
    return title if len(title) <= _TITLE_CHARS else title[: _TITLE_CHARS - 1].rsplit(" ", 1)[0] + "…"


def _topic(query: str, analysis: dict) -> str:
    # The temporal analysis keeps the topic, with the time phrase cut out, as `query`.
    topic = (analysis or {}).get("query") or query
    return " ".join(str(topic).split()).rstrip("?.! ")


def _has_window(analysis: dict) -> bool:
    analysis = analysis or {}
    return bool(analysis.get("start") or analysis.get("end"))


def suggest_followups(query: str, analysis: dict, sources: Sequence[dict]) -> list[str]:
    """Up to three questions to ask next; none when nothing was found."""
    if not sources:
        return []
    topic = _topic(query, analysis)
    suggestions = []
    if len(sources) >= 2:
        suggestions.append(
            f"How does “{_short(sources[0]['title'])}” compare with “{_short(sources[1]['title'])}”?"
        )
    if topic:
        if _has_window(analysis):
            suggestions.append(f"What was published on {topic} before that period?")
        else:
            suggestions.append(f"What are the most recent papers on {topic}?")
        suggestions.append(f"What open problems do papers on {topic} mention?")
    first_author = (sources[0].get("authors") or "").split(",")[0].strip()
    if first_author:
        suggestions.append(f"What else has {first_author} written on this?")
    return suggestions[:MAX_SUGGESTIONS]
