"""The `extractive` backend: an answer made only of sentences quoted from the sources.

No model, no network, deterministic. It is the default without an API key and the fallback when
another backend fails, so it must never invent anything: every sentence it writes after the
lead-in is a verbatim sentence of one source followed by that source's [n], and a source it did
not quote is never cited.

Sentences are scored against the question with BM25 weights (each sentence a document), then
picked greedily: a term already covered counts less each time (so the answer covers the question
rather than repeating its commonest word), and a source already quoted counts less (so the
answer draws on several papers).
"""

from __future__ import annotations

import asyncio
import itertools
import math
import re
from collections import Counter
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from functools import lru_cache

from chat.understanding.answer_kinds import (
    asking_words,
    heading_says,
    others_limits,
    reason_weight,
    said_by_kind,
)
from chat.understanding.quantity import (
    SMALLEST,
    asked_things,
    asks_for_extreme,
    asks_for_quantity,
    number_weight,
    numbers_in,
    states_range,
)
from chat.understanding.variants import OTHER_SIZE_WEIGHT, about_other_size, sizes_in
from papers.fulltext.tables import RowSentence, extreme_row

from .base import LLM_UNAVAILABLE, AnswerRequest, LLMError, LLMStream, SourceText, Usage
from .sentences import (
    STOPWORDS,
    ItemSentence,
    NoteSentence,
    answers_nothing,
    asked_heads,
    content_words,
    has_final_stop,
    is_caption,
    is_figure_text,
    is_float_text,
    is_heading,
    is_stopped,
    names_asked_things,
    opens_list,
    passage_sentences,
    runs_on,
    split_sentences,
    stems,
    terms,
    with_abbreviations,
)
from .templates import LEAD_IN, NO_SOURCES, NOT_ENOUGH, PARTLY  # noqa: F401 (re-exported)

MIN_SENTENCES, MAX_SENTENCES = 3, 6
MIN_WORDS, MAX_WORDS = 3, 90  # shorter is a fragment, longer is a run-on we would not quote
K1, B = 1.2, 0.75  # BM25's usual constants
TERM_REPEAT_DECAY = 0.5  # a query term already covered counts half as much each time again
SOURCE_REPEAT_DECAY = 0.6  # a source already quoted counts this much less each time again
# The share of the question's (idf-weighted) terms one paper must mention for an answer.
# `python -m bench.llm_extractive` (400 SciFact claims): 0.25 cites the gold abstract among
# 8 for 84% of claims and says "not enough" for 84% of them against 8 unrelated abstracts;
# 0.2: 90% / 74%; 0.3: 76% / 91%; 0.4: 63% / 99%.
MIN_COVERAGE = 0.25
# What the question calls a paper it names counts this much of its IDF (answering_scores): 0.25
# also let "RWKV" drop out of "Is RWKV cheaper than transformers at inference?".
NAME_WEIGHT = 0.5
# A table row labelled with the variant the question names, against sentences on every variant.
ROW_VARIANT_WEIGHT = 1.5
TITLE_WEIGHT = 0.6  # a title names a topic; a sentence of the abstract says something about it
# A question's word that only a body sentence's context holds (its section's heading, the
# sentence opening its list) counts this much of a word of its own: "What hardware was the
# Transformer trained on?" is answered under "5.2 Hardware and Schedule" by "We trained our
# models on one machine with 8 NVIDIA P100 GPUs", which never says "hardware".
CONTEXT_WEIGHT = 0.5
# For a question after a quantity, a sentence whose new number stands within VALUE_NEAR words of
# what was asked gives its value ("the initial learning rate of 0.0015", "3.8 billion FLOPs"),
# where another states some number beside the question's words ("By only using Batch
# Normalization (BN-Baseline), we match the accuracy of Inception in less than half the number
# of training steps" for "What initial learning rate did the Inception baseline use …?").
VALUE_WEIGHT = 1.25
VALUE_NEAR = 3
# A number next to what was asked but without the question's qualifier is the value of another
# quantity ("… used dropout rate Pdrop = 0.1, instead of 0.3" for "What learning rate schedule
# did the Transformer use?"): weighed as a sentence on another model size is.
OTHER_VALUE_WEIGHT = OTHER_SIZE_WEIGHT
# Numbered references inside an abstract ("as shown in [12]") would read as our citations.
_BRACKET_NUMBER = re.compile(r"\[\s*\d")
# In a paper's body they are everywhere ("We used the Adam optimizer [20] with β1 = 0.9, β2 =
# 0.98"): such a sentence is quoted with its references marked as the paper's ("[ref. 20]").
_REFERENCE = re.compile(r"\[\s*(\d[\d,;–\- ]*)\]")
# How a sentence cut at its start begins: a lower-case word, or the year of a citation.
_INSIDE = re.compile(r"[a-z]|\(?(?:19|20)\d\d[a-z]?[),;]")


@dataclass
class _Sentence:
    source: SourceText
    position: int
    text: str
    term_counts: Counter

    is_title: bool
    # A full-text sentence's context, as terms: the heading of the section it stands in, and
    # for a list's item the sentence opening the list.
    context: frozenset[str] = frozenset()
    # The label of the list item it belongs to ("BN-x5" of "BN-x5: Inception with Batch
    # Normalization … The initial learning rate was increased by a factor of 5, to 0.0075."),
    # as printed; "" outside a labelled item.
    label: str = ""
    # For the first sentence of a bulleted list's item, the list's (its first item's position
    # in the passage), and for a table's row its table's (its first row's); -1 for any other.
    listed: int = -1

    @property
    def length(self) -> int:
        return sum(self.term_counts.values())


