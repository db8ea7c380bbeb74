"""Follow-ups answered from the previous answer's papers instead of a new search.

"These" are the papers the reader saw: the previous answer's cards grouped by paper (a list shows
one line per paper, but the best papers bring two or three full-text chunks as cards of their
own), in the order the answer showed them (the order of first citation: a list may be newest
first). "The second one", "the first two" count in that order; "[3]" and "paper 3" name a card.

"which of these use transformers?" keeps the papers whose own text says so, and keeps the
sentence that does (abstract first, then the full text read from the PDF, with its page): the
question's words together in one sentence, or for a property that is said in many ways
("open-source": "we release our code", a github link) any of its usual phrasings; else, by
meaning, an abstract close to the words (the active embedder's cosine, at the relevance gate's
threshold for that model). "compare them" keeps them all.

A question about them beyond the reference ("what dataset did the second one use?", "what
datasets do they use?") is then searched within those papers only, so their full text answers
(chat.pipeline.answer); a bare reference ("tell me more about [3]") reads the abstract.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from asgiref.sync import sync_to_async
from django.db import connection

from chat.llm import templates as T
from chat.llm.extractive import quotable_body_sentences
from chat.llm.sentences import has_final_stop, split_sentences
from chat.retrieval.chunks import pages_label
from chat.retrieval.dense import vector_literal
from chat.retrieval.relevance import THRESHOLDS
from chat.retrieval.search import SearchHit
from chat.understanding.analysis import analyse
from chat.understanding.intent import asks_of_shown
from chat.understanding.reference import Reference, own_topic_words
from papers.embeddings import get_embedder
from papers.embeddings.query_cache import query_vector
from papers.indexing.passages import document_text

_PAPERS = """
SELECT id, arxiv_id, title, authors_text, published, primary_category, categories, abstract
FROM papers_paper WHERE id = ANY(%s) AND NOT hidden
"""
_BEST_PASSAGE = """
SELECT paper_id, max(1 - (embedding <=> %s::vector)) FROM papers_passage
WHERE paper_id = ANY(%s) AND model = %s AND kind = 'abstract' GROUP BY paper_id
"""
# The full text of the papers, chunk by chunk in reading order (one embedder's chunks: each
# model has its own copy of the same spans).
_CHUNKS = """
SELECT ps.paper_id, ps.page, ps.page_end, ps.section,
       substr(ft.text, ps.start + 1, ps."end" - ps.start)
