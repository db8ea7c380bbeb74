"""The papers a question names by what they introduced: "the Transformer", "Fusion-in-Decoder",
"OPT-175B", "NG-Scope's decoding time".

The names come from the catalogue itself (PaperName, written by papers.indexing.names from each
paper's title, abstract and full text); here the question's words are looked up there, one
indexed query. `search()` puts the papers found first on the first page and the composer opens
the answer with their passages: another paper's number never answers a question about this one.

Which words of the question can be a name:
- runs of 1-4 words (a hyphenated word is one: "Fusion-in-Decoder"), longest first, no word
  used twice; a name of dictionary words only where the question writes it as a name,
  capitalised and not as its first word ("the Transformer", not "a transformer model" nor
  "Quantum error correction" for a title "Quantum: …"), and not after another capitalised word (the
  end of a longer name the catalogue does not know: "Vision Transformer" is not "Transformer";
  "the DPR Wikipedia corpus" is DPR's);
- a model size or variant after a hyphen names the same paper ("OPT-175B", "ResNet-152",
  "ViT-Huge", "RAG-Sequence"); another name after it does not ("Adam-FIPSO" is not Adam), nor
  a version number ("GPT-4" is another model than GPT's paper) unless that paper writes the
  whole name itself ("RWKV-4" in RWKV's).

A name several papers claim belongs to the earliest of them (titles and abstracts before bodies);
claimed by more than MAX_CLAIMANTS it is a common word and names none, unless it is made up
("ViT", "LoRA": papers.indexing.names.coined). A name only the body of
a paper introduces is dropped when an older paper's title or abstract already uses it ("we refer
to it as ImageNet" does not make ImageNet that paper's).

A paper's whole title written out names it too ("What limitations do the authors of Teaching
Small Language Models to Reason state?"): a run of TITLE_MIN_WORDS or more capitalised words
(with the small words titles keep lower-case) or a quoted phrase, equal to a title or to its
part before a colon, looked up by phrase in the titles' and abstracts' GIN index.

Words that look like a model's name ("LLaMA-2") in a naming place ("train X", "X's", "does X
use") that no paper of the catalogue introduces nor mentions (title, abstract, full text) are
returned as `unknown`, so the answer can say plainly that the catalogue does not hold that paper;
a versioned name ("GPT-4") no paper introduces is `unknown` even where a paper mentions it (RWKV's
"comparative studies on RWKV-4 and ChatGPT / GPT-4"): the answer then quotes those mentions only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from chat.retrieval.filters import SearchFilters
from chat.understanding.pointers import without_pointers
from chat.understanding.quantity import asks_for_quantity
from chat.understanding.variants import SIZES, VERSION_TAIL, versioned
from papers.indexing.names import BODY, coined, name_key

MAX_WORDS = 4
_CONNECTORS = frozenset("in of for and on the to".split())
# A name claimed by more papers than this names none of them: "Hamiltonian", "Bell", "LLM" are
# claimed by 26-30 of the 57k sample's abstracts ("we introduce a Hamiltonian …"), most names by
# one. A made-up name ("ViT": 83 abstracts define "Vision Transformer (ViT)") still belongs to
# the first paper that claims it.
MAX_CLAIMANTS = 3

_TOKEN = re.compile(r"[A-Za-z0-9][\w.+*]*(?:[-‐‑][A-Za-z0-9][\w.+*]*)*(?:['’]s\b)?")
_QUESTION_WORDS = frozenset(
    "what which who whom whose when where why how is are was were does do did can could should "
    "would will may in on for of at to by from with and or the a an".split()
)
# A last part after a hyphen that names a variant of the same model: a number or size
# ("175B", "152", "Huge", "base"), a capitalised word ("RAG-Sequence"); not another acronym.
_VARIANT_TAIL = re.compile(r"[\w.]*\d[\w.]*|[A-Z][a-z]+")
# Where a question puts the name of the model it asks about.
_NAMING_PLACES = (
    r"\btrain(?:ed|ing|s)?\s+(?:the\s+)?{x}",
    r"{x}['’]s\b",
    # (the verb may open the question: "Does ResNet use batch normalization?")
    r"\b(?i:does|did|do|is|was|were|can|could)\s+(?:the\s+)?{x}\s+[a-z]",
    r"\b(?:the|in|of|for)\s+{x}\s+(?:paper|model|models|architecture|method|algorithm|"
    r"training|pre-?training|authors)\b",
    # ("the CiteSee evaluation", "the NG-Scope system": the paper's own work)
    r"{x}\s+(?:models?|encoders?|generator|training|pre-?training|experiments?|study|"
    r"evaluations?|results?|system|tool|interface|framework|ablations?|baselines?|user\s+study)\b",
    r"\b(?:of|in|by|for)\s+(?:the\s+)?{x}\s*\?*$",
    # ("What datasets were used to evaluate MoBYv2AL?": the paper's own experiments)
    r"\b(?i:evaluat(?:e|es|ed|ing)|test(?:s|ed|ing)?|benchmark(?:s|ed|ing)?)\s+(?:the\s+)?{x}\b",
    # (or before the question's verb: "What limitations of RWKV do the authors acknowledge?")
    r"\b(?:of|in|by|for)\s+(?:the\s+)?{x}\s+(?i:do|does|did|is|are|was|were|has|have|had)\s",
    r"^\s*(?i:what|how)\s+(?:is|are|was|does|did)\s+(?:the\s+)?{x}\b",
)
# The question is about other work than the named paper's: "alternatives to the Transformer".
_ABOUT_OTHERS = (
    r"\b(?:alternatives?|successors?|rivals?|competitors?)\s+(?:to|of|for)\s+(?:the\s+)?{x}",
    r"\b(?:compared?|comparison|comparing)\s+(?:to|with|against)\s+(?:the\s+)?{x}",
    r"\b(?:than|beyond|versus|vs\.?|instead\s+of|replac\w*|outperform\w*|improv\w*\s+"
    r"(?:on|upon)|based\s+on|extend\w*|cit(?:e|es|ed|ing)|build\w*\s+on|after)\s+(?:the\s+)?{x}",
)
# Looks like a model's name: a capital after the first letter, or capitals with digits
# ("GPT-3", "LLaMA", "ResNet", "T5"). Hardware and units are no paper.
_NAME_LIKE = re.compile(r"[A-Za-z][a-z]*[A-Z][\w\-.]*|[A-Z][\w.]*-?\d[\w\-.]*")
_NOT_PAPERS = frozenset(
    "gpu gpus tpu tpus cpu cpus flop flops flops/s ram gb tb mb bleu f1 top-1 top-5 ms "
    "qa nlp ml ai rl llm llms cnn cnns rnn rnns lstm mlp api url pdf faq id ids".split()
)


@dataclass(frozen=True, slots=True)
class NamedPaper:
    paper_id: int
    arxiv_id: str
    name: str  # as the paper writes it
    asked: str  # as the question wrote it
    titled: bool = False  # by its whole title: the question's subject wherever it stands


@dataclass
class Named:
    papers: list[NamedPaper] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    # The question asks what the named paper itself says ("What batch size did OPT-175B use?"),
    # not about other work around it ("alternatives to the Transformer"): then the answer
    # quotes the named paper alone.
    about: bool = False

    @property
    def paper_ids(self) -> list[int]:
        return list(dict.fromkeys(p.paper_id for p in self.papers))

    def to_dict(self) -> dict:
        return {
            "papers": [
                {"arxiv_id": p.arxiv_id, "name": p.name, "asked": p.asked} for p in self.papers
            ],
            "unknown": list(self.unknown),
            "about": self.about,
        }


@dataclass(frozen=True, slots=True)
class _Candidate:
    key: str
    asked: str
    start: int  # first and last token index covered
    end: int
    versioned: str = ""  # "GPT-4" for the head "GPT": its paper must write the whole name


def _plain(name: str) -> bool:
    """Dictionary words only ("Transformer", "Batch Normalization"), no made-up word or acronym."""
    return not any(coined(w) or (w.isupper() and len(w) > 1) for w in re.split(r"[\s\-]+", name))


def _written_as_name(option: _Candidate, question: str) -> bool:
    """The question writes the words as a name: capitalised, and not as its first word."""
    words = [w for w in re.split(r"\s+", option.asked) if w.lower() not in _CONNECTORS]
    return option.start > 0 and all(w[:1].isupper() for w in words)


def _tokens(question: str) -> list[str]:
    """Words, hyphenated ones whole, possessives cut ("PRIMERA's" -> "PRIMERA")."""
    return [re.sub(r"['’]s$", "", m[0]) for m in _TOKEN.finditer(question)]


def _capitalised(token: str) -> bool:
    return any(ch.isupper() or ch.isdigit() for ch in token)


def candidates(question: str) -> list[_Candidate]:
    """Every phrase of the question that could be a name, longest first (pure)."""
    tokens = _tokens(question)
    found: list[_Candidate] = []
    for size in range(MAX_WORDS, 0, -1):
        for start in range(len(tokens) - size + 1):
            words = tokens[start : start + size]
            if words[0].lower() in _QUESTION_WORDS or words[-1].lower() in _QUESTION_WORDS:
                continue
            phrase = " ".join(words)
            if size == 1 and not _capitalised(phrase):
                continue
            found.append(_Candidate(name_key(phrase), phrase, start, start + size - 1))
    # "OPT-175B" names OPT: the head of a hyphenated word whose tail is a variant.
    for index, token in enumerate(tokens):
        head, _, tail = re.sub(r"[‐‑]", "-", token).rpartition("-")
        if head and (_VARIANT_TAIL.fullmatch(tail) or tail.lower() in SIZES):
            if _capitalised(head):
                versioned = token if VERSION_TAIL.fullmatch(tail) else ""
                found.append(_Candidate(name_key(head), head, index, index, versioned))
    return found


def _runs(question: str) -> list[tuple[int, int]]:
    """Token spans of capitalised runs (past the question's first word): a name's context."""
    tokens = _tokens(question)
    runs, start = [], None
    for i, token in enumerate(tokens + [""]):
        capital = i > 0 and token[:1].isupper() and token.lower() not in _QUESTION_WORDS
        if capital and start is None:
            start = i
        elif not capital and start is not None:
            runs.append((start, i - 1))
            start = None
    return runs


def asks_about(question: str, named: list[NamedPaper]) -> bool:
    """Whether the question asks what the named paper itself says: its name in a naming place
    ("did the Transformer use", "OPT-175B's", "RWKV models") or a number asked of it, and no
    word turning it to other work ("alternatives to", "compared with", "based on")."""
    for n in named:
        x = re.escape(n.asked)
        if any(re.search(place.format(x=x), question, re.IGNORECASE) for place in _ABOUT_OTHERS):
            return False
    return asks_for_quantity(question) or any(
        n.titled or _in_naming_place(n.asked, question) for n in named
    )


def _in_naming_place(word: str, question: str) -> bool:
    x = re.escape(word)
    return any(re.search(place.format(x=x), question) for place in _NAMING_PLACES)


def _coordinated(word: str, other: str, question: str) -> bool:
    """Whether the question joins two names as one subject ("RAG and Fusion-in-Decoder", "OPT,
    RWKV and ViT", "DPR or REALM"): the place of one is the other's too."""
    a, b = re.escape(word), re.escape(other)
    join = r"\s*(?:,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&|vs\.?|versus)\s+)(?:the\s+)?"
    names = r"(?:[\w.+*-]+" + join + r")*?"
    return any(
        re.search(rf"(?<![\w-]){x}{join}{names}{y}(?![\w-])", question)
        for x, y in ((a, b), (b, a))
    )


def writes_a_name(question: str) -> bool:
    """Whether the question writes a word as a name (pure, no lookup): a model-like word ("ViT",
    "GPT-3", "LoRA") anywhere, or a capitalised word past its first ("the Transformer", "Adam");
    not hardware, units or metrics ("GPUs", "BLEU"), nor "I"."""
    # ("Figure 1" of "What does Figure 1 show?" points into the thread's paper: no name.)
    for index, word in enumerate(_tokens(without_pointers(question))):
        if word.lower() in _NOT_PAPERS or word.lower() in _QUESTION_WORDS or word == "I":
            continue
        if _NAME_LIKE.fullmatch(word) or (index > 0 and word[:1].isupper()):
            return True
    return False


# One of the papers says all of the words, in its title and abstract or in one chunk of its body.
_SAYS_ALL = """
SELECT EXISTS (
    SELECT 1 FROM papers_paper p
    WHERE p.arxiv_id = ANY(%(ids)s) AND p.search_vector @@ plainto_tsquery('english', %(words)s)
) OR EXISTS (
    SELECT 1 FROM papers_passage c JOIN papers_paper p ON p.id = c.paper_id
    WHERE p.arxiv_id = ANY(%(ids)s) AND c.kind = 'fulltext'
      AND c.lexemes @@ plainto_tsquery('english', %(words)s)
)
"""


def papers_say(cursor, arxiv_ids, words: str) -> bool:
    """Whether one of the papers says every one of the `words` (stemmed) in its abstract or in
    one chunk of its body: whether a question in those words can be asked of them."""
    if not words.strip():
        return True
    cursor.execute(_SAYS_ALL, {"ids": list(arxiv_ids), "words": words})
    return bool(cursor.fetchone()[0])


# Another paper's title says the words, as a phrase (the GIN index finds the papers saying them
# anywhere; their title's lexemes, weight A of search_vector, are checked after).
_TITLED_ELSEWHERE = """
SELECT EXISTS (
    SELECT 1 FROM papers_paper p
    WHERE NOT p.hidden AND NOT (p.arxiv_id = ANY(%(ids)s))
      AND p.search_vector @@ phraseto_tsquery('english', %(words)s)
      AND ts_filter(p.search_vector, '{a}') @@ phraseto_tsquery('english', %(words)s)
)
"""


def titled_elsewhere(cursor, arxiv_ids, words: str) -> bool:
    """Whether a paper other than `arxiv_ids` has the `words` in its title, in that order: what
    that paper is about ("Deep Residual Learning for Image Recognition" for "residual
    learning")."""
    if not words.strip():
        return False
    cursor.execute(_TITLED_ELSEWHERE, {"ids": list(arxiv_ids), "words": words})
    return bool(cursor.fetchone()[0])


def unknown_names(question: str, known: set[str]) -> list[str]:
    """Model-like names in a naming place of the question whose key no paper has."""
    found = []
    for word in _tokens(question):
        if not _NAME_LIKE.fullmatch(word) or word.lower() in _NOT_PAPERS:
            continue
        head, _, tail = word.rpartition("-")
        if name_key(word) in known or (
            name_key(head) in known and not VERSION_TAIL.fullmatch(tail)
        ):
            continue
        if word in found:
            continue
        if _in_naming_place(word, question):
            found.append(word)
    return found


# Every paper claiming one of the keys, and whether the search's filters allow it: who a name
# belongs to is the whole catalogue's to say (in a window of 2026 a single paper claims "LLM",
# which 30 claim in all; "the Transformer" is the 2017 paper's in any window).
_LOOKUP = """
SELECT n.key, n.name, n.strength, n.paper_id, p.arxiv_id, p.published, ({dates} AND {allowed})
FROM papers_papername n JOIN papers_paper p ON p.id = n.paper_id
WHERE n.key = ANY(%(keys)s) AND {visible}
"""
# A name only a body introduced, already in an older paper's title or abstract.
_OLDER_USE = """
SELECT EXISTS (
    SELECT 1 FROM papers_paper e
    WHERE e.search_vector @@ phraseto_tsquery('english', %s) AND e.published < %s
      AND e.id <> %s AND NOT e.hidden
)
"""


# Whether any paper's title, abstract or read full text mentions a name (both GIN-indexed): a
# name the catalogue mentions somewhere ("NC-RAPT" in its paper's body) is not "unknown".
_MENTIONED = """
SELECT EXISTS (
    SELECT 1 FROM papers_paper WHERE search_vector @@ phraseto_tsquery('english', %(name)s)
) OR EXISTS (
    SELECT 1 FROM papers_passage
    WHERE kind = 'fulltext' AND lexemes @@ phraseto_tsquery('english', %(name)s)
)
"""


# Whether one paper's title, abstract or read full text writes a name ("RWKV-4" in RWKV's).
_WRITES = """
SELECT EXISTS (
    SELECT 1 FROM papers_paper
    WHERE id = %(paper)s AND search_vector @@ phraseto_tsquery('english', %(name)s)
) OR EXISTS (
    SELECT 1 FROM papers_passage
    WHERE paper_id = %(paper)s AND kind = 'fulltext'
      AND lexemes @@ phraseto_tsquery('english', %(name)s)
)
"""


# A title the question writes out: at least this many words (shorter runs are names or topics,
# which PaperName holds: "Batch Normalization", "Constitutional AI").
TITLE_MIN_WORDS = 4
# The small words a title keeps in lower case ("Teaching Small Language Models to Reason").
_TITLE_GLUE = frozenset("a an and as at by for from in into of on or the to via vs with".split())
_QUOTED_TITLE = re.compile(r"[\"“‘'](?P<t>[^\"“”‘’']{12,})[\"”’']")
# The papers whose title or abstract holds a phrase (GIN-indexed search_vector); the title is
# compared in Python. Bounded: a phrase of four capitalised words is rare.
_TITLED = """
SELECT p.id, p.arxiv_id, p.title, ({dates} AND {allowed})
FROM papers_paper p
WHERE p.search_vector @@ phraseto_tsquery('english', %(phrase)s) AND {visible}
ORDER BY p.published, p.id
LIMIT 50
"""


def title_spans(question: str) -> list[_Candidate]:
    """The phrases of `question` that may be a paper's whole title (pure): quoted phrases, and
    runs of capitalised words past its first word, with the small words titles keep lower-case
    inside them; each also without a leading capitalised word that opens the question's clause
    ("In Teaching Small …")."""
    tokens = _tokens(question)
    spans: list[_Candidate] = []
    for match in _QUOTED_TITLE.finditer(question):
        words = _tokens(match["t"])
        if len(words) >= TITLE_MIN_WORDS:
            start = len(_tokens(question[: match.start()]))
            spans.append(
                _Candidate(name_key(match["t"]), match["t"].strip(), start, start + len(words) - 1)
            )
    i = 1
    while i < len(tokens):
        if not tokens[i][:1].isupper() or tokens[i].lower() in _QUESTION_WORDS - _TITLE_GLUE:
            i += 1
            continue
        end = i
        while end + 1 < len(tokens) and (
            tokens[end + 1][:1].isupper()
            or tokens[end + 1][:1].isdigit()
            or tokens[end + 1].lower() in _TITLE_GLUE
        ):
            end += 1
        while end > i and tokens[end].lower() in _TITLE_GLUE:
            end -= 1
        for start in (i, i + 1):
            words = tokens[start : end + 1]
            if len(words) >= TITLE_MIN_WORDS and words[0].lower() not in _TITLE_GLUE:
                phrase = _phrase(question, words)
                spans.append(_Candidate(name_key(phrase), phrase, start, end))
        i = end + 1
    return list({(c.key, c.start): c for c in spans}.values())


def _phrase(question: str, words: list[str]) -> str:
    """The question's own text from the first of `words` to the last (its spacing and marks)."""
    start = question.find(words[0])
    end = question.find(words[-1], start) + len(words[-1])
    return question[start:end] if start >= 0 and end > start else " ".join(words)


def _conditions(filters: SearchFilters, params: dict) -> tuple[dict[str, str], dict]:
    """The lookups' conditions on the paper `p`: `dates` (the window), `allowed` (every filter)
    and `visible` (hidden and withdrawn papers only, so that a name outside the filters is still
    known to be its paper's), with their parameters added to `params`."""
    dates = filters.date_conditions("p.published", params)
    allowed, params = filters.paper_conditions("p", params)
    visible = SearchFilters(
        include_hidden=filters.include_hidden, include_withdrawn=filters.include_withdrawn
    ).paper_conditions("p")[0]
    return {"dates": dates, "allowed": allowed, "visible": visible}, params


def _titled(cursor, question: str, filters: SearchFilters) -> list[tuple[_Candidate, tuple]]:
    """The papers `question` names by their whole title (or its part before a colon), each with
    the phrase that names it and whether `filters` allow it."""
    found = []
    for span in title_spans(question):
        conditions, params = _conditions(filters, {"phrase": span.asked})
        cursor.execute(_TITLED.format(**conditions), params)
        for paper_id, arxiv_id, title, ok in cursor.fetchall():
            if span.key in (name_key(title), name_key(title.split(":")[0])):
                found.append((span, (paper_id, arxiv_id, title, ok)))
                break
    return found


def find_named(cursor, question: str, filters: SearchFilters) -> Named:
    """The papers `question` names (module docstring), among the papers `filters` allow: a
    name is given to its paper by the whole catalogue's claims, then kept only if `filters`
    allow that paper (a name whose paper is outside the window names none)."""
    used: set[int] = set()
    named: list[NamedPaper] = []
    for span, (paper_id, arxiv_id, title, ok) in _titled(cursor, question, filters):
        if used & set(range(span.start, span.end + 1)):
            continue
        used.update(range(span.start, span.end + 1))
        if ok:
            named.append(NamedPaper(paper_id, arxiv_id, title, span.asked, titled=True))
    options = candidates(question)
    if not options:
        return Named(named, [], asks_about(question, named)) if named else Named()
    conditions, params = _conditions(filters, {"keys": sorted({c.key for c in options})})
    cursor.execute(_LOOKUP.format(**conditions), params)
    claims: dict[str, list[tuple]] = {}
    permitted: set[int] = set()
    for key, name, strength, paper_id, arxiv_id, published, ok in cursor.fetchall():
        claims.setdefault(key, []).append((strength, paper_id, arxiv_id, name, published))
        if ok:
            permitted.add(paper_id)
    runs = _runs(question)
    for option in options:  # longest first
        rows = claims.get(option.key)
        if not rows or used & set(range(option.start, option.end + 1)):
            continue
        # A one-word name after a capitalised word ends another name ("Vision Transformer");
        # one before ("the DPR Wikipedia corpus") qualifies the next word.
        run = next((r for r in runs if r[0] <= option.start <= r[1]), None)
        if run and option.start == option.end and run[0] < option.start:
            continue
        # Introduced in a title or an abstract if any paper does so, else in a body. A made-up
        # name is its first user's, though: later papers' abstracts redefine it ("we propose a
        # novel ViT architecture, termed NomMer" took "ViT" from the 2020 paper whose body
        # defines it, once a few thousand abstracts were imported).
        pool = [r for r in rows if r[0] > BODY] or rows
        if coined(rows[0][3]):
            first = min(rows, key=lambda r: (r[4], r[1]))
            if first[0] == BODY and first not in pool:
                cursor.execute(_OLDER_USE, [first[3], first[4], first[1]])
                if not cursor.fetchone()[0]:
                    pool = [first]
        if _plain(pool[0][3]) and not _written_as_name(option, question):
            continue  # "quantum error correction": words of a topic, not a title's "Quantum:"
        if len({r[1] for r in pool}) > MAX_CLAIMANTS and not coined(pool[0][3]):
            continue  # many papers claim it: a common word ("Hamiltonian"), naming none
        # The first paper to introduce it is the one that did.
        strength, paper_id, arxiv_id, name, published = min(pool, key=lambda r: (r[4], r[1]))
        if strength == 1:
            cursor.execute(_OLDER_USE, [name, published, paper_id])
            if cursor.fetchone()[0]:
                continue
        if option.versioned:
            cursor.execute(_WRITES, {"paper": paper_id, "name": option.versioned})
            if not cursor.fetchone()[0]:
                continue  # "GPT-4" of a GPT paper that never writes it: another model
        used.update(range(option.start, option.end + 1))
        if paper_id not in permitted:
            continue  # its paper is outside the window, the categories or the thread's scope
        named.append(NamedPaper(paper_id, arxiv_id, name, option.asked))
    if len(named) > 1:
        # "What Adam beta2 did the Transformer use?": the paper asked about is the one in a
        # naming place; Adam only qualifies the setting.
        subjects = [n for n in named if n.titled or _in_naming_place(n.asked, question)]
        # ("How do RAG and Fusion-in-Decoder combine passages?": both are its subject.)
        subjects += [
            n
            for n in named
            if n not in subjects and any(_coordinated(s.asked, n.asked, question) for s in subjects)
        ]
        named = [n for n in named if n in subjects] or named
    if named:
        return Named(named, [], asks_about(question, named))
    unknown = []
    for word in unknown_names(question, set(claims)):
        if versioned(word):  # no paper of its own, whoever mentions it
            unknown.append(word)
            continue
        cursor.execute(_MENTIONED, {"name": word})
        if not cursor.fetchone()[0]:
            unknown.append(word)
    return Named([], unknown)


def named_first(items: list, paper_ids: list[int], key=lambda item: item.paper_id) -> list:
    """`items` with those of `paper_ids` first (in their own order), the rest after."""
    if not paper_ids:
        return items
    wanted = set(paper_ids)
    return [i for i in items if key(i) in wanted] + [i for i in items if key(i) not in wanted]