def _source_sentences(source: SourceText) -> tuple[bool, list[str]]:
    """A source's sentences, and whether the first is its title (kept as one sentence of its own
    even when the passage runs on without a full stop after it)."""
    text = source.text.strip()
    title = source.title.strip()
    has_title = bool(title) and text.startswith(title)
    # (A full-text chunk's table rows are sentences of their own, with caption and header.)
    split = passage_sentences if source.where else split_sentences
    body = split(text[len(title) :].lstrip(" .:\n") if has_title else text)
    # Passages may be cut to fit a prompt: a last sentence with no final stop is likely a
    # fragment, and quoting it with a full stop added would put words in the authors' mouths.
    if body and (not has_final_stop(body[-1]) or runs_on(body[-1])):
        body.pop()
    # A full-text chunk may begin inside a sentence its previous chunk holds: not quotable
    # ("and dropout rate 0.1.", "(2019) also propose splitting documents…" after "Wang et al.").
    if source.where and body and _INSIDE.match(body[0]):
        body.pop(0)
    return has_title, [title, *body] if has_title else body


def _quotable(sentence: str) -> bool:
    words = len(sentence.split())
    return MIN_WORDS <= words <= MAX_WORDS and not _BRACKET_NUMBER.search(sentence)


def _body_candidates(source: SourceText, sentences: list[str]) -> list[_Sentence]:
    """The quotable sentences of a full-text chunk, each knowing its context. Never quoted: a
    heading ("5.2 Hardware and Schedule"), a sentence opening a list (it says nothing alone), a
    fragment without a stop (a sentence a figure's caption cut in two: "In our evaluation, we
    used"), a figure's printed text; a list's items are, with the sentence opening the list as
    their context ("RWKV: 169m, 430m, 1.4b, 3b, 7b, 14b")."""
    found = []
    heading = frozenset(terms(source.section))
    credits = bool(_CREDITS.match(source.section))
    opening: frozenset[str] = frozenset()
    opened_at = -2
    label, labelled_at = "", -2
    listed, item_at, labelled_item = -1, -ITEM_REACH - 1, False
    rows_from = -1  # the first row of the table whose rows are being read, a list of its own
    for position, text in enumerate(sentences):
        if not isinstance(text, RowSentence):
            rows_from = -1
        elif rows_from < 0:
            rows_from = position
        if is_heading(text):
            heading, opening = frozenset(terms(text)), frozenset()
            label, item_at = "", -ITEM_REACH - 1
            credits = bool(_CREDITS.match(text))
            continue
        if run_in_heading(text):
            # A paragraph's run-in heading ("Recent Advances in Active Learning. Recent
            # advancement in AL are …", "Baselines. We compared our method …"): what the
            # paragraph is about, never a quote of its own.
            heading, opening, label = frozenset(terms(text)), frozenset(), ""
            item_at = -ITEM_REACH - 1
            continue
        # (A bulleted item's label alone on its line, "• Microsoft Research Paraphrase Corpus
        # (MSRPC):", opens it: the item's words are the sentence after it.)
        item = isinstance(text, ItemSentence) or item_at == position - 1 and labelled_item
        labelled_item = isinstance(text, ItemSentence) and opens_list(text)
        if item:
            if position - item_at > ITEM_REACH:
                listed = position  # a new list
            item_at = position
        if position and is_float_text(sentences[position - 1]) and _INSIDE.match(text):
            # The rest of a sentence a float was printed into, its start before the float
            # ("… See text for more details. as well as various Web sources and is intended for
            # open-domain QA …" after DPR's Table 1): not quotable.
            continue
        if _PLACEHOLDER.search(text):
            continue  # a printed prompt or template ("Summarize the following paragraph. <The
            # Abstract of this paper goes here> The paper presents …"): a model's words
        if (
            _ROADMAP.search(text)
            or _PUBLISHING.search(text)
            or _EMAIL.search(text)
            or _FORM.search(text)
            or _FUNDING.search(text)
            or _ASKED.search(text)
        ):
            # Where the paper says what, its publisher's notices, or a sentence run into an
            # author's footnote ("… relevant scales requires additional theoretical and
            # technological developments. ∗ mdupont@rigetti.com Here, we use …"): not what it says.
            # (A form's questions, as a datasheet prints them, neither; nor who paid for it;
            # nor a question the paper asks, which says nothing yet.)
            continue
        if (credits and not FLOAT_LABEL.search(text)) or _THANKS.match(text):
            # Who did and paid for the work, not what it found. (A table or figure is printed
            # wherever the page had room: ULSA's table of Fleiss' kappas follows its
            # acknowledgements.)
            continue
        if (mark := item_label(text)) is not None:
            label, labelled_at = mark, position
        elif position - labelled_at > LABEL_REACH:
            label = ""
        if opens_list(text):
            opening = frozenset(terms(text))
            opened_at = position
            continue
        item = not is_stopped(text) and not isinstance(text, (RowSentence, NoteSentence))
        if item and not opening:
            continue  # a fragment
        # The sentence right after the opening is what it introduces, stopped or not ("… tested
        # on the validation data:" / "Inception: … trained with the initial learning rate of
        # 0.0015."); after a sentence of its own, the list is over.
        introduced = not isinstance(text, RowSentence) and (item or position == opened_at + 1)
        context = heading | opening if introduced else heading
        if not item and not isinstance(text, RowSentence):
            opening = frozenset()
        words = len(text.split())
        if MIN_WORDS <= words <= MAX_WORDS and not is_figure_text(text):
            if is_caption(text):
                context = frozenset()
            found.append(
                _Sentence(
                    source,
                    position,
                    text,
                    Counter(terms(text)),
                    False,
                    context,
                    label,
                    rows_from if rows_from >= 0 else listed if item_at == position else -1,
                )
            )
    return found