FROM papers_passage ps JOIN papers_fulltext ft ON ft.paper_id = ps.paper_id AND ft.status = 'ok'
WHERE ps.paper_id = ANY(%s) AND ps.kind = 'fulltext' AND ps.model = %s
ORDER BY ps.paper_id, ps.position
"""

# Properties said in many ways: when the question asks for one, any of its phrasings in a
# sentence is evidence. Releasing code or models: "open-source", "we release our code",
# "code is available at", a repository link, OPT's "share with interested researchers".
_RELEASE_ASKED = re.compile(
    r"\bopen[- ]?sourc\w*|\bopen[- ]weights?\b|\bpublicly\s+available\b|\bopenly\s+available\b"
    r"|\b(?:releas\w*|shar\w*|publish\w*)\s+(?:\w+\s+){0,2}(?:code|models?|weights|checkpoints?"
    r"|implementations?)\b|\b(?:code|weights|checkpoints?|implementations?)\s+(?:\w+\s+){0,2}"
    r"(?:available|released|public)\b|\bgithub\b",
    re.IGNORECASE,
)
_RELEASE_SAID = re.compile(
    r"\bopen[- ]?sourc\w*|\bgithub\.com/|\bgitlab\.com/|\bhuggingface\.co/|\bgithub\s+repo"
    r"|\b(?:our|the|all|this|these|its)\s+(?:[\w-]+\s+){0,2}(?:code|models?|weights|checkpoints?"
    r"|implementations?|software|logbook|datasets?|data)\b[^.;,]{0,40}?\b(?:is|are|will\s+be"
    r"|has\s+been|have\s+been|can\s+be)\s+(?:made\s+)?(?:freely\s+|publicly\s+|openly\s+)?"
    r"(?:available|released|accessed|downloaded|open)\b"
    r"|\bwe\s+(?:\w+\s+){0,2}(?:release|releasing|open-source|share|sharing|make|publish)\s+"
    r"(?:(?:all|of|our|the|its|these|them|both|publicly|openly|freely|a|an)\s+){0,3}"
    r"(?:\(?[\w-]+\)?\s+)?(?:code|models?|weights|checkpoints?|implementations?|data(?:sets?)?"
    r"|logbook|source|software|scripts?)\b"
    r"|\b(?:fully\s+and\s+responsibly\s+)?share\s+(?:them\s+)?with\s+(?:interested\s+)?researchers",
    re.IGNORECASE,
)
# The strongest ways to say it: a repository link, "we release our code", "open-sourced".
_RELEASE_STRONG = re.compile(
    r"\bgithub\.com/|\bgitlab\.com/|\bhuggingface\.co/|\bwe\s+(?:\w+\s+){0,2}(?:release|releasing"
    r"|open-source)\b|\bopen-sourced\b|\bshare\s+(?:them\s+)?with\s+(?:interested\s+)?researchers",
    re.IGNORECASE,
)
# A plan ("an important next step is to test it on real hardware") or a negation.
_UNDONE = (
    r"\bfuture\b|\bnext\s+steps?\b|\bplan\s+to\b|\bwould\b|\bcould\b|\bmight\b|\bremains?\s+to\b"
    r"|\bnot\b|\bnever\b|\bno\b"
)
# Another's work the paper uses ("built on the open-source X codebase", "as T5 is publicly
# available"), a plan or a negation: not evidence that the paper itself does it.
_NOT_ITS_OWN = re.compile(
    r"\b(?:built|build|based|relies|rely|building)\s+(?:up)?on\b|\bwe\s+(?:use|used|adopt|adopted"
    r"|leverage|employ|employed|borrow)\b(?!\s+to\b)|\bas\s+[\w-]+\s+is\b|" + _UNDONE,
    re.IGNORECASE,
)

# Running on a real device ("which of these ran on real hardware?") is said by naming the device
# and the act: "We performed experiments on the 84-qubit superconducting quantum chip Rigetti
# Ankaa-2", "Using a superconducting quantum computer, we experimentally investigate"; a paper
# that simulates one ("a noise model sampled from the IBM Belem quantum computer to simulate",
# "a simulated 7-qubit superconducting quantum device") or names hardware in passing ("noises in
# real quantum devices can destroy") does not.
_RAN_ON_DEVICE_ASKED = re.compile(
    r"\b(?:real|actual|physical)\s+(?:quantum\s+)?(?:hardware|devices?|processors?|computers?"
    r"|chips?|machines?|qpus?)\b|\bon\s+(?:quantum\s+)?hardware\b|\bqpus?\b"
    r"|\bon\s+(?:a\s+|an\s+)?quantum\s+(?:computers?|processors?|devices?|chips?)\b",
    re.IGNORECASE,
)
_DEVICE = re.compile(
    r"\b(?:superconducting|trapped[- ]ion|ion[- ]trap|neutral[- ]atom|photonic|real|actual"
    r"|physical)\s+(?:[\w-]+\s+)?(?:quantum\s+)?(?:computers?|processors?|devices?|hardware"
    r"|chips?|qpus?)\b|\bquantum\s+processing\s+units?\b|\bqpus?\b|\b(?:rigetti|ionq"
    r"|quantinuum|ibm_\w+|ibmq\w*|ankaa\w*|sycamore)\b",
    re.IGNORECASE,
)
_RAN = re.compile(
    r"\b(?:experiment\w*|performed|ran|run|runs|executed|implemented|deployed|demonstrated"
    r"|carried\s+out|conducted|measured|using|utili[sz]ing)\b",
    re.IGNORECASE,
)
# (a chip "based on a square lattice" is still the paper's own run: only plans and negations)
_SIMULATED = re.compile(
    r"\bsimulat\w*|\bemulat\w*|\bnoise\s+models?\b|\bfake\b|\bprojected\b|" + _UNDONE,
    re.IGNORECASE,
)


def _ran_on_hardware(sentence: str) -> float:
    if not (_DEVICE.search(sentence) and _RAN.search(sentence)):
        return 0.0
    return 0.0 if _SIMULATED.search(sentence) else 1.0


@dataclass(frozen=True)
class Evidence:
    """The sentence of a paper that says what was asked, and where it is."""

    sentence: str
    passage: str  # the passage that holds it: the abstract, or a chunk of the full text
    page: int | None = None
    page_end: int | None = None
    section: str = ""

    @property
    def fulltext(self) -> bool:
        return self.page is not None


@dataclass
class PreviousPapers:
    hits: list[SearchHit]  # the papers to answer from, in the order the reader saw them
    numbers: list[int]  # their first card's number in the previous answer
    topic: str  # what the answer should look for in them
    asked: list[int]  # the previous card numbers the question referred to
    filter_words: list[str]  # "which of these use transformers" -> ["transformers"]
    shown: int = 0  # papers the previous answer showed
    cited: int = 0  # of them, those its text cites (the first `cited` of `hits` when unfiltered)
    referred: int = 0  # papers the question referred to (before any filter)
    filtered: bool = False  # the question picks some of them by what their text says
    evidence: dict[int, Evidence] = field(default_factory=dict)  # paper id: what says so
    left_out: list[str] = field(default_factory=list)  # titles of the referred papers not kept
    unread: list[str] = field(default_factory=list)  # titles of left-out papers never read
    read: int = 0  # referred papers whose full text was read (and searched), when filtered
    question: str = ""  # what to search within them ("" when the reference is the question)
    side_by_side: bool = False  # "compare them", "compare the first two"
    windowed: bool = False  # "which of them were published before 2021?"

    def summary(self) -> dict:
        """What the analysis event and the composer know of it (docs/WEBSOCKET.md)."""
        return {
            "shown": self.shown,
            "cited": self.cited,
            "referred": self.referred,
            "filtered": self.filtered,
            "kept": len(self.hits),
            "left_out": self.left_out,
            "unread": self.unread if self.filtered else [],
            "read": self.read,
            "question": self.question,
            "side_by_side": self.side_by_side,
            "windowed": self.windowed,
        }


def _stem(word: str) -> str:
    for suffix in ("ies", "es", "s", "ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def _word(word: str) -> re.Pattern:
    """The word with its inflections ("transformer" finds "Transformers", "transformer-based"),
    not longer words it starts ("ran" is not "random", "real" not "realistic")."""
    stem = _stem(word.lower())
    tail = 4 if len(stem) >= 5 else 2
    return re.compile(rf"(?<![a-z0-9]){re.escape(stem)}[a-z]{{0,{tail}}}(?![a-z0-9])")


def mentions(text: str, words: Sequence[str]) -> bool:
    """Every filter word occurs in `text` (as a word start, so "transformer" finds
    "Transformers" and "transformer-based")."""
    lower = text.lower()
    return all(_word(w).search(lower) for w in words)


_LONGEST = 60  # words: a longer "sentence" is a table or a run-on, not a quote
_BRACKET_NUMBER = re.compile(r"\[\s*\d")  # "[27]": the paper's own reference, read as ours
_CITED = re.compile(r"\[(\d+(?:\s*[,–-]\s*\d+)*)\]")


def shown_papers(
    sources: Sequence[dict], answer: str = "", every: bool = False, few: int = 2
) -> list[list[dict]]:
    """The previous answer's papers as the reader saw them, each as its cards (best first): in
    the order the answer first cites them; when it cites fewer than `few` (or with `every`),
    then every other card's paper."""
    by_paper: dict[int, list[dict]] = {}
    for card in sources:
        by_paper.setdefault(int(card["paper_id"]), []).append(card)
    order = _cited_papers(sources, answer)
    if len(order) < few or every:
        order += [paper for paper in by_paper if paper not in order]
    return [by_paper[paper] for paper in order]


