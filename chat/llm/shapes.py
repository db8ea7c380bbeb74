"""The extractive answer shaped by what the question asks (chat.understanding.intent).

Same promise as chat.llm.extractive: every sentence is a verbatim sentence of one source followed
by its [n]; everything else is a fixed template of chat.llm.templates filled with metadata
(titles, dates, counts, the names the user typed). What changes with the intent is which
sentences are chosen and how they are laid out:

- list: one line per paper, title, date and its contribution ("we propose ...") quoted;
  never a refusal when authors, categories or an id chose the papers.
- seed: the seed paper named first, then each similar paper with its sentence nearest the seed.
- named_paper: that paper's contribution and result sentences.
- overview: sentences chosen by meaning (the embedder, chat.llm.meaning) on a shortlist picked
  by words and role (chat.llm.roles), contributions and results before background, grouped by
  paper. When the question names a paper by what it introduced ("the Transformer",
  chat.retrieval.named), only that paper's sentences are quoted, its answering one first; when it
  names a model no paper introduces or mentions ("LLaMA-2"), the answer says so and quotes none.
- compare: evidence for each side, labelled, then sentences that set the two side by side.
- timeline: papers grouped by year (or five-year era), each period with its count and key papers.
- freshness: a question for the latest work learns how old the newest paper is.

Cost: rules and BM25 are a few milliseconds for eight abstracts; embedding is the expensive part
(~10-15 ms a sentence on this CPU), so at most SHORTLIST sentences are embedded per answer, fewer
for lists. `python -m bench.llm_extractive --shapes` measures it (docs/BENCHMARKS.md).
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections import Counter
from datetime import date

from chat.understanding import intent as intents
from chat.understanding.acronyms import expand
from chat.understanding.answer_kinds import (
    answers_kind_asked,
    asks_for_limits,
    heading_answers,
    heading_says,
    reason_is_before,
    said_by_kind,
    states_result,
)
from chat.understanding.pointers import asked_pointer, is_caption_of, refers_to
from chat.understanding.quantity import (
    asks_for_quantity,
    numbers_in,
    states_new_number,
)
from chat.understanding.variants import sizes_in, versioned
from papers.fulltext.tables import RowSentence, is_value
from papers.indexing.names import acronym_definitions, name_key
from papers.templatetags.authors import CARD_AUTHORS, author_names

from . import templates as T
from .base import AnswerRequest, SourceText
from .extractive import (
    FLOAT_LABEL,
    MIN_COVERAGE,
    SOURCE_REPEAT_DECAY,
    _bm25_weights,
    _candidates,
    _cite,
    _idf,
    _list_words,
    _Sentence,
    answering_scores,
    asked_heads,
    asked_value_terms,
    compose_answer,
    for_question,
    gives_value,
    item_label,
    other_item,
    unmentioned,
    values_another,
)
from .meaning import similarities
from .roles import BACKGROUND, BONUS, CONTRIBUTION, OTHER, RESULT, role
from .sentences import (
    STOPWORDS,
    content_words,
    is_caption,
    is_float_text,
    stems,
    table_cells,
    terms,
)

# Most sentences embedded for one answer (overview; a comparison embeds half per side, a list
# only where the rules tie). Each costs ~10 ms on this CPU: 6 keeps the composer near 100 ms.
SHORTLIST = 6
LIST_EMBED_BUDGET = 2
OVERVIEW_SENTENCES = 5
# A body answer that only its section's heading ties to the question: that many of the
# section's sentences are the answer ("5.4 Regularization": residual dropout, then label
# smoothing, for "How was the Transformer regularised?").
SECTION_QUOTES = 4
LEX_WEIGHT = 0.1  # words break ties once meaning is known; they do not outvote it
# A sentence giving what an explanatory question asks for (how, why, the work's limits:
# answer_kinds.answers_kind_asked), over one that says again what the question says (a
# contribution's bonus: chat.llm.roles).
KIND_BONUS = 0.15
LONG_LINE_WORDS = 45  # a list line quoting a longer sentence reads badly: prefer a shorter one
MEANING_ENOUGH = 0.45  # a sentence this close in meaning answers, whatever words it uses
FRESH_DAYS = 31
MAX_YEARS_AS_PERIODS = 6  # more distinct years than this: five-year eras instead
# Words of a question that ask rather than name a topic: never reported as "not mentioned".
ASKING = frozenset(
    """handle handles handled work works use uses used make makes do does affect affects deal
    deals help helps improve improves compare compared differ difference new newest latest
    recent find found show shows known approach approaches method methods cheaper costlier
    faster slower better worse larger smaller bigger higher lower easier harder stronger weaker
    simpler largest smallest biggest longest shortest highest lowest maximum minimum true false
    really last lasted lasts recommend recommends recommended suggest suggests suggested know
    knows knowing big stand stands problem problems solve solves solved address addresses
    tackle tackles beat beats outperform outperforms reach reaches reached achieve achieves
    achieved vs versus propose proposes proposed""".split()
)
_COMPARISON = re.compile(
    r"\b(?:than|compared|comparison|outperform\w*|unlike|whereas|in\s+contrast|versus|vs\.?|"
    r"better|worse|superior|inferior|instead\s+of|rather\s+than|alternative|differs?|"
    r"difference)\b",
    re.IGNORECASE,
)


# --- scoring ------------------------------------------------------------------------------------


class _Scorer:
    """Scores the quotable sentences of the sources for one anchor (question, side or seed)."""

    def __init__(self, sources: list[SourceText], topic: str):
        self.sources = sources
        self.sentences = for_question([s for s in _candidates(sources) if not s.is_title], topic)
        self.by_source: dict[int, list[_Sentence]] = {}
        for s in self.sentences:
            self.by_source.setdefault(s.source.number, []).append(s)
        # Saying how or why, or a limit, for a question asking it (answer_kinds): by id.
        self.kind_asked = {
            id(s)
            for s in self.sentences
            if answers_kind_asked(s.text, topic) or heading_says(s.context, topic)
        }
        # The role rules treat an abstract's opening sentence as scene-setting.
        self.roles = {
            id(s): role(s.text, ordinal)
            for mine in self.by_source.values()
            for ordinal, s in enumerate(mine)
        }
        for s in self.sentences:
            if id(s) in self.kind_asked and self.roles[id(s)] == BACKGROUND:
                self.roles[id(s)] = OTHER  # "… remains difficult" for "What are its limits?"
        self.lex = self.lexical(topic)
        # A body answer's continuation (the sentence after it that gives the value it leads up
        # to: _continuation), by id, with the sentence it continues.
        self.continues: dict[int, _Sentence] = {}

    def lexical(self, text: str) -> dict[int, float]:
        """BM25 of each sentence against `text`, scaled so the best is 1 (all 0 without words)."""
        query = list(dict.fromkeys(terms(text)))
        if not query or not self.sentences:
            return {id(s): 0.0 for s in self.sentences}
        idf = _idf(query, self.sentences)
        weights = _bm25_weights(query, idf, self.sentences)
        raw = [sum(w.values()) for w in weights]
        top = max(raw) or 1.0
        return {id(s): r / top for s, r in zip(self.sentences, raw, strict=True)}

    def role_of(self, s: _Sentence) -> str:
        return self.roles[id(s)]

    def bonus(self, s: _Sentence) -> float:
        return BONUS[self.role_of(s)] + (KIND_BONUS if id(s) in self.kind_asked else 0.0)

    def prelim(self, s: _Sentence, lex: dict[int, float] | None = None) -> float:
        lex = self.lex if lex is None else lex
        return lex[id(s)] + 2 * self.bonus(s)

    def by_meaning(
        self, anchor: str, shortlist: list[_Sentence], lex: dict[int, float] | None = None
    ) -> dict[int, float]:
        """Final scores of the shortlist: meaning + role + a little of the words."""
        lex = self.lex if lex is None else lex
        cosines = similarities(anchor, [s.text for s in shortlist])
        scores = {}
        for i, s in enumerate(shortlist):
            if cosines is None:
                scores[id(s)] = self.prelim(s, lex)
            else:
                scores[id(s)] = cosines[i] + self.bonus(s) + LEX_WEIGHT * lex[id(s)]
        return scores

    def contribution(
        self, anchor: str, numbers: list[int], budget: int, lex: dict[int, float] | None = None
    ) -> dict[int, _Sentence]:
        """For each source number, the sentence that best says what the paper contributes (to
        `anchor` when given): by rules, and by meaning only between close candidates."""
        lex = self.lex if lex is None else lex

        def rule_score(s: _Sentence) -> float:
            r = self.role_of(s)
            value = {CONTRIBUTION: 1.0, RESULT: 0.6}.get(r, 0.2 if r != BACKGROUND else 0.0)
            value += 0.5 * lex[id(s)] - 0.02 * s.position
            return value - (0.3 if len(s.text.split()) > LONG_LINE_WORDS else 0.0)

        chosen: dict[int, _Sentence] = {}
        ties: list[tuple[int, list[_Sentence]]] = []
        for number in numbers:
            ranked = sorted(self.by_source.get(number, []), key=rule_score, reverse=True)
            if not ranked:
                continue
            chosen[number] = ranked[0]
            if anchor and len(ranked) > 1 and rule_score(ranked[0]) - rule_score(ranked[1]) < 0.15:
                ties.append((number, ranked[:2]))
        embed = [s for _, pair in ties for s in pair][:budget]
        if embed:
            cosines = similarities(anchor, [s.text for s in embed])
            if cosines is not None:
                meaning = {id(s): c for s, c in zip(embed, cosines, strict=True)}
                for number, pair in ties:
                    if all(id(s) in meaning for s in pair):
                        chosen[number] = max(pair, key=lambda s: rule_score(s) + meaning[id(s)])
        return chosen


# --- pieces -------------------------------------------------------------------------------------


def _quote(s: _Sentence) -> str:
    return _cite(s)


def _label(source: SourceText) -> str:
    return T.PAPER_LABEL.format(title=_title(source), published=source.published)


def _title(source: SourceText) -> str:
    return " ".join(source.title.split())


def _month(day: str) -> str:
    d = date.fromisoformat(day[:10])
    return d.strftime("%B %Y")


def _age(newest: date, today: date) -> str:
    months = (today.year - newest.year) * 12 + today.month - newest.month
    if today.day < newest.day:
        months -= 1
    if months >= 24:
        return f"{months // 12} years"
    return f"{max(months, 1)} month{'s' if max(months, 1) > 1 else ''}"


def _freshness(request: AnswerRequest, sources: list[SourceText]) -> list[str]:
    intent = request.intent
    if not (intent and intent.latest and request.today and sources):
        return []
    dated = [s.published for s in sources if s.published]
    if not dated:
        return []
    newest = max(dated)
    newest_day = date.fromisoformat(newest[:10])
    if (request.today - newest_day).days <= FRESH_DAYS:
        return []
    return [T.FRESHNESS.format(month=_month(newest), age=_age(newest_day, request.today)), ""]


def _analysis(request: AnswerRequest, name: str, default=None):
    return (request.analysis or {}).get(name, default) or default


def _join(names) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# --- the shapes ---------------------------------------------------------------------------------


def _list(request: AnswerRequest, scorer: _Scorer, topic: str) -> list[str]:
    intent = request.intent
    # A list names papers: several full-text chunks of one paper are one item, its best-ranked.
    firsts: dict[str, SourceText] = {}
    for source in request.sources:
        firsts.setdefault(source.arxiv_id or f"#{source.number}", source)
    sources = list(firsts.values())
    authors = _analysis(request, "authors", [])
    categories = _analysis(request, "categories", [])
    # The composer is given the question when the analysis found no topic ("papers by X"):
    # whether there is one is the analysis' to say.
    if request.analysis is not None:
        topic = intents.list_topic(request.analysis.get("query") or "")
    if topic and not intent.by_filter:
        # A paper whose title and abstract say none of the topic is the search's tail, not an
        # item a reader wants ("Adam" in a list of papers on image recognition).
        acronyms = _analysis(request, "acronyms", {})
        sources = [
            s for s in sources if on_topic(s.title, s.text, topic, whole=False, acronyms=acronyms)
        ] or sources
    newest_first = intent.latest or (intent.by_filter and not topic)
    if newest_first:
        sources.sort(key=lambda s: s.published or "", reverse=True)
    papers = "paper" if len(sources) == 1 else "papers"
    if intent.by_filter and not topic and authors:
        lead = T.LIST_LEAD_AUTHORS.format(count=len(sources), papers=papers, authors=_join(authors))
    elif intent.by_filter and not topic and categories:
        lead = T.LIST_LEAD_CATEGORIES.format(
            count=len(sources), papers=papers, categories=_join(categories)
        )
    elif len(sources) == 1:
        lead = T.LIST_LEAD_ONE
    elif newest_first:
        lead = T.LIST_LEAD_NEWEST.format(count=len(sources))
    else:
        lead = T.LIST_LEAD.format(count=len(sources))
    numbers = [s.number for s in sources]
    if clause := intents.listed_by(request.question):
        picks = _saying(scorer, clause, sources)
    elif acronyms := _analysis(request, "acronyms", {}):
        # Each paper's sentence on the topic as the long form says it too: RAPT's "we propose
        # Retrieval Augmented Prompt Tuning" for "RAG papers", not its count of datasets.
        anchor = expand(topic, acronyms)
        picks = scorer.contribution(anchor, numbers, LIST_EMBED_BUDGET, scorer.lexical(anchor))
    else:
        picks = scorer.contribution(topic, numbers, LIST_EMBED_BUDGET)
    lines = [lead, ""]
    for rank, source in enumerate(sources, start=1):
        lines.append(_item(T.LIST_ITEM, T.LIST_ITEM_BARE, source, picks.get(source.number), rank))
    return lines


def _saying(scorer: _Scorer, clause: str, listed: list[SourceText]) -> dict[int, _Sentence]:
    """For a list of papers chosen by what they do ("Which papers use Adam?"), each listed
    paper's sentence that says it, from any of its passages (ViT's line had been "Here we show
    the experiments that motivated this choice", its contribution, beside its Adam sentence):
    the one with most of the clause's words, a contribution or result before background. A
    paper none of whose sentences has them keeps its contribution."""
    wanted = set(terms(clause))
    fallback = scorer.contribution(clause, [s.number for s in listed], LIST_EMBED_BUDGET)
    picks = {}
    for source in listed:
        mine = [
            s for s in scorer.sentences
            if s.source.arxiv_id == source.arxiv_id and (source.arxiv_id or s.source is source)
            and wanted & set(s.term_counts)
        ]  # fmt: skip
        # (by how many of the words it says, not BM25: a short aside on Adam, "Some connections
        # to related algorithms, on which Adam was inspired", outscored "We introduce Adam, …";
        # a sentence before a table's row or caption, which says it in cells: ViT's "Table 7:
        # ImageNet 77.54 78.24 …" beside "our use of Adam as optimizer is quite unconventional")
        best = max(
            mine,
            key=lambda s: (
                len(wanted & set(s.term_counts)),
                table_cells(s.text) is None and not is_caption(s.text),
                BONUS[scorer.role_of(s)] - (0.3 if len(s.text.split()) > LONG_LINE_WORDS else 0.0),
                -s.source.number,
                -s.position,
            ),
            default=None,
        )
        if best is None:
            best = fallback.get(source.number)
        if best is not None:
            picks[source.number] = best
    return picks


# Words of half the papers of any field: a topic's other words say what it is.
_BROAD = frozenset(
    stems(
        """model models method methods approach approaches network networks system systems data
        learning task tasks algorithm algorithms framework frameworks problem problems large
        small deep neural""".split()
    )
)


def on_topic(
    title: str, text: str, topic: str, whole: bool = True, acronyms: dict | None = None,
    every: bool = False,
) -> bool:
    """At least half of the topic's words (one of two, two of three) are in the paper's title
    and `text`, and when `text` is the `whole` abstract, the topic's head (topic_heads) too (a
    list leaves out the others: chat.pipeline.answer). A passage of a long abstract may not
    say the head its other passage does. With the long forms the search expanded the topic's
    `acronyms` with (chat.retrieval.acronyms), a paper on the long form is on the topic too
    (REALM is on "RAG", which it never writes), if it says most of its words: a long form is
    one term, and one word of two is another's ("Transformer" is no "Vision Transformer").
    With `every`, all of the topic's words, together and in order (a chunk of a paper's body,
    where words of a topic meet by chance: CiteSee's "faceted retrieval interfaces … augmented
    inline citations" is not on retrieval-augmented generation, nor RWKV's "Transformer-based
    vision tasks" on the Vision Transformer)."""
    if acronyms and not _on_topic(title, text, topic, whole, every=every):
        spelled = expand(topic, acronyms)
        for acronym in acronyms:  # the topic in words alone: "retrieval-augmented generation"
            spelled = spelled.replace(f" ({acronym})", "")
        return _on_topic(title, text, spelled, whole, most=True, every=every)
    return _on_topic(title, text, topic, whole, every=every)


