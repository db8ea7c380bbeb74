"""The other filters a researcher writes into a question: arXiv ids, categories and authors.

Pure rules, no I/O. Each finder returns what it understood and the character spans to cut from
the question; `chat.understanding.analysis` runs them in order (ids, categories, dates,
authors), each on the text with the earlier finds masked out, so "by 2022" is a date and
"2401.12345" never one.

- arXiv ids and links as papers.identifiers reads them ("2401.12345v2", "math.GT/0309136",
  "arxiv.org/abs/…"), as the catalogue stores them; a leading "like", "similar to" goes with it.
- Categories: any category of the arXiv taxonomy ("cs.CL", "stat.ML", "quant-ph", "hep-th",
  "cond-mat.mes-hall"), any case, returned in canonical case, with its "in", "from", "category:",
  "cat:" and a trailing "category". Archives that are also English words ("cs", "math",
  "physics", "stat", "econ", "eess") count only after "category:" or "cat:".
- Authors: "by Hinton", "by Geoffrey Hinton and Yann LeCun", "by G. Hinton, Y. LeCun et al.",
  "papers by hinton" (after a word like papers/written/authored, any case), "author: Hinton",
  "Hinton's papers", "Vaswani et al.". After a bare "by" a name must look like one ("Hinton",
  "LeCun", "O'Brien", "G."; not "MafA", "GPT", "EBI2"), must not follow a participle ("generated
  by", "learning by"), must not be a method or a firm ("Monte Carlo", "Google"), must end the
  phrase ("by Fourier analysis" is no author), and the rest of the question must not be in Title
  Case (a pasted title: "Quantum Lower Bounds by Polynomials"). A one-word name there ("by Ho") is
  taken, but not confidently; two or three lower-case words ending an all-lower-case question
  ("by jonathan ho") are not taken, but make the analysis not confident.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from papers import identifiers
from papers.identifiers import CATEGORIES

Span = tuple[int, int]

# Archives that are also ordinary words: only a category after "category:" / "cat:".
WORD_ARCHIVES = frozenset({"cs", "math", "physics", "stat", "econ", "eess"})

# Any word that could be a category; the taxonomy decides. (One alternation of all 150
# categories would be tried at every position, several times slower.)
CATEGORY_WORD = re.compile(
    r"(?<![\w.\-/])(?P<cat>[a-z]+(?:-[a-z]+)?(?:\.[a-z]+(?:-[a-z]+)?)?)(?![\w\-/]|\.\w)",
    re.IGNORECASE,
)
# What goes with a category when it is cut: "in the", "category:", and a trailing "category".
CATEGORY_BEFORE = re.compile(
    r"(?:(?<![\w-])(?P<prep>in|from|within|under|on)\s+(?:the\s+)?)?"
    r"(?:(?<![\w-])(?P<label>categor(?:y|ies)|cat|primary|subject|archive)\s*:?\s*)?$",
    re.IGNORECASE,
)
CATEGORY_AFTER = re.compile(r"\s+(?:category|categories|archive|section|listings?)\b", re.I)


def find_categories(text: str) -> tuple[tuple[str, ...], list[Span]]:
    categories: list[str] = []
    spans: list[Span] = []
    for m in CATEGORY_WORD.finditer(text):
        canonical = CATEGORIES.get(m["cat"].lower())
        if canonical is None:
            continue
        before = CATEGORY_BEFORE.search(text, max(0, m.start() - 40), m.start())
        label = (before["label"] or "").lower() if before else ""
        if canonical in WORD_ARCHIVES and label not in ("cat", "category"):
            continue  # "in physics" is a topic
        after = CATEGORY_AFTER.match(text, m.end())
        if canonical not in categories:
            categories.append(canonical)
        spans.append((before.start() if before else m.start(), after.end() if after else m.end()))
    return tuple(categories), spans


# ---------------------------------------------------------------------------------------------
# arXiv ids and URLs
# ---------------------------------------------------------------------------------------------

# What goes with an id when it is cut: "like", "similar to the paper".
ID_BEFORE = re.compile(
    r"(?<![\w./-])(?:(?:(?:similar|related)\s+to|like|resembling)\s+)?(?:(?:the\s+)?paper\s+)?$",
    re.IGNORECASE,
)


def find_arxiv_ids(text: str) -> tuple[tuple[str, ...], list[Span]]:
    """Every arXiv id or URL in `text` (papers.identifiers), as catalogue ids without version."""
    ids: list[str] = []
    spans: list[Span] = []
    for arxiv_id, (start, end) in identifiers.find_arxiv_ids(text):
        before = ID_BEFORE.search(text, max(0, start - 40), start)
        if arxiv_id not in ids:
            ids.append(arxiv_id)
        spans.append((before.start() if before else start, end))
    return tuple(ids), spans


# ---------------------------------------------------------------------------------------------
# Authors
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AuthorFind:
    authors: tuple[str, ...]
    spans: list[Span]
    confident: bool


AUTHOR_TRIGGER = re.compile(
    r"(?<![\w-])(?:"
    r"(?P<noun>papers?|works?|articles?|preprints?|publications?|research|studies|surveys?)\s+"
    r"(?P<by1>by)\s+"
    r"|(?P<verb>written|authored|co-?authored|published|posted|submitted)\s+by\s+"
    r"|(?P<by>by)\s+"
    r"|(?P<field>au(?:thors?)?)\s*:\s*"
    r")",
    re.IGNORECASE,
)
NAME_TOKEN = re.compile(r"\s*(?P<tok>[^\W\d_](?:[\w'’.-]*[\w.])?|,|&)")
PREVIOUS_WORD = re.compile(r"([\w-]+)\W*$")
ET_AL = re.compile(r"\s*et\.?\s+al\.?", re.IGNORECASE)
ET_AL_NAME = re.compile(
    r"(?<![\w-])(?P<name>(?:(?:[Vv]an|[Vv]on|[Dd]e|[Dd]er|[Dd]en|[Dd]i|[Dd]a|[Ll]e)\s+)*"
    r"[A-Z][\w'’-]+)\s+et\.?\s+al\b\.?"
)
# "What has Ying Shan published?", "what did Yann LeCun write": the name between the verbs;
# also "what else has Patrick Lewis written?", "which other papers did Lewis write?" (the
# name was missed, and a thread's earlier author kept).
PUBLISHED_WHAT = re.compile(
    r"(?<![\w-])(?i:what(?:\s+else|\s+other\s+(?:papers?|works?))?|which\s+(?:other\s+)?"
    r"(?:papers?|works?))\s+(?i:has|have|did)\s+"
    r"(?P<name>[A-Z][\w'’.-]*(?:\s+(?:[A-Z][\w'’.-]*|van|von|der|de|la|le)){0,3})\s+"
    r"(?:(?i:published|publish|written|write|authored|posted|put\s+out)\b|\x00)"
)
# "the papers of Lei Zhang", "works of Hinton": a capitalised name right after, ending the
# phrase ("papers of the last year" or "surveys of Diffusion Models" are no authors).
PAPERS_OF = re.compile(
    r"(?<![\w-])(?i:papers?|works?|publications?|preprints?)\s+of\s+"
    r"(?P<name>[A-Z][a-z'’-]+(?:\s+[A-Z][a-z'’-]+){0,2})(?=\s*(?:[?.!,]|$|\s+(?:on|about|in|from|since|during|before|after)\b))"
)
_TOPIC_NOUN = re.compile(
    r"(?i)\b(?:networks?|models?|learning|transformers?|systems?|methods?|algorithms?|"
    r"theory|physics|vision|language|quantum|neural|deep|graphs?|data)\b"
)
POSSESSIVE = re.compile(
    r"(?<![\w-])(?P<name>[A-Z][\w'’-]*[a-z][\w'’-]*(?:\s+[A-Z][\w'’-]+){0,2})['’]s\s+"
    r"(?=(?:(?:latest|recent|newest|new|early|earlier|older|first|last|most\s+recent)\s+)?"
    r"(?:papers?|work|articles?|preprints?|publications?|research)\b)"
)
PARTICLES = frozenset(
    "van von der den de del della da di du la le dos das ter ten bin al el".split()
)
# Words that end a list of names.
NAME_STOP = frozenset(
    "on about in for from since during before after between until with without using "
    "regarding concerning that which who whose published papers paper articles article work "
    "works preprints the a an to of at is are was were what how why when where vs versus "
    "related similar like this these those their his her its as via".split()
)
# Capitalised words that follow "by" in technical prose but are not people.
NOT_NAMES = frozenset(
    "monte carlo bayesian gaussian markov fourier laplace euler newton lagrange hamiltonian "
    "lagrangian boltzmann schrodinger schrödinger dirac hilbert riemann google openai meta "
    "deepmind microsoft nvidia gpt bert llm llms ai ml nlp means way default design hand far "
    "contrast comparison example construction definition using i we they it this that these "
    "those one two three our their its".split()
)
# "It's papers like these", "What's …": not people.
SENTENCE_STARTS = frozenset("it what that let there here who where how".split())
STRONG_VERBS = frozenset(
    {"written", "authored", "coauthored", "co-authored", "published", "posted", "submitted"}
)


def _is_initial(token: str) -> bool:
    return bool(re.fullmatch(r"(?:[A-Z]\.?-?)+", token)) and len(token) <= 6


def _clean_name(tokens: list[str]) -> str:
    words = [t if _is_initial(t) or not t.endswith(".") else t[:-1] for t in tokens]
    while words and words[-1].lower() in PARTICLES:
        words.pop()
    return " ".join(words)


def _read_names(text: str, pos: int, any_case: bool) -> tuple[list[str], int, bool]:
    """Names from text[pos:]: (names, end of the last name, whether the list ended cleanly)."""
    names: list[str] = []
    current: list[str] = []
    end = pos
    after_separator = False
    while True:
        m = NAME_TOKEN.match(text, pos)
        if not m:
            break
        token = m["tok"]
        low = token.lower().rstrip(".")
        if token in (",", "&") or low in ("and", "or"):
            if not current:
                break
            names.append(_clean_name(current))
            current = []
            pos = m.end()
            after_separator = True
            continue
        if low == "et":
            et_al = ET_AL.match(text, m.start())
            if et_al and current:
                names.append(_clean_name(current))
                return names, et_al.end(), True
            break
        if low in NAME_STOP:
            break
        is_name = any_case or _looks_like_name(token) or low in PARTICLES
        if not is_name or len(current) >= 4:
            # "by Hinton and colleagues": the list ended at the "and".
            return _finish(names, current, end, clean=after_separator and not current)
        current.append(token)
        pos = end = m.end()
        after_separator = False
    return _finish(names, current, end, clean=True)


_NAME_PREFIX = re.compile(r"(?:Mc|Mac|O['’]|Le|La|De|Di|Da|Du|Van|Von)[A-Z]")


def _looks_like_name(token: str) -> bool:
    """ "Hinton", "LeCun", "O'Brien", "Jean-Pierre", "G.": yes. "MafA", "GPT", "EBI2": no."""
    if _is_initial(token):
        return True
    for part in token.rstrip(".").split("-"):
        if not part or not part[0].isupper() or any(ch.isdigit() for ch in part):
            return False
        if not (part[1:].islower() or _NAME_PREFIX.match(part) and part[3:].islower()):
            return False
    return True


# "… by jonathan ho": two or three lower-case words ending the question may be a name.
_LOWERCASE_NAME_AT_END = re.compile(r"\s*([a-z][a-z'’]+(?:\s+[a-z][a-z'’]+){1,2})\s*[?.!]?\s*$")
_NOT_NAME_ENDINGS = (
    *("ing", "ed", "ion", "ions", "ity", "ness", "ment", "ous", "ive", "al", "ic", "s"),
    *("ance", "ence", "ism", "ics", "ure"),
)


def _maybe_lowercase_name(text: str, pos: int) -> bool:
    m = _LOWERCASE_NAME_AT_END.match(text, pos)
    if not m:
        return False
    words = m[1].split()
    return not any(w in NAME_STOP or w in NOT_NAMES or w.endswith(_NOT_NAME_ENDINGS) for w in words)


def _finish(
    names: list[str], current: list[str], end: int, clean: bool
) -> tuple[list[str], int, bool]:
    if current:
        names.append(_clean_name(current))
    return [n for n in names if n], end, clean


def _technical(names: list[str]) -> bool:
    """ "Monte Carlo", "Google", "perceived quality": words of a method or a firm, not a person.

    Lower-case words (after "papers by") must not end like an English noun or participle;
    capitalised ones may ("Manning", "Clement").
    """
    return any(
        word.lower() in NOT_NAMES or (word.islower() and word.endswith(_NOT_NAME_ENDINGS))
        for name in names
        for word in name.split()
    )


_TECHNICAL_ENDINGS = (
    *("ion", "ions", "ing", "ics", "ity", "ment", "ments", "ness", "isms", "ence", "ance"),
)
_LONG_WORD = re.compile(r"[^\W\d_][\w'’-]{3,}")


def _title_cased(text: str) -> bool:
    """Most longer words capitalised, as in a pasted title."""
    words = _LONG_WORD.findall(text)
    return len(words) >= 2 and sum(w[0].isupper() for w in words) >= 0.7 * len(words)


def find_authors(text: str) -> AuthorFind:
    authors: list[str] = []
    spans: list[Span] = []
    confident = True
    lower = text.lower()
    triggers = AUTHOR_TRIGGER.finditer(text) if "by" in lower or "au" in lower else ()
    for m in triggers:
        if any(s <= m.start() < e for s, e in spans):
            continue
        strong = bool(m["noun"] or m["verb"] or m["field"])
        names, end, clean = _read_names(text, m.end(), any_case=strong)
        if not strong and _title_cased(text[: m.start()] + " " + text[end:]):
            continue  # "Quantum Lower Bounds by Polynomials": capitals say nothing here
        if not strong:
            previous = PREVIOUS_WORD.search(text, max(0, m.start() - 40), m.start())
            previous_word = previous[1].lower() if previous else ""
            participle = (
                previous_word.endswith(("ed", "en", "ing")) and previous_word not in STRONG_VERBS
            )
            if participle:
                continue  # "generated by", "learning by doing"
            if not names or not clean:
                if text == text.lower() and _maybe_lowercase_name(text, m.end()):
                    confident = False  # "diffusion models by jonathan ho": ask the LLM
                continue
            if len(names) == 1 and " " not in names[0]:
                if names[0].lower().endswith(_TECHNICAL_ENDINGS) or _technical(names):
                    continue  # "by Depolarization", "by Google"
                confident = False  # "by Ho": a surname, or a word?
        if not names or _technical(names):
            continue
        start = m.start("by1") if m["noun"] else m.start()
        authors.extend(n for n in names if n not in authors)
        spans.append((start, end))
    for pattern, key in (
        (POSSESSIVE, "s "), (ET_AL_NAME, "et"), (PUBLISHED_WHAT, " ha"), (PUBLISHED_WHAT, " did"),
        (PAPERS_OF, " of "),
    ):
        if key not in lower:
            continue
        for m in pattern.finditer(text):
            if any(s < m.end() and m.start() < e for s, e in spans):
                continue
            name = " ".join(m["name"].split())
            if name.lower().split()[0] in NOT_NAMES | SENTENCE_STARTS:
                continue
            if pattern in (PAPERS_OF, PUBLISHED_WHAT) and (_technical([name]) or _TOPIC_NOUN.search(name)):
                continue  # "papers of Generative Adversarial Networks": a topic in capitals
            if name not in authors:
                authors.append(name)
            spans.append(m.span())
    return AuthorFind(tuple(authors), spans, confident)