def _cited_papers(sources: Sequence[dict], answer: str) -> list[int]:
    """The paper ids the answer's text cites, in the order it first cites them."""
    paper_of = {int(c["number"]): int(c["paper_id"]) for c in sources if "number" in c}
    order: list[int] = []
    for match in _CITED.finditer(answer or ""):
        for number in re.findall(r"\d+", match.group(1)):
            paper = paper_of.get(int(number))
            if paper is not None and paper not in order:
                order.append(paper)
    return order


def _referred(
    reference: Reference, papers: list[list[dict]], every: list[list[dict]]
) -> list[list[dict]]:
    """The papers `reference` points at: by place among those shown ("the second one"), all of
    them ("these"), or by card number ("[3]", among `every` card, cited or not)."""
    if reference.places:
        count = len(papers)
        picked = []
        for i, p in enumerate(reference.places):
            if p is None:  # by card number: "it" of "compare it with the first"
                n = reference.numbers[i]
                picked += [cards for cards in every if any(int(c["number"]) == n for c in cards)][:1]
            elif 0 < abs(p) <= count:
                picked.append(papers[p - 1 if p > 0 else count + p])
        return list({cards[0].get("paper_id", id(cards)): cards for cards in picked}.values())
    numbers = set(reference.numbers)
    if numbers >= {int(c["number"]) for cards in every for c in cards}:
        return papers  # "these": what the answer showed
    return [cards for cards in every if any(int(c["number"]) in numbers for c in cards)]


