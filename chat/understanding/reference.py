"""Does a question refer to the previous answer's papers, borrow its topic, or stand alone?

- **Sources**: "which of these use transformers?", "compare them", "those from 2024", "summarize
  these": works on the previous answer's sources (all of them, filtered by the rest of the
  question). "the second one", "tell me more about [3]", "paper 2": one source.
  After a follow-up that asked something of all of them ("how do they retrieve documents?"),
  "these" are still all of them, not the ones its answer happened to quote.
- **Topic**: an ellipsis that only makes sense with the previous question ("what about since
  2024?", "and for video?", "why?", "any newer ones?"): the previous topic is borrowed.
- **Standalone**: everything else, and nothing of earlier turns goes into the search
  ("compare DPO and RLHF" after a hallucination question searches DPO and RLHF only), and a
  listing in its own words with no topic ("papers since 2025"; "any other papers since 2024?"
  and "more papers?" ask for more of the previous topic).

A pronoun ("it", "they", "them", "these", ...) refers back only when no word of the question's
own topic comes before it: "what is RLHF and why is it used?" stands alone, "how does it handle
long inputs?" does not; the subject of an inverted question refers back whatever is asked before
it in its clause ("what optimizers do they compare?", "what BLEU score does it reach?"). "it"
alone points at a paper only when the previous answer was about one paper; otherwise it borrows
the previous topic, as "which one" does. A part only papers have, with no topic ("who are the
authors?", "what are the limitations?"), is asked of the previous answer's papers. The table of cases these rules are measured on is
tests/chat/understanding/test_reference.py.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from chat.understanding.mentions import PUBLISHED_WHAT

SOURCES = "sources"  # work on (some of) the previous answer's sources
TOPIC = "topic"  # borrow the previous question's topic
STANDALONE = "standalone"

ORDINALS = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
    "fifth": 5, "5th": 5, "sixth": 6, "6th": 6, "seventh": 7, "7th": 7, "eighth": 8, "8th": 8,
    "ninth": 9, "9th": 9, "tenth": 10, "10th": 10,
}  # fmt: skip
_ORDINAL = "|".join(ORDINALS) + "|last"


@dataclass(frozen=True)
class Reference:
    kind: str  # SOURCES | TOPIC | STANDALONE
    numbers: tuple[int, ...] = ()  # source numbers of the previous answer (SOURCES)
    rest: str = ""  # the question's own words with the reference cut out: "use transformers"
    back: int = 1  # which earlier answer: 1 the previous one, 2 the one before...
    # "the second one", "the first two", "the last one": places among the papers as the answer
    # showed them (1-based, -1 the last), which need not be card numbers (a list may be newest
    # first; several cards may be chunks of one paper): chat.pipeline.previous maps them.
    places: tuple[int | None, ...] = ()  # (None: by its card number, `numbers` at that index)

    @property
    def followup_of(self) -> list[int] | None:
        return list(self.numbers) if self.kind == SOURCES else None


# "[3]", "paper 3", "source #2", "number 4", "no. 5"
_NUMBERED = re.compile(
    r"\[(\d{1,2})\]|\b(?:paper|source|result|reference|article|item|number|no\.?|#)\s*#?(\d{1,2})\b",
    re.I,
)
# "the second one", "the 3rd paper", "the last one", "the first two"?? (one source only)
_ORDINAL_REF = re.compile(
    rf"\b(?:the\s+)?({_ORDINAL})\s+(?:one|paper|source|result|article|study|link|reference)s?\b"
    rf"|^\s*(?:and\s+|what\s+about\s+|how\s+about\s+|tell\s+me\s+(?:more\s+)?about\s+)?the\s+({_ORDINAL})\s*\??\s*$"
    # "compare it with the first": the other side of a comparison
    rf"|\b(?:with|to|and|against|than|versus|vs\.?)\s+the\s+({_ORDINAL})\s*[?.!]*\s*$",
    re.I,
)
# "it" beside an ordinal ("compare it with the first"): the one paper the previous answer was on.
_IT = re.compile(r"\b(?:it|its|this\s+(?:one|paper)|that\s+(?:one|paper))\b", re.I)
_COUNT_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "2": 2, "3": 3, "4": 4, "5": 5}
# "the first two", "the top 3", "the last two papers"; not "the last 2 years" (a time window)
_ORDINAL_GROUP = re.compile(
    r"\b(?:the\s+)?(first|top|last)\s+(two|three|four|five|[2-5])"
    r"(?!\s+(?:years?|months?|weeks?|days?|decades?|quarters?)\b)"
    r"(?:\s+(?:ones|papers|sources|results|articles|studies))?\b",
    re.I,
)
# "the first and the third (one)", "the second and last papers"
_ORDINAL_PAIR = re.compile(
    rf"\b(?:the\s+)?({_ORDINAL})(?:\s+(?:one|paper))?\s+and\s+(?:the\s+)?({_ORDINAL})"
    r"(?:\s+(?:ones?|papers?|sources?|results?))?\b",
    re.I,
)
_JOINED = re.compile(r"\0(?:\s*(?:,|and|&|or|vs\.?|versus|with|to)\s*\0)+", re.I)
# A set of the previous sources: "which of these", "of them", "among those", "these papers".
_SET_REF = re.compile(
    r"\b(?:which|any|all|each|one|none|some|many|how\s+many)\s+of\s+(?:these|them|those|the\s+above)\b"
    r"|\b(?:of|among|from|in|between)\s+(?:these|them|those|the\s+above)\b"
    r"|\b(?:these|those|the\s+above)\s+(?:papers?|sources?|results?|ones|articles?|studies|works?)\b",
    re.I,
)
# "the largest one", "the most recent ones": one of the previous answer's papers, by a measure.
# (or "which is the most cited?", "which one was the earliest?")
_SUPERLATIVE_ONE = re.compile(
    r"\bthe\s+(?:\w+est|most\s+\w+|least\s+\w+)\s+ones?\b"
    r"|^\s*which\s+(?:one\s+|paper\s+)?(?:is|was)\s+the\s+(?:\w+est|most\s+\w+|least\s+\w+)\s*\??$",
    re.I,
)
# "is it true that…", "it is known that…": an "it" that refers to nothing.
_EXPLETIVE_IT = re.compile(
    r"\b(?:is|was|isn't|wasn't)\s+it\s+(?:true|possible|known|the\s+case|feasible|worth|common|"
    r"necessary|better|enough|realistic|likely)\b|\bit(?:'s|\s+is|\s+was)\s+(?:true|possible|known|"
    r"said|claimed|believed|often|widely|commonly|hard|difficult|easy|unclear|well)\b",
    re.I,
)
_PRONOUN = re.compile(
    r"\b(it|its|they|them|their|these|those|this|that|former|latter)\b"
    r"|\bwhich\s+(one)\b|\bwhich\s+of\s+the\s+(two)\b",
    re.I,
)
# A pronoun right after an auxiliary is the subject of an inverted question: the words before
# it in the same clause are what is asked ("what optimizers do they compare?", "what BLEU score
# does it reach?"), not what it refers to.
_INVERTED_SUBJECT = re.compile(
    r"\b(?:do|does|did|is|are|was|were|can|could|would|will|should|has|have|had)\s+$", re.I
)
# Where a clause of a compound question starts: "what is RLHF and why is it used?" (not the
# "and" of "what optimizer and learning rate schedule do they use?").
_CLAUSE_BREAK = re.compile(
    r"[,;:]|\s[-–—]\s|\s(?:because|while|whereas)\s|\s(?:and|but|or|so)\s+(?=(?:what|why|how|who|"
    r"which|where|when|whether|is|are|was|were|do|does|did|can|could|would|will|should|has|have)\b)",
    re.I,
)
# A question with no topic of its own that asks for papers in so many words ("papers since
# 2025", "show me the latest preprints") is a new listing, not an ellipsis of the previous topic
# ("any newer ones?", "more papers?" ask for more of it).
_ASKS_FOR_PAPERS = re.compile(r"\b(?:papers|preprints|articles|publications)\b", re.I)
_MORE_OF_IT = re.compile(
    r"\b(?:more|other|others|another|newer|older|similar|related|further|else|also|too|again)\b",
    re.I,
)
# "who are the authors?", "what dataset is used?" with no topic: a part of the papers just
# shown, which only they have.
_PART_OF_PAPERS = re.compile(
    r"\bthe\s+(?:main\s+|key\s+|first\s+)?(?:authors?|datasets?|code|baselines?|experiments?|"
    r"conclusions?|abstract|contributions?|findings?|limitations?)\b",
    re.I,
)
_ELLIPSIS_START = re.compile(
    r"^\s*(?:and|but|also|or|so|then|what\s+about|how\s+about|what\s+else|anything\s+else|"
    r"same\s+(?:for|but|with)|and\s+what\s+about|and\s+how\s+about|what\s+if|more\s+on)\b",
    re.I,
)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9+#.\-]*")
# Words that carry no topic of their own: question words, verbs and nouns of asking about
# papers, time words. A question made only of these (plus a reference) is not self-contained.
_GENERIC = frozenset(
    """a an the and or but so then also of for to in on at by with from about as is are was were be
    been being do does did done have has had can could would should will may might must shall
    what which who whom whose when where why how whether if than that this these those it its they
    them their there here i me my we our you your please tell show give list find explain describe
    summarize summarise summary compare comparison contrast more less most least any some all each
    every one ones other others another same different difference differences between among else
    much many few several only just also again still yet really very now new newer newest recent
    recently latest older oldest earlier later since until before after during last past next year
    years month months week weeks today ago paper papers work works study studies article articles
    source sources result results finding findings method methods approach approaches model models
    technique techniques idea ideas contribution contributions claim claims use uses used using
    mention mentions mentioned discuss discusses discussed cover covers covered talk talks propose
    proposes proposed show shows shown report reports reported evaluate evaluated evaluation
    achieve achieves handle handles deal deals work works working perform performs performance
    mean means meaning main key good better best bad worse worst big small like similar such way
    ways kind kinds type types thing things part parts about detail details details further
    elaborate expand exactly specifically instead though first second third last why how so ok
    okay thanks yes no not do does dataset datasets data benchmark benchmarks wrote write written
    author authors code limitation limitations baseline baselines experiment experiments metric
    metrics conclusion conclusions abstract against versus vs via into onto upon toward towards
    across through within""".split()
)


def _tokens(text: str) -> list[str]:
    return [w.lower().strip(".-") for w in _WORD.findall(text)]


def _is_year(word: str) -> bool:
    return bool(re.fullmatch(r"(19|20)\d\d", word))


def own_topic_words(text: str) -> list[str]:
    """The question's words that name a topic of its own (not generic, not time words)."""
    return [
        w for w in _tokens(text) if w and w not in _GENERIC and not _is_year(w) and not w.isdigit()
    ]