def _on_topic(
    title: str, text: str, topic: str, whole: bool, most: bool = False, every: bool = False
) -> bool:
    words = set(stems([w for w in dict.fromkeys(content_words(topic)) if w not in ASKING]))
    words = (words - _BROAD) or words  # "diffusion models": a paper on diffusion
    if not words:
        return True
    if every:
        return _says_in_order(text, topic, words)
    have = set(terms(f"{title} {text}"))
    heads = topic_heads(topic) if whole else frozenset()
    need = len(words) // 2 + 1 if most else (len(words) + 1) // 2
    if whole and len(words) == 2:
        # Of a two-word topic a whole abstract says both: a paper on folding cloth is not on
        # "protein folding", nor a prompt optimizer on "quantum optimization" (listed as such).
        need = 2
    return len(words & have) >= need and (not heads or bool(heads & have))


def _says_in_order(text: str, topic: str, words: set[str]) -> bool:
    """The topic's `words` one after another in `text`, in the topic's order."""
    wanted = list(dict.fromkeys(t for t in terms(topic) if t in words))
    said = terms(text)
    return any(said[i : i + len(wanted)] == wanted for i in range(len(said) - len(wanted) + 1))


# Where a topic's first noun phrase ends ("post-training quantization | of LLMs").
_PHRASE_END = frozenset(
    """of for in on with from to using via about under at by through across between over into
    towards toward""".split()
)
# Words that name a kind of text, not a topic ("papers | on …").
_WRITINGS = frozenset(stems("paper papers work research study studies article articles".split()))
# What is done in many fields, so the word before it tells the topic as well: RA-DIT's
# "Retrieval-Augmented Dual Instruction Tuning" and REALM's "Retrieval-Augmented Language Model
# Pre-Training" say no "generation", Fusion-in-Decoder's "Passage Retrieval with Generative
# Models" no "augmented"; all three are on retrieval-augmented generation.
_WEAK_HEADS = frozenset(stems("generation generative analysis applications understanding".split()))
# A word with its contraction or possessive ("what's", "model's"), read as the word before it:
# the "s" of "What's new on large language models?" was taken for the topic's head.
_TOPIC_TOKEN = re.compile(r"([\w-]+)(?:['’]\w+)?")


def topic_heads(topic: str) -> frozenset[str]:
    """The stems of the word a topic is about, the last of its first noun phrase: "splat" of
    "Gaussian splatting", "quantiz" of "post-training quantization of LLMs", "agent" of "large
    language model agents" (words of any field skipped: "diffusion" of "diffusion models").
    A paper sharing the topic's other words only is about something else: the AWGN channel's
    "additive white Gaussian noise" is no Gaussian splatting, a paper on LLM post-training no
    quantization of LLMs. A head done in every field (_WEAK_HEADS) comes with the word before
    it, either will do: "generat" or "augment" of "retrieval-augmented generation". Empty for
    a topic joining several ("transformers or CNNs"), or none found."""
    phrase: list[str] = []
    for token in _TOPIC_TOKEN.findall(topic.lower()):  # (the words, contractions cut)
        if token in _PHRASE_END:
            if phrase:
                break
            continue
        if token in ("and", "or", "vs", "versus"):
            return frozenset()
        last = token.split("-")[-1]
        stem = stems([last])[0] if last else ""
        if stem and token not in STOPWORDS and token not in ASKING and stem not in _WRITINGS:
            phrase.append(stem)
        elif phrase:
            break
    heads = [w for w in phrase if w not in _BROAD]
    if not heads:
        return frozenset()
    if heads[-1] in _WEAK_HEADS:
        return frozenset(heads[-2:])
    return frozenset(heads[-1:])


def _singular(word: str) -> str:
    if word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "is", "us")):
        return word[:-1]
    return word


_WORD = re.compile(r"[a-z0-9]+")


def names_topic(title: str, text: str, topic: str) -> bool:
    """Every word of the topic that tells it apart (not an asking word, not a word of any field)
    opens a word of the paper's title or `text`, as written, not as stemmed: "large language
    model agents" needs "language" and "agent" ("agents", "agentic"); "transformer" is not
    "transformed", nor "reinforcement" "reinforces" (the stricter sibling of on_topic)."""
    topic_words = [w for w in dict.fromkeys(content_words(topic)) if w not in ASKING]
    wanted = [w for w, t in zip(topic_words, stems(topic_words), strict=True) if t not in _BROAD]
    wanted = [_singular(w.lower()) for w in (wanted or topic_words)]
    if not wanted:
        return False
    have = set(_WORD.findall(f"{title} {text}".lower()))
    return all(any(word.startswith(w) for word in have) for w in wanted)