def _read(paper_ids: list[int]) -> dict[int, tuple]:
    with connection.cursor() as cursor:
        cursor.execute(_PAPERS, [paper_ids])
        return {row[0]: row for row in cursor.fetchall()}


def _chunks(paper_ids: list[int]) -> dict[int, list[tuple]]:
    """Each read paper's full-text chunks in reading order: (page, page_end, section, text)."""
    with connection.cursor() as cursor:
        cursor.execute(_CHUNKS, [paper_ids, get_embedder().name])
        found: dict[int, list[tuple]] = {}
        for paper_id, *chunk in cursor.fetchall():
            found.setdefault(paper_id, []).append(tuple(chunk))
        return found


def _similarities(paper_ids: list[int], text: str) -> tuple[dict[int, float], str]:
    embedder = get_embedder()
    vector = query_vector(embedder, text)
    with connection.cursor() as cursor:
        cursor.execute(_BEST_PASSAGE, [vector_literal(vector), paper_ids, embedder.name])
        return {pid: float(sim) for pid, sim in cursor.fetchall()}, embedder.name


def _named(row: tuple) -> str:
    """A paper as a reply names it: "**Title** (2022-05-02)"."""
    return f"**{' '.join(row[2].split())}** ({row[4]:%Y-%m-%d})"


def _hit(row: tuple, score: float, evidence: Evidence | None = None) -> SearchHit:
    paper_id, arxiv_id, title, authors, published, primary, categories, abstract = row
    hit = SearchHit(
        paper_id=paper_id, arxiv_id=arxiv_id, title=title, authors_text=authors,
        published=published, primary_category=primary, categories=list(categories or []),
        abstract=abstract, score=score, dense_rank=None, fulltext_rank=None,
        passage_text=document_text(title, abstract), snippet_html="",
    )  # fmt: skip
    if evidence is not None and evidence.fulltext:
        hit.passage_text, hit.kind = evidence.passage, "fulltext"
        hit.page, hit.page_end, hit.section = evidence.page, evidence.page_end, evidence.section
    return hit


def _concept_asked(rest: str) -> bool:
    """The question asks for a property said in many ways (released code, real hardware)."""
    return bool(_RELEASE_ASKED.search(rest) or _RAN_ON_DEVICE_ASKED.search(rest))


def _sentence_test(words: list[str], rest: str):
    """How a sentence shows the asked property: a phrasing of a known property, or the words
    together (of four or more words, two thirds in one sentence)."""
    if _RAN_ON_DEVICE_ASKED.search(rest):
        return _ran_on_hardware
    if _RELEASE_ASKED.search(rest):

        def release(sentence: str) -> float:
            if not _RELEASE_SAID.search(sentence) or _NOT_ITS_OWN.search(sentence):
                return 0.0
            return 2.0 if _RELEASE_STRONG.search(sentence) else 1.0

        return release
    present = [_word(w) for w in words]
    if not present:
        return None
    needed = len(present) if len(present) <= 3 else math.ceil(2 * len(present) / 3)

    def together(sentence: str) -> float:
        lower = sentence.lower()
        found = sum(1 for w in present if w.search(lower))
        return float(found) if found >= needed and not _NOT_ITS_OWN.search(sentence) else 0.0

    return together


def _whole(sentences: list[str], chunk: bool) -> list[str]:
    """The sentences a quote may be: not a last one of an abstract cut without its stop (a
    chunk's are the composer's own: chat.llm.extractive.quotable_body_sentences), not a
    run-on, none with a numbered reference."""
    if not chunk and sentences and not has_final_stop(sentences[-1]):
        sentences = sentences[:-1]
    return [
        s for s in sentences if 3 <= len(s.split()) <= _LONGEST and not _BRACKET_NUMBER.search(s)
    ]