# A bulleted list's next item follows its previous one within this many sentences (an item may
# run on: "• Quora Question Pairs 50K split (QQP 50K): … is a paraphrase detection dataset. We
# only use the true paraphrase pairs. We use the 50K dataset split …"); further on, a new list.
ITEM_REACH = 4


# The sections that credit people, never an answer about the work ("Bo Peng Original RWKV idea,
# original code, … and trained RWKV models from 0.1B to 14B" opened "What is the largest RWKV
# model?"; "We also acknowledge the members of the RWKV Discord server" answered its
# limitations): their heading, or a paragraph opening with it ("Acknowledgements We are grateful
# to …").
_CREDITS = re.compile(
    r"(?:[A-Z]?[\d.]*\s*)(?:acknowledge?ments?|author\s+contributions?|funding|"
    r"competing\s+interests)\b",
    re.IGNORECASE,
)
_RUN_IN_GLUE = frozenset("a an and for in of on the to with via".split())
RUN_IN_WORDS = 6


def run_in_heading(sentence: str) -> bool:
    """A paragraph's heading printed at its start and split off as a sentence: a few words, each
    capitalised but the glue words ("Recent Advances in Active Learning.", "Baselines.")."""
    words = sentence.rstrip(".").split()
    return (
        sentence.endswith(".")
        and not isinstance(sentence, (RowSentence, NoteSentence))
        and 0 < len(words) <= RUN_IN_WORDS
        and all(w[:1].isupper() or w in _RUN_IN_GLUE for w in words)
        and words[0][:1].isupper()
        and not any(c.isdigit() for c in sentence)
    )


# The paper's plan of itself ("The remainder of the paper is structured as follows: Section 1
# revises …"), quoted for "What are the open problems in QAOA research?".
_ROADMAP = re.compile(
    r"\b(?:remainder|rest)\s+of\s+(?:this|the|our)\s+(?:paper|article|work|manuscript|report)\s+"
    r"is\s+(?:structured|organi[sz]ed|laid\s+out|arranged)|\bis\s+(?:structured|organi[sz]ed)\s+as\s+"
    r"follows\b",
    re.IGNORECASE,
)
# A publisher's notices and index terms printed on a first page: "Request permissions from
# permissions@acm.org", "Human-centered computing → Empirical studies in interaction design"
# (quoted for "How many participants were in its user study?").
_PUBLISHING = re.compile(
    r"permissions@acm\.org|\bRequest permissions from\b|\bPermission to make digital or hard "
    r"copies\b|\bACM Reference Format\b|\b(?:Human-centered computing|Computing methodologies|"
    r"Information systems|Applied computing|Theory of computation|Software and its engineering|"
    r"Security and privacy|Social and professional topics)\s*→"
)
# An e-mail address: an author's footnote, printed wherever the page put it.
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# A form's question to whoever fills it in, as a datasheet or checklist prints it ("If so,
# please describe how these relationships are made explicit.", OPT's datasheet, quoted first
# for "What is the relationship between ResNet and batch normalization?").
_FORM = re.compile(
    r"\bif\s+(?:so|not|yes|no)\s*,\s*please\b|^\s*please\s+(?:describe|provide|explain|specify"
    r"|list|state|indicate)\b",
    re.IGNORECASE,
)
# Who paid for the work, said outside an acknowledgements section ("The construction of the
# Multi-LexSum dataset was also funded in part by NSF Convergence Accelerator Award ITE-2132318",
# quoted first for "What datasets does Multi-LexSum provide and how large is it?"): a funder named
# after "funded/supported by", or a grant's number.
_FUNDING = re.compile(
    r"\b(?:funded|supported|sponsored|financed)\s+(?:in\s+part\s+|partially\s+|partly\s+)?by\b"
    r"[^.;]{0,120}?\b(?:[Gg]rants?|[Aa]wards?|Foundation|[Ff]ellowships?|NSF|DARPA|NIH|ERC|DOE|ONR"
    r"|AFOSR|IARPA|NSERC|DFG|JSPS|NSFC)\b(?!-)"
    r"|\b(?:Grant|Award)\s+(?:(?:No\.?|Number|#)\s*[A-Z0-9][-A-Z0-9/]{3,}|[A-Z]{2,}-?\d{3,})"
)
# A sentence that asks: a datasheet's question ("USE Has the dataset been used for any tasks
# already?", quoted for "What datasets does Multi-LexSum provide …") or a rhetorical one.
_ASKED = re.compile(r"\?[\s\"'”’)\]]*$")
# A placeholder of a printed prompt or template, as papers' appendices show them.
_PLACEHOLDER = re.compile(r"<[A-Z][^<>]{3,80}>")
_THANKS = re.compile(r"acknowledge?ments?\s+[A-Z]", re.IGNORECASE)
# A table's or figure's label in its printed text ("… 0.87 Table 2:", "Figure 3."): a float,
# printed wherever the page had room.
FLOAT_LABEL = re.compile(r"\b(?:Table|Figure|Fig\.)\s*\d+[.:]")