def _item(template: str, bare: str, source: SourceText, pick: _Sentence | None, rank=None):
    fields = {"rank": rank, "title": _title(source), "published": source.published}
    if pick is None:
        return bare.format(number=source.number, **fields)
    return template.format(quote=_quote(pick), **fields)


def _seed(request: AnswerRequest, scorer: _Scorer, topic: str) -> list[str]:
    seed = request.seed
    arxiv_id = _analysis(request, "arxiv_id", "")
    if seed is None:
        lines = [T.SEED_MISSING.format(arxiv_id=arxiv_id), ""]
        anchor = topic
    else:
        lines = [
            T.SEED_LEAD.format(
                title=_title(seed), published=seed.published, arxiv_id=seed.arxiv_id or arxiv_id
            ),
            "",
        ]
        # The seed's own contribution tells what "like it" means better than its title alone.
        own = _Scorer([seed], "").contribution("", [seed.number], 0).get(seed.number)
        anchor = " ".join(part for part in (seed.title, own.text if own else "") if part)
    lex = scorer.lexical(anchor)
    picks = scorer.contribution(anchor, [s.number for s in request.sources], LIST_EMBED_BUDGET, lex)
    for rank, source in enumerate(request.sources, start=1):
        lines.append(_item(T.LIST_ITEM, T.LIST_ITEM_BARE, source, picks.get(source.number), rank))
    return lines


def _one_per_paper(sources: list[SourceText]) -> list[SourceText]:
    firsts: dict[str, SourceText] = {}
    for source in sources:
        firsts.setdefault(source.arxiv_id or f"#{source.number}", source)
    return list(firsts.values())


def _said(source: SourceText, scorer: _Scorer) -> _Sentence | None:
    """The source's sentence the pipeline found saying what was asked (its card's quote)."""
    if not source.quote:
        return None
    mine = scorer.by_source.get(source.number, [])
    found = next((s for s in mine if s.text == source.quote), None)
    if found is None and " ".join(source.quote.split()) in " ".join(source.text.split()):
        # verbatim in the passage, though not a sentence the composer would pick itself
        found = _Sentence(source, 0, source.quote, Counter(terms(source.quote)), False)
    return found


def _selection(request: AnswerRequest, scorer: _Scorer, previous: dict) -> list[str]:
    """ "Which of these…": the papers whose text says so, each with that sentence and where it
    is, then the papers that do not (and whose full text was never read)."""
    sources = _one_per_paper(request.sources)
    total = previous.get("referred") or len(sources)
    if not any(_said(source, scorer) for source in sources):
        lines = [T.SELECTION_NEAR_LEAD.format(total=total, count=len(sources)), ""]
    elif len(sources) == 1:
        lines = [T.SELECTION_LEAD_ONE.format(total=total), ""]
    else:
        lines = [T.SELECTION_LEAD.format(total=total, count=len(sources)), ""]
    near = scorer.contribution(request.question, [s.number for s in sources], LIST_EMBED_BUDGET)
    for rank, source in enumerate(sources, start=1):
        said = _said(source, scorer)
        fields = {"rank": rank, "title": _title(source), "published": source.published}
        if said is not None:
            where = source.where.split(",")[0] if source.where else T.WHERE_ABSTRACT
            lines.append(T.SELECTION_ITEM.format(where=where, quote=_quote(said), **fields))
        elif near.get(source.number) is not None:
            lines.append(T.SELECTION_NEAR.format(quote=_quote(near[source.number]), **fields))
        else:
            lines.append(T.LIST_ITEM_BARE.format(number=source.number, **fields))
    others = previous.get("left_out") or []
    if others:
        lines += ["", T.SELECTION_OTHERS.format(count=len(others), titles="; ".join(others))]
    if previous.get("unread") and not previous.get("read"):
        lines.append(T.SELECTION_ABSTRACTS_ONLY)
    elif previous.get("unread"):
        lines.append(T.SELECTION_UNREAD.format(titles="; ".join(previous["unread"])))
    return lines


def _in_window(request: AnswerRequest, scorer: _Scorer, previous: dict) -> list[str]:
    """ "which of them were published before 2021?": those papers listed, the count said."""
    sources = _one_per_paper(request.sources)
    total = previous.get("referred") or len(sources)
    lead = (
        T.WINDOW_LEAD_ONE.format(total=total)
        if len(sources) == 1
        else T.WINDOW_LEAD.format(total=total, count=len(sources))
    )
    picks = scorer.contribution("", [s.number for s in sources], 0)
    lines = [lead, ""]
    for rank, source in enumerate(sources, start=1):
        lines.append(_item(T.LIST_ITEM, T.LIST_ITEM_BARE, source, picks.get(source.number), rank))
    return lines


def _side_by_side(request: AnswerRequest, scorer: _Scorer) -> list[str]:
    """ "compare the first two": each paper's own contributions and results, one after the
    other (what each says it does is what a reader compares)."""
    sources = _one_per_paper(request.sources)
    lines = [T.SIDE_BY_SIDE_LEAD.format(count=len(sources)), ""]
    for source in sources:
        quotes = _named(request, scorer, source, per_paper=3)[2:]  # without its lead
        if quotes:
            lines += [_label(source), *quotes, ""]
    return lines[:-1]


NAMED_TITLE_MATCH = 0.75  # title_match from which a typed title names the paper


def title_match(asked: str, title: str) -> float:
    """How well a title the user typed names a paper's `title` (0..1): shared words both ways."""
    mine, theirs = set(terms(asked)), set(terms(title))
    if not mine or not theirs:
        return 0.0
    shared = len(mine & theirs)
    return min(shared / len(mine), shared / len(theirs) + 0.25)


def _named_source(request: AnswerRequest) -> SourceText | None:
    asked = request.intent.title
    arxiv_id = _analysis(request, "arxiv_id", "")
    for source in request.sources:
        if arxiv_id and source.arxiv_id == arxiv_id:
            return source
    best = max(request.sources, key=lambda s: title_match(asked, s.title))
    return best if title_match(asked, best.title) >= NAMED_TITLE_MATCH else None


def _named(
    request: AnswerRequest, scorer: _Scorer, source: SourceText, per_paper: int = 4
) -> list[str]:
    own = scorer.by_source.get(source.number, [])
    said = [s for s in own if scorer.role_of(s) in (CONTRIBUTION, RESULT)][:per_paper]
    if len(said) < 3:  # an abstract without "we propose": its non-background sentences too
        rest = [s for s in own if s not in said and scorer.role_of(s) != BACKGROUND]
        said = sorted(said + rest[: 3 - len(said)], key=lambda s: s.position)
    if not said:
        said = own[:3]
    lines = [T.NAMED_LEAD.format(title=_title(source), published=source.published), ""]
    return lines + [T.QUOTE_ITEM.format(quote=_quote(s)) for s in said]


def _asked_source(request: AnswerRequest) -> SourceText | None:
    """The paper a named-paper question asks about: by its id or title, else by what it
    introduced (chat.retrieval.named: "the Adam paper", "the Transformer", "Fusion-in-Decoder")."""
    if found := _named_source(request):
        return found
    named = asked_papers(request.intent, _analysis(request, "named", {}))
    key = name_key(request.intent.title)
    if found := next(
        (s for s in request.sources if s.arxiv_id in named),
        # "who proposed batch normalization?": the paper whose title, before its colon, is it
        next((s for s in request.sources if key and name_key(s.title.split(":")[0]) == key), None),
    ):
        return found
    # "Who are the authors of the first one?", "When was it published?": the one paper of the
    # previous answer the question refers to.
    referred = _one_per_paper(request.sources)
    if _analysis(request, "previous", {}).get("referred") and len(referred) == 1:
        return referred[0]
    return None


def _authors(source: SourceText) -> str:
    """The names as a card shows them; a list longer than a card's names its first few and
    counts the others."""
    names = author_names(source.authors)
    if len(names) > CARD_AUTHORS:
        shown = CARD_AUTHORS - 2
        return f"{', '.join(names[:shown])} and {len(names) - shown} others"
    return _join(names) if names else "authors the catalogue does not list"


def _posted(source: SourceText) -> str:
    """ "on 2017-06-12", or "in June 2017" when the catalogue knows only the month: a date on
    the first of the month its arXiv id was given (YYMM) came from the id, not from arXiv."""
    day = source.published[:10]
    yymm = re.match(r"(\d{2})(\d{2})\.\d{4,5}", source.arxiv_id or "")
    if day.endswith("-01") and yymm and day[2:4] == yymm[1] and day[5:7] == yymm[2]:
        return f"in {_month(day)}"
    return f"on {day}"


def _record(
    request: AnswerRequest, scorer: _Scorer, source: SourceText | None
) -> list[str] | None:
    """Who wrote a paper, when it appeared, or which paper introduced a name: from the
    catalogue's record of it, then one sentence of what it reports (for a name, the sentence
    that introduces it)."""
    if source is None:
        return None  # no paper of the catalogue answers to it: the overview says what was found
    intent = request.intent
    # (cited to the paper's abstract card when it has one: a record is no page of its body)
    card = next((s for s in request.sources if s.arxiv_id == source.arxiv_id and not s.where), source)
    fields = {"title": _title(source), "arxiv_id": source.arxiv_id, "number": card.number}
    if intent.asks == intents.AUTHORS:
        lead = T.RECORD_AUTHORS.format(authors=_authors(source), **fields)
    elif intent.asks == intents.DATE:
        lead = T.RECORD_DATE.format(when=_posted(source), **fields)
    else:
        lead = T.RECORD_ORIGIN.format(
            name=intent.title[:1].upper() + intent.title[1:], published=source.published,
            authors=_authors(source), **fields,
        )  # fmt: skip
    own = scorer.by_source.get(source.number, [])
    name = set(terms(intent.title))
    naming = [s for s in own if intent.asks == intents.ORIGIN and name <= set(s.term_counts)]
    said = [s for s in naming or own if scorer.role_of(s) in (CONTRIBUTION, RESULT)]
    quote = (said or naming or own)[:1]
    if not quote:
        return [lead]
    return [lead, "", T.RECORD_CONTEXT, T.QUOTE_ITEM.format(quote=_quote(quote[0]))]


def _shown_records(request: AnswerRequest, scorer: _Scorer, cited: int) -> list[str]:
    """ "who are the authors?", "when was it published?" after an answer: the record of each of
    the papers it cited (the `cited` first sources; of one paper, with what it reports)."""
    papers = _one_per_paper(list(request.sources))[: cited or None]
    if len(papers) == 1:
        return _record(request, scorer, papers[0]) or []
    lines: list[str] = []
    for source in papers:
        lines += [(_record(request, scorer, source) or [""])[0], ""]
    return lines[:-1]