def _evidence(test, abstract: str, chunks: list[tuple]) -> Evidence | None:
    """The sentence that says it best by `test` (a score, 0 for no), one of the abstract
    counting one more (what the paper claims for itself); the earliest of equals."""
    best, found = 0.0, None
    for sentence in _whole(split_sentences(abstract), chunk=False):
        score = test(sentence)
        if score and score + 1.0 > best:
            best, found = score + 1.0, Evidence(sentence, abstract)
    for page, page_end, section, text in chunks:
        for sentence in _whole(quotable_body_sentences(text, section or ""), chunk=True):
            score = test(sentence)
            if score > best:
                best, found = score, Evidence(sentence, text, page, page_end or page, section or "")
    return found


# Verbs of doing that any paper's text has in some sense ("which of these ran on real hardware"):
# the other words say what was done.
_DOING = frozenset(
    """ran run runs running tested test tests testing trained train conduct conducted perform
    performed execute executed apply applied try tried evaluate evaluated experiment experimented
    implement implemented do did done""".split()
)
# Verbs of a time filter ("which of them were published before 2021?"): the window says it.
_TIME_VERBS = frozenset(
    "published publish appeared appear released release submitted written came out posted".split()
)
# A question that picks some of the papers ("which of these…", "do any of them…", "only those
# with…"); others ("what do these have in common?", "summarize them") read all of them.
_SELECTS = re.compile(
    r"\b(?:which|what)\s+(?:of|ones?)\b|\bany\s+of\b|\bdo\s+any\b|\bonly\b|\bamong\b"
    r"|\b(?:those|ones|papers)\s+(?:that|which|with|about|on)\b|\bis\s+there\s+one\b"
    r"|\bhow\s+many\s+of\b",
    re.IGNORECASE,
)
# What is left of a bare reference ("tell me more about [3]", "summarise the first one"): no
# question of its own to search the papers for.
_BARE = re.compile(
    r"^(?:(?:and|so|ok|okay|please|now)\s+)*(?:(?:tell|show)\s+me\s+(?:more\s+)?(?:about|on)?|"
    r"more\s+(?:on|about)|(?:what|how)\s+about|summari[sz]e|summary(?:\s+of)?|tl;?dr(?:\s+of)?"
    r"|details?(?:\s+(?:on|of|about))?|explain|describe|what\s+(?:is|was|are)|what's|open"
    r"|read|go\s+on)?\s*(?:it|this|that|them|these|those)?\s*(?:please)?$",
    re.IGNORECASE,
)
_SIDE_BY_SIDE = re.compile(
    r"\b(?:compare|comparison|contrast|differ\w*|versus|vs\.?|in\s+common)\b", re.I
)


def _asks(rest: str) -> str:
    """The question asked about the referred papers, "" for a bare reference."""
    rest = " ".join(rest.split()).strip(" ,;:?.!")
    return "" if _BARE.match(rest) or _SIDE_BY_SIDE.search(rest) else rest