# A list's item opened by its label: "BN-x5: Inception with Batch Normalization and the
# modifications in Sec. 4.2.1.", "Linear Reading: A non-personalized baseline …" (one to three
# words, the first a capital or a digit, then a colon). A caption ("Table 1: …") is none.
_ITEM_LABEL = re.compile(r"([A-Z0-9][\w.+/-]*(?: [\w.+/-]+){0,2}):\s+\S")
# The item's label stays with this many sentences after the one it opens: an item runs on for a
# sentence or two ("The initial learning rate was increased by a factor of 5, to 0.0075."), and
# where the list ends is not printed.
LABEL_REACH = 2


def item_label(sentence: str) -> str | None:
    """The label opening a list's item, as printed ("BN-x5"), or None."""
    if isinstance(sentence, RowSentence) or is_caption(sentence):
        return None
    match = _ITEM_LABEL.match(sentence)
    if match is None or any(w.lower() in STOPWORDS for w in match[1].split()):
        return None  # "We use three: …" opens a list, names no item
    return match[1]


def other_item(sentence: _Sentence, question: str, own: Iterable[_Sentence]) -> bool:
    """Whether `sentence` belongs to a list item the question does not name while it names
    another item of the same passage (`own`: its sentences): "BN-x30: Like BN-x5, but with
    the initial learning rate 0.045" for "What learning rate did BN-x5 use?"."""
    return (
        bool(sentence.label)
        and not _names_label(question, sentence.label)
        and any(o.label and _names_label(question, o.label) for o in own)
    )


def _names_label(question: str, label: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(label)}(?![\w-])", question, re.IGNORECASE) is not None


def quotable_body_sentences(text: str, section: str = "") -> list[str]:
    """The sentences of a chunk of a paper's body this composer may quote, in reading order:
    what another part of the answer path quotes from a chunk must be one of them."""
    chunk = SourceText(0, "", "", "", text, where=section or "body", section=section)
    return [s.text for s in _candidates([chunk])]


def _plain(text: str) -> str:
    # Letters and digits alone: a title page may break a word across lines ("Accelerating Deep
    # Network Training b\ny\nReducing Internal Covariate Shift").
    return "".join(re.findall(r"\w+", text.lower()))


# A first page's section label run into its first sentence ("ABSTRACT The Quantum Approximate
# Optimization Algorithm (QAOA) is …"), or a paragraph's run-in heading the PDF glued to it
# ("Datasets.For the quantitative evaluation, we put forward …"): quoted without it.
_RUN_IN_LABEL = re.compile(
    r"^(?:ABSTRACT|Abstract|INTRODUCTION)[\s:.—–-]+(?=[A-Z])"
    r"|^[A-Z][a-z]+(?:\s[A-Za-z]+){0,2}\.(?=[A-Z][a-z])"
)


def _unlabelled(sentence: str) -> str:
    # (Only a plain sentence: a row's or a caption's own kind is kept as it is.)
    if type(sentence) is str and (label := _RUN_IN_LABEL.match(sentence)):
        return sentence[label.end() :]
    return sentence


def _candidates(sources: list[SourceText]) -> list[_Sentence]:
    found = []
    for source in sources:
        has_title, sentences = _source_sentences(source)
        if source.where:
            # The first page's title line is no sentence of the body, nor what the splitter
            # joins to it (the authors, their affiliations, the abstract's first words):
            # "NG-Scope: Fine-Grained Telemetry for NextG Cellular Networks [1, p. 1]" answered
            # "Explain the NG-Scope system".
            title = _plain(source.title)
            found += _body_candidates(
                source,
                [_unlabelled(t) for t in sentences if not (title and _plain(t).startswith(title))],
            )
            continue
        for position, text in enumerate(sentences):
            if _quotable(text):
                is_title = has_title and position == 0
                found.append(_Sentence(source, position, text, Counter(terms(text)), is_title))
    return found


# A web address in a sentence: its point is where something is ("… with their available
# open-source implementations at https://github.com/…"), which only a question after code,
# data or a release wants.
_ADDRESS = re.compile(r"https?://|\bwww\.|\bgithub\.com/", re.IGNORECASE)
_ASKS_WHERE = re.compile(
    r"\b(?:code|github|repositor\w*|repo|releas\w*|availab\w*|implement\w*|open[- ]?sourc\w*|"
    r"urls?|links?|websites?|download\w*|where|access\w*)\b",
    re.IGNORECASE,
)


def for_question(sentences: list[_Sentence], question: str) -> list[_Sentence]:
    """The candidates that may answer `question`: a sentence giving a web address only for a
    question after code, data, a release or where something is ("compare diffusion models and
    GANs for medical image generation" was answered "Finally, we gather the overviewed studies
    with their available open-source implementations at https://github.com/…")."""
    if _ASKS_WHERE.search(question):
        return sentences
    return [s for s in sentences if not _ADDRESS.search(s.text)]


def _idf(query: list[str], sentences: list[_Sentence]) -> dict[str, float]:
    """BM25's inverse document frequency of each query term, sentences as documents (a term
    found nowhere gets the highest value)."""
    n = len(sentences)
    df = {t: sum(1 for s in sentences if t in s.term_counts) for t in query}
    return {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in query}


