"""Does every sentence of an offline answer come from its sources? (issue #11: "No answer sentence
of the offline composer is absent from its sources".)

An answer is read line by line, with its citation marks ([2], [1, 3]) taken out. A line is fine
when it is one of the composer's fixed templates (chat.llm.templates, or the constants of
chat.llm.extractive before that module existed) whose `{quote}` is taken from a source and whose
`{title}` is a paper's title, the other fields being metadata (dates, counts, names, ids, the
user's own words); or when each of its sentences occurs, word for word, in the title or abstract
of one of the answer's sources. Matching ignores case, spacing, quote styles and markdown emphasis.

Answers with no sources (small talk, the "nothing relevant" reply) are not the composer's and are
not checked here: their own checks say they cite nothing.
"""

from __future__ import annotations

import re
from functools import lru_cache

from bench.answer_checks import Answer, Catalogue, normalise
from chat.llm.sentences import split_sentences

_CITATION = re.compile(r"\s*\[\s*\d+(?:\s*[,–-]\s*\d+)*\s*\]")
_FIELD = re.compile(r"\\\{(\w+)\\\}")
# Fields whose value must come from the papers; the others are metadata or the user's words.
_QUOTED = "quote"
_TITLE = "title"


def templates() -> dict[str, str]:
    """The composer's fixed phrases, wherever this version of the project keeps them."""
    try:
        from chat.llm import templates as home

        return dict(home.ALL)
    except ImportError:
        from chat.llm import extractive as home

        return {
            name: value
            for name, value in vars(home).items()
            if name.isupper() and isinstance(value, str) and len(value) > 12
        }


@lru_cache(maxsize=8)
def _compiled(items: tuple[tuple[str, str], ...]) -> list[tuple[str, re.Pattern]]:
    patterns = []
    for name, template in items:
        text = _CITATION.sub("", template.replace("[{number}]", "")).strip()
        pattern = re.escape(text)
        seen: set[str] = set()

        def group(match: re.Match, seen=seen) -> str:
            field = match.group(1)
            if field in seen:  # a field used twice: the second must match the first
                return f"(?P={field})"
            seen.add(field)
            return f"(?P<{field}>.+)" if field == _QUOTED else f"(?P<{field}>.+?)"

        pattern = _FIELD.sub(group, pattern)
        # A multi-sentence template may be followed by more on its line; match its start only
        # when it ends with a free field, else the whole line.
        patterns.append((name, re.compile(rf"^{pattern}$", re.DOTALL)))
    return patterns


def _in_sources(text: str, haystacks: list[str]) -> bool:
    key = normalise(text).strip(" .;:")
    return bool(key) and any(key in h for h in haystacks)


def _sentences_sourced(text: str, haystacks: list[str]) -> list[str]:
    """The sentences of `text` found in no source (the whole text first: a quote may span what
    the splitter would cut)."""
    if _in_sources(text, haystacks):
        return []
    return [s for s in split_sentences(text) if not _in_sources(s, haystacks)]


def unsourced(answer: Answer, catalogue: Catalogue) -> list[str]:
    """The lines (or sentences) of `answer` that neither a template nor its sources account for."""
    if not answer.sources or answer.flag("nothing_relevant"):
        return []
    haystacks = [
        catalogue.papers[s["arxiv_id"]].text
        for s in answer.sources
        if s["arxiv_id"] in catalogue.papers
    ]
    titles = {normalise(p.title) for p in catalogue.papers.values()}
    patterns = _compiled(tuple(sorted(templates().items())))
    problems = []
    for raw in answer.content.splitlines():
        line = _CITATION.sub("", raw).strip()
        if not line:
            continue
        if _line_ok(line, patterns, haystacks, titles):
            continue
        problems.extend(_sentences_sourced(line.lstrip("-*0123456789. "), haystacks))
    return problems


def _line_ok(line, patterns, haystacks, titles) -> bool:
    for _name, pattern in patterns:
        match = pattern.match(line)
        if not match:
            continue
        fields = match.groupdict()
        title = fields.get(_TITLE)
        if title is not None and normalise(title) not in titles:
            continue
        quote = fields.get(_QUOTED)
        if quote is not None and _sentences_sourced(quote, haystacks):
            continue
        return True
    return False