async def previous_papers(
    reference: Reference,
    sources: Sequence[dict],
    now: datetime,
    question: str = "",
    answer: str = "",
) -> PreviousPapers:
    """The previous answer's papers that `reference` points at (see the module docstring); a
    time window in the rest of the question ("which of these are from 2024?") filters too.
    Given the `question`, only one that picks papers filters them by its words; `answer` (the
    previous answer's text) gives the order the papers were shown in."""
    # Picking some of them ("which of these…", "compare them") after an answer that cited one
    # paper picks among all its cards' papers; asking about them ("what optimizer do they
    # use?" after the Transformer's BLEU score) asks about the paper it cited.
    picks = not question or bool(_SELECTS.search(question) or _SIDE_BY_SIDE.search(question))
    shown = shown_papers(sources, answer, few=2 if picks else 1)
    referred = _referred(reference, shown, shown_papers(sources, answer, every=True))
    firsts = [cards[0] for cards in referred]
    rows = await sync_to_async(_read)([int(c["paper_id"]) for c in firsts])
    firsts = [c for c in firsts if int(c["paper_id"]) in rows]  # hidden since: left out
    window = analyse(reference.rest, now) if reference.rest else None
    words = [w for w in own_topic_words(window.query if window else "") if w not in _DOING]
    if window is not None and (window.start or window.end):
        words = [w for w in words if w not in _TIME_VERBS]  # "published before 2021": the window
    kept = firsts
    windowed = window is not None and bool(window.start or window.end)
    if windowed:
        kept = [
            c for c in kept
            if (window.start is None or rows[int(c["paper_id"])][4] >= window.start)
            and (window.end is None or rows[int(c["paper_id"])][4] <= window.end)
        ]  # fmt: skip
    selects = not question or bool(_SELECTS.search(question))
    filtered = selects and len(kept) > 1 and bool(words or _concept_asked(reference.rest))
    evidence: dict[int, Evidence] = {}
    chunks: dict[int, list[tuple]] = {}
    if filtered:
        ids = [int(c["paper_id"]) for c in kept]
        chunks = await sync_to_async(_chunks)(ids)
        concept = _concept_asked(reference.rest)
        test = _sentence_test(words, reference.rest)
        for paper_id in ids:
            row = rows[paper_id]
            found = test and _evidence(
                test, document_text(row[2], row[7]), chunks.get(paper_id, [])
            )
            if found:
                evidence[paper_id] = found
        limits = None
        similar: dict[int, float] = {}
        # By meaning only when no paper says it in words: beside papers that say it, a paper
        # merely close to the words is noise ("reasoning by analogy" for "question answering").
        if words and not concept and not evidence:
            similar, model = await sync_to_async(_similarities)(ids, " ".join(words))
            limits = THRESHOLDS.get(model)

        def keep(card: dict) -> bool:
            paper_id = int(card["paper_id"])
            if paper_id in evidence:
                return True
            return limits is not None and similar.get(paper_id, 0.0) >= limits.dense

        kept = [c for c in kept if keep(c)]
    topic = " ".join(words)
    if not topic and len(kept) == 1:
        topic = " ".join(rows[int(kept[0]["paper_id"])][2].split())  # its title: what it is about
    kept_ids = {int(c["paper_id"]) for c in kept}
    return PreviousPapers(
        hits=[
            _hit(
                rows[int(c["paper_id"])],
                float(c.get("score", 0.0)),
                evidence.get(int(c["paper_id"])),
            )
            for c in kept
        ],  # fmt: skip
        numbers=[int(c["number"]) for c in kept],
        topic=topic or reference.rest,
        asked=[int(c["number"]) for cards in referred for c in cards],
        filter_words=words,
        shown=len(shown),
        cited=len(_cited_papers(sources, answer)),
        referred=len(firsts),
        filtered=filtered,
        evidence=evidence,
        left_out=[
            _named(rows[int(c["paper_id"])]) for c in firsts if int(c["paper_id"]) not in kept_ids
        ],  # fmt: skip
        read=len(chunks),
        unread=[
            _named(rows[int(c["paper_id"])])
            for c in firsts
            if int(c["paper_id"]) not in kept_ids | set(chunks)
        ],  # fmt: skip
        # "who are the authors?": their records, nothing to search in their text.
        question=""
        if filtered or (windowed and not words) or asks_of_shown(reference.rest or question)
        else _asks(reference.rest),
        windowed=windowed and not filtered,
        side_by_side=len(kept) > 1 and bool(_SIDE_BY_SIDE.search(reference.rest or question)),
    )


def where(evidence: Evidence) -> str:
    """ "p. 7" for a sentence of the full text, "" for one of the abstract."""
    return pages_label(evidence.page, evidence.page_end) if evidence.fulltext else ""


def nothing_kept_reply(papers: PreviousPapers) -> str:
    """The reply when no referred paper says what was asked: which were read, no citation."""
    titles = "; ".join(papers.left_out)
    if not papers.filtered:  # a time window left them all out
        return f"{NONE_IN_WINDOW.format(count=papers.referred, titles=titles)} {SEARCH_ALL}"
    text = NONE_KEPT.format(count=papers.referred, titles=titles)
    if papers.unread and not papers.read:
        text += " " + T.SELECTION_ABSTRACTS_ONLY
    elif papers.unread:
        text += " " + T.SELECTION_UNREAD.format(titles="; ".join(papers.unread))
    return f"{text} {SEARCH_ALL}"


NONE_KEPT = "None of the {count} papers of the previous answer says so in its text: {titles}."
NONE_IN_WINDOW = "None of the {count} papers of the previous answer is in that window: {titles}."
SEARCH_ALL = "Ask without “these” to search the whole catalogue."