def _antecedent_before(text: str, position: int, singular: bool = False) -> bool:
    """Whether a topic word comes before `position`, which a pronoun there could refer to: in
    an earlier clause when the pronoun is an inverted question's subject ("what is RLHF and why
    is it used?", not "what optimizers do they compare?"). A `singular` pronoun ("it", "its")
    refers to no plural: "How many participants were in its user study?" asks of the paper."""
    before = text[:position]
    if _INVERTED_SUBJECT.search(before):
        breaks = list(_CLAUSE_BREAK.finditer(before))
        before = before[: breaks[-1].start()] if breaks else ""
    words = own_topic_words(before)
    if singular:
        words = [w for w in words if not (w.endswith("s") and not w.endswith(("ss", "us", "is")))]
    return bool(words)


def _cut(text: str, span: tuple[int, int]) -> str:
    rest = f"{text[: span[0]]} {text[span[1] :]}"
    return " ".join(rest.split()).strip(" ,;:?.!")


def _numbers(turn) -> list[int]:
    sources = getattr(turn, "sources", None) or ()
    return [int(s.get("number", i + 1)) for i, s in enumerate(sources)]


def _place(word: str) -> int:
    return -1 if word.lower() == "last" else ORDINALS[word.lower()]


def _some_sources(text: str, history: Sequence) -> Reference | None:
    """ "[1] and [3]", "the first two", "the first and the third": several papers of the latest
    answer that has that many sources."""
    numbered = list(_NUMBERED.finditer(text))
    group = _ORDINAL_GROUP.search(text)
    pair = _ORDINAL_PAIR.search(text)
    for back in range(1, len(history) + 1):
        numbers = _numbers(history[-back])
        if len(numbers) < 2:
            continue
        if len(numbered) >= 2:
            wanted = tuple(dict.fromkeys(int(m.group(1) or m.group(2)) for m in numbered))
            if set(wanted) <= set(numbers):
                joined = _JOINED.sub("\0", _NUMBERED.sub("\0", text))  # "[1] and [3]"
                rest = " ".join(joined.replace("\0", " ").split()).strip(" ,;:?.!")
                return Reference(SOURCES, wanted, rest, back)
            continue
        if group:
            count = _COUNT_WORDS[group.group(2).lower()]
            places = tuple(-count + i for i in range(count)) if group.group(1).lower() == "last" \
                else tuple(range(1, count + 1))
        elif pair:
            places = tuple(dict.fromkeys((_place(pair.group(1)), _place(pair.group(2)))))
        else:
            return None
        span = (group or pair).span()
        cards = tuple(numbers[p - 1] if p > 0 else numbers[p] for p in places if abs(p) <= len(numbers))
        return Reference(SOURCES, cards, _cut(text, span), back, places)
    return None


