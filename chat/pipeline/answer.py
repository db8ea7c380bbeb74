"""One answer as an async generator of events: analysis → sources → token* → done | error.

The events are the JSON envelopes of the WebSocket protocol (docs/WEBSOCKET.md), built by
chat.events, minus what only the running answer knows (message ids, offsets): chat.runner
iterates the generator for the socket and the API alike. Cancelling the task that iterates it
stops the LLM promptly.

Failures: if the configured backend fails before its first token, the fallback backend
(`LLM_FALLBACK`, the extractive one by default) answers instead and `done` says so; if it fails
after text was streamed, the partial text is kept and the generator ends with `error`.
"""

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterator, Collection, Sequence
from dataclasses import replace
from datetime import date, datetime
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.utils import timezone

from chat import events
from chat.llm import get_fallback, get_llm
from chat.llm import templates as T
from chat.llm.base import LLM_BAD_OUTPUT, AnswerRequest, LLMError, SourceText
from chat.llm.extractive import answering_sentences, quoted_sentences
from chat.llm.repetition import trim_loop
from chat.llm.sentences import passage_span
from chat.llm.shapes import (
    NAMED_TITLE_MATCH,
    asked_names,
    asked_papers,
    on_topic,
    stands_for,
    title_match,
    title_spells,
)
from chat.pipeline import progress, prompts
from chat.pipeline.citations import CitationStream, check_citations, only_citations
from chat.pipeline.direct import catalogue_coverage, chat_reply, nothing_relevant_reply
from chat.pipeline.passages import select_passages
from chat.pipeline.previous import nothing_kept_reply, previous_papers
from chat.pipeline.rewrite import Turn, model_may_rewrite, understand_followup
from chat.pipeline.seed import seed_card
from chat.pipeline.support import unsupported
from chat.retrieval.chunks import CHUNKS_PER_PAPER, Chunk, pages_label
from chat.retrieval.search import MAX_QUERY_CHARS, SearchError, search
from chat.retrieval.shaped import shape_hits
from chat.retrieval.spelling import corrected, typed
from chat.understanding import intent as intents
from chat.understanding.analysis import analyse
from chat.understanding.notation import as_printed
from chat.understanding.reference import SOURCES, STANDALONE
from chat.understanding.triage import triage, triage_with_model
from chat.window import window_label
from papers.indexing.passages import document_text
from papers.templatetags.authors import author_entries

logger = logging.getLogger(__name__)

# Characters of each source's passage put in the prompt: an abstract fits; long passages are cut
# so eight sources stay well inside a small model's context window. A full-text chunk (at most
# ~350 tokens) is kept whole: the card quotes it and a cut one may lose the answer.
PASSAGE_CHARS = 1500
CHUNK_CHARS = 2600
CITATIONS_ONLY = "The model answered with citation numbers only; no answer was written."


def _ms(start: float) -> int:
    return round((time.perf_counter() - start) * 1000)


def _day(value: Any) -> str:
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return str(value or "")[:10]


# Answers that say what each paper is (a list's one line per paper, a timeline's key papers, a
# seed's neighbours) quote its abstract: a paper's best chunk for the words of "papers on large
# language models" is its introduction's first line or a figure caption, not its contribution.
ABSTRACT_SHAPES = (intents.LIST, intents.TIMELINE, intents.SEED)


def as_abstract(hit):
    """The hit with its title and abstract as its passage, and no chunk cards."""
    return replace(
        hit, passage_text=document_text(hit.title, hit.abstract), kind="abstract", page=None,
        page_end=None, section="", more_chunks=[],
    )  # fmt: skip


# A list's topic of at most this many words is judged by its words (see `answer_events`).
SHORT_TOPIC_WORDS = 4
# Sections on other papers' work: what they say is done is not done by the paper.
_OTHERS_WORK = re.compile(r"related\s+work|prior\s+work|previous\s+work|background|literature", re.I)