def _greedy(scored: list[tuple[float, _Sentence]], limit: int) -> list[_Sentence]:
    """The best sentences, a source already quoted counting less, near-repeats left out."""
    chosen: list[_Sentence] = []
    quoted: Counter = Counter()
    remaining = list(scored)
    best = None
    while remaining and len(chosen) < limit:
        value, s = max(
            remaining,
            key=lambda pair: (
                pair[0] * SOURCE_REPEAT_DECAY ** quoted[pair[1].source.number]
                if pair[0] > 0
                else pair[0],
                -pair[1].source.number,
                -pair[1].position,
            ),
        )
        value = value * SOURCE_REPEAT_DECAY ** quoted[s.source.number] if value > 0 else value
        best = value if best is None else best
        # Beyond the first, only sentences nearly as good: the third-best paper's loosely
        # related sentence is what made the old answers read as keyword matches.
        if value <= 0 or (len(chosen) >= 3 and value < 0.7 * best) or value < 0.5 * best:
            break
        chosen.append(s)
        quoted[s.source.number] += 1
        said = set(s.term_counts)
        remaining = [(v, o) for v, o in remaining if o is not s and not set(o.term_counts) <= said]
    return chosen


def _grouped(
    chosen: list[_Sentence], first: _Sentence | None = None, continues: dict | None = None
) -> list[str]:
    """Quotes grouped under their paper (several full-text chunks of one paper are several
    sources: one heading for all), papers in source order, quotes in reading order; `first`
    (the sentence that answers) opens the answer, its paper's other quotes after it. A sentence
    that `continues` (by id) maps to the one it continues follows that one at once."""
    papers: dict[str, list[_Sentence]] = {}
    continues = continues or {}
    ordered = sorted(chosen, key=lambda s: (s.source.number, s.position))
    # An answer inside a list read in order ("Global Citation Count: A non-personalized
    # baseline …", its third item) opens with the list's first item, the answer after it.
    for _ in range(len(ordered)):
        if first is None or id(first) not in continues or continues[id(first)] not in ordered:
            break
        first = continues[id(first)]
    if first is not None and first in ordered:
        ordered.remove(first)
        ordered.insert(0, first)
    for s in [s for s in ordered if id(s) in continues and continues[id(s)] in ordered]:
        ordered.remove(s)
        ordered.insert(ordered.index(continues[id(s)]) + 1, s)
    for s in ordered:
        papers.setdefault(s.source.arxiv_id or f"#{s.source.number}", []).append(s)
    lines: list[str] = []
    for mine in papers.values():
        lines.append(_label(mine[0].source))
        for before, s in zip([None, *mine], mine, strict=False):
            lines.append(T.QUOTE_ITEM.format(quote=_quote(_next_row(before, s))))
        lines.append("")
    return lines[:-1]


def _next_row(before: _Sentence | None, s: _Sentence) -> _Sentence:
    """A table's row quoted right after another row of its table, said without the header and
    caption that one said already: "Table 1: TriviaQA 78,785 60,413 8,837 11,313" under "Table
    1: Natural Questions 79,168 … (columns: Dataset Train Dev Test) (Number of questions in
    each QA dataset …)", not five times the same caption."""
    if not (
        isinstance(s.text, RowSentence)
        and before is not None
        and isinstance(before.text, RowSentence)
        and before.source.number == s.source.number
        and before.listed == s.listed >= 0
    ):
        return s
    return dataclasses.replace(s, text=s.text.brief)


# "What does ULSA stand for?": the words an acronym is made of.
_STANDS_FOR = re.compile(
    r"^\s*what\s+(?:does|do)\s+(?:the\s+)?(?P<x>[\w.+-]{2,20})\s+stand\s+for\s*[?.!]*\s*$",
    re.IGNORECASE,
)


def stands_for(question: str) -> str:
    """The acronym "what does X stand for?" asks about, "" for any other question."""
    asked = _STANDS_FOR.match(question)
    return asked["x"] if asked else ""


def title_spells(acronym: str, title: str) -> bool:
    """Whether a title spells `acronym` out after it: "ULSA: Unified Language of …"."""
    return bool(re.match(rf"\s*{re.escape(acronym)}\s*:\s*\w", title, re.IGNORECASE))


def _definition(request: AnswerRequest, scorer: _Scorer) -> _Sentence | None:
    """For "what is X?", the sentence that says what X is: "X is a …", "The Quantum Approximate
    Optimization Algorithm (QAOA) is a …", "X refers to …"; for "what does X stand for?", the
    one that spells it out ("… Optimization Algorithm (QAOA)", a title "ULSA: Unified Language
    of Synthesis Actions …"). The best-scored of several."""
    if acronym := stands_for(request.question):
        # A title "ULSA: Unified Language of …", else a sentence defining it (the catalogue's
        # own reading of "Long Form (LF)": papers.indexing.names). A title is quoted from its
        # paper's abstract card (page 1), not from a chunk of its body.
        titles = [
            _Sentence(source, 0, _title(source), Counter(terms(source.title)), True)
            for source in sorted(request.sources, key=lambda source: bool(source.where))
            if title_spells(acronym, _title(source))
        ]
        spelled = [s for s in scorer.sentences if acronym_definitions(s.text, acronym)]
        return titles[0] if titles else max(spelled, key=scorer.prelim, default=None)
    asked = intents.what_is(request.question)
    if not asked:
        return None
    x = re.escape(asked[0])
    says = re.compile(
        rf"(?:\b{x}|\(\s*{x}\s*\))\s+(?:is|are|refers\s+to|denotes)\s+(?:an?|the|one)\b",
        re.IGNORECASE,
    )
    defining = [s for s in scorer.sentences if not s.is_title and says.search(s.text)]
    return max(defining, key=scorer.prelim, default=None)


def _body_answers(request: AnswerRequest, scorer: _Scorer) -> list[_Sentence]:
    """When the best source is a chunk of a paper's body, the sentences its cards highlight (the
    ones that answer by words: "What default stepsize does AdaMax use?" -> "Good default settings
    ... are α = 0.002 ..."), which choosing by meaning and role alone, tuned on abstracts, misses
    for questions after one fact: the best answering sentence of all chunk cards first (the card
    holding the answer may be the second paper's), then the top paper's best if another (a
    stray word match in another paper must not push the paper found first out of the quotes)."""
    named = _named_papers(request)
    if named:
        # The question names a paper ("the Transformer"): only its cards may open the answer.
        chunks = {s.number: s.arxiv_id for s in request.sources if s.arxiv_id in named}
        top = next((s for s in request.sources if s.arxiv_id in named), None)
        if top is None:
            return []
    else:
        top = request.sources[0] if request.sources else None
        if top is None or not top.where:
            return []
        # Chunk cards of their own: the retrieval's first chunk may only set the scene. The
        # question's words in the first paper's title name its topic ("How are QAOA parameters
        # initialised?"): a card that never says them is about something else (Adam's
        # "initialisation bias"), however well its words match the rest.
        topic = set(terms(request.question)) & set(terms(top.title))
        chunks = {
            s.number: s.arxiv_id
            for s in request.sources
            if s.where and topic <= set(terms(f"{s.title} {s.text}"))
        }
    scored = answering_scores(
        request.question, request.sources, asked_names(_analysis(request, "named", {}))
    )
    quotes = [(score, number, text) for number, (score, text) in scored.items() if number in chunks]
    picks = [max(quotes, key=lambda q: (q[0], -q[1]))] if quotes else []
    mine = [q for q in quotes if chunks[q[1]] == top.arxiv_id]
    if mine and (best_mine := max(mine, key=lambda q: (q[0], -q[1]))) not in picks:
        picks.append(best_mine)
    found = []
    for _, number, quote in picks:
        sentence = next((s for s in scorer.by_source.get(number, []) if s.text == quote), None)
        if sentence is not None:
            found.append(sentence)
    if found and _answered_by_heading(found[0], request):
        first = found[0]
        section = [
            s
            for s in scorer.by_source.get(first.source.number, [])
            if s.position >= first.position and s.context == first.context
        ][:SECTION_QUOTES]
        found = section + [s for s in found[1:] if s not in section]
    return found


def _with_continuations(
    chosen: list[_Sentence], leads: list[_Sentence], scorer: _Scorer, request: AnswerRequest
) -> list[_Sentence]:
    """`chosen` with each body sentence of the paper(s) the answer leads with followed by its
    continuation (_continuation); another paper's sentence is there for context, its next
    sentence is not wanted."""
    papers = {s.source.arxiv_id for s in leads}
    out: list[_Sentence] = []
    for s in chosen:
        if s in out:
            continue
        out.append(s)
        if s.source.arxiv_id not in papers:
            continue
        after = _continuation(s, scorer, request)
        if after is not None and after not in out:
            out.append(after)
            scorer.continues[id(after)] = s
    return out


LIST_ITEMS = 6  # a bulleted list quoted whole up to this many items
# An item opened by its name: "Linear Reading: A non-personalized baseline …", "Quora Question
# Pairs 140K split (QQP 140K): We also use QQP …".
_ITEM_NAME = re.compile(r"[A-Z0-9][^:.;]{0,60}:\s")


def _with_list_items(
    chosen: list[_Sentence], leads: list[_Sentence], scorer: _Scorer, request: AnswerRequest
) -> list[_Sentence]:
    """`chosen` with the body answer (the first of `leads`), when it is an item of a bulleted
    list of things of the kind a "what/which X" question asks for, quoted with the list's other
    items in the paper's order: the list is the answer, one item of it a part ("• Quora
    Question Pairs 50K split …" alone for "Which datasets are used to evaluate RAPT …?", its
    MSRPC item left out)."""
    question = request.question
    if not asked_heads(question) or asks_for_quantity(question):
        return chosen
    heads = set(stems(asked_heads(question)))
    out: list[_Sentence] = []
    for s in chosen:
        if s in out:
            continue
        items = [o for o in scorer.by_source.get(s.source.number, []) if o.listed == s.listed]
        # A list of things of the kind asked: its items named ("Linear Reading: …") or saying
        # the kind ("… a non-personalized baseline …"); a list of the paper's contributions ("We
        # release pretrained models … trained on the Pile") is not what "which dataset" asks for.
        kind = [o for o in items if _ITEM_NAME.match(o.text) or heads & set(o.term_counts)]
        if leads and s is leads[0] and s.listed >= 0 and len(kind) >= 2:
            items = items[:LIST_ITEMS]
            if s not in items:
                items.append(s)
            for before, after in itertools.pairwise(items):
                scorer.continues.setdefault(id(after), before)  # the list read in order
            out += [o for o in items if o not in out]
            continue
        out.append(s)
    return out


# How far after a body answer its value may be stated: "… resulting in a 50-layer ResNet (Table
# 1). We use option B for increasing dimensions. This model has 3.8 billion FLOPs."
CONTINUATION_REACH = 2