def _papers(turn) -> int:
    """How many papers an answer's cards are (several cards may be chunks of one paper)."""
    sources = getattr(turn, "sources", None) or ()
    return len({s.get("paper_id", s.get("number")) for s in sources})


def _one_source(text: str, history: Sequence) -> Reference | None:
    """ "[3]", "paper 3", "the second one": in the latest answer that has that many sources
    ("the second one" after a follow-up that kept one paper means the list before it)."""
    numbered = _NUMBERED.search(text)
    ordinal = None if numbered else _ORDINAL_REF.search(text)
    if numbered is None and ordinal is None:
        return None
    # "the first" after an answer on one paper ("summarize the second one") is the first of the
    # list before it, when there is one: that answer showed no first.
    lists = [b for b in range(1, len(history) + 1) if _papers(history[-b]) >= 2]
    for back in range(1, len(history) + 1):
        numbers = _numbers(history[-back])
        if not numbers or (ordinal and lists and _papers(history[-back]) < 2):
            continue
        if numbered:
            n, span = int(numbered.group(1) or numbered.group(2)), numbered.span()
        else:
            word = next(g for g in ordinal.groups() if g).lower()
            n, span = (numbers[-1] if word == "last" else ORDINALS[word]), ordinal.span()
        if n in numbers:
            if not numbered and back > 1 and (it := _it_in(text, history, back)):
                # "compare it with the first": the previous answer's paper and the list's first
                number, it_span = it
                rest = _cut(_cut(text, span), it_span) if it_span[0] < span[0] else _cut(
                    _cut(text, it_span), span)
                places = (None, _place(word))
                return Reference(SOURCES, (number, n), rest, back, places)
            places = () if numbered else (_place(word),)
            return Reference(SOURCES, (n,), _cut(text, span), back, places)
    return None