def said_in_body_only(hit, topic: str, acronyms: dict | None = None) -> bool:
    """A read paper that a list's topic fits by its best chunk, not by its abstract (MuZero's
    abstract never says "reinforcement learning"; its introduction does): listed with that
    chunk. Not by a chunk of its related work (FiD's "… trained with reinforcement learning"
    is another paper's method)."""
    return (
        bool(topic)
        and hit.kind == "fulltext"
        and not _OTHERS_WORK.search(hit.section or "")
        and not on_topic(hit.title, hit.abstract, topic, acronyms=acronyms)
        and on_topic(hit.title, hit.passage_text, topic, acronyms=acronyms, every=True)
    )


def _listed_text(hit) -> str:
    return hit.passage_text if hit.kind == "fulltext" else hit.abstract


def abstract_first(hit):
    """ "summarize <title>": the named paper's abstract says what it reports; the chunk that
    matched the words comes next, as a card of its own."""
    if hit.kind != "fulltext":
        return hit
    best = Chunk(
        -hit.paper_id, hit.paper_id, hit.passage_text, hit.page, hit.page_end, hit.section,
        0, 0, 0.0, 0.0, score=max((c.score for c in hit.more_chunks), default=0.0) + 1.0,
    )  # fmt: skip
    return replace(as_abstract(hit), more_chunks=[best, *hit.more_chunks])


def source_card(number: int, hit, chunk=None) -> dict:
    """What a client shows for one source, and what the message row keeps: the paper, and the
    passage used (its abstract, or a chunk of its full text: `chunk`, else the hit's best)."""
    passage = (hit.passage_text or f"{hit.title}\n\n{hit.abstract}").strip()
    kind, page, page_end, section = hit.kind, hit.page, hit.page_end, hit.section
    if chunk is not None:
        passage, kind, page, page_end, section = (
            chunk.text.strip(), "fulltext", chunk.page, chunk.page_end, chunk.section
        )
    fulltext = kind == "fulltext"
    return {
        "number": number,
        "paper_id": hit.paper_id,
        "arxiv_id": hit.arxiv_id,
        "title": " ".join(hit.title.split()),
        "authors": hit.authors_text,
        # Each name's author page, made on the server (one home for the URL): chat.js links them.
        "author_links": author_entries(hit.authors_text),
        "published": _day(hit.published),
        "primary_category": hit.primary_category,
        "categories": list(hit.categories or []),
        "score": round(float(hit.score), 4),
        "passage": passage[: CHUNK_CHARS if fulltext else PASSAGE_CHARS],
        # An abstract, or a chunk of the full text read from the PDF (then its pages, 1-based).
        "kind": kind,
        "page": page if fulltext else None,
        "page_end": (page_end or page) if fulltext else None,
        "pages": pages_label(page, page_end) if fulltext else "",
        "section": section if fulltext else "",
        "quote": "",  # the passage's sentence that answers (set once every card is known)
        "highlight": "",  # the passage's own text of that sentence, which the card marks
        # The version whose text was read: what the card cites and links to.
        "version": hit.version,
        "cited_as": f"{hit.arxiv_id}v{hit.version}",
        "url": f"https://arxiv.org/abs/{hit.arxiv_id}v{hit.version}",
        # arXiv's PDF at that page (never ours: the PDF is not kept or served).
        "pdf_url": (
            f"https://arxiv.org/pdf/{hit.arxiv_id}v{hit.version}#page={page}"
            if fulltext and page else ""
        ),
    }


# Extra chunk cards of the best papers, by rank: the first paper found is usually the right one
# but its single best chunk often not the one that answers (bench_fulltext: the right paper was
# card [1] for most misses), so its next chunks come right after it, before weaker papers.
EXTRA_CHUNKS_BY_RANK = (2, 1)