def _bm25_weights(
    query: list[str], idf: dict[str, float], sentences: list[_Sentence], answering=frozenset()
) -> list[dict[str, float]]:
    """For each sentence, the BM25 weight of each query term it contains; a table's row whose
    cells hold none of them weighs nothing, unless it is `answering` (by id: the largest row of
    a table of what was asked, `_extreme_rows`)."""
    avg_len = sum(s.length for s in sentences) / len(sentences) or 1.0
    weights = []
    for s in sentences:
        if answers_nothing(s.text, query) and id(s) not in answering:
            weights.append({})
            continue
        norm = K1 * (1 - B + B * s.length / avg_len)
        scale = TITLE_WEIGHT if s.is_title else 1.0
        weights.append(
            {
                t: scale * idf[t] * s.term_counts[t] * (K1 + 1) / (s.term_counts[t] + norm)
                for t in query
                if s.term_counts[t]
            }
        )
    return weights


def _pick(sentences: list[_Sentence], weights: list[dict[str, float]], max_words: int):
    """Greedy selection with diminishing returns per covered term and per quoted source."""
    covered: Counter = Counter()
    quoted: Counter = Counter()
    chosen: list[_Sentence] = []
    remaining = set(range(len(sentences)))
    first_gain = None
    words = 0
    while remaining and len(chosen) < MAX_SENTENCES:

        def gain(i: int) -> float:
            term_gain = sum(w * TERM_REPEAT_DECAY ** covered[t] for t, w in weights[i].items())
            return term_gain * SOURCE_REPEAT_DECAY ** quoted[sentences[i].source.number]

        # Ties go to the better-ranked source, then to the earlier sentence: deterministic.
        best = max(remaining, key=lambda i: (gain(i), -sentences[i].source.number, -i))
        best_gain = gain(best)
        if best_gain <= 0:
            break
        first_gain = first_gain or best_gain
        # Up to MIN_SENTENCES, any sentence that says something about the question is welcome;
        # beyond, only ones nearly as useful as the first.
        floor = 0.4 if len(chosen) >= MIN_SENTENCES else 0.1
        if best_gain < floor * first_gain:
            break
        sentence = sentences[best]
        size = len(sentence.text.split())
        if chosen and words + size > max_words:
            remaining.discard(best)
            continue
        chosen.append(sentence)
        words += size
        covered.update(weights[best].keys())
        quoted[sentence.source.number] += 1
        # Drop what would only repeat this sentence: one with no term it lacks, and the title of
        # a paper already quoted (the answer's [n] leads to the title anyway).
        said = set(sentence.term_counts)
        remaining = {
            i
            for i in remaining
            if not set(sentences[i].term_counts) <= said
            and not (sentences[i].is_title and sentences[i].source is sentence.source)
        }
    return chosen


def _cite(sentence: _Sentence) -> str:
    """The sentence with its citation before its final punctuation: "... models [2]."."""
    match = re.search(r"[.!?]+$", sentence.text)
    end = match.group(0) if match else "."
    body = sentence.text[: match.start()] if match else sentence.text
    if sentence.source.where:  # a body's own references are not our sources
        body = _REFERENCE.sub(lambda m: f"[ref. {m[1].strip()}]", body)
    return f"{body.rstrip()} [{sentence.source.number}]{end}"


def _list_words(words: list[str]) -> str:
    quoted = [f"“{w}”" for w in words[:4]]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


# A word of the question is "mentioned" when a source has a term beginning with its stem, for
# stems this long: "knowing" is said by "without any knowledge of the game rules".
_PREFIX_STEM = 4


def unmentioned(words: list[str], mentioned: list[set[str]]) -> list[str]:
    """The `words` that no source's terms (`mentioned`, one set a source) say in any form: for
    the caveat that the papers answer the question only in part."""
    vocabulary = set().union(*mentioned)
    missing = []
    for word, stem in zip(words, stems(words), strict=True):
        if stem in vocabulary:
            continue
        if len(stem) >= _PREFIX_STEM and any(term.startswith(stem) for term in vocabulary):
            continue
        missing.append(word)
    return missing


def compose_answer(question: str, sources: list[SourceText], max_words: int = 300) -> str:
    """The whole extractive answer as markdown (a pure function; `stream` only paces it)."""
    if not sources:
        return NO_SOURCES
    sentences = for_question(_candidates(sources), question)
    words = list(dict.fromkeys(content_words(question)))
    query_terms = stems(words)
    display: dict[str, str] = {}  # a stem -> the user's own (first) word for it
    for stem, word in zip(query_terms, words, strict=True):
        display.setdefault(stem, word)
    query = list(dict.fromkeys(query_terms))
    mentioned = [set(terms(f"{source.title} {source.text}")) for source in sources]

    if not query:
        # Nothing specific asked ("what's new?"): the opening sentence of the top sources.
        chosen = []
        for source in sources[:4]:
            first = next((s for s in sentences if s.source is source and not s.is_title), None)
            first = first or next((s for s in sentences if s.source is source), None)
            if first:
                chosen.append(first)
    elif sentences:
        idf = _idf(query, sentences)
        chosen = _pick(sentences, _bm25_weights(query, idf, sentences), max_words)
        # Quoting "Code is public." for "quantum error correction codes" would be an answer in
        # form only: at least one paper must speak to enough of the question, rare words
        # weighing more. (Judged per paper: unrelated papers each matching one word of the
        # question add up across papers, a relevant one matches several at once.)
        best = max(sum(idf[t] for t in query if t in words_of) for words_of in mentioned)
        if best < MIN_COVERAGE * sum(idf.values()):
            chosen = []
    else:
        chosen = []

    missing = unmentioned([display[t] for t in query], mentioned)
    if not chosen:
        return NOT_ENOUGH.format(words=_list_words(missing or words or ["the question's topic"]))

    lines = [LEAD_IN, ""] + [f"- {_cite(s)}" for s in chosen]
    if missing:
        lines += ["", PARTLY.format(words=_list_words(missing))]
    return "\n".join(lines)