# A body's numbered references ("answers to TriviaQA [24] questions") state no value.
_REFERENCES = re.compile(r"\[\s*\d{1,3}(?:\s*[,;–-]\s*\d{1,3})*\s*\]")


def _stated_numbers(text: str) -> set[str]:
    return numbers_in(_REFERENCES.sub(" ", text))


def _continuation(lead: _Sentence, scorer: _Scorer, request: AnswerRequest) -> _Sentence | None:
    """The sentence just after a body answer that states the value it leads up to, when the
    paper says what it did first and how much in the next sentence: "For all experiments, we
    use a single Wikipedia dump …" -> "… we use the December 2018 dump"; "During training, we
    retrieve the top k documents for each query." -> "We consider k ∈ {5, 10} for training …";
    "… linearly for the first warmup_steps training steps …" -> "We used warmup_steps = 4000.".
    It must state a number neither the answer nor the question states, in the same section,
    as the value of what was asked (extractive.gives_value: the number next to what the question
    counts or measures, else a word of the question's own that names no paper: "This model has
    3.8 billion FLOPs", "one index refresh per approximately 500 training steps"), or as a value
    of a symbol the answer uses ("k"). A sentence that only shares words is not ("It reaches
    74.8% after 6·106 steps …" for "What learning rate did BN-x5 use?"). Captions (floats
    printed anywhere) are never one. None when no sentence is."""
    if not lead.source.where:
        return None
    own = scorer.by_source.get(lead.source.number, [])
    if lead not in own:
        return None
    question = request.question
    things = asked_value_terms(question) or set(stems(asked_heads(question)))
    pointing = set()
    if asks_for_quantity(question):
        asked = set(stems([w for w in content_words(_without_names(request)) if w not in ASKING]))
        pointing = (asked - _BROAD) or asked
    if not things and not pointing:
        return None
    stated = _stated_numbers(lead.text) | numbers_in(question)
    at = own.index(lead)
    for s in own[at + 1 : at + 1 + CONTINUATION_REACH]:
        if s.context != lead.context or is_caption(s.text) or FLOAT_LABEL.search(s.text):
            break
        if item_label(s.text) is not None:
            break  # another item of a list: its value is its own ("BN-x30: Like BN-x5, but …")
        if not _stated_numbers(s.text) - stated:
            continue
        if (
            (things and gives_value(s.text, things, question, lead.term_counts))
            or (
                _POINTS_BACK.match(s.text)
                and gives_value(s.text, pointing, question, None)
            )
            or _sets_symbol_of(s.text, lead.text)
        ):
            return s
    return None


# A sentence that opens by pointing back speaks of what the sentence before it said ("This
# results in one index refresh per approximately 500 training steps").
_POINTS_BACK = re.compile(r"(?:This|These|It|They|Such)\b")
# A value given to a symbol: "warmup_steps = 4000", "k ∈ {5, 10}", "ϵls = 0.1".
_ASSIGNED = re.compile(r"([^\W\d]\w*)\s*(?:=|∈|≈)\s*[-−{(\[]?\s*\d")


def _sets_symbol_of(sentence: str, lead: str) -> bool:
    """Whether `sentence` gives a value to a symbol `lead` uses ("During training, we retrieve
    the top k documents for each query." / "We consider k ∈ {5, 10} for training …")."""
    return any(
        re.search(rf"(?<!\w){re.escape(symbol)}(?!\w)", lead)
        for symbol in _ASSIGNED.findall(sentence)
    )


def _a_result(s: _Sentence) -> bool:
    """Whether a sentence reports a result, no answer to how something is trained."""
    return states_result(s.text, s.context)


_FIRST_PAGE = re.compile(r"pp?\.\s*(\d+)")


def _asked_section(request: AnswerRequest, scorer: _Scorer) -> list[_Sentence]:
    """For "How is DPR trained?" or "What data was OPT trained on?", the paper's own section on
    it read in order ("3.2 Training": "Training the encoders so that the dot-product similarity
    … becomes a good ranking function …"; "2.3 Pre-training Corpus": "The pre-training corpus
    contains a concatenation of datasets used in RoBERTa …"): the first SECTION_QUOTES sentences
    of the card of the named (else the first) paper whose heading names what was asked
    (answer_kinds.heading_answers), the one earliest in the paper (an appendix's "D Joint
    Training of Retriever and Reader" adds details to it). Its sentences seldom say "trained",
    "data" or the paper's name, which its results and limitations do ("Single and Multi denote
    that our Dense Passage Retriever (DPR) is trained using …", "… more scrutiny should be
    afforded to the training data" were quoted for them)."""
    if not request.sources:
        return []
    papers = _named_papers(request) or {request.sources[0].arxiv_id}

    def first_page(source: SourceText) -> int:
        match = _FIRST_PAGE.search(source.where)
        return int(match[1]) if match else 0

    sections = [
        source
        for source in request.sources
        if source.where
        and source.arxiv_id in papers
        and heading_answers(frozenset(terms(source.section)), request.question)
        and scorer.by_source.get(source.number)
    ]
    if not sections:
        return []
    # A heading saying the question's word ("2.4 Training") before a broader one ("2 Methods");
    # of the section's cards on its first page, the one opening it.
    asked = set(terms(request.question))
    first = min(
        sections,
        key=lambda s: (
            not asked & set(terms(s.section)),
            first_page(s),
            not s.text.lstrip().startswith(s.section),
            s.number,
        ),
    )
    own = [s for s in scorer.by_source[first.number] if not is_caption(s.text)]
    return own[:SECTION_QUOTES]


def _reason_before(lead: _Sentence, scorer: _Scorer, request: AnswerRequest) -> _Sentence | None:
    """The sentence just before a body answer that points back to it for its reason, for a
    question asking how or why (answer_kinds.reason_is_before): "We suspect that for large values
    of dk, the dot products grow large in magnitude …" before "To counteract this effect, we
    scale the dot products by 1/√dk". None when the sentence before is in another section, a
    float's, or not in the passage."""
    if not lead.source.where or not reason_is_before(lead.text, request.question):
        return None
    own = scorer.by_source.get(lead.source.number, [])
    at = own.index(lead) if lead in own else 0
    before = own[at - 1] if at > 0 else None
    if (
        before is None
        or before.position != lead.position - 1
        or before.context != lead.context
        or is_caption(before.text)
        or FLOAT_LABEL.search(before.text)
    ):
        return None
    return before


def _answered_by_heading(s: _Sentence, request: AnswerRequest) -> bool:
    """Whether a body sentence shares the question's words only through its section's heading
    (the question's names aside): "Residual Dropout We apply dropout …" under "5.4
    Regularization" answers "How was the Transformer regularised?" as one of the section's."""
    words = set(stems([w for w in content_words(_without_names(request)) if w not in ASKING]))
    if not words & s.context:
        return False
    if not words & set(s.term_counts):
        return True
    # A section whose heading names what a "what/which X" question asks for, not a number
    # ("What limitations of RWKV …?" under "9 Limitations"), is the answer, its sentences
    # saying the word or not; a quantity's answer is its sentence and the value after it.
    heads = set(stems(asked_heads(request.question)))
    return bool(heads & s.context) and not asks_for_quantity(request.question)


def _named_papers(request: AnswerRequest) -> set[str]:
    return named_about(_analysis(request, "named", {}))


def asked_papers(intent, named: dict) -> set[str]:
    """The arXiv ids of the papers an answer is about: those the question names and asks about,
    and for a question about a paper's record ("which paper introduced the Transformer?") every
    paper it names, in whatever place."""
    if intent.kind == intents.NAMED_PAPER and intent.asks:
        return {p["arxiv_id"] for p in named.get("papers", []) if p.get("arxiv_id")}
    if intent.kind == intents.NAMED_PAPER:  # "the key idea behind Fusion-in-Decoder"
        # ("explain the Transformer to a biologist": the title "the Transformer", the name
        # "Transformer")
        key = name_key(re.sub(r"^the\s+", "", intent.title, flags=re.IGNORECASE))
        return named_about(named) | {
            p["arxiv_id"] for p in named.get("papers", [])
            if p.get("arxiv_id") and name_key(p.get("asked", "")) == key
        }  # fmt: skip
    return named_about(named)


def named_about(named: dict) -> set[str]:
    """The arXiv ids of the papers the question names and asks about (chat.retrieval.named's
    analysis): "alternatives to the Transformer" names it but asks about others."""
    if not named.get("about"):
        return set()
    return {p["arxiv_id"] for p in named.get("papers", []) if p.get("arxiv_id")}


def asked_names(named: dict) -> list[str]:
    """What the question calls the papers it names ("OPT-175B", "the Transformer")."""
    return [p["asked"] for p in named.get("papers", []) if p.get("asked")]


def _without_names(request: AnswerRequest, text: str | None = None) -> str:
    """The question without the names it gives papers by (a paper's words for its own name may
    differ: "Fusion-in-Decoder" is no missing word when its paper is the one found)."""
    text = request.question if text is None else text
    for paper in _analysis(request, "named", {}).get("papers", []):
        text = text.replace(paper.get("asked") or "\x00", " ")
    return " ".join(text.split())


def _mentions_name(name: str, source: SourceText) -> bool:
    return _writes_name(name, f"{source.title} {source.text}")


def _writes_name(name: str, text: str) -> bool:
    """The text writes the name whole ("GPT-3," and "GPT-3." write GPT-3; "GPT-3.5" does not)."""
    key = re.escape(name_key(name))
    return re.search(rf"(?<!\w){key}(?!\w|\.\d)", name_key(text)) is not None


def _mentions_only(request: AnswerRequest, scorer: _Scorer) -> list[str] | None:
    """For a name the question gives a paper by that no paper introduces but sources mention
    ("GPT-4": RWKV's "comparative studies on RWKV-4 and ChatGPT / GPT-4"), that said plainly and
    only the sentences that write it: one on GPT-3 is about another model."""
    unknown = _analysis(request, "named", {}).get("unknown", [])
    said = [s for s in scorer.sentences if any(_writes_name(n, s.text) for n in unknown)]
    if not said:
        return None
    lines = [T.NAMED_ONLY_MENTIONED.format(names=_join(unknown)), ""]
    for source in _one_per_paper([s.source for s in said]):
        mine = [s for s in said if s.source.arxiv_id == source.arxiv_id][:2]
        lines += [_label(source), *(T.QUOTE_ITEM.format(quote=_quote(s)) for s in mine), ""]
    return lines[:-1]


def _absent(request: AnswerRequest) -> list[str]:
    """Names the question gives a paper by ("GPT-3") that no paper of the catalogue introduces
    and no source found mentions: the catalogue cannot answer about them."""
    unknown = _analysis(request, "named", {}).get("unknown", [])
    return [
        name for name in unknown if not any(_mentions_name(name, s) for s in request.sources)
    ]