def source_cards(
    hits, first: Sequence[dict] = (), wanted: int = 0, asked_about: Collection[str] = ()
) -> list[dict]:
    """Numbered cards for `hits` after `first`, at most `wanted` (or one per paper): each paper,
    then for the best papers their next best chunks (EXTRA_CHUNKS_BY_RANK), which displace the
    weakest papers; when fewer papers than `wanted` were found (a thread about one paper), more
    chunks fill the rest, as cards of their own with their own pages. A paper the question is
    about (arXiv ids in `asked_about`: "What optimizer trained OPT-175B?") gets all its chunks
    first: other papers' cards cannot answer for it."""
    wanted = max(wanted, len(first) + len(hits))
    planned: list[tuple] = []
    used: set[int] = set()
    # Several papers asked about ("How do RAG and Fusion-in-Decoder combine passages?") share the
    # cards: the first one's chunks took all eight, and the answer spoke of it alone.
    asked = len({hit.arxiv_id for hit in hits if hit.arxiv_id in asked_about})
    share = (wanted - len(first)) // asked if asked > 1 else 0
    for rank, hit in enumerate(hits):
        planned.append((hit, None))
        extra = EXTRA_CHUNKS_BY_RANK[rank] if rank < len(EXTRA_CHUNKS_BY_RANK) else 0
        if hit.arxiv_id in asked_about:
            extra = max(share - 1, 0) if share else len(hit.more_chunks)
        for chunk in hit.more_chunks[:extra]:
            planned.append((hit, chunk))
            used.add(chunk.passage_id)
    rest = [(hit, c) for hit in hits for c in hit.more_chunks if c.passage_id not in used]
    rest.sort(key=lambda pair: -pair[1].score)
    planned += rest
    cards = list(first)
    for hit, chunk in planned[: max(0, wanted - len(cards))]:
        cards.append(source_card(len(cards) + 1, hit, chunk))
    return cards


def with_quotes(cards: list[dict], question: str, names: Sequence[str] = ()) -> list[dict]:
    """The cards with `quote`: each passage's sentence that answers `question` (the one the
    extractive composer quotes first from it), `names` being what the question calls the papers
    it names."""
    quotes = answering_sentences(question, _source_texts(cards), names)
    for card in cards:
        set_quote(card, quotes.get(card["number"], ""))
    return cards


def set_quote(card: dict, sentence: str) -> None:
    """The card's answering sentence and `highlight`, the passage's own text of it that the card
    marks (chat.llm.sentences.passage_span): the sentence with the PDF's line breaks it was
    split across, or for a table row said as a sentence ("Table 1: Model 175B, …, Batch 2M (…)",
    papers.fulltext.tables) the row's line ("175B 96 96 12288 1.2e−4 2M")."""
    card["quote"] = sentence
    card["highlight"] = passage_span(card.get("passage") or "", sentence)


def _source_texts(cards: Sequence[dict]):
    return [
        SourceText(
            number=c["number"],
            title=c["title"],
            authors=c["authors"],
            published=c["published"],
            text=c["passage"],
            arxiv_id=c.get("arxiv_id") or "",
            where=", ".join(part for part in (c.get("pages"), c.get("section")) if part),
            section=c.get("section") or "",
            quote=c.get("quote") or "",
        )
        for c in cards
    ]