def _pieces(text: str) -> list[str]:
    """Word-sized stream chunks that concatenate back to exactly `text`."""
    return re.findall(r"\s*\S+|\s+$", text) or [text]


class ExtractiveBackend:
    name = "extractive"
    model = "extractive"
    supports_complete = False
    follows_instructions = False

    def __init__(self, *, chunk_delay: float = 0.003):
        # A short pause between words makes the answer arrive like any other stream and lets
        # other tasks run between chunks; tests pass 0.
        self.chunk_delay = chunk_delay

    def stream(self, request: AnswerRequest) -> LLMStream:
        return LLMStream(lambda out: self._stream(request, out))

    @staticmethod
    def compose(request: AnswerRequest) -> str:
        """The whole answer (blocking: a few milliseconds of CPU, more when it embeds)."""
        max_words = max(60, int(request.max_tokens * 0.75))  # ~0.75 words per token
        if request.intent is not None:
            # The shapes module builds on this one's sentence machinery: imported here, not at
            # the top, so the two modules do not import each other while loading.
            from .shapes import compose_shaped

            return compose_shaped(request, max_words)
        return compose_answer(request.question, request.sources, max_words)

    async def _stream(self, request: AnswerRequest, out: LLMStream) -> AsyncIterator[str]:
        text = request.composed
        if text is None:
            # Splitting and stemming eight long abstracts takes a few milliseconds of CPU: off
            # the loop, so concurrent chats keep streaming meanwhile.
            text = await asyncio.to_thread(self.compose, request)
        pieces = _pieces(text)
        for piece in pieces:
            yield piece
            await asyncio.sleep(self.chunk_delay)
        out.usage = Usage(prompt_tokens=None, completion_tokens=None)
        out.finish_reason = "stop"

    async def complete(
        self, messages: list[dict], *, max_tokens: int = 300, temperature: float = 0.0
    ) -> str:
        raise LLMError(
            LLM_UNAVAILABLE,
            "The extractive backend has no language model; use a rule instead "
            "(check `supports_complete` first).",
        )


def answering_sentences(
    question: str, sources: list[SourceText], names: Iterable[str] = ()
) -> dict[int, str]:
    """Each source's sentence that best answers `question`, by source number: the one this
    composer would quote first from it (the same BM25 weights over the same sentences), so a
    card's highlighted quote is the sentence the answer cites. Sources with no sentence sharing
    a word with the question are left out."""
    scores = answering_scores(question, sources, names)
    return {number: text for number, (_, text) in scores.items()}