def _shortlist(
    scorer: _Scorer, lex: dict[int, float], size: int, papers: set[int] | None = None
) -> list[_Sentence]:
    """What is worth embedding: the best sentences by words and role, plus the top papers' best
    contribution (a sentence can answer in other words than the question's); only of the
    sources numbered `papers` when given."""
    mine = [s for s in scorer.sentences if papers is None or s.source.number in papers]
    ranked = sorted(mine, key=lambda s: scorer.prelim(s, lex), reverse=True)
    picked = ranked[: size - 2]
    for source in [s for s in scorer.sources if papers is None or s.number in papers][:2]:
        own = [s for s in scorer.by_source.get(source.number, []) if s not in picked]
        contributions = [s for s in own if scorer.role_of(s) in (CONTRIBUTION, RESULT)]
        if contributions:
            picked.append(max(contributions, key=lambda s: scorer.prelim(s, lex)))
    return picked[:size]


# "What dataset did it use?", "Which benchmarks does DPR evaluate on?": the answer is names.
_ASKS_DATASETS = re.compile(
    r"\b(?:what|which)\b.*\b(?:datasets?|data\s+sets?|benchmarks?|corpora|corpus)\b", re.I
)
_DATASET_WORD = re.compile(r"\b(?:datasets?|data\s+sets?|benchmarks?|corpora|corpus|splits?)\b", re.I)
# A dataset's name: a word with a capital inside or in capitals ("NaturalQuestions", "TriviaQA",
# "SQuAD", "GSM8K", "CIFAR-10"), never the sentence's first word.
_NAME = re.compile(r"[A-Za-z]*[a-z][A-Z][\w-]*|[A-Z]{2,}[\w-]*")


# Datasets others used ("was mostly considered in previous work for datasets such as ..."): not
# the paper's own.
_OTHERS_WORK = re.compile(r"\b(?:previous|prior|earlier|related|past)\s+(?:work|studies|methods)\b", re.I)


# What a model was trained on names a dataset ("… parameters trained on the Pile (Gao et al.,
# 2020)").
_TRAINED_ON = re.compile(
    r"\b(?:trained|pre-trained|pretrained|fine-tuned)\s+on\s+(?:the\s+)?([A-Z][\w-]+)"
)
# A proper noun next to a dataset word names it too ("a large corpus such as Wikipedia"), unless
# it is an author's ("Lee et al. (2019)", "(Gao et al., 2020)"), a month's or a pointer's; a
# proper noun further away is another thing ("… on both corpora, perhaps due to the frequent
# mention of her name in Wikipedia articles").
PROPER_NEAR = 4
_QUOTED = re.compile(r"“[^“”]*”|\"[^\"]*\"")
_PROPER = re.compile(r"[A-Z][a-z]{2,}")
_CITED = re.compile(r"\([^()]*\b(?:19|20)\d\d[a-z]?\)|\b[A-Z][\w-]*(?:\s+(?:and|&)\s+[A-Z][\w-]*)?\s+et\s+al\b\.?")
_NOT_NAMES = frozenset(
    """january february march april may june july august september october november december jan
    feb mar apr jun jul aug sep sept oct nov dec table tables figure figures fig section sections
    appendix equation eq algorithm we our the this these in for with and""".split()
)


def _dataset_names(text: str, asked: str = "") -> set[str]:
    """The names a sentence gives datasets: none unless it speaks of datasets or benchmarks, or
    of what a model was trained on ("trained on the Pile"), of the paper's own work; the names
    the question gives (the paper's: "Which retrieval corpus does REALM use?") are not a
    dataset's, nor those of a sentence on the field's background (roles.role, as if not the
    passage's first: a chunk's first sentence is seldom an abstract's scene-setting)."""
    # (The field's, by its words alone: "Recent advances … have shown that models such as BERT,
    # RoBERTa and T5 … acquired from the massive text corpora they are trained on" names models.)
    if _OTHERS_WORK.search(text) or role(text, 1) == BACKGROUND:
        return set()
    if not _DATASET_WORD.search(text):
        text = _CITED.sub(" ", text)
        return {m[1] for m in _TRAINED_ON.finditer(text) if m[1].lower() not in _NOT_NAMES}
    # A table's printed cells before its caption: the names are its cells' (DPR's "Natural
    # Questions 79,168 … TriviaQA …" under "Table 1: Number of questions in each QA dataset"),
    # the caption's are what was measured ("Table 1: Task accuracy across arithmetic reasoning
    # datasets for T5 XXL … finetuned on PaLM 540B …" names no dataset).
    text = table_cells(text) or text
    # A quoted phrase is an example, not a name ("the model predicts “Thatcher” for “ is the
    # prime minister of United Kingdom.” on both corpora" names no corpus).
    text = _QUOTED.sub(" ", _CITED.sub(" ", text))
    words = [w.strip(",.;:()[]“”\"'") for w in text.split()]
    mine = {w.lower() for w in re.findall(r"[\w-]+", asked)}
    near = {
        i + d
        for i, w in enumerate(words)
        if _DATASET_WORD.fullmatch(w)
        for d in range(-PROPER_NEAR, PROPER_NEAR + 1)
    }
    return {
        w
        for i, w in enumerate(words)
        if i > 0
        and w.lower() not in mine
        and (
            _NAME.fullmatch(w)
            or (i in near and _PROPER.fullmatch(w) and w.lower() not in _NOT_NAMES)
        )
    }


# How many dataset names a word of the question a naming sentence shares is worth: in its own
# words, under its section's heading.
OWN_WORD_NAMES, HEADING_WORD_NAMES = 2, 3


def _row_dataset(sentence: str) -> set[str]:
    """The dataset a table's row names by its label, when the table's first column is datasets
    ("Natural Questions" of "Natural Questions 79,168 58,880 8,757 3,610")."""
    if isinstance(sentence, RowSentence) and _DATASET_WORD.fullmatch(sentence.labels):
        label = " ".join(itertools.takewhile(lambda w: not is_value(w), sentence.cells.split()))
        return {label} if label else set()
    return set()


def _table_names(s: _Sentence, scorer: _Scorer, names: set[str]) -> int:
    """How many datasets `s` names: for a table's row whose rows are datasets (its first column
    "Dataset": DPR's "CuratedTREC 1,353 1,125 133 694"), its table's rows, which are quoted
    together as the list they are (_with_list_items); else its own names."""
    if not (isinstance(s.text, RowSentence) and _DATASET_WORD.fullmatch(s.text.labels)):
        return len(names)
    return sum(1 for o in scorer.by_source.get(s.source.number, []) if o.listed == s.listed)


def _naming_datasets(request: AnswerRequest, scorer: _Scorer, topic: str) -> list[_Sentence]:
    """For a question after datasets, the sentences of the paper it is about (the named one,
    else the best-ranked) that name datasets, most names first: what the reader asked for."""
    if not _ASKS_DATASETS.search(topic) and not _ASKS_DATASETS.search(
        str(_analysis(request, "original", "") or "")
    ):
        return []
    if _analysis(request, "previous", {}).get("referred", 0) > 1:
        # "what datasets do they use?": each of the papers asked about, its best one
        papers, per_paper = {s.arxiv_id for s in request.sources}, 1
    else:
        papers, per_paper = _named_papers(request) or {request.sources[0].arxiv_id}, 2
    # The question's other words may say which of the paper's datasets are asked for ("… in
    # the logistic regression experiments", "… trained on"): each it shares, under the heading
    # of its section (which names the experiment) or in its own words, counts with the names
    # it gives. A related-work sentence naming "SFO" and "GPU" beside "dataset" came before "…
    # using IMDB movie review dataset" under "6.1 Experiment: Logistic Regression". (The words
    # count less than a list: "When evaluated on a wide range of open-domain QA datasets" is
    # no answer to "Which datasets does DPR evaluate on?", its list of five datasets is.)
    words = {w for w in content_words(_without_names(request, topic)) if w not in ASKING}
    about = set(stems([w for w in words if not _DATASET_WORD.fullmatch(w)]))
    # (Not the paper's title's words: every sentence of it is about them, "Dense Passage
    # Retriever" is in no way what was asked of it.)
    naming = [
        (
            _table_names(s, scorer, names)
            + OWN_WORD_NAMES * len((about - set(terms(s.source.title))) & set(s.term_counts))
            + HEADING_WORD_NAMES * len(about & s.context),
            s,
        )
        for s in scorer.sentences
        if s.source.arxiv_id in papers
        and (names := _dataset_names(s.text, topic) or _row_dataset(s.text))
    ]
    # The paper's own words before a float's printed words: a table of example outputs names
    # its models and the dataset its examples come from ("… NC-RAPT (Low) … Table 1: Examples of
    # generated paraphrases by different models from Quora Question Pairs dataset" opened "What
    # datasets does RAPT use?", over its list "• ParaSCI-ACL: … • Quora Question Pairs 50K
    # split …"). A table of values is not demoted: its labels name what was measured (DPR's
    # "Natural Questions 79,168 … TriviaQA …", where its prose says "the same five QA datasets
    # … as in previous work").
    naming.sort(
        key=lambda row: (
            is_float_text(row[1].text) and table_cells(row[1].text) is None,
            -row[0], row[1].source.number, row[1].position,
        )  # fmt: skip
    )
    chosen: list[_Sentence] = []
    for _, sentence in naming:
        if sum(s.source.arxiv_id == sentence.source.arxiv_id for s in chosen) < per_paper:
            chosen.append(sentence)
    return chosen


def _captions(request: AnswerRequest, scorer: _Scorer) -> list[_Sentence]:
    """The caption of the figure or table the question points to ("What does Figure 3 of
    CiteSee show?": "Figure 3: CiteSee augments inline citations based on …", where Figure 1's
    caption opened), of the paper it names or else the first source's paper; a table's caption
    and its rows, in reading order."""
    pointer = asked_pointer(request.question)
    if pointer is None or not request.sources:
        return []
    papers = _named_papers(request) or {request.sources[0].arxiv_id}
    found = [
        s for s in scorer.sentences
        if s.source.arxiv_id in papers and s.source.where and is_caption_of(s.text, pointer)
    ]  # fmt: skip
    if not found:
        # Its caption is in no chunk found: the paper's sentences on that figure ("… shown in
        # the left and right halves of Figure 1" before "See Figure 2" for Figure 1).
        found = [
            s for s in scorer.sentences
            if s.source.arxiv_id in papers and s.source.where and refers_to(s.text, pointer)
        ]  # fmt: skip
    found.sort(key=lambda s: (s.source.number, s.position))
    return [s for i, s in enumerate(found) if s.text not in {o.text for o in found[:i]}][:3]