def _usage(stream, prompt_messages: list[dict], text: str) -> dict:
    """Token counts from the backend, else a 4-characters-per-token estimate marked as such."""
    usage = getattr(stream, "usage", None)
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    if prompt is not None and completion is not None:
        return {"prompt_tokens": prompt, "completion_tokens": completion, "estimated": False}
    prompt_chars = sum(len(m.get("content", "")) for m in prompt_messages)
    return {
        "prompt_tokens": prompt if prompt is not None else -(-prompt_chars // 4),
        "completion_tokens": completion if completion is not None else -(-len(text) // 4),
        "estimated": True,
    }


def _followup_fields(reference) -> dict:
    """What the analysis event says about the previous answer (docs/WEBSOCKET.md)."""
    return {"followup_of": reference.followup_of, "standalone": reference.kind == STANDALONE}


async def _direct(query: str, analysis: dict, window: str, text: str, timings: dict,
                  started: float, **extra) -> AsyncIterator[dict]:
    """An answer written by a template (chat.pipeline.direct): no sources, no citations."""
    yield events.analysis(query, analysis, window)
    yield events.sources([])
    timings["overhead_ms"] = timings["ttft_ms"] = _ms(started)
    yield events.delta(text)
    timings["total_ms"] = _ms(started)
    usage = {"prompt_tokens": 0, "completion_tokens": 0, "estimated": False}
    yield events.outcome("done", text, [], [], usage, "flatuniverse", "template", timings, **extra)


async def _nothing_relevant(
    topic: str, query: str, analysis: dict, now: datetime, timings: dict, started: float
) -> AsyncIterator[dict]:
    """The reply when nothing found is on `topic`: said so, with what the catalogue covers."""
    window = window_label(analysis, now.date())
    coverage = await sync_to_async(catalogue_coverage)()
    timings["nothing_relevant"] = True
    text = nothing_relevant_reply(topic, window, coverage)
    async for event in _direct(query, analysis, window, text, timings, started,
                               nothing_relevant=True):
        yield event


async def answer_events(
    question: str,
    *,
    history: Sequence[Turn] = (),
    now: datetime | None = None,
    backend=None,
    fallback=None,
    k: int | None = None,
    filters: dict | None = None,
    scope_ids: Sequence[int] | None = None,
) -> AsyncIterator[dict]:
    """Answer `question` (a thread's newest) given the thread's earlier `history`; `filters`
    (checked by chat.understanding.overrides.parse_filters) replace what the question says;
    `scope_ids` (a scoped thread's papers, chat.scopes) are the only papers it may search and
    cite."""
    started = time.perf_counter()
    now = now or timezone.now()
    # The first call builds the backend (importing its SDK or loading a model): off the loop, so
    # a cold process does not freeze every other socket meanwhile.
    timings: dict[str, Any] = {}
    yield progress.understanding()
    # "sqrt(d_k)" searched, and matched against the papers' sentences, as they print it: "√dk".
    question = as_printed(question)

    # Triage (chat.understanding.triage): small talk and questions about Flatuniverse are
    # answered from a template, without a search. Only an OpenAI-compatible model may settle
    # the messages the rules are unsure of.
    verdict = triage(question, history)
    if not verdict.sure:
        backend = backend or await asyncio.to_thread(get_llm)
        if model_may_rewrite(backend):
            verdict = await triage_with_model(question, history, backend.complete) or verdict
    if not verdict.searches:
        coverage = await sync_to_async(catalogue_coverage)()
        analysis = {"triage": verdict.kind, "followup_of": None, "standalone": True}
        async for event in _direct(question, analysis, "", chat_reply(verdict.reason, coverage),
                                   timings, started):
            yield event
        return

    backend = backend or await asyncio.to_thread(get_llm)
    step = time.perf_counter()
    query, reference = await understand_followup(question, history, backend=backend)
    timings["rewrite_ms"] = _ms(step)

    evidence: dict[int, str] = {}
    shown_as = ""  # "Showing results for …": the question with its misspelt words corrected
    if reference.kind == SOURCES and history:
        # "which of these…", "the second one": the previous answer's papers, no new search.
        before = history[-reference.back]
        papers = await previous_papers(reference, before.sources, now, question, before.answer)
        understood = analyse(reference.rest or question, now)
        analysis = understood.to_dict()
        analysis.update(_followup_fields(reference), triage=verdict.kind)
        analysis["previous"] = papers.summary()
        analysis["followup_of"] = papers.asked  # the cards of the papers it refers to
        if not papers.hits:
            async for event in _direct(query, analysis, "", nothing_kept_reply(papers), timings,
                                       started):
                yield event
            return
        hits, topic = papers.hits, papers.topic
        evidence = {pid: found.sentence for pid, found in papers.evidence.items()}
        if papers.question:
            # "what dataset did the second one use?": searched within those papers (their full
            # text), as in a thread scoped to them.
            yield await progress.searching()
            step = time.perf_counter()
            try:
                response = await search(
                    papers.question[:MAX_QUERY_CHARS], k=settings.CHAT_SOURCES, now=now,
                    paper_ids=[hit.paper_id for hit in papers.hits],
                    chunks_per_paper=CHUNKS_PER_PAPER,
                )
            except SearchError:
                response = None
            timings["retrieval_ms"] = _ms(step)
            if response is not None and response.hits:
                hits, topic = response.hits, response.analysis.query or papers.question
    else:
        yield await progress.searching()
        step = time.perf_counter()
        # Timelines and filtered lists read better with more papers: the rules' first reading
        # of the question (microseconds) sets how many to ask for.
        first_reading = intents.classify(query, analyse(query[:MAX_QUERY_CHARS], now), now.date())
        wanted = k or intents.sources_wanted(first_reading, settings.CHAT_SOURCES)
        try:
            # A pasted abstract may be longer than a search takes; its start carries the topic.
            response = await search(
                query[:MAX_QUERY_CHARS], k=wanted, now=now, overrides=filters or None,
                paper_ids=scope_ids, chunks_per_paper=CHUNKS_PER_PAPER,  # (cards: source_cards)
            )
        except SearchError as exc:
            timings["total_ms"] = _ms(started)
            yield events.outcome(
                "error", "", [], [], {}, backend.name, backend.model, timings,
                code="invalid_question", message=f"This question cannot be searched: {exc}.",
            )
            return
        if response.nothing_relevant and first_reading.asks == intents.ORIGIN and first_reading.title:
            # "Which paper introduced residual connections?": the asking words ("paper",
            # "introduced") thinned the relevance gate's share of the query's words, and the gate
            # refused a question whose first paper answers it. The name alone decides.
            try:
                by_name = await search(
                    first_reading.title[:MAX_QUERY_CHARS], k=wanted, now=now,
                    overrides=filters or None, paper_ids=scope_ids,
                    chunks_per_paper=CHUNKS_PER_PAPER,
                )
            except SearchError:
                by_name = None
            if by_name is not None and by_name.hits and not by_name.nothing_relevant:
                response = by_name
        timings["retrieval_ms"] = _ms(step)
        if response.timings:
            timings["retrieval"] = dict(response.timings)
        understood = response.analysis
        analysis = understood.to_dict()
        analysis.update(_followup_fields(reference), triage=verdict.kind)
        analysis["vectors_pending"] = response.vectors_pending  # BM25 alone for unindexed papers
        if response.named.papers or response.named.unknown:
            # The papers the question names ("the Transformer"): the answer opens with theirs.
            analysis["named"] = response.named.to_dict()
        if response.acronyms:  # searched with their long forms: a list's topic takes either
            analysis["acronyms"] = dict(response.acronyms)
        if response.corrections:  # misspelt words searched as the catalogue writes them
            analysis["corrections"] = {c.typo: c.word for c in response.corrections}
        if response.signals is not None:
            analysis["relevance"] = response.signals.to_dict()
        # A scoped thread's user chose its papers: what they hold is answered from, not gated.
        if response.hits and response.nothing_relevant and scope_ids is None:
            # The relevance gate (chat.retrieval.relevance): say so, cite nothing.
            typed_topic = typed(response.analysis.query, response.corrections)
            async for event in _nothing_relevant(
                typed_topic, query, analysis, now, timings, started
            ):
                yield event
            return
        hits = response.hits
        if not k:  # (a caller's own k asks for the plain search)
            # Only "latest" questions need the catalogue's newest date (cached, but a query cold).
            newest = (
                (await sync_to_async(catalogue_coverage)()).last if first_reading.latest else None
            )
            hits = await shape_hits(
                first_reading, understood, hits, now, newest, paper_ids=scope_ids
            )
        if response.corrections:
            # The answer says what it searched for, and answers that ("the transformer").
            query = corrected(query, response.corrections)
            shown_as = T.SHOWING_RESULTS.format(question=corrected(question, response.corrections))
        # The extractive backend matches sentences against the question's words: give it the
        # topic (the date phrase and filters cut out), or "since 2025" would count as unanswered
        # words. Model backends read the whole question from `messages`.
        topic = response.analysis.query or query
    if filters:  # what the user set on the chips, kept with the answer
        analysis["filters"] = dict(filters)
    intent = intents.classify(query, understood, now.date())
    analysis["intent"] = intent.kind
    searched = reference.kind != SOURCES
    listing = intent.kind == intents.LIST and searched and not intent.by_filter
    # (a question after citation counts is answered by what each paper reports: its abstract)
    if (intent.kind in ABSTRACT_SHAPES or intents.asks_citation_counts(query)) and not evidence:
        hits = [
            replace(hit, more_chunks=[])
            if listing
            and said_in_body_only(hit, analysis.get("query") or "", analysis.get("acronyms"))
            else as_abstract(hit)
            for hit in hits
        ]  # fmt: skip
    if listing and analysis.get("query"):
        # The search's tail is no list item (chat.llm.shapes.on_topic); left out of the cards
        # too, so the list's numbers are its cards' ([2] is the second line).
        topic_words, acronyms = intents.list_topic(analysis["query"]), analysis.get("acronyms")
        listed = [
            h for h in hits
            if on_topic(h.title, _listed_text(h), topic_words, acronyms=acronyms)
        ]  # fmt: skip
        short = len(topic_words.split()) <= SHORT_TOPIC_WORDS
        if not listed and short and hits and scope_ids is None and not analysis.get("named"):
            # Not one paper found is on the topic: the catalogue has none, said plainly ("papers
            # on protein folding" listed a paper on folding cloth as its one paper). A long
            # topic (a sentence, a pasted abstract) is never all in one paper's words: it was
            # found by meaning, and its papers are listed.
            async for event in _nothing_relevant(
                analysis["query"], query, analysis, now, timings, started
            ):
                yield event
            return
        hits = listed or hits
    elif intent.kind == intents.TIMELINE and searched and analysis.get("query"):
        # A timeline's periods are its cards': the search's tail (an eigenvalue paper in 2007
        # for "how did diffusion models develop?") is no period of the topic.
        topic_words = intents.timeline_topic(analysis["query"])
        hits = [h for h in hits if on_topic(h.title, h.abstract, topic_words)] or hits
    elif intent.kind == intents.NAMED_PAPER and not evidence:
        # (the papers it names by what they introduced, "the RWKV paper", and for a record
        # every paper it names)
        record = asked_papers(intent, analysis.get("named", {}))
        hits = [
            abstract_first(hit)
            if hit.arxiv_id in record or title_match(intent.title, hit.title) >= NAMED_TITLE_MATCH
            else hit
            for hit in hits
        ]  # fmt: skip
    elif (acronym := stands_for(query)) and not evidence:
        # "What does ULSA stand for?" is answered by the title "ULSA: Unified Language of …":
        # quoted from its paper's abstract card (page 1), not from the chunk that matched.
        hits = [abstract_first(h) if title_spells(acronym, h.title) else h for h in hits]
    yield events.analysis(query, analysis, window_label(analysis, now.date()))

    step = time.perf_counter()
    seed = await seed_card(understood.arxiv_id)
    if seed and scope_ids is not None and seed["paper_id"] not in scope_ids:
        seed = None  # a paper named in a scoped thread is cited only if the scope holds it
    if seed:
        seed["passage"] = seed["passage"][:PASSAGE_CHARS]
    # "summarize <id>": the paper itself is source [1] (search only found papers like it).
    first = [{**seed, "number": 1}] if seed and intent.kind == intents.NAMED_PAPER else []
    named = analysis.get("named", {})
    cards = source_cards(
        hits, first, wanted=settings.CHAT_SOURCES, asked_about=asked_papers(intent, named)
    )
    cards = with_quotes(cards, topic, asked_names(named))
    if reference.kind == SOURCES and analysis.get("previous", {}).get("filtered"):
        for card in cards:  # "which of these…": the sentence that says so, or none
            set_quote(card, evidence.get(card["paper_id"], ""))
    seed_text = _source_texts(first or [seed])[0] if seed else None
    texts = prompt_texts = _source_texts(cards)
    # "which of these…": each passage holds the sentence that says so; a model reads it whole.
    selecting = bool(analysis.get("previous", {}).get("filtered"))
    if backend.name != "extractive" and settings.LLM_PROMPT_SENTENCES > 0 and texts and not selecting:
        # A model reads each source's best sentences, not the whole abstract (a shorter prompt).
        prompt_texts = await asyncio.to_thread(
            select_passages, topic, texts, settings.LLM_PROMPT_SENTENCES
        )
    named = [
        (paper["name"], [c["number"] for c in cards if c["arxiv_id"] == paper["arxiv_id"]])
        for paper in analysis.get("named", {}).get("papers", [])
    ]
    messages = prompts.answer_messages(
        query, prompt_texts, now.date(), intent=intent, seed=seed_text,
        named=[(name, numbers) for name, numbers in named if numbers],
        previous=analysis.get("previous"),
    )
    request = AnswerRequest(
        question=topic, sources=texts, messages=messages,
        intent=intent, analysis=analysis, seed=seed_text, today=now.date(),
    )
    if backend.name == "extractive":
        # The composer's answer is written before the cards are sent, so that each card marks
        # the sentence the answer quotes from it (its best answering sentence is not always the
        # one the answer chose: a sentence chosen by meaning, a dataset list, a list's line).
        request.composed = await asyncio.to_thread(backend.compose, request)
        for number, sentence in quoted_sentences(request.composed, texts).items():
            set_quote(next(c for c in cards if c["number"] == number), sentence)
    timings["prompt_ms"] = _ms(step)
    yield events.sources(cards)
    yield progress.reading(len(cards))
    timings["overhead_ms"] = _ms(started)

    parts: list[str] = []
    stream = None
    used = backend
    lead = f"{shown_as}\n\n" if shown_as else ""  # (before the answer, in what is saved)

    def finish(kind: str, **extra) -> dict:
        checked = check_citations((lead if parts else "") + trim_loop("".join(parts)), len(cards))
        timings["total_ms"] = _ms(started)
        return events.outcome(
            kind, checked.text, checked.kept, checked.dropped,
            _usage(stream, messages, "".join(parts)), used.name, used.model, timings, **extra,
        )

    async def first_delta(candidate) -> tuple[Any, str | None]:
        """Start `candidate` and wait for its first text (None when it answered nothing)."""
        llm_stream = candidate.stream(request)
        try:
            async for delta in llm_stream:
                if delta:
                    return llm_stream, delta
            return llm_stream, None
        except BaseException:
            await llm_stream.aclose()
            raise

    try:
        try:
            stream, delta = await first_delta(backend)
        except LLMError as exc:
            fallback = fallback or await asyncio.to_thread(get_fallback)
            if fallback is None or fallback.name == backend.name:
                raise
            logger.warning("llm_fallback from=%s code=%s", backend.name, exc.code)
            timings["fallback_from"] = backend.name
            timings["fallback_code"] = exc.code
            used = fallback
            stream, delta = await first_delta(used)
    except LLMError as exc:
        yield finish("error", code=exc.code, message=exc.message)
        return

    # What is shown is what is saved: the citations are checked as the text streams.
    shown = CitationStream(len(cards))
    try:
        if delta:
            timings["ttft_ms"] = _ms(started)
            yield progress.writing()
            if lead:
                yield events.delta(lead)
            parts.append(delta)
            if text := shown.feed(delta):
                yield events.delta(text)
            async for delta in stream:
                if delta:
                    parts.append(delta)
                    if text := shown.feed(delta):
                        yield events.delta(text)
    except LLMError as exc:
        logger.warning("llm_failed_mid_stream backend=%s code=%s", used.name, exc.code)
        if text := shown.end():
            yield events.delta(text)
        yield finish("error", code=exc.code, message=exc.message)
        return
    finally:
        if stream is not None:
            await stream.aclose()
    if only_citations("".join(parts)):
        # "[1] [2] … [13]" is not an answer (and was not shown: CitationStream): the fallback
        # (the composer) writes one instead, streamed as any answer.
        fallback = fallback or await asyncio.to_thread(get_fallback)
        if fallback is None or fallback.name == used.name:
            if text := shown.end():
                yield events.delta(text)
            yield finish("error", code=LLM_BAD_OUTPUT, message=CITATIONS_ONLY)
            return
        logger.warning("llm_citations_only backend=%s", used.name)
        timings.update(fallback_from=used.name, fallback_code="citations_only")
        used, stream = fallback, fallback.stream(request)
        parts, shown = [], CitationStream(len(cards))
        try:
            async for delta in stream:
                if delta:
                    parts.append(delta)
                    if text := shown.feed(delta):
                        yield events.delta(text)
        finally:
            await stream.aclose()
    if text := shown.end():
        yield events.delta(text)
    done = finish("done")
    if used.name != "extractive" and done["citations"]:
        # Each sentence against the sources it cites (the embedder: off the event loop).
        step = time.perf_counter()
        done["unsupported"] = await asyncio.to_thread(unsupported, done["content"], cards)
        timings["support_ms"] = _ms(step)
    yield done