def answering_scores(
    question: str, sources: list[SourceText], names: Iterable[str] = ()
) -> dict[int, tuple[float, str]]:
    """answering_sentences with each sentence's score (comparable across the sources). For a
    quantity question ("How many GPUs…") a sentence that states a number weighs NUMBER_WEIGHT
    times more (chat.understanding.quantity): "trained on 8 NVIDIA P100 GPUs" before "GPUs made
    this feasible"; one about another model size than the asked one less
    (chat.understanding.variants). The words of `names` (what the question calls a paper it
    names: "OPT-175B") weigh NAME_WEIGHT of their IDF: rare, they would make "we provide a model
    card for OPT-175B" the best answer to "What batch size was used to train OPT-175B?", yet
    kept, they tell "the largest RWKV model has 14B parameters" from any other parameter count."""
    sentences = for_question([s for s in _candidates(sources) if not s.is_title], question)
    words = list(dict.fromkeys(content_words(question)))
    query = list(dict.fromkeys(with_abbreviations(stems(words))))
    if not sentences or not query:
        return {}
    idf = _idf(query, sentences)
    # The name as the question writes it, with the variant after its hyphen ("OPT-175B" for a
    # paper named "OPT"): "175B" is in most sentences about OPT-175B, and none of its answers.
    written = [
        m[0]
        for name in names
        for m in re.finditer(rf"(?<![\w-]){re.escape(name)}(?:[-‐‑][\w.]+)*", question)
    ]
    for stem in stems(content_words(" ".join([*names, *written]))):
        if stem in idf:
            idf[stem] *= NAME_WEIGHT
    quantity = asks_for_quantity(question)
    # "Which vision transformer variant is largest?": the row of the table of the variants
    # ("Details of Vision Transformer model variants") whose values are all the largest is the
    # answer, though its own cells ("ViT-Huge 32 1280 5120 16 632M") hold none of the words.
    extremes = [t for w, t in zip(words, stems(words), strict=True) if asks_for_extreme(w)]
    largest = _extreme_rows(sentences, words) if quantity and extremes else set()
    weights = _bm25_weights(query, idf, sentences, largest)
    # A table's printed cells that hold only the name of the paper they are in say nothing of
    # what was asked: every row of its results names it ("RAPT 90.56 42.83 … Table 5: …" for
    # "Which datasets are used to evaluate RAPT …?").
    named = set(stems(content_words(" ".join(names))))
    unnamed = [t for t in query if t not in named] or query
    # (A table's row labelled with the paper's name gives its values: "MuZero 2041.1% …" for
    # "What median score does MuZero reach on Atari?"; it names no dataset nor baseline.)
    for sentence, weight in zip(sentences, weights, strict=True):
        if weight and not (isinstance(sentence.text, RowSentence) and quantity):
            if answers_nothing(sentence.text, unnamed, question):
                weight.clear()
    # The items the question names by their label ("What learning rate did BN-x5 use?"): an
    # item's sentences say its label's words as context ("… The initial learning rate was
    # increased by a factor of 5, to 0.0075."), and another item's sentence that only mentions
    # the named one ("BN-x30: Like BN-x5, but with the initial learning rate 0.045") is about
    # another item.
    heads = set(stems(asked_heads(question)))
    by_source: dict[int, list[_Sentence]] = {}
    for s in sentences:
        by_source.setdefault(s.source.number, []).append(s)
    for sentence, weight in zip(sentences, weights, strict=True):
        if not answers_nothing(sentence.text, query):
            context = sentence.context | (set(terms(sentence.label)) if sentence.label else set())
            for t in query:
                if t in context and t not in weight:
                    weight[t] = CONTEXT_WEIGHT * idf[t]
                elif t in context and t in heads:
                    # The heading names what a "what X" question asks for: the section is about
                    # it ("… some limitations should be acknowledged …" under "9 Limitations",
                    # over the introduction's "… mitigating their known limitations").
                    weight[t] += CONTEXT_WEIGHT * idf[t]
    # "What baselines does CiteSee compare against?": the items of a list that name baselines
    # ("• Linear Reading: A non-personalized baseline …") answer all of it, and better than "…
    # comparing it against three baselines", which only counts them.
    listing = set() if quantity else _naming_items(sentences, heads)
    for sentence, weight in zip(sentences, weights, strict=True):
        if id(sentence) in listing:
            for t in query:
                weight.setdefault(t, idf[t])
    things = asked_value_terms(question) if quantity else set()
    # "What is the largest RWKV model?": no sentence says "largest"; one giving a range says it
    # ("models ranging in size from 169 million to 14 billion parameters"), as much as a word,
    # and so does a table's largest row.
    if quantity and extremes:
        for sentence, weight in zip(sentences, weights, strict=True):
            if id(sentence) in largest or (
                states_range(sentence.text) and not answers_nothing(sentence.text, query)
            ):
                for t in extremes:
                    weight.setdefault(t, idf[t])
    # "How long did the CiteSee field deployment last?": no sentence says "long" or "last"; one
    # giving a duration says both ("… for one to two weeks"); "What hardware …": one naming its
    # GPUs or TPUs says "hardware" (chat.understanding.answer_kinds).
    if asking := asking_words(question):
        for sentence, weight in zip(sentences, weights, strict=True):
            if others_limits(sentence.text) and any(k.name == "limits" for k in asking.values()):
                # "Each of these has distinct drawbacks" is not the drawbacks asked about.
                for t in stems(sorted(asking)):
                    weight.pop(t, None)
            said = said_by_kind(sentence.text, question) | heading_says(sentence.context, question)
            for t in stems(sorted(said)):
                if t in idf:
                    # Said as a word is (over its heading's share), and the heading naming it
                    # still tells its section apart ("8 NVIDIA P100 GPUs" under "5.2 Hardware
                    # and Schedule" before "… the number of GPUs used …" elsewhere).
                    under = t in sentence.context and t in heads
                    weight[t] = max(weight.get(t, 0.0), idf[t]) + under * CONTEXT_WEIGHT * idf[t]
    # The variants the question asks about ("175B" of "OPT-175B"): a table row labelled with one
    # is that variant's own line ("Table 1: Model 175B, …, Batch 2M"), where a sentence on all
    # sizes ("Our batch sizes range from 0.5M to 4M depending on the model size") is not.
    variants = {part.lower() for w in written for part in re.split(r"[-‐‑]", w)[1:] if part}
    # (and the size it asks about: "big 6 1024 … 213", Table 3's row of "the big Transformer")
    variants |= sizes_in(question)
    best: dict[int, tuple[float, str]] = {}
    for sentence, weight in zip(sentences, weights, strict=True):
        score = sum(weight.values())
        if score > 0:
            # ("… by normalizing layer inputs" before "… reduces the internal covariate shift"
            # for "How does batch normalization reduce internal covariate shift?".)
            score *= number_weight(sentence.text, question, quantity)
            score *= reason_weight(sentence.text, question, sentence.context)
        if score > 0 and (
            (things and gives_value(sentence.text, things, question)) or id(sentence) in listing
        ):
            score *= VALUE_WEIGHT
        elif score > 0 and things and values_another(sentence.text, things, question):
            score *= OTHER_VALUE_WEIGHT
        # (The row's label may write the model with it: "ViT-Huge" for "ViT-Huge".)
        if score > 0 and variants & set(re.split(r"[-‐‑]", _row_label(sentence.text))):
            score *= ROW_VARIANT_WEIGHT
        if score > 0 and sentence.label and _names_label(question, sentence.label):
            score *= ROW_VARIANT_WEIGHT  # the named item's own sentence
        elif score > 0 and other_item(sentence, question, by_source[sentence.source.number]):
            score *= OTHER_SIZE_WEIGHT
        if score > 0 and about_other_size(sentence.text, question):
            score *= OTHER_SIZE_WEIGHT  # "the big model used…" for a question on the base one
        number = sentence.source.number
        if score > 0 and score > best.get(number, (0.0, ""))[0]:
            best[number] = (score, sentence.text)
    return best


