"""Follow-up questions suggested under an answer, made by rule from what was retrieved.

No model is needed: the suggestions reuse the answer's topic, its sources' titles and authors,
and the time window that was understood, so each one leads somewhere the catalogue can answer.
"""

import re
from collections.abc import Sequence

# Titles longer than this are cut in a suggestion, which should stay one line.
_TITLE_CHARS = 60
MAX_SUGGESTIONS = 3


def _short(title: str) -> str:
    title = " ".join(title.split())
    return title if len(title) <= _TITLE_CHARS else title[: _TITLE_CHARS - 1].rsplit(" ", 1)[0] + "…"


# Question scaffolding around a topic ("What is new on X", "Tell me about X", "papers on X"):
# the suggestions put the topic into sentences of their own.
_SCAFFOLD = re.compile(
    r"^(?:(?:what|which)(?:'s|\s+is|\s+are|\s+were)?\s+"
    r"(?:(?:new|known|happening|the\s+(?:state\s+of\s+the\s+art|latest|recent|newest|main|key)"
    r"(?:\s+(?:work|papers|research|results|advances|methods|ideas))?)\s+)?"
    r"(?:papers\s+|work\s+|research\s+)?(?:on|about|in|for|with|regarding)\s+"
    r"|(?:tell\s+me|show\s+me|give\s+me|find|list)\s+(?:(?:papers|work|research)\s+)?(?:on|about)?\s*"
    r"|(?:papers|work|research|articles)\s+(?:on|about)\s+)",
    re.IGNORECASE,
)


def _topic(query: str, analysis: dict) -> str:
    # The temporal analysis keeps the topic, with the time phrase cut out, as `query`.
    topic = " ".join(str((analysis or {}).get("query") or query).split()).rstrip("?.! ")
    bare = _SCAFFOLD.sub("", topic, count=1).strip()
    return bare or topic


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