def _overview(request: AnswerRequest, scorer: _Scorer, topic: str) -> list[str] | None:
    """None when the sources do not speak to the question (the caller then says so)."""
    if not scorer.sentences or not terms(topic):
        return None
    shortlist = _shortlist(scorer, scorer.lex, SHORTLIST, _whole_topic(request, topic))
    scores = scorer.by_meaning(topic, shortlist)
    scored = [(scores[id(s)], s) for s in shortlist]
    # A sentence saying what the asked thing is answers "what is X?" by itself.
    defined = _definition(request, scorer)
    if not defined and not _enough(request.sources, topic, scorer, scored):
        return None
    # Background ("... remains a long-standing challenge") only when no paper says what it did.
    chosen = _greedy(
        [(v, s) for v, s in scored if scorer.role_of(s) != BACKGROUND], OVERVIEW_SENTENCES
    ) or _greedy(scored, OVERVIEW_SENTENCES)
    if not chosen and not defined:
        return None
    leads = _body_answers(request, scorer)
    if method := _asked_section(request, scorer):
        # (a result is no answer to how it is trained: answer_kinds.procedure_weight)
        leads = method + [s for s in leads if s not in method and not _a_result(s)]
    naming = _naming_datasets(request, scorer, topic)
    if naming:
        leads = naming + [s for s in leads if s not in naming]
    if defined:
        leads = [defined] + [s for s in leads if s is not defined]
    if captions := _captions(request, scorer):
        leads = captions + [s for s in leads if s not in captions]
    # A paper repeats itself (a supplement's copy of its "Datasets." paragraph): one quote.
    leads = [s for i, s in enumerate(leads) if s.text not in {o.text for o in leads[:i]}]
    named = _named_papers(request)
    if named and not leads:
        # No sentence of the named paper shares the question's words: its best one still
        # opens the answer, never another paper's.
        own = [s for s in scorer.sentences if s.source.arxiv_id in named and not s.is_title]
        if own:
            leads = [max(own, key=lambda s: (scorer.prelim(s), -s.source.number, -s.position))]
    if leads and (reason := _reason_before(leads[0], scorer, request)) is not None:
        # (read together: the answer follows its reason at once)
        scorer.continues[id(leads[0])] = reason
        leads = [reason, *[s for s in leads if s is not reason]]
    lead = leads[0] if leads else None
    if leads:
        # Not a lead again in other words, nor the same sentence from another chunk (a paper
        # repeats itself: RAG's "best performing closed-book … T5-11B" on pp. 18 and 19).
        said = [set(s.term_counts) for s in leads]
        others = [
            s for s in chosen if s not in leads and not any(set(s.term_counts) <= w for w in said)
        ]
        if named:  # only the named paper speaks: another paper's value is not its value
            others = [s for s in others if s.source.arxiv_id in named]
        if (
            lead.source.where
            and asks_for_quantity(topic)
            and _states_the_number([*leads, *others], leads, request, topic, scorer.continues)
        ):
            # The body answer states the number asked for: what follows must say something of
            # what was asked, not only share the paper's name (chosen by meaning, "We trained a
            # 4-layer transformer … on the Wall Street Journal (WSJ) portion of the Penn
            # Treebank" followed "What dropout rate did the Transformer base model use?").
            others = [
                s
                for s in others
                if _says_what_was_asked(s, request, topic)
                and not other_item(s, request.question, scorer.by_source[s.source.number])
            ]
        elif lead.source.where and (heads := _said_heads(lead, topic)):
            # The body answer says what a "what/which X" question asks for ("… distributing
            # training across 8, 32GB NVIDIA V100 GPUs" for "What GPUs was RAG trained on?"):
            # what follows must say it too, not only the paper's name and "trained" ("We
            # introduce RAG models where … a pre-trained neural retriever").
            others = [s for s in others if heads & set(s.term_counts)]
        chosen = [*leads, *others][: max(OVERVIEW_SENTENCES, len(leads))]
    if asks_for_limits(topic) and any(id(s) in scorer.kind_asked for s in chosen):
        # The limits the paper states, not its definitions beside them ("We refer to these
        # instructions as ‘principles’ forming a ‘constitution’" for "What are the limitations
        # of Constitutional AI?").
        # (The answer's leads stay: a "9 Limitations" section's sentences, whatever their words.)
        chosen = [s for s in chosen if s in leads or id(s) in scorer.kind_asked]
    if method:
        chosen = [s for s in chosen if s in leads or not _a_result(s)]
    chosen = _with_continuations(chosen, leads, scorer, request)
    chosen = _with_list_items(chosen, leads, scorer, request)
    opening = T.LEAD_IN
    if asks_for_quantity(topic) and not _states_the_number(
        chosen, leads, request, topic, scorer.continues
    ):
        opening = T.NO_NUMBER  # never a topical sentence passed off as the number asked for
    lines = [opening, ""] + _grouped(chosen, first=lead, continues=scorer.continues)
    missing = _missing_words(request.sources, _without_names(request, topic))
    if missing:
        lines += ["", T.PARTLY.format(words=_list_words(missing))]
    return lines


WHOLE_TOPIC_PAPERS = 2  # abstracts on the whole question, for an overview to quote only them


def _whole_topic(request: AnswerRequest, topic: str) -> set[int] | None:
    """The abstracts whose title and text hold every word telling the question's topic apart,
    when at least WHOLE_TOPIC_PAPERS do: a paper on a part of it is not quoted then ("Is it true
    that contrastive learning needs large batches?" quoted a paper on large-batch training of
    any network beside two on contrastive learning with large batches). None (every source may
    be quoted) otherwise, when the question names a paper, or for full-text chunks (a chunk
    seldom repeats its paper's topic)."""
    if _named_papers(request) or any(s.where for s in request.sources):
        return None
    words = set(stems([w for w in dict.fromkeys(content_words(topic)) if w not in ASKING]))
    words = (words - _BROAD) or words
    if len(words) < 2:
        return None
    whole = {s.number for s in request.sources if words <= set(terms(f"{s.title} {s.text}"))}
    return whole if len(whole) >= WHOLE_TOPIC_PAPERS else None


def _said_heads(lead: _Sentence, topic: str) -> set[str]:
    """The stems of what a "what/which X" question asks for (extractive.asked_heads) that the
    answer's lead says; none for a quantity (its number is the answer)."""
    if asks_for_quantity(topic):
        return set()
    return set(stems(asked_heads(topic))) & set(lead.term_counts)


def _says_what_was_asked(s: _Sentence, request: AnswerRequest, topic: str) -> bool:
    """Whether a sentence shares a word with the question that is no name it gives papers, no
    asking word and no word of any field ("model")."""
    words = set(stems([w for w in content_words(_without_names(request, topic)) if w not in ASKING]))
    # (A model size the question names is what it asks about, broad as "large" is elsewhere:
    # "Fusion-in-Decoder (large) 51.4 67.6 …" for "What exact match does Fusion-in-Decoder large
    # reach …?".)
    asked = (words - (_BROAD - set(stems(sorted(sizes_in(topic)))))) or words
    said = set(s.term_counts)
    # What the question measures counts only with the words it qualifies it with: "… used
    # dropout rate Pdrop = 0.1, instead of 0.3" says the value of another rate than "What
    # learning rate schedule did the Transformer use?" asks for.
    things = asked_value_terms(topic)
    if values_another(s.text, things, topic):
        asked -= things
    return bool(asked & said)


def _states_the_number(
    chosen, leads, request: AnswerRequest, topic: str, continues: dict | None = None
) -> bool:
    """Whether a quoted sentence of a paper the answer leads with states a number with a word of
    what was asked ("How many GPUs…": "8 NVIDIA P100 GPUs"; another paper's GPU count, or the
    paper's "K = 5 steps", is not that number). A continuation (`continues`, by id) may state
    the number of what the sentence it continues names ("During training, we retrieve the top k
    documents for each query. We consider k ∈ {5, 10} …")."""
    papers = {s.source.arxiv_id for s in leads} or {request.sources[0].arxiv_id}
    things = asked_value_terms(topic)
    continues = continues or {}

    def words(s: _Sentence) -> set[str]:
        before = continues.get(id(s))
        return set(s.term_counts) | (set(before.term_counts) if before is not None else set())

    return any(
        s.source.arxiv_id in papers
        and states_new_number(s.text, topic)
        and (not things or things & words(s))
        for s in chosen
    )


def _enough(sources, topic, scorer: _Scorer, scored) -> bool:
    """At least one paper speaks to enough of the question's words (rare words weigh more), or
    one sentence is close to it in meaning (chat.llm.extractive's rule, plus meaning)."""
    if any(
        value - scorer.bonus(s) - LEX_WEIGHT * scorer.lex[id(s)] >= MEANING_ENOUGH
        for value, s in scored
    ):
        return True
    query = list(dict.fromkeys(terms(topic)))
    idf = _idf(query, scorer.sentences)
    mentioned = [set(terms(f"{s.title} {s.text}")) for s in sources]
    best = max(sum(idf[t] for t in query if t in words) for words in mentioned)
    return best >= MIN_COVERAGE * sum(idf.values())


def _missing_words(sources: list[SourceText], topic: str) -> list[str]:
    # (A source naming "16 TPUs" says the "hardware" asked for: chat.understanding.answer_kinds.)
    said = set().union(*(said_by_kind(s.text, topic) for s in sources)) if sources else set()
    words = [w for w in dict.fromkeys(content_words(topic)) if w not in ASKING and w not in said]
    return unmentioned(words, [set(terms(f"{s.title} {s.text}")) for s in sources])


def _acronym_forms(side: str, sources: list[SourceText]) -> list[tuple[str, ...]]:
    """The stems that name a side, in order: its own words, and the long form of an acronym the
    sources spell out ("reinforcement learning from human feedback (RLHF)")."""
    forms = [tuple(dict.fromkeys(terms(side)))]
    token = side.strip()
    if re.fullmatch(r"[A-Za-z0-9-]{2,10}", token) and any(c.isupper() for c in token[1:]):
        # The catalogue's own reading of "Long Form (LF)": the words that spell it, no more
        # (RAG's was "fine-tuning recipe for retrieval-augmented generation", and any sentence
        # saying "fine-tuning" and "generative" named RAG).
        for source in sources:
            for long_form in acronym_definitions(source.text, token):
                forms.append(tuple(dict.fromkeys(terms(long_form))))
    return list(dict.fromkeys(f for f in forms if f))


PHRASE_GAP = 1  # words a short name's words may have between them ("convolutional neural networks")


def _as_phrase(form: tuple[str, ...], s: _Sentence) -> bool:
    """Whether the sentence says a short name as a name: its words together and in order
    ("convolutional neural networks"), or its head first and the words qualifying it after
    ("transformers … in computer vision", "tuning the prompts"); not its first word qualifying
    another thing before its head ("prompt-set-specific tuning" is no prompt tuning)."""
    said = terms(s.text)
    head = form[-1]
    if head in said and all(w in said[said.index(head) + 1 :] for w in form[:-1]):
        return True
    for start, word in enumerate(said):
        if word != form[0]:
            continue
        at, found = start, True
        for nxt in form[1:]:
            window = said[at + 1 : at + 2 + PHRASE_GAP]
            if nxt not in window:
                found = False
                break
            at = at + 1 + window.index(nxt)
        if found:
            return True
    return False