def _printed_runs(sentences: list[_Sentence], kind: type) -> list[list[_Sentence]]:
    """The sentences of `kind` (a list's items, a table's rows), grouped by the list or table
    they were printed in (one `listed` run of a source)."""
    runs: dict[tuple[int, int], list[_Sentence]] = {}
    for s in sentences:
        if isinstance(s.text, kind) and s.listed >= 0:
            runs.setdefault((s.source.number, s.listed), []).append(s)
    return list(runs.values())


def _naming_items(sentences: list[_Sentence], heads: set[str]) -> set[int]:
    """The ids of the first sentences of list items that name things a "what/which X" question
    asks for (`heads`: X's stems), in lists where enough items do (names_asked_things)."""
    found = set()
    for items in _printed_runs(sentences, ItemSentence):
        naming = names_asked_things([set(i.term_counts) for i in items], heads)
        found.update(id(i) for i, names in zip(items, naming, strict=True) if names)
    return found


def _extreme_rows(sentences: list[_Sentence], words: list[str]) -> set[int]:
    """The ids of the rows that answer a question after the largest or smallest of something
    (`words`, the question's): in each table whose rows are sentences (one `listed` run of a
    source), the row whose every value is the largest (papers.fulltext.tables.extreme_row), when
    its caption and header say a word of the question other than the extreme's."""
    asked = set(stems([w for w in words if not asks_for_extreme(w)]))
    smallest = any(w in SMALLEST for w in words)
    found = set()
    for rows in _printed_runs(sentences, RowSentence):
        at = extreme_row([r.text for r in rows], smallest)
        if at is not None and asked & set(rows[at].term_counts):
            found.add(id(rows[at]))
    return found


_NUMBER_IN_WORD = re.compile(r"\d+(?:[.,]\d+)*")


def asked_value_terms(question: str) -> set[str]:
    """The stems of what a question asks the number of (quantity.asked_things): "rate", "flop"."""
    return set(with_abbreviations(stems([w for w in asked_things(question) if w not in STOPWORDS])))


@lru_cache(maxsize=256)
def _qualifiers(question: str, things: frozenset[str]) -> frozenset[str]:
    """The stems of the words the question puts before what it asks the number of: "learning" of
    "What learning rate schedule…", which "dropout rate Pdrop = 0.1" does not say. Kept per
    question: it is asked again for every candidate sentence of an answer."""
    words = re.findall(r"[\w-]+", question.lower())
    found = set()
    for before, word in itertools.pairwise(words):
        if set(stems([word])) & things and before not in STOPWORDS and before not in _ASKING:
            found.update(terms(before))
    return frozenset(found - things)


_ASKING = frozenset("how many much what which".split())


def gives_value(
    sentence: str, things: set[str], question: str, said: Iterable[str] | None = ()
) -> bool:
    """Whether a number `sentence` states that `question` does not stands within VALUE_NEAR
    words of one of `things` (stems of what the question asks the number of: "rate", "flop"),
    and the sentence (or what was `said` before it, as terms) says the words the question
    qualifies it with ("learning" rate); `said` None: any qualifier will do."""
    new = numbers_in(sentence) - numbers_in(question)
    if not new:
        return False
    qualifiers = _qualifiers(question, frozenset(things))
    if said is not None and not qualifiers <= set(terms(sentence)) | set(said):
        return False
    words = sentence.split()
    # (A table's column may say the qualifier alone: "Batch 2M" for "What batch size …".)
    near = things | qualifiers
    at_things = [i for i, w in enumerate(words) if near & set(terms(w))]
    if not at_things:
        return False
    # A number of its own, not a name's digits ("ImageNet-21k").
    at_numbers = [
        i
        for i, w in enumerate(words)
        if (bare := w.lower().strip(".,;:()[]{}")) in new
        or (bare[:1].isdigit() and new & set(_NUMBER_IN_WORD.findall(bare)))
    ]
    return any(abs(i - j) <= VALUE_NEAR for i in at_things for j in at_numbers)


def values_another(sentence: str, things: set[str], question: str) -> bool:
    """Whether `sentence` gives a value next to what `question` asks the number of (`things`)
    without the words the question qualifies it with: "dropout rate Pdrop = 0.1" for "What
    learning rate …?" is another rate's value. False when the question qualifies nothing."""
    qualifiers = _qualifiers(question, frozenset(things))
    return bool(qualifiers) and not qualifiers <= set(terms(sentence)) and gives_value(
        sentence, things, question, None
    )


def _row_label(sentence: str) -> str:
    """The first cell of a table row said as a sentence (its label: "175B"), "" for a sentence."""
    row = getattr(sentence, "row", "")
    return row.split()[0].lower() if row.strip() else ""


def quoted_sentences(answer: str, sources: list[SourceText]) -> dict[int, str]:
    """The sentence an answer of this composer quotes first from each source, by source number:
    what that source's card must mark (its sentence as passage_sentences gives it, a table row
    knowing its row). Sources the answer does not quote are left out."""
    first: dict[int, tuple[int, str]] = {}
    for sentence in _candidates(sources):
        at = answer.find(_cite(sentence))
        number = sentence.source.number
        if at >= 0 and at < first.get(number, (len(answer), ""))[0]:
            first[number] = (at, sentence.text)
    return {number: text for number, (_, text) in first.items()}