def _it_in(text: str, history: Sequence, back: int) -> tuple[int, tuple[int, int]] | None:
    """The card number, in the answer `back` turns ago, of the one paper the previous answer
    was on, when the question calls it "it" ("compare it with the first"); and where "it" is."""
    it = _IT.search(text)
    if it is None or _papers(history[-1]) != 1:
        return None
    paper_id = (getattr(history[-1], "sources", None) or ({},))[0].get("paper_id")
    for i, card in enumerate(getattr(history[-back], "sources", None) or ()):
        if paper_id is not None and card.get("paper_id") == paper_id:
            return int(card.get("number", i + 1)), it.span()
    return None


# A question of its own after an ellipsis names its thing: "what about Fusion-in-Decoder, how
# does it use the retrieved passages?".
_OWN_QUESTION = re.compile(
    r"[,;:]\s*(?:and\s+)?(?:what|why|how|who|which|where|when|does|do|did|is|are|can)\b", re.I
)


def _names_and_asks(text: str) -> bool:
    """Whether an elliptical opening names a topic, then asks a question with words of its own
    about it ("and for video, how does it work?" asks the previous question of video)."""
    asked = _OWN_QUESTION.search(text)
    return (
        asked is not None
        and bool(own_topic_words(text[: asked.start()]))
        and bool(own_topic_words(text[asked.end() :]))
    )


def _whole_set(history: Sequence) -> tuple[tuple[int, ...], int]:
    """What "these" and "they" are: the previous answer's cards, or when that answer asked
    something of a whole set of papers ("how do they retrieve documents?" after a list), that
    set's (the list's: "which of these use a dense retriever?" picks among the list, not
    among the papers the answer happened to quote). The card numbers, and how far back."""
    back = 1
    while back < len(history) and getattr(history[-back], "of_all", False):
        back += 1
    return tuple(_numbers(history[-back])), back


# "that optimizer", "this dataset", "the same benchmark": a thing the previous answer named, by
# its kind. (Not "that paper", "this one": the papers themselves, SOURCES above.)
_DEMONSTRATIVE = re.compile(r"\b(?:that|this|the\s+same)\s+([a-z][a-z-]{2,})\b", re.I)
_PAPERS_THEMSELVES = frozenset(
    "paper papers one ones work works study studies article articles source sources result "
    "results answer question topic author authors".split()
)
# A name as an answer writes it before its kind ("the Adam optimizer", "the WMT 2014 dataset" is
# no name: capitals or a capital inside, and not a sentence's opening word of any kind).
_NAME = r"(?:[A-Z][a-z]*[A-Z][\w.+-]*|[A-Z][\w+-]*\d[\w.+-]*|[A-Z][a-z][\w-]*)"
_NOT_NAMES = frozenset(
    "The This That These Those We Our Its Their A An In On For With By It They Each Both".split()
)