def _mentions(s: _Sentence, forms: list[tuple[str, ...]]) -> bool:
    """Whether a sentence names a side: a short name's words together ("full fine-tuning" is not
    any "fine-tuning", "prompt tuning" no "prompt-set-specific tuning"), two thirds of a long
    one's words (an acronym's spelled-out form)."""
    have = set(s.term_counts)
    for form in forms:
        if len(form) <= 3:
            if set(form) <= have and (len(form) == 1 or _as_phrase(form, s)):
                return True
        elif len(set(form) & have) >= -(-2 * len(form) // 3):
            return True
    return False


def _side_papers(request: AnswerRequest, side: str, forms: list[tuple[str, ...]]) -> set[str]:
    """The arXiv ids of a comparison side's own papers: the paper the question names by it
    (chat.retrieval.named), else those whose title names it."""
    key = name_key(side)
    named = {
        p["arxiv_id"]
        for p in _analysis(request, "named", {}).get("papers", [])
        if p.get("arxiv_id")
        and key in (name_key(p.get("asked") or ""), name_key(p.get("name") or ""))
    }
    if named:
        return named
    return {s.arxiv_id for s in request.sources if s.arxiv_id and _names_in_title(s.title, forms)}


def _names_in_title(title: str, forms: list[tuple[str, ...]]) -> bool:
    words = set(terms(title))
    return any(set(form) <= words for form in forms)


def _compare(request: AnswerRequest, scorer: _Scorer, topic: str) -> list[str] | None:
    """Each side's own evidence under its label (two sides or more: "Compare the model sizes of
    OPT, RWKV and ViT" answered OPT and RWKV as one side), then where the papers set them side
    by side."""
    sides = list(dict.fromkeys(request.intent.subjects))
    forms = {side: _acronym_forms(side, request.sources) for side in sides}
    # Words two sides share ("models" in "diffusion models vs autoregressive models") tell
    # nothing apart.
    said = Counter(w for side in sides for w in set().union(*forms[side]))
    shared = {w for w, n in said.items() if n > 1}
    # Without them, a side's words are said by its own papers only: "token" names RAG-Token
    # beside RAG-Sequence in RAG's paper, not in OPT's "Our final corpus contains 180B tokens".
    naming = {
        side: {
            source.number
            for source in request.sources
            if any(set(f) <= set(terms(f"{source.title} {source.text}")) for f in fs)
        }
        for side, fs in forms.items()
    }
    forms = {
        side: [tuple(t for t in f if t not in shared) or f for f in fs]
        for side, fs in forms.items()
    }
    # A versioned side no paper introduces ("GPT-4") is written whole: a sentence on GPT-3 is
    # about another model.
    introduced = {name_key(p.get("asked") or "") for p in _analysis(request, "named", {}).get(
        "papers", [])}  # fmt: skip
    whole = {
        side for side in sides
        if versioned(side) and not {name_key(side), name_key(side.rpartition("-")[0])} & introduced
    }  # fmt: skip

    def says(s: _Sentence, side: str) -> bool:
        return _mentions(s, forms[side]) and (side not in whole or _writes_name(side, s.text))

    def others(side: str) -> list[str]:
        return [o for o in sides if o != side]

    def names(s: _Sentence, side: str) -> bool:
        # (Only in a source naming the side in full: without the words sides share, OPT's
        # "Open Pre-trained Transformer" is "open pre trained", which ViT's "When pre-trained
        # on large amounts of data …" says two thirds of.)
        return s.source.number in naming[side] and says(s, side)

    # A side's own papers: the paper the question names by it, else those whose title names it.
    own = {side: _side_papers(request, side, forms[side]) for side in sides}
    # A side's evidence names that side only, or is its own paper's (ViT's card "… we split an
    # image into patches …" never writes "ViT"); a sentence naming two sets them side by side.
    mentioning = {
        side: [
            s
            for s in scorer.sentences
            if (names(s, side) or s.source.arxiv_id in own[side])
            and not any(names(s, o) for o in others(side))
        ]
        for side in sides
    }
    if not any(mentioning.values()):
        return None
    lines: list[str] = [T.LEAD_IN, ""]
    used: set[int] = set()
    for side in sides:
        mine = [s for s in mentioning[side] if id(s) not in used]
        picked = []
        if mine:
            lex = scorer.lexical(f"{side} {topic}")
            shortlist = sorted(mine, key=lambda s: scorer.prelim(s, lex), reverse=True)
            shortlist = shortlist[: SHORTLIST // 2]
            scores = scorer.by_meaning(f"{side} {topic}", shortlist, lex)
            picked = _greedy([(scores[id(s)], s) for s in shortlist], 2)
        if not picked:
            # "None mentions it" only when no sentence names it at all: a sentence naming both
            # sides is quoted below, and would contradict it.
            beside = any(says(s, side) for s in scorer.sentences)
            missing = T.COMPARE_SIDE_ONLY_BESIDE if beside else T.COMPARE_SIDE_MISSING
            lines += [missing.format(side=side, other=_join(others(side))), ""]
            continue
        used.update(id(s) for s in picked)
        lines.append(T.COMPARE_SIDE.format(side=side))
        lines += [T.QUOTE_ITEM.format(quote=_quote(s)) for s in picked] + [""]
    # A sentence naming one side sets it beside another only in that other side's own paper
    # ("Unlike REALM, our retriever …" in RAG's): in its own paper, or a third one, it compares
    # that side with something else ("RAG-Token performs better than RAG-Sequence" is RAG beside
    # RAG, not beside REALM).

    def named_sides(s: _Sentence) -> int:
        return sum(names(s, side) for side in sides)

    both = [
        s
        for s in scorer.sentences
        if id(s) not in used
        and (
            named_sides(s) >= 2
            or (
                _COMPARISON.search(s.text)
                and any(
                    says(s, side) and s.source.arxiv_id in own[other]
                    for side in sides
                    for other in others(side)
                )
            )
        )
    ]
    if both:
        both.sort(key=lambda s: (named_sides(s) >= 2, scorer.prelim(s)), reverse=True)
        lines.append(T.COMPARE_DIFFERENCE)
        lines += [T.QUOTE_ITEM.format(quote=_quote(s)) for s in both[:2]]
    return lines if lines[-1] else lines[:-1]


def _periods(sources: list[SourceText]) -> list[tuple[str, list[SourceText]]]:
    years = sorted({int(s.published[:4]) for s in sources if s.published})
    if not years:
        return [("Undated", list(sources))]
    if len(years) <= MAX_YEARS_AS_PERIODS:
        key = lambda year: (year, str(year))  # noqa: E731
    else:
        key = lambda year: (year - year % 5, f"{year - year % 5}–{year - year % 5 + 4}")  # noqa: E731
    groups: dict[tuple[int, str], list[SourceText]] = {}
    for source in sources:
        year = int(source.published[:4]) if source.published else years[0]
        groups.setdefault(key(year), []).append(source)
    return [(label, members) for (_, label), members in sorted(groups.items())]


def _timeline(request: AnswerRequest, scorer: _Scorer, topic: str) -> list[str]:
    sources = list(request.sources)
    # Rules only: a timeline names up to two papers in each of several periods, and choosing
    # their sentences by meaning would embed more than the budget allows.
    picks = scorer.contribution("", [s.number for s in sources], 0)
    lines = [T.TIMELINE_LEAD, ""]
    for label, members in _periods(sources):
        count = len(members)
        lines.append(
            T.TIMELINE_PERIOD.format(
                period=label, count=count, papers="paper" if count == 1 else "papers"
            )
        )
        for source in members[:2]:  # the best-ranked of the period
            lines.append(
                _item(T.TIMELINE_ITEM, T.TIMELINE_ITEM_BARE, source, picks.get(source.number))
            )
        lines.append("")
    return lines[:-1]


def compose_shaped(request: AnswerRequest, max_words: int = 300) -> str:
    """The answer for `request.intent` as markdown (pure but for the embedder)."""
    intent = request.intent
    sources = list(request.sources)
    if intent is None:
        return compose_answer(request.question, sources, max_words)
    topic = request.question
    if not sources:
        arxiv_id = _analysis(request, "arxiv_id", "")
        if intent.kind == intents.SEED and request.seed is not None:
            seed = request.seed
            return T.SEED_LEAD.format(
                title=_title(seed), published=seed.published, arxiv_id=seed.arxiv_id or arxiv_id
            )
        if intent.kind == intents.SEED and arxiv_id:
            return T.SEED_MISSING_NOTHING.format(arxiv_id=arxiv_id)
        return T.NO_SOURCES
    if absent := _absent(request):
        return T.NAMED_ABSENT.format(names=_join(absent))
    scorer = _Scorer(sources, topic)
    kind = intent.kind
    body: list[str] | None = None
    previous = _analysis(request, "previous", {})
    if mentioned := _mentions_only(request, scorer):
        return "\n".join(mentioned)
    if previous.get("filtered"):
        body = _selection(request, scorer, previous)
    elif previous.get("windowed"):
        body = _in_window(request, scorer, previous)
    elif previous.get("side_by_side"):
        body = _side_by_side(request, scorer)
    elif previous and kind == intents.NAMED_PAPER and intent.asks and not intent.title:
        body = _shown_records(request, scorer, previous.get("cited", 0))  # "who wrote it?"
    elif previous and not previous.get("question") and len(_one_per_paper(sources)) == 1:
        body = _named(request, scorer, sources[0])  # "tell me more about [3]": that paper
    elif kind == intents.NAMED_PAPER and intent.asks:
        body = _record(request, scorer, _asked_source(request))
    elif kind == intents.NAMED_PAPER:
        named = _asked_source(request)
        body = _named(request, scorer, named) if named else None
    elif kind == intents.SEED:
        body = _seed(request, scorer, topic)
    elif kind == intents.LIST:
        body = _list(request, scorer, topic)
    elif kind == intents.COMPARE and len(intent.subjects) >= 2:
        body = _compare(request, scorer, topic)
    elif kind == intents.TIMELINE:
        body = _timeline(request, scorer, topic)
    if intents.asks_citation_counts(request.question):
        # Not a word of any paper: say so, then what each paper reports.
        body = [T.NO_CITATION_COUNTS, "", *(_list(request, scorer, "") or [])]
    if body is None:
        body = _overview(request, scorer, topic)
    if body is None:
        # Nothing to say by meaning either: the plain composer's answer (its refusal names the
        # words no paper mentions), from the named paper alone when the question names one.
        named = _named_papers(request)
        own = [s for s in sources if s.arxiv_id in named]
        return compose_answer(request.question, own or sources, max_words)
    return "\n".join(_freshness(request, sources) + body)
