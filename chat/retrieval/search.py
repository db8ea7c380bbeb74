"""The one search entry point: `await search(text, k=10)` for the chat, the page, the API, the CLI.

Stages (each its own module):

1. analysis (chat.understanding.analysis): topic, date window, recency weight, authors, categories,
   an arXiv id; the caller may pass its own analysis or overrides from the search page's chip;
2. BM25 (chat.retrieval.fulltext) and, as soon as the query is embedded (a worker thread;
   the model releases the GIL), dense retrieval (chat.retrieval.dense) and the direct search
   over full-text chunks (chat.retrieval.chunks): at the same time, on database connections of
   their own (chat.lanes.search_db_lanes), each with every filter inside its SQL;
3. for an author filter or "papers like <arXiv id>", one query first resolves the author's
   papers or the named paper's vector, which both retrievers need;
4. fusion (chat.retrieval.fusion), then recency blending only when the analysis asks for
   recency (chat.retrieval.recency), then the reranker (chat.retrieval.rerank);
5. the papers of the top k with their best passage, a highlighted snippet and why they matched.

A question naming an arXiv id ("papers like 2401.12345") searches with that paper's own vector
(and its title for BM25), excluding the paper itself. A question with filters but no topic
("papers by Hinton since 2020") lists the matching papers newest first: without a topic there is
no relevance to rank by.

The event loop never waits on a query or on the model: SQL runs in worker threads
(chat.lanes), the embedding in another.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from chat.lanes import may_run_in_parallel, run_search_sql
from chat.llm import get_llm
from chat.llm.extractive import quotable_body_sentences
from chat.retrieval import chunks as fulltext_chunks
from chat.retrieval import refine
from chat.retrieval.acronyms import long_forms, topic_acronyms
from chat.retrieval.dense import DenseResult, dense_search, paper_vector
from chat.retrieval.filters import SearchFilters, resolve_authors
from chat.retrieval.fulltext import LexicalResult, lexical_search, query_terms
from chat.retrieval.fusion import Fused, Ranked, fuse, list_weight
from chat.retrieval.multiquery import rewrite
from chat.retrieval.named import Named, find_named, named_first
from chat.retrieval.recency import blend
from chat.retrieval.relevance import Signals, lexical_share, nothing_relevant
from chat.retrieval.rerank import get_reranker
from chat.retrieval.snippets import make_snippet, matching_words
from chat.retrieval.spelling import Correction, corrected, corrections
from chat.understanding.acronyms import expand
from chat.understanding.analysis import QueryAnalysis, analyse, as_utc_now
from chat.understanding.llm_analysis import analyse_with_llm
from chat.understanding.quantity import asks_for_quantity
from chat.window import window_label
from papers.catalogue import vectors_pending
from papers.embeddings import get_embedder
from papers.embeddings.query_cache import query_vector
from papers.indexing.lexical import BODIES
from papers.indexing.passages import document_text
from security import inputs

MAX_K = 100
MAX_QUERY_CHARS = 2000
# Keys the search page's chip (and API callers) may override in the analysis.
OVERRIDABLE = frozenset({"start", "end", "recency_weight", "categories", "authors", "arxiv_id"})


class SearchError(ValueError):
    """A search that cannot run as asked; the message is safe to show to the user."""


@dataclass
class SearchHit:
    paper_id: int
    arxiv_id: str
    title: str
    authors_text: str
    published: datetime
    primary_category: str
    categories: list[str]
    abstract: str
    score: float
    dense_rank: int | None  # 1-based rank in the dense list, None when absent from it
    fulltext_rank: int | None  # 1-based rank in the BM25 list
    passage_text: str  # the passage that matched best (what the chat quotes)
    snippet_html: str  # escaped, matches in <mark>: safe to render as HTML
    why: list[str] = field(default_factory=list)
    version: int = 1  # the version whose text was searched (and is cited)
    # Where `passage_text` comes from: the abstract, or a chunk of the full text (then its PDF
    # pages and section; chat.retrieval.chunks). `more_chunks`: the paper's next best chunks.
    kind: str = "abstract"
    page: int | None = None
    page_end: int | None = None
    section: str = ""
    more_chunks: list = field(default_factory=list)
    named: str = ""  # the name by which the question named this paper ("Transformer")

    def to_dict(self) -> dict[str, Any]:
        return {
            "paper_id": self.paper_id,
            "arxiv_id": self.arxiv_id,
            "version": self.version,
            "title": self.title,
            "authors": self.authors_text,
            "published": self.published.isoformat(),
            "primary_category": self.primary_category,
            "categories": list(self.categories),
            "abstract": self.abstract,
            "score": round(self.score, 6),
            "dense_rank": self.dense_rank,
            "fulltext_rank": self.fulltext_rank,
            "passage": self.passage_text,
            "kind": self.kind,
            "page": self.page,
            "page_end": self.page_end,
            "section": self.section,
            "snippet_html": self.snippet_html,
            "why": list(self.why),
            "named": self.named,
            "url": f"https://arxiv.org/abs/{self.arxiv_id}",
        }


@dataclass
class SearchResponse:
    analysis: QueryAnalysis
    hits: list[SearchHit]
    timings: dict[str, float]  # milliseconds per stage, and "total"
    notices: list[str] = field(default_factory=list)  # things the user should know
    plan: dict[str, Any] = field(default_factory=dict)  # how it ran (dense plan, BM25 exactness)
    # Absolute relevance of the best hits (chat.retrieval.relevance), and the embedder they used.
    signals: Signals | None = None
    model: str = ""
    # Some visible papers have no vectors yet: for them the results come from BM25 alone.
    vectors_pending: bool = False
    # How many papers passed every filter and were found, of which `hits` is one page.
    total: int = 0
    # The papers the question names by what they introduced (chat.retrieval.named): first.
    named: Named = field(default_factory=Named)
    # The question's acronyms searched with their long forms (chat.retrieval.acronyms).
    acronyms: dict[str, str] = field(default_factory=dict)
    # Misspelt words searched as the catalogue's own (chat.retrieval.spelling).
    corrections: list[Correction] = field(default_factory=list)

    @property
    def nothing_relevant(self) -> bool:
        """Nothing retrieved is relevant enough to answer from (the calibrated gate)."""
        return nothing_relevant(self.analysis, self.signals, self.model)

    def to_dict(self) -> dict[str, Any]:
        return {
            "analysis": self.analysis.to_dict(),
            "vectors_pending": self.vectors_pending,
            "results": [hit.to_dict() for hit in self.hits],
            "timings": {name: round(ms, 2) for name, ms in self.timings.items()},
            "notices": list(self.notices),
            "plan": dict(self.plan),
            "total": self.total,
            "named": self.named.to_dict(),
            "corrections": {c.typo: c.word for c in self.corrections},
        }


# --- the pipeline ------------------------------------------------------------------------------


@dataclass
class _Query:
    """Everything the stages share for one search."""

    analysis: QueryAnalysis
    filters: SearchFilters
    text: str  # what BM25 and the embedder see
    k: int
    candidates: int
    now: datetime
    model: str = ""
    similar_to: int | None = None  # paper id for "papers like <arXiv id>"
    vector: Any = None
    text_for_bm25: str = ""  # "papers like …": the topic plus the named paper's title
    parallel: bool = False  # BM25 and dense on two search lanes (chat.lanes)
    lexical: LexicalResult = field(default_factory=lambda: LexicalResult([]))
    dense: DenseResult | None = None
    chunks: DenseResult | None = None  # the direct chunk search (chat.retrieval.chunks)
    # the papers whose full text holds the query's words, best first (LexicalHits or WordHits)
    chunk_words: list = field(default_factory=list)
    fulltext: str = "off"  # settings.FULLTEXT_RETRIEVAL for this search
    published: dict[int, datetime] = field(default_factory=dict)  # of every candidate
    rewrites: list[str] = field(default_factory=list)  # multi-query: the LLM's rewrites
    signals: Signals | None = None
    notices: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    plan: dict[str, Any] = field(default_factory=dict)
    vectors_pending: bool = False
    offset: int = 0  # the page: hits offset .. offset + k of the ordered list
    sort: str = "relevance"  # or "date": the same relevant papers, newest first
    total: int = 0
    named: Named = field(default_factory=Named)  # papers the question names: first
    acronyms: dict[str, str] = field(default_factory=dict)  # searched with these long forms
    chunks_per_paper: int = 1  # a read paper's best chunks its hit carries (search())


# "Newest first" orders the papers found relevant, not every vector neighbour: those with a
# keyword match, or among this many nearest in meaning.
DATE_SORT_DENSE_RANKS = 30
SORTS = ("relevance", "date")


# Said on the search page, in the API's notices and (via `vectors_pending`) in chat.
VECTORS_PENDING_NOTICE = (
    "Some papers are still being indexed for semantic search: until they are, they are found "
    "by keyword match (BM25) alone."
)


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000.0


def _check(text: str, k: int) -> str:
    if not isinstance(text, str):
        raise SearchError("the query must be text")
    if (problem := inputs.problem(text)) is not None:  # NUL, lone surrogates: unsearchable
        raise SearchError(problem)
    text = text.strip()
    if len(text) > MAX_QUERY_CHARS:
        raise SearchError(
            f"the query is too long ({len(text)} characters, at most {MAX_QUERY_CHARS})"
        )
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise SearchError(f"k must be a whole number from 1 to {MAX_K}")
    return text


def _apply_overrides(analysis: QueryAnalysis, overrides: dict | None) -> QueryAnalysis:
    if not overrides:
        return analysis
    unknown = set(overrides) - OVERRIDABLE
    if unknown:
        raise SearchError(f"cannot override {', '.join(sorted(unknown))}")
    try:
        return analysis.with_overrides(**overrides)
    except (ValueError, TypeError) as exc:
        raise SearchError(str(exc)) from None


async def search(
    text: str,
    *,
    k: int = 10,
    now: datetime | None = None,
    analysis: QueryAnalysis | None = None,
    overrides: dict | None = None,
    exclude_ids=(),
    include_hidden: bool = False,
    include_withdrawn: bool = False,
    paper_ids=None,
    offset: int = 0,
    sort: str = "relevance",
    chunks_per_paper: int = 1,
) -> SearchResponse:
    """The k best papers for `text` (see the module docstring), among `paper_ids` when given (a
    scoped thread's papers: chat.scopes); `offset` skips that many (the next page), `sort="date"`
    lists the relevant papers newest first. A read paper's hit carries its best chunk as its
    passage, and with `chunks_per_paper` > 1 its next best as `more_chunks` (the chat's cards; a
    page shows one passage a paper, and ranking a paper's chunks past its best cost a cold page
    search ~15% of its time at 1M chunks: docs/BENCHMARKS.md). Raises SearchError on bad input."""
    started = time.perf_counter()
    text = _check(text, k)
    if sort not in SORTS:
        raise SearchError(f"sort must be one of {', '.join(SORTS)}, not {sort!r}")
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= 1000:
        raise SearchError("offset must be a whole number from 0 to 1000")
    if (
        isinstance(chunks_per_paper, bool)
        or not isinstance(chunks_per_paper, int)
        or not 1 <= chunks_per_paper <= fulltext_chunks.ASKED_ABOUT_CHUNKS
    ):
        raise SearchError(
            f"chunks_per_paper must be a whole number from 1 to {fulltext_chunks.ASKED_ABOUT_CHUNKS}"
        )
    now = as_utc_now(now or timezone.now())
    step = time.perf_counter()
    if analysis is None:
        if not text:
            raise SearchError("the query is empty")
        analysis = await _analyse(text, now)
    analysis = _apply_overrides(analysis, overrides)
    timings = {"analysis": _ms(step)}
    found: list[Correction] = []
    if analysis.query.strip() and not analysis.arxiv_id:
        step = time.perf_counter()
        found = await sync_to_async(_corrections)(analysis.query)
        if found:  # "transfomer" is searched as the catalogue's "transformer"
            analysis = replace(
                analysis,
                query=corrected(analysis.query, found),
                original=corrected(analysis.original, found),
            )
        timings["spelling"] = _ms(step)

    q = _Query(
        analysis=analysis,
        filters=SearchFilters(
            start=analysis.start,
            end=analysis.end,
            categories=tuple(analysis.categories),
            authors=tuple(analysis.authors),
            exclude_ids=tuple(int(i) for i in exclude_ids),
            include_hidden=include_hidden,
            include_withdrawn=include_withdrawn,
            paper_ids=None if paper_ids is None else tuple(int(i) for i in paper_ids),
        ),
        text=analysis.query.strip(),
        k=k,
        candidates=max(settings.SEARCH_CANDIDATES, k),
        now=now,
        timings=timings,
        fulltext=fulltext_chunks.variant(),
        offset=offset,
        sort=sort,
        chunks_per_paper=chunks_per_paper,
    )
    if analysis.arxiv_id or q.text:
        hits = await _rank(q)
    elif q.filters.narrows or q.filters.authors:
        hits = await sync_to_async(_listing)(q)
    else:
        q.notices.append("Type a topic, a date window, an author or a category to search.")
        hits = []
    if q.vectors_pending:
        q.notices.append(VECTORS_PENDING_NOTICE)
    q.timings["total"] = _ms(started)
    if q.signals is not None:
        q.plan["relevance"] = q.signals.to_dict()
    return SearchResponse(analysis, hits, q.timings, q.notices, q.plan, q.signals, q.model,
                          q.vectors_pending, q.total, q.named, q.acronyms, found)


def _corrections(text: str) -> list[Correction]:
    with connection.cursor() as cursor:
        return corrections(cursor, text)


async def _analyse(text: str, now: datetime) -> QueryAnalysis:
    """The rules (well under 1 ms); an LLM's second opinion only where they are unsure and a
    model that can `complete` is configured (chat.understanding.llm_analysis validates its reply)."""
    analysis = analyse(text, now)
    if analysis.confident:
        return analysis
    llm = await _llm()
    # Only a model that follows instructions: the tiny local one invents filters.
    if not getattr(llm, "follows_instructions", False):
        return analysis
    return await analyse_with_llm(text, now, llm.complete)


async def _llm():
    """The configured LLM backend, built off the event loop (the first build imports an SDK)."""
    return await sync_to_async(get_llm, thread_sensitive=False)()


_embedders: dict[str, Any] = {}


async def _embedder():
    """The active embedder. Its first use loads the model: in a worker thread, not on the event
    loop; later searches take it from here without a thread hop."""
    backend = settings.EMBEDDING_BACKEND
    if backend not in _embedders:
        _embedders[backend] = await sync_to_async(get_embedder, thread_sensitive=False)()
    return _embedders[backend]


async def _retrieve(q: _Query) -> list[Ranked]:
    """Stages 2 and 3: the ranked lists to fuse (dense and BM25, and those of any rewrites)."""
    embedder = await _embedder()
    q.model = embedder.name
    q.parallel = await may_run_in_parallel()
    step = time.perf_counter()
    embedding = None
    # A question on an acronym is embedded once its expansion is known (_named_stage).
    acronyms = topic_acronyms(q.text) if q.text and not q.analysis.arxiv_id else []
    if q.text and not q.analysis.arxiv_id and not acronyms:
        embedding = asyncio.ensure_future(_embed(embedder, q.text, q.timings))
    rewriting = await _start_rewrites(q)
    try:
        if q.filters.authors or q.analysis.arxiv_id:
            # Both retrievers need these first: the author's papers, the named paper's vector.
            await run_search_sql(_prepare, q, parallel=q.parallel)
        if q.text and not q.analysis.arxiv_id:
            await run_search_sql(_named_stage, q, acronyms, parallel=q.parallel)
        if acronyms:
            embedding = asyncio.ensure_future(
                _embed(embedder, q.text_for_bm25 or q.text, q.timings)
            )
        lexical = run_search_sql(_lexical_stage, q, q.text, parallel=q.parallel)
        # The chunk word search needs the query's lexemes, not BM25's result: beside it.
        words = _chunk_words_wanted(q)
        if q.parallel:  # dense starts as soon as the query vector exists, beside BM25
            jobs = [lexical, _dense_after(q, embedding)]
            if words:
                jobs.append(run_search_sql(_chunk_words_stage, q, parallel=True))
            q.lexical, q.dense, *_ = await asyncio.gather(*jobs)
        else:
            q.lexical = await lexical
            q.dense = await _dense_after(q, embedding)
            if words:
                await run_search_sql(_chunk_words_stage, q, parallel=False)
    except BaseException:  # a failed or cancelled search leaves no work running behind it
        for task in (embedding, rewriting):
            if task is not None and not task.done():
                task.cancel()
        raise
    q.timings["retrieval"] = _ms(step)
    q.plan["lexical"] = {"generator": q.lexical.generator, "exact": q.lexical.exact}
    lists = _lists(q.dense, q.lexical, "")
    if q.chunks is not None:  # (the direct chunk search ran beside dense: _dense_after)
        chunk_lists = [
            Ranked(
                "chunks",
                [h.paper_id for h in q.chunks.hits],
                [h.similarity for h in q.chunks.hits],
                list_weight("dense"),
            )
        ]
        if q.chunk_words:
            chunk_lists.append(
                Ranked(
                    "chunk_words",
                    [h.paper_id for h in q.chunk_words],
                    [h.score for h in q.chunk_words],
                    list_weight("fulltext"),
                )
            )
        lists = chunk_lists if q.fulltext == "direct" else lists + chunk_lists
    if rewriting is not None:
        lists += await _retrieve_rewrites(q, rewriting, embedder)
    return lists


async def _embed(embedder, text: str, timings: dict):
    def embed():
        began = time.perf_counter()
        vector = query_vector(embedder, text)
        timings["embed"] = _ms(began)
        return vector

    return await sync_to_async(embed, thread_sensitive=False)()


async def _dense_after(q: _Query, embedding) -> DenseResult | None:
    """Dense retrieval once the query vector exists, and beside it the direct chunk search
    (into q.chunks) when full text takes part: both wait for the vector, not for each other."""
    if embedding is not None:
        q.vector = await embedding
    if q.vector is None:
        return None
    dense = run_search_sql(_dense_stage, q, q.vector, "dense", parallel=q.parallel)
    if q.fulltext not in ("fused", "direct") or q.similar_to is not None:
        return await dense
    result, q.chunks = await asyncio.gather(
        dense, run_search_sql(_chunk_stage, q, parallel=q.parallel)
    )
    return result


def _lists(dense: DenseResult | None, lexical: LexicalResult, suffix: str) -> list[Ranked]:
    lists = []
    if dense is not None:
        lists.append(
            Ranked(
                "dense" + suffix,
                [h.paper_id for h in dense.hits],
                [h.similarity for h in dense.hits],
                list_weight("dense"),
            )
        )
    lists.append(
        Ranked(
            "fulltext" + suffix,
            [h.paper_id for h in lexical.hits],
            [h.score for h in lexical.hits],
            list_weight("fulltext"),
        )
    )
    return lists


async def _start_rewrites(q: _Query):
    """The LLM's rewrites as a running task, when multi-query is on and a model can complete."""
    if not (settings.SEARCH_MULTI_QUERY and q.text and not q.analysis.arxiv_id):
        return None
    llm = await _llm()
    if not getattr(llm, "follows_instructions", False):
        return None
    return asyncio.ensure_future(rewrite(q.text, llm))


async def _retrieve_rewrites(q: _Query, rewriting, embedder) -> list[Ranked]:
    """Each rewrite searched like the query itself; their lists are fused with the others."""
    step = time.perf_counter()
    q.rewrites = await rewriting
    q.plan["rewrites"] = list(q.rewrites)
    lists = []
    for number, text in enumerate(q.rewrites, start=2):
        vector = await sync_to_async(query_vector, thread_sensitive=False)(embedder, text)
        lexical = await run_search_sql(_lexical_stage, q, text, parallel=q.parallel)
        dense = await run_search_sql(
            _dense_stage, q, vector, f"dense:{number}", parallel=q.parallel
        )
        q.published.update({h.paper_id: h.published for h in lexical.hits})
        lists += _lists(dense, lexical, f":{number}")
    q.timings["multiquery"] = _ms(step)
    return lists


def _prepare(q: _Query) -> None:
    """Database: the author filter as paper ids, and the paper of "papers like <arXiv id>"."""
    step = time.perf_counter()
    with connection.cursor() as cursor:
        q.filters = resolve_authors(q.filters)
        if not q.analysis.arxiv_id:
            q.timings["authors"] = _ms(step)
            return
        cursor.execute(
            "SELECT id, title FROM papers_paper WHERE arxiv_id = %s AND (NOT hidden OR %s)",
            [q.analysis.arxiv_id, q.filters.include_hidden],
        )
        row = cursor.fetchone()
        if row is None:
            q.notices.append(f"{q.analysis.arxiv_id} is not in the catalogue.")
            return
        q.similar_to, title = row
        q.vector = paper_vector(cursor, q.similar_to, q.model)
        if q.vector is None:
            q.notices.append(f"{q.analysis.arxiv_id} has no embedding yet; text match only.")
        q.filters = replace(q.filters, exclude_ids=q.filters.exclude_ids + (q.similar_to,))
        # BM25 looks for the paper's title words too.
        q.text_for_bm25 = " ".join(part for part in (q.text, title) if part)
    q.timings["prepare"] = _ms(step)


def _named_stage(q: _Query, acronyms: list[str] = ()) -> None:
    """Database: the papers the question names by what they introduced (one indexed lookup),
    and unless it asks what such a paper says, the long forms of its `acronyms`
    (chat.retrieval.acronyms), which BM25 and the embedder then see beside them."""
    step = time.perf_counter()
    with connection.cursor() as cursor:
        q.named = find_named(cursor, q.analysis.original or q.text, q.filters)
        if acronyms and not q.named.about:
            q.acronyms = long_forms(cursor, acronyms)
    if q.acronyms:
        q.text_for_bm25 = expand(q.text, q.acronyms)
        q.plan["acronyms"] = dict(q.acronyms)
    q.timings["named"] = _ms(step)
    if q.named.papers or q.named.unknown:
        q.plan["named"] = q.named.to_dict()


def _chunk_stage(q: _Query) -> DenseResult:
    """Database: the direct chunk search (papers whose full text matches) within the filters."""
    step = time.perf_counter()
    # Fewer papers than the abstracts' lists: a paper costs ~5 chunk rows of the index walk
    # (FULLTEXT_CHUNK_CANDIDATES), and the list only adds papers whose body matches.
    n = max(settings.FULLTEXT_CHUNK_CANDIDATES, q.offset + q.k)
    with transaction.atomic(), connection.cursor() as cursor:
        result = fulltext_chunks.chunk_search(cursor, q.vector, q.model, q.filters, n)
    q.timings["chunks"] = _ms(step)
    q.plan["chunks"] = result.plan
    q.published.update({h.paper_id: h.published for h in result.hits})
    return result


def _chunk_words_wanted(q: _Query) -> bool:
    """Whether the chunk word search takes part (as the direct chunk search does: _dense_after)."""
    return (
        q.fulltext in ("fused", "direct")
        and settings.FULLTEXT_CHUNK_WORDS
        and bool(q.text)
        and not q.analysis.arxiv_id
    )


def _chunk_words_stage(q: _Query) -> None:
    """Database: the papers whose full text holds the query's words (`q.chunk_words`), within the
    filters, once any full text is read: BM25 over each read paper's body as one document
    (settings.FULLTEXT_WORD_UNIT "body": the abstracts' exact, bounded search over the bodies'
    index), or a paper by its best chunk ("chunk": the chunk word search, for the query's lexemes
    as BM25 makes them, chat.retrieval.fulltext.query_terms)."""
    step = time.perf_counter()
    text = q.text_for_bm25 or q.text
    with connection.cursor() as cursor:
        if fulltext_chunks.any_full_text(cursor):
            if fulltext_chunks.word_unit() == "body":
                bodies = BODIES.cursor(cursor)
                q.chunk_words = lexical_search(bodies, text, q.filters, q.candidates).hits
            else:
                lexemes, _ = query_terms(cursor, text)
                q.chunk_words = fulltext_chunks.chunk_word_search(
                    cursor, lexemes, q.model, q.filters, q.candidates
                )
    q.timings["chunk_words"] = _ms(step)
    q.published.update({h.paper_id: h.published for h in q.chunk_words})


def _lexical_stage(q: _Query, text: str) -> LexicalResult:
    """Database: BM25 for `text` within the filters."""
    step = time.perf_counter()
    if text == q.text and q.text_for_bm25:
        text = q.text_for_bm25
    with connection.cursor() as cursor:
        result = lexical_search(cursor, text, q.filters, q.candidates)
    q.timings.setdefault("lexical", _ms(step))
    q.published.update({h.paper_id: h.published for h in result.hits})
    return result


def _dense_stage(q: _Query, vector, name: str) -> DenseResult:
    """Database: the dense candidates for `vector` within the filters."""
    step = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        result = dense_search(cursor, vector, q.model, q.filters, q.candidates)
    if name == "dense":
        q.timings["dense"] = _ms(step)
        q.plan["dense"] = result.plan
    q.published.update({h.paper_id: h.published for h in result.hits})
    return result


async def _rank(q: _Query) -> list[SearchHit]:
    lists = await _retrieve(q)
    q.signals = _signals(q)
    refinements = refine.active()
    if refinements.any and q.text and not q.analysis.arxiv_id:
        step = time.perf_counter()
        lists = await _refine(q, lists, refinements)
        q.timings["refine"] = _ms(step)
    step = time.perf_counter()
    fused = _fuse(q, lists)
    if q.fulltext == "direct":  # papers without read full text still come, after
        found = {f.paper_id for f in fused}
        abstracts = _fuse(q, _lists(q.dense, q.lexical, ""))
        fused += [f for f in abstracts if f.paper_id not in found]
    if q.sort == "date":
        fused = [
            f for f in fused
            if f.ranks.get("fulltext") or (f.ranks.get("dense") or 10**9) <= DATE_SORT_DENSE_RANKS
        ]
        fused.sort(key=lambda f: (q.published[f.paper_id], f.paper_id), reverse=True)
    elif q.named.papers:
        fused = _named_on_top(fused, q.named.paper_ids)
    q.total = len(fused)
    q.timings["fusion"] = _ms(step)
    step = time.perf_counter()
    if (settings.RERANKER or "fusion").strip().lower() == "fusion":
        reranker = get_reranker()  # nothing to build
    else:  # may build an LLM client (imports an SDK): not on the event loop
        reranker = await sync_to_async(get_reranker, thread_sensitive=False)()
    reranks = reranker.name != "fusion" and q.text and q.sort == "relevance"
    end = q.offset + q.k
    # A reranker reorders a pool of at least 20, then the page is cut; fusion hydrates the page.
    pool = fused[: max(end, 20)] if reranks else fused[q.offset : end]
    hits = await run_search_sql(_hydrate, q, pool, q.dense, parallel=q.parallel)
    q.timings["hydrate"] = _ms(step)
    if reranks:
        step = time.perf_counter()
        hits = await reranker.rerank(q.text, hits)
        q.timings["rerank"] = _ms(step)
        return hits[q.offset : end]
    return hits[: q.k]


async def _refine(q: _Query, lists: list[Ranked], r: refine.Refinements) -> list[Ranked]:
    """The refinements of settings.SEARCH_REFINE (chat.retrieval.refine): the second BM25 and
    dense queries run side by side like the first ones."""
    feedback = {}
    if r.feedback:
        feedback = {f.paper_id: f.score for f in fuse(lists)[: r.feedback]}
    jobs = []
    if r.prf_bm25:
        top = dict(list(feedback.items())[: r.prf_bm25])
        jobs.append(run_search_sql(_expanded_bm25_stage, q, top, parallel=q.parallel))
    if r.proximity:
        jobs.append(run_search_sql(_proximity_stage, q, parallel=q.parallel))
    if q.vector is not None and (r.prf_dense or r.passages != "max"):
        top = list(feedback)[: r.prf_dense]
        jobs.append(run_search_sql(_refined_dense_stage, q, top, r, parallel=q.parallel))
    if jobs:
        await asyncio.gather(*jobs)
    fresh = {r.name: r for r in _lists(q.dense, q.lexical, "")}  # rewrites' lists unchanged
    refined = [fresh.get(r.name, r) for r in lists]
    if r.learned and q.vector is not None:
        # One list in place of dense and BM25 (kept at weight 0: their ranks still explain a
        # hit); it holds the sentence scores, so "sentences" beside it adds nothing more.
        own = {"dense", "fulltext"}
        candidates = sorted({i for ranked in refined if ranked.name in own for i in ranked.ids})
        learned = await run_search_sql(_learned_stage, q, candidates, parallel=q.parallel)
        if learned is not None:  # (None: no sentence vectors, the default fusion stays)
            weight = sum(ranked.weight for ranked in refined if ranked.name in own)
            refined = [replace(ranked, weight=0.0) if ranked.name in own else ranked
                       for ranked in refined]  # fmt: skip
            return [*refined, replace(learned, weight=weight)]
    if r.sentences and q.vector is not None:
        candidates = sorted({i for ranked in refined for i in ranked.ids})
        refined.append(await run_search_sql(_sentence_stage, q, candidates, parallel=q.parallel))
    return refine.adapt_weights(refined, r.fusion, len(q.lexical.terms))


def _expanded_bm25_stage(q: _Query, feedback: dict[int, float]) -> None:
    with connection.cursor() as cursor:
        q.lexical = refine.expand_bm25(cursor, q.lexical, feedback, q.filters, q.candidates)
    q.published.update({h.paper_id: h.published for h in q.lexical.hits})


def _sentence_stage(q: _Query, candidates: list[int]) -> Ranked:
    with connection.cursor() as cursor:
        return refine.sentence_list(cursor, q.vector, q.model, candidates)


def _learned_stage(q: _Query, candidates: list[int]) -> Ranked | None:
    with connection.cursor() as cursor:
        return refine.learned_list(cursor, q.vector, q.model, q.lexical.terms, candidates)


def _proximity_stage(q: _Query) -> None:
    with connection.cursor() as cursor:
        q.lexical = refine.add_proximity(cursor, q.lexical, q.text_for_bm25 or q.text)


def _refined_dense_stage(q: _Query, feedback: list[int], r: refine.Refinements) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        vector = q.vector
        if feedback:
            vector = refine.rocchio(cursor, vector, feedback, q.model)
            q.dense = dense_search(cursor, vector, q.model, q.filters, q.candidates)
        q.dense = refine.rescore_passages(cursor, q.dense, vector, q.model, r.passages)
    q.published.update({h.paper_id: h.published for h in q.dense.hits})


def _signals(q: _Query) -> Signals:
    """How relevant the best candidates are in absolute terms (chat.retrieval.relevance)."""
    dense_top = max((h.similarity for h in q.dense.hits), default=None) if q.dense else None
    if q.chunks is not None and q.chunks.hits:  # a body that answers is relevant too
        chunk_top = max(h.similarity for h in q.chunks.hits)
        dense_top = chunk_top if dense_top is None else max(dense_top, chunk_top)
    top = q.lexical.hits[0].score if q.lexical.hits else None
    return Signals(dense_top, lexical_share(top, q.lexical.lexemes, q.lexical.terms))


def _named_on_top(fused: list[Fused], paper_ids: list[int]) -> list[Fused]:
    """The named papers first (found or not: "the Transformer" is its paper even when other
    bodies match the question's words better), the rest in fused order."""
    found = {f.paper_id for f in fused}
    top = fused[0].score if fused else 0.0
    missing = [Fused(pid, top) for pid in paper_ids if pid not in found]
    return named_first(fused + missing, paper_ids)


def _fuse(q: _Query, lists: list[Ranked]) -> list[Fused]:
    """Fusion, then recency only when the analysis asks for it (pure: no I/O, < 1 ms)."""
    fused = fuse(lists)
    weight = q.analysis.recency_weight
    if weight <= 0 or not fused:
        return fused
    by_id = {f.paper_id: f for f in fused}
    items = [(f.paper_id, f.score, q.published[f.paper_id]) for f in fused]
    reordered = []
    for paper_id, score in blend(items, weight, q.now):
        item = by_id[paper_id]
        item.score = score
        reordered.append(item)
    return reordered


_PAPERS = """
SELECT id, arxiv_id, title, authors_text, published, primary_category, categories, abstract,
       version
FROM papers_paper WHERE id = ANY(%s) AND (NOT hidden OR %s)
"""
_PASSAGES = """
SELECT id, paper_id, start, "end" FROM papers_passage
WHERE paper_id = ANY(%s) AND model = %s AND kind = 'abstract' ORDER BY paper_id, position
"""


def _hydrate(q: _Query, pool: list[Fused], dense: DenseResult | None) -> list[SearchHit]:
    """Database thread: the papers of `pool` with passage, snippet and reasons, in pool order."""
    ids = [f.paper_id for f in pool]
    if q.model:
        # About the papers found (BM25 alone finds them until their vectors exist); about the
        # whole catalogue only when nothing was found (that check reads every paper).
        q.vectors_pending = vectors_pending(q.model, ids or None)
    if not ids:
        return []
    with connection.cursor() as cursor:
        cursor.execute(_PAPERS, [ids, q.filters.include_hidden])
        papers = {row[0]: row for row in cursor.fetchall()}
        cursor.execute(_PASSAGES, [ids, q.model])
        passages: dict[int, list[tuple[int, int, int]]] = {}
        for passage_id, paper_id, start, end in cursor.fetchall():
            passages.setdefault(paper_id, []).append((passage_id, start, end))
    best_passage = {h.paper_id: h.passage_id for h in dense.hits} if dense else {}
    lexemes = set(q.lexical.lexemes)
    chunks: dict = {}
    # (The direct chunk search already found that no full text has been read: none to rank.)
    unread = q.chunks is not None and q.chunks.plan == "none"
    if q.fulltext != "off" and q.vector is not None and q.similar_to is None and not unread:
        step = time.perf_counter()
        abstracts = {pid: document_text(row[2], row[7]) for pid, row in papers.items()}
        question, words = q.text, lexemes
        with connection.cursor() as cursor:
            if q.named.papers:
                # The name is in every chunk of its paper and rare elsewhere: it would pick the
                # chunks that repeat "OPT-175B", not the one with its batch size.
                question, words = _without_names(cursor, q.text, lexemes, q.named)
            ranked = fulltext_chunks.best_chunks(
                cursor,
                ids,
                q.vector,
                q.model,
                words,
                per_paper=q.chunks_per_paper,
                abstracts=abstracts,
                question=question,
                quantity=asks_for_quantity(q.text),
                asked_about=set(q.named.paper_ids) if q.named.about else (),
            )
        chunks = ranked.by_paper
        if q.sort == "relevance" and chunks:
            # The page's papers reordered with the body's evidence: a paper whose chunk holds
            # the question's rare words ("label smoothing") before one that only shares its
            # topic. Within the page only, so the next page is unchanged.
            order = fulltext_chunks.reordered_by_evidence(ids, ranked.evidence)
            by_id = {item.paper_id: item for item in pool}
            # (The evidence reorders the others: the named papers stay first.)
            pool = [by_id[pid] for pid in named_first(order, q.named.paper_ids, key=int)]
        q.timings["best_chunks"] = _ms(step)
    hits = []
    for item in pool:
        row = papers.get(item.paper_id)
        if row is None:  # hidden or deleted since retrieval
            continue
        paper_id, arxiv_id, title, authors_text, published, primary, categories, abstract = row[:8]
        document = document_text(title, abstract)
        passage = _passage_text(
            document, passages.get(paper_id, []), best_passage.get(paper_id), lexemes
        )
        snippet = make_snippet(abstract or title, lexemes)
        hits.append(
            SearchHit(
                paper_id=paper_id,
                arxiv_id=arxiv_id,
                title=title,
                authors_text=authors_text,
                published=published,
                primary_category=primary,
                categories=list(categories or []),
                abstract=abstract,
                score=float(item.score),
                dense_rank=item.ranks.get("dense"),
                fulltext_rank=item.ranks.get("fulltext"),
                passage_text=passage,
                snippet_html=snippet.html,
                why=_why(q, item, title, abstract, published, lexemes),
                version=row[8],
            )
        )
        hits[-1].named = next(
            (p.name for p in q.named.papers if p.paper_id == paper_id), ""
        )
        if (found := chunks.get(paper_id)) and front_matter(found[0]):
            # Its title page's title and authors: what the page says is the abstract, a card of
            # its own (the body's other chunks follow it).
            hits[-1].more_chunks = found[1:]
        elif found:
            best, hit = found[0], hits[-1]
            hit.passage_text, hit.kind, hit.section = best.text, "fulltext", best.section
            hit.page, hit.page_end, hit.more_chunks = best.page, best.page_end, found[1:]
            if item.ranks.get("chunks"):
                hit.why.append(f"full-text match #{item.ranks['chunks']} (p. {best.page})")
            # (Most read papers hold some of a question's words: only the best few say so.)
            if (rank := item.ranks.get("chunk_words")) and rank <= WORDS_IN_BODY_SHOWN:
                hit.why.append(f"your words in its full text #{rank}")
    return hits


def front_matter(chunk) -> bool:
    """Whether a chunk is its paper's first and says nothing but its title, authors and their
    addresses ("Batch Normalization: Accelerating … Sergey Ioffe Google Inc., sioffe@…"): no
    sentence of it may be quoted. It holds the title's words, so a question in those words
    ("How does batch normalization reduce internal covariate shift?") finds it first, and the
    abstract that follows it on the page, which answers, was no card."""
    return chunk.start == 0 and not quotable_body_sentences(chunk.text, chunk.section or "")


# The papers whose full text holds the question's words best that say so among why they are here.
WORDS_IN_BODY_SHOWN = 3


def _without_names(cursor, text: str, lexemes: set, named: Named) -> tuple[str, set]:
    """The question and its lexemes without the names it gives papers by."""
    for paper in named.papers:
        text = text.replace(paper.asked, " ")
    cursor.execute(
        "SELECT tsvector_to_array(to_tsvector('english', %s))",
        [" ".join(p.asked for p in named.papers)],
    )
    names = set(cursor.fetchone()[0] or ())
    return " ".join(text.split()), (set(lexemes) - names) or set(lexemes)


def _passage_text(
    document: str, spans: list[tuple[int, int, int]], best: int | None, lexemes
) -> str:
    """The dense best passage; else the passage with the most query words; else the document."""
    if not spans:
        return document
    for passage_id, start, end in spans:
        if passage_id == best:
            return document[start:end]
    if lexemes and len(spans) > 1:
        start, end = max(
            ((s, e) for _, s, e in spans),
            key=lambda span: len(matching_words(document[span[0] : span[1]], lexemes)),
        )
        return document[start:end]
    return document[spans[0][1] : spans[0][2]]


def _quoted(words: list[str]) -> str:
    words = [f"‘{w}’" for w in words[:4]]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _why(q: _Query, item: Fused, title: str, abstract: str, published, lexemes) -> list[str]:
    """Why this paper is here, in words a reader follows ("matches 'diffusion' in the title;
    similar in meaning; published 2026-05-17, inside your window"), not ranks and weights."""
    reasons = []
    if item.ranks.get("fulltext"):
        in_title, in_abstract = [], []
        for place, text in ((in_title, title), (in_abstract, abstract)):
            for _, _, word in matching_words(text or "", lexemes):
                word = word.lower()
                if word not in in_title and word not in place:
                    place.append(word)
        if in_title:
            reasons.append(f"matches {_quoted(in_title)} in the title")
        if in_abstract:
            reasons.append(f"{'and ' if in_title else 'matches '}{_quoted(in_abstract)} in the abstract")
        if not (in_title or in_abstract):
            reasons.append("matches your words")
    if item.ranks.get("dense"):
        if q.similar_to is not None:
            reasons.append(f"close in meaning to arXiv:{q.analysis.arxiv_id}")
        else:
            reasons.append("similar in meaning")
    reasons.extend(_filter_reasons(q, published))
    return reasons


def _filter_reasons(q: _Query, published) -> list[str]:
    reasons = []
    f = q.filters
    day = f"{published:%Y-%m-%d}"
    if window_label({"start": f.start, "end": f.end}, q.now.date()):
        reasons.append(f"published {day}, inside your window")
    elif q.analysis.recency_weight > 0:
        reasons.append(f"published {day} (newer papers ranked higher)")
    if f.authors:
        reasons.append("by " + ", ".join(f.authors))
    if f.categories:
        reasons.append("in " + ", ".join(f.categories))
    return reasons


_LISTING = """
SELECT p.id, count(*) OVER () FROM papers_paper p
WHERE {dates} AND {papers}
ORDER BY p.published DESC, p.id
LIMIT %(k)s OFFSET %(offset)s
"""


def _listing(q: _Query) -> list[SearchHit]:
    """Filters without a topic: the matching papers, newest first."""
    q.model = get_embedder().name  # for the passages shown with each paper
    step = time.perf_counter()
    with connection.cursor() as cursor:
        q.filters = resolve_authors(q.filters)
        if q.filters.paper_ids is not None and not q.filters.paper_ids:
            return []
        params: dict = {"k": q.k, "offset": q.offset}
        dates = q.filters.date_conditions("p.published", params)
        papers, params = q.filters.paper_conditions("p", params)
        cursor.execute(_LISTING.format(dates=dates, papers=papers), params)
        rows = cursor.fetchall()
        ids = [row[0] for row in rows]
        q.total = rows[0][1] if rows else 0
    q.timings["listing"] = _ms(step)
    q.plan["listing"] = "newest first (no topic to rank by)"
    return _hydrate(q, [Fused(paper_id, 0.0) for paper_id in ids], None)