def _kind_forms(noun: str) -> str:
    singular = noun[:-1] if noun.endswith("s") and not noun.endswith("ss") else noun
    return rf"{re.escape(singular)}s?"


def demonstrated_name(question: str, previous) -> str | None:
    """The question with "that X" / "this X" replaced by the name the previous answer gave the X
    its question asked about: "Which paper proposed that optimizer?" after "What optimizer did
    the Transformer use?" (answered "We used the Adam optimizer …") is "Which paper proposed
    Adam?". None when the question points at no such thing: the kind must be a word of the
    previous question ("is it true that attention …" points at nothing), and the answer must
    write one name right before it ("Adam optimizer") or after it ("the optimizer Adam")."""
    if previous is None or not getattr(previous, "answer", ""):
        return None
    asked = set(_tokens(getattr(previous, "query", "") or previous.question))
    for match in _DEMONSTRATIVE.finditer(question):
        noun = match[1].lower()
        if noun in _PAPERS_THEMSELVES:
            continue
        forms = _kind_forms(noun)
        if not any(re.fullmatch(forms, w) for w in asked):
            continue
        said = re.search(
            rf"\b({_NAME})\s+{forms}\b|\b{forms}\s+(?:called\s+|named\s+)?({_NAME})(?![\w-])",
            previous.answer,
        )
        name = said and (said[1] or said[2])
        if name and name not in _NOT_NAMES:
            return f"{question[: match.start()]}{name}{question[match.end() :]}"
    return None


def asks_for_papers(text: str) -> bool:
    """Whether a question asks for papers in so many words ("papers on protein folding", "any
    preprints since 2025?"): a listing, not a question about the papers being read."""
    return bool(_ASKS_FOR_PAPERS.search(text))


def resolve(question: str, history: Sequence) -> Reference:
    """How `question` relates to the thread's previous answer (the last item of `history`, with
    its `sources`: the saved source cards). Rules only: pure and fast."""
    previous = history[-1] if history else None
    numbers = _numbers(previous) if previous else []
    if previous is None:
        return Reference(STANDALONE)
    text = question.strip()

    some = _some_sources(text, history)
    if some is not None:
        return some
    one = _one_source(text, history)
    if one is not None:
        return one
    them, back = _whole_set(history)
    if numbers:
        m = _SET_REF.search(text)
        if m:
            return Reference(SOURCES, them, _cut(text, m.span()), back)
        if _SUPERLATIVE_ONE.search(text):  # "the largest one": asked of all of them
            return Reference(SOURCES, them, text.strip(" ?.!"), back)

    for m in _PRONOUN.finditer(text):
        word = next(g for g in m.groups() if g).lower()
        if _antecedent_before(text, m.start(), singular=word in ("it", "its")):
            continue  # "what is RLHF and why is it used?": "it" is RLHF
        if word == "it" and any(
            e.start() <= m.start() < e.end() for e in _EXPLETIVE_IT.finditer(text)
        ):
            continue
        if word in ("this", "that") and own_topic_words(text[m.end() :]):
            continue  # "this method for X", "that idea of Y": a determiner with its own topic
        if numbers and word in ("they", "them", "their", "these", "those"):
            return Reference(SOURCES, them, _cut(text, m.span()), back)
        if numbers and _papers(previous) == 1:
            return Reference(SOURCES, tuple(numbers), _cut(text, m.span()))
        return Reference(TOPIC)
    if PUBLISHED_WHAT.search(text):
        # "what else has Patrick Lewis written?": an author's papers, whatever came before (it
        # was searched as "… — papers by Kaiming He", the previous author's, and found none).
        return Reference(STANDALONE)
    if _ELLIPSIS_START.match(text) and not _names_and_asks(text):
        return Reference(TOPIC)
    if own_topic_words(text):
        return Reference(STANDALONE)
    if numbers and _PART_OF_PAPERS.search(text):
        return Reference(SOURCES, them, text.strip(" ?.!"), back)
    if _ASKS_FOR_PAPERS.search(text) and not _MORE_OF_IT.search(text):
        return Reference(STANDALONE)
    return Reference(TOPIC)
