"""Doc-then-chunk retrieval: the papers first, then the chunks of their full text that answer.

Full-text chunks are Passage rows of kind 'fulltext' (papers/fulltext: about 200-350 tokens of a
paper's PDF text, each with its pages, section and character span in FullText.text). Abstracts
find papers well; chunks answer questions an abstract cannot (a learning rate, a table's number).
`settings.FULLTEXT_RETRIEVAL` chooses how the two meet (measured with `manage.py bench_fulltext`,
docs/BENCHMARKS.md):

- "fused" (default): the direct chunk search (dense over every chunk, HNSW on
  papers_chunk_hnsw_idx, one best chunk per paper) is a third ranked list beside the abstracts'
  dense and BM25 lists, and the chunk word search (BM25 over every chunk's words, GIN on
  papers_chunk_lexemes_idx, a paper scored by its best chunk; settings.FULLTEXT_CHUNK_WORDS) a
  fourth, so a paper whose body, not its abstract, matches is still found, by meaning or by a
  rare word ("label smoothing"); a word too common to read whole is read from its best chunks
  (papers.indexing.chunkwords, `champion_candidates`); then the best chunks of each paper kept;
- "papers_first": today's search over abstracts picks the papers; then their best chunks;
- "direct": the chunk lists alone rank the papers (abstract results follow, for papers without
  full text);
- "off": abstracts only, as before full text.

A paper's best chunks are ranked by two lists fused by reciprocal rank (chat.retrieval.fusion,
RRF_K): the query's cosine (exact, over that paper's chunks only: tens of rows) and BM25 over the
candidate papers' chunks, with the catalogue index's tokeniser (PostgreSQL's `to_tsvector
('english')`, so the query's lexemes are BM25's own), its K1 and B, and the IDF and average
length of the candidate chunks themselves: a word in every chunk of the paper ("transformer")
counts little, the words around the wanted number ("label smoothing") much.
`settings.FULLTEXT_CHUNK_RANKING` = "mix" keeps the earlier ranking (cosine and `ts_rank_cd`
min-max normalised and mixed by CHUNK_DENSE_SHARE) for comparison (bench_fulltext,
docs/BENCHMARKS.md). Every filter (window, categories, authors, scope, hidden) stays inside the SQL
of both searches, as for abstracts (chat.retrieval.filters). A paper without read full text has
no chunks and keeps its abstract passage.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Collection
from dataclasses import dataclass, replace
from functools import lru_cache

from django.conf import settings

from chat.llm.sentences import (
    GREEK_LETTERS,
    STOPWORDS,
    ItemSentence,
    answers_nothing,
    asked_heads,
    content_words,
    has_items,
    labels_a_size,
    names_asked_things,
    passage_sentences,
    spells_greek,
    stems,
    terms,
    terms_any_sentence_may_hold,
)
from chat.understanding.answer_kinds import (
    asking_words,
    heading_says,
    reason_weight,
    reason_weight_at_most,
    said_by_kind,
)
from chat.understanding.quantity import (
    SMALLEST,
    asks_for_extreme,
    number_weight,
    number_weight_at_most,
)
from chat.understanding.variants import OTHER_SIZE_WEIGHT, about_other_size
from papers.fulltext.tables import RowSentence, extreme_row, with_table_head
from papers.indexing.chunkwords import average_length
from papers.indexing.lexical import K1, B

from . import sentence_sketch
from .dense import DenseResult, dense_search, hidden_papers, passage_where, vector_literal
from .filters import SearchFilters
from .fusion import Ranked, reciprocal_rank_fusion
from .sentence_sketch import SENTENCE_CACHE, analysed_sentences

VARIANTS = ("fused", "papers_first", "direct", "off")
RANKINGS = ("rrf", "mix")
WORD_UNITS = ("body", "chunk")
# Weight of the cosine against term overlap when ranking one paper's chunks (measured on the
# bench_fulltext questions: docs/BENCHMARKS.md).
CHUNK_DENSE_SHARE = 0.5
# Chunks kept per paper, best first: the first is the card's passage, the others may become
# cards of their own when the answer has room (a scoped thread about one paper).
CHUNKS_PER_PAPER = 4
# A paper the question is about ("What optimizer was used to train OPT-175B?") keeps this many:
# its answer may sit in its 5th-8th best chunk (OPT's training setup ranked below its intro,
# efficiency and release chunks), and other papers' chunks are no answer to it.
ASKED_ABOUT_CHUNKS = 8

# Reciprocal rank constant when fusing one paper's chunks by cosine and by BM25: lists of 40-200
# chunks, where the catalogue's 60 flattens the head (bench_fulltext: docs/BENCHMARKS.md).
CHUNK_RRF_K = 10
# Each paper's best chunks (cosine and BM25 fused) that the sentence evidence then reorders: the
# answer is rarely further down, and splitting every chunk into sentences costs ~0.3 ms a chunk.
SENTENCE_POOL = 16
# The pool of a paper the question is about: its 8 chunks kept are the answer's only cards, and
# the chunk holding a detail of its appendix ("Finally, all training is done on resolution 224."
# for "What image resolution does ViT use for pre-training?") ranks below its overview chunks by
# cosine and BM25 (18th of ViT's 82), where its sentence tells it apart. One paper, so its cost
# is 16 more chunks a question, not 16 more a paper of the page.
ASKED_ABOUT_POOL = 32
# The sentence evidence's weight against the cosine-and-BM25 order in that reordering: a fact
# sits in one sentence, so where the two disagree the sentence wins (bench_fulltext).
SENTENCE_WEIGHT = 2.0

# The lexemes the search weighs, safe in a to_tsquery: words, numbers, and the Greek letters a
# paper prints ('β1', which a question spelling "beta" also asks for: fulltext.query_terms).
_LEXEME = re.compile(rf"^[a-z0-9{GREEK_LETTERS}]+$")


def asking_lexemes(question: str) -> set[str]:
    """The lexemes of the question's words that only ask ("how MANY", "was USED"), which the
    composer never weighs (chat.llm.sentences.STOPWORDS) and PostgreSQL's fewer stopwords keep:
    "mani" in a chunk that says "many domains" is no evidence for "How many passages…". A stem
    another word of the question shares stays ("researchers" is no "research" stopword).
    (PyStemmer is Snowball, PostgreSQL's 'english' stemmer: the same lexemes.)"""
    words = re.findall(r"[a-z0-9]+", question.lower())
    return set(stems([w for w in words if w in STOPWORDS])) - set(terms(question))


def _choice(name: str, choices: tuple[str, ...]) -> str:
    """The setting `name`, checked against `choices` (its default the first of them)."""
    value = (getattr(settings, name, choices[0]) or choices[0]).strip().lower()
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, not {value!r}")
    return value


def variant() -> str:
    """The configured FULLTEXT_RETRIEVAL, checked."""
    return _choice("FULLTEXT_RETRIEVAL", VARIANTS)


def word_unit() -> str:
    """The configured FULLTEXT_WORD_UNIT, checked: what the full text's word list scores."""
    return _choice("FULLTEXT_WORD_UNIT", WORD_UNITS)


def ranking() -> str:
    """The configured FULLTEXT_CHUNK_RANKING, checked."""
    return _choice("FULLTEXT_CHUNK_RANKING", RANKINGS)


@dataclass(frozen=True, slots=True)
class Chunk:
    passage_id: int
    paper_id: int
    text: str
    page: int | None
    page_end: int | None
    section: str
    start: int
    end: int
    similarity: float  # cosine to the query
    overlap: float  # ts_rank_cd of the query's lexemes in the chunk ("mix")
    score: float = 0.0  # the lists fused (see module docstring)
    length: int = 0  # the chunk's tokens as to_tsvector counts them (stopwords excluded)
    counts: tuple[tuple[str, int], ...] = ()  # (query lexeme, its occurrences in the chunk)
    bm25: float = 0.0
    # Its sentences' term filters from its paper's sketch (chat.retrieval.sentence_sketch), None
    # without a current one.
    filters: tuple[int, ...] | None = None


def _changed(chunk: Chunk, *, text=None, score=None, bm25=None, overlap=None,
             filters=None) -> Chunk:
    """dataclasses.replace for a Chunk at a fraction of its cost: it runs for every chunk of the
    page's papers, several times a search (18% of the best-chunk stage's profile on the
    bench_fulltext questions)."""
    c = chunk
    return Chunk(
        c.passage_id, c.paper_id, c.text if text is None else text, c.page, c.page_end,
        c.section, c.start, c.end, c.similarity, c.overlap if overlap is None else overlap,
        c.score if score is None else score, c.length, c.counts,
        c.bm25 if bm25 is None else bm25, c.filters if filters is None else filters,
    )  # fmt: skip


# Full text is read on demand, so most catalogues have none, or a few papers' worth. Asking
# first costs one probe of a small table; searching an empty chunk index costs the plan choice,
# the index scan and the exact fallback: 10 ms of CPU per search at 57k papers
# (docs/BENCHMARKS.md, "CPU per search").
_ANY_READ = "SELECT EXISTS (SELECT 1 FROM papers_fulltext WHERE status = 'ok')"


def any_full_text(cursor) -> bool:
    """Whether any paper's full text has been read (only then can there be chunks)."""
    cursor.execute(_ANY_READ)
    return bool(cursor.fetchone()[0])


def chunk_search(cursor, vector, model: str, filters: SearchFilters, n: int) -> DenseResult:
    """The direct chunk search: the `n` papers whose full-text chunks are closest to `vector`
    within `filters` (each hit names its closest chunk). Needs a transaction, as dense_search."""
    if not any_full_text(cursor):
        return DenseResult([], "none")
    return dense_search(cursor, vector, model, filters, n, kind="fulltext")


# The chunk word search: a word's document frequency among all chunks, counted up to a cap (a
# word in more chunks than that weighs next to nothing anyway, and counting it costs its
# posting list), and the number of chunks. One statement, GIN bitmap counts.
WORD_DF_CAP = 20_000
# Chunks scored per query at most: the rarest words generate the candidates while their summed
# frequency fits (MaxScore-style, as the catalogue's BM25: chat.retrieval.fulltext), else the
# chunks with the most of the query's words first (candidate_levels). Reading a candidate (its
# words unnested) is most of the search's time: at 1M chunks, over the 16 topics without a window,
# 5,000 agreed with BM25 over all chunks on 73% of the top 10 papers at 312 ms p50, 2,000 on 50%
# at 127 ms, 1,000 on 36% at 88 ms; the table-order cut of 5,000 before it on 29% at 298 ms
# (bench_search --chunks, docs/BENCHMARKS.md).
WORD_CANDIDATE_CAP = 2_000
# Papers checked for hidden and withdrawn ones beyond the `n` the chunk word search returns.
HIDDEN_MARGIN = 10

# The number of chunks: counting them read the whole chunk index, ~1 s a search at 1M chunks
# (bench_search --chunks, docs/BENCHMARKS.md); from that many on, the planner's count of the
# chunk word index's entries stands in (an IDF barely moves with a few percent of N). So do the
# frequencies ANALYZE keeps of the chunks' most common words (pg_stats.most_common_elems: those
# in more than ~1.4% of them at 1M): counting them up to the cap read ~5,600 heap blocks each
# (~100-300 ms a common word at 1M); the rarer words are still counted, from their few postings.
# A frequency from the statistics is not capped (it costs nothing): the candidate levels drop the
# commonest words first (candidate_levels), and at 1M most query words reached the cap.
CHUNKS_ESTIMATED_FROM = 100_000
_WORD_STATS = """
SELECT CASE WHEN e.n >= %(estimated_from)s THEN e.n::bigint ELSE (
           SELECT count(*) FROM papers_passage ps WHERE ps.kind = 'fulltext' AND ps.model = %(model)s
       ) END,
       w,
       CASE WHEN e.n >= %(estimated_from)s AND f.freq IS NOT NULL
            THEN round(f.freq * e.n)::bigint
       ELSE (SELECT count(*) FROM (
               SELECT 1 FROM papers_passage ps
               WHERE ps.kind = 'fulltext' AND ps.model = %(model)s
                 AND ps.lexemes @@ to_tsquery('simple', w)
               LIMIT %(cap)s) x) END
FROM unnest(%(words)s::text[]) AS w
CROSS JOIN (SELECT coalesce((SELECT reltuples FROM pg_class
                             WHERE oid = to_regclass('papers_chunk_lexemes_idx')), -1) AS n) e
LEFT JOIN LATERAL (
    SELECT s.most_common_elem_freqs[array_position(s.most_common_elems::text::text[], w)] AS freq
    FROM pg_stats s
    WHERE s.schemaname = current_schema() AND s.tablename = 'papers_passage'
      AND s.attname = 'lexemes'
) f ON TRUE
"""

# The candidates' tf of each query word (tsvector positions) and their length (distinct words),
# within the filters. The query's words are picked out of each chunk's tsvector before it is
# unnested (marked with weight A, the others keep to_tsvector's D): unnesting all of a chunk's
# words for up to WORD_CANDIDATE_CAP candidates made the whole chunk word search 1.6x slower at
# 1M chunks (bench_search --chunks). The papers table is joined only for categories: hidden and
# withdrawn papers are dropped from the ranked papers (a probe a paper, not one a chunk).
_WORD_CHUNKS = """
SELECT ps.paper_id, ps.id, ps.published, length(ps.lexemes), t.lexemes, t.counts
FROM papers_passage ps {join}
CROSS JOIN LATERAL (
    SELECT array_agg(u.lexeme) AS lexemes, array_agg(array_length(u.positions, 1)) AS counts
    FROM unnest(ts_filter(setweight(ps.lexemes, 'A', %(words)s::text[]), '{{a}}')) AS u
) t
WHERE {where} AND {generator} AND {papers}
"""

# The champion walk (papers.indexing.chunkwords): each common word's best chunks in the window,
# by descending weight, from its B-tree (papers_chunk_champion_walk_idx, window in the index).
_CHAMPION_WORDS = "SELECT lexeme, id FROM papers_chunkword WHERE lexeme = ANY(%s)"
_WALK = """
SELECT q.word, c.passage_id FROM unnest(%(walked)s::int[]) AS q(word)
CROSS JOIN LATERAL (
    SELECT c.passage_id FROM papers_chunkchampion c
    WHERE c.word_id = q.word AND {dates}
    ORDER BY c.weight DESC, c.passage_id LIMIT %(depth)s
) c
"""
# Chunks read of each common word's champion list, and beside the walk the chunks read level by
# level (all the query's words first) at most: at 1M chunks, over the 16 topics without a window,
# 27 ms p50 and 0.57 of exhaustive BM25's top 10 papers, against 40 ms and 0.49 for the levels
# alone at 2,000 and 12 ms and 0.44 for the walk alone (bench_search --chunks, docs/BENCHMARKS.md).
CHAMPION_WALK_DEPTH = 200
CHAMPION_LEVEL_CAP = 500


@dataclass(frozen=True, slots=True)
class WordHit:
    paper_id: int
    passage_id: int  # the paper's best chunk by words
    score: float  # that chunk's BM25
    published: object


def word_frequencies(cursor, words: list[str], model: str) -> tuple[int, dict[str, int]]:
    """(the number of chunks, each word's chunks up to WORD_DF_CAP): counted, or from
    CHUNKS_ESTIMATED_FROM chunks on, from the statistics where they know the word (_WORD_STATS)."""
    cursor.execute(_WORD_STATS, {"model": model, "words": words, "cap": WORD_DF_CAP,
                                 "estimated_from": CHUNKS_ESTIMATED_FROM})  # fmt: skip
    rows = cursor.fetchall()
    documents = rows[0][0] if rows else 0
    return documents, {w: count for _, w, count in rows if count}


def candidate_levels(df: dict[str, int], cap: int) -> list[str]:
    """The tsqueries (to_tsquery 'simple') whose chunks are the chunk word search's candidates,
    read level by level up to `cap` chunks. `df`: each query word's chunks (up to WORD_DF_CAP).

    While the rarest words' summed frequency fits the cap: those words OR-ed, one level read
    whole (MaxScore-style). When even the rarest word is in more chunks than the cap, its chunks
    cannot all be read, and the cap used to cut them in the table's order: at 1M chunks the
    search then agreed with BM25 over all chunks on 30% of its top 10 papers (bench_search
    --chunks, docs/BENCHMARKS.md). So then the chunks with all the query's words come first,
    then those with all but the commonest, ... down to those with the rarest alone, each level
    without the chunks of the one before (`& !word`): the cap cuts where chunks hold the
    fewest of the query's words."""
    ordered = sorted(df, key=lambda w: (df[w], w))
    if df[ordered[0]] <= cap:
        generator, total = [], 0
        for word in ordered:
            if generator and total + df[word] > cap:
                break
            generator.append(word)
            total += df[word]
        return [" | ".join(generator)]
    levels = []
    for size in range(len(ordered), 0, -1):
        level = " & ".join(ordered[:size])
        if size < len(ordered):
            level += f" & !{ordered[size]}"
        levels.append(level)
    return levels


def chunk_word_search(cursor, lexemes, model: str, filters: SearchFilters, n: int,
                      *, champions: bool | None = None) -> list[WordHit]:
    """The `n` papers whose best chunk scores highest by BM25 for the query's `lexemes` (as
    to_tsvector('english') made them), within `filters`. The IDF is the chunks' own (a word in
    every paper's method section, "learning", counts little; "smoothing" much); the rarest words
    generate the candidates, with each common word's best chunks (`champion_candidates`), and
    all words score them. `champions` (default settings.FULLTEXT_CHUNK_CHAMPIONS) False: the
    candidates level by level alone, as before the champion lists (for comparison)."""
    words = sorted({w for w in lexemes if _LEXEME.match(w)})
    if n <= 0 or not words or (filters.paper_ids is not None and not filters.paper_ids):
        return []
    documents, df = word_frequencies(cursor, words, model)
    if not documents or not df:
        return []
    idf = {w: math.log(1.0 + (documents - d + 0.5) / (d + 0.5)) for w, d in df.items()}
    params: dict = {"model": model, "words": list(df), "cap": WORD_CANDIDATE_CAP}
    where = passage_where(filters, params, "fulltext")
    # (ids and exclusions are Passage columns, in `where`; hidden and withdrawn: _visible_head)
    join, papers = "", "TRUE"
    if filters.categories:
        join = "JOIN papers_paper p ON p.id = ps.paper_id"
        papers, params = replace(filters, paper_ids=None, exclude_ids=()).paper_conditions(
            "p", params
        )
    if champions is None:
        champions = settings.FULLTEXT_CHUNK_CHAMPIONS
    walked = champion_candidates(cursor, df, filters, params) if champions else None
    average, found = None, []
    if walked is not None:
        generator, average, ended = walked
        sql = _WORD_CHUNKS.format(join=join, where=where, papers=papers, generator=generator)
        cursor.execute(sql, params)
        found = cursor.fetchall()
    # The levels too: the chunks holding all the query's words first, which a walk of each
    # word's own best chunks misses (bench_search --chunks); fewer of them beside a walk, all of
    # them where a list ended in the window.
    cap = WORD_CANDIDATE_CAP if walked is None or ended else CHAMPION_LEVEL_CAP
    if cap:
        params["cap"] = cap
        levels = candidate_levels(df, WORD_CANDIDATE_CAP)
        params.update((f"level{i}", level) for i, level in enumerate(levels))
        # Each level's chunks before the next one's: the Append stops (and the later levels are
        # never scanned) once the cap is reached.
        branches = [
            _WORD_CHUNKS.format(
                join=join, where=where, papers=papers,
                generator=f"ps.lexemes @@ to_tsquery('simple', %(level{i})s)",
            )
            for i in range(len(levels))
        ]  # fmt: skip
        union = " UNION ALL ".join(f"({branch})" for branch in branches)
        cursor.execute(f"{union} LIMIT %(cap)s", params)
        found += cursor.fetchall()
    if not found:
        return []
    if average is None:
        average = sum(length for _, _, _, length, _, _ in found) / len(found) or 1.0
    best: dict[int, WordHit] = {}
    for paper_id, passage_id, published, length, words_in, counts in found:
        norm = K1 * (1 - B + B * length / average)
        score = sum(
            idf[w] * tf * (K1 + 1) / (tf + norm)
            for w, tf in zip(words_in or (), counts or (), strict=True)
        )
        if paper_id not in best or score > best[paper_id].score:
            best[paper_id] = WordHit(paper_id, passage_id, score, published)
    ranked = sorted(best.values(), key=lambda h: (-h.score, h.paper_id))
    return _visible_head(cursor, ranked, filters, n)


def champion_candidates(
    cursor, df: dict[str, int], filters: SearchFilters, params: dict
) -> tuple[str, float, bool] | None:
    """The candidates' generator (SQL over `ps`, its parameters added to `params`), the
    average chunk length to score with, and whether a list ended in the window (the levels are
    read too, then), when the champion lists (papers.indexing.chunkwords)
    can bound the read: the rarest words whose summed frequency fits WORD_CANDIDATE_CAP read
    whole, each other word's best CHAMPION_WALK_DEPTH chunks in the window. None when the rare
    words alone are read (every word fits the cap), for a scope or a category (a walk of the
    whole catalogue's best chunks would mostly fall outside them; their own chunks are fewer),
    before the lists are built, or when a word too common to read whole has no list yet: then
    the candidates come level by level (candidate_levels)."""
    if filters.paper_ids is not None or filters.categories:
        return None
    ordered = sorted(df, key=lambda w: (df[w], w))
    whole, total = [], 0
    for word in ordered:
        if total + df[word] > WORD_CANDIDATE_CAP:
            break
        whole.append(word)
        total += df[word]
    rest = ordered[len(whole):]
    if not rest:
        return None
    cursor.execute(_CHAMPION_WORDS, [rest])
    lists = dict(cursor.fetchall())
    if not lists:
        return None
    for word in rest:  # a word without a list is read whole if it can be
        if word not in lists:
            if df[word] > WORD_CANDIDATE_CAP:
                return None
            whole.append(word)
    average = average_length(cursor)
    if average is None:
        return None
    walk = {"walked": sorted(lists.values()), "depth": CHAMPION_WALK_DEPTH}
    cursor.execute(_WALK.format(dates=filters.date_conditions("c.published", walk)), walk)
    rows = cursor.fetchall()
    params["walked_ids"] = sorted({passage for _, passage in rows})
    generator = "ps.id = ANY(%(walked_ids)s::bigint[])"
    if whole:
        params["whole"] = " | ".join(whole)
        generator = f"({generator} OR ps.lexemes @@ to_tsquery('simple', %(whole)s))"
    # A list that ended before the walk's depth in the window: the window's other chunks with
    # the word lie below its floor, unread; the levels read them too, as before the lists.
    walked = {word for word, _ in rows}
    ended = len(walked) < len(lists) or any(
        sum(1 for w, _ in rows if w == word) < CHAMPION_WALK_DEPTH for word in walked
    )
    return generator, average, ended


def _visible_head(cursor, ranked: list[WordHit], filters: SearchFilters, n: int) -> list[WordHit]:
    """The first `n` of `ranked` that the filters do not hide (hidden, withdrawn), checked on
    the head with a margin, and further down only when the head held more of them."""
    if filters.include_hidden and filters.include_withdrawn:
        return ranked[:n]
    head = n + HIDDEN_MARGIN
    while True:
        hidden = hidden_papers(cursor, [h.paper_id for h in ranked[:head]], filters)
        kept = [h for h in ranked[:head] if h.paper_id not in hidden]
        if len(kept) >= n or head >= len(ranked):
            return kept[:n]
        head *= 4


# A text's length as BM25 counts it, from its tsvector `w.words`: its words' occurrences (stopwords
# out). A chunk's is also kept in its paper's sentence sketch (made when it got its words), as
# summing it here was ~4.6 of _CHUNKS' ~7 ms at 1M chunks: it is summed only for the chunks of
# papers without a current sketch.
LENGTH_SQL = "(SELECT coalesce(sum(array_length(a.positions, 1)), 0)::int FROM unnest(w.words) a)"
# A chunk's words, `w.words`, as the catalogue's BM25 index tokenises them: those stored with it
# (Passage.lexemes), else its span of the text tokenised now (`ps` the chunk, `ft` its FullText).
_WORDS_SQL = """CROSS JOIN LATERAL (
    SELECT coalesce(
        ps.lexemes, to_tsvector('english', substr(ft.text, ps.start + 1, ps."end" - ps.start))
    ) AS words
) w"""


def chunk_sql(sql: str) -> str:
    """`sql` with its {words} (_WORDS_SQL) and {length} (LENGTH_SQL) written out."""
    return sql.replace("{words}", _WORDS_SQL).replace("{length}", LENGTH_SQL)


# Exact over the chunks of a few papers (tens of rows each): no index needed. Beside the cosine,
# what BM25 needs of each chunk: its length and the occurrences of the query's lexemes, tokenised
# as the catalogue's BM25 index tokenises (to_tsvector('english')): the words stored with the
# chunk (Passage.lexemes, that very tsvector) when it has them, since tokenising the ~180 chunks
# of a page's papers on every search was most of this query's time (bench_search --chunks). The
# text is not read here (COALESCE reads it only for a chunk without stored words): see _TEXTS.
# The query's words are picked out (setweight + ts_filter, as the chunk word search does) before
# their occurrences are aggregated, and the length sums the positions alone: the two FILTERed
# aggregates over every word of every chunk were half of this query (bench_fulltext pages of
# 10 papers, ~740 chunks: 102-113 -> 49 ms at load 11). (The distinct words, `length()`, would
# cost 18 ms, but as BM25's length they ranked worse: bench_fulltext 74 -> 71 answered.)
_CHUNKS = chunk_sql("""
SELECT ps.id, ps.paper_id, ps.page, ps.page_end, ps.section, ps.start, ps."end",
       1 - (ps.embedding <=> %(q)s::vector) AS similarity, t.length, t.lexemes, t.counts
FROM papers_passage ps
JOIN papers_fulltext ft ON ft.paper_id = ps.paper_id AND ft.status = 'ok'
{words}
CROSS JOIN LATERAL (
    SELECT CASE WHEN ps.paper_id = ANY(%(sketched)s::bigint[]) THEN NULL ELSE {length} END AS length,
           array_agg(u.lexeme) AS lexemes, array_agg(array_length(u.positions, 1)) AS counts
    FROM unnest(ts_filter(setweight(w.words, 'A', %(words)s::text[]), '{a}')) AS u
) t
WHERE ps.kind = 'fulltext' AND ps.model = %(model)s AND ps.paper_id = ANY(%(ids)s)
""")
# A chunk's text is its span of FullText.text, never stored twice. Each paper's text is read once
# and cut here: `substr` per chunk decompressed the TOASTed text from its start to the chunk's
# end for every chunk (a paper's chunks read it ~n/2 times over), and only the chunks that the
# sentence evidence reads or the page shows need their text (bench_search --chunks).
_TEXTS = """
SELECT paper_id, text FROM papers_fulltext WHERE paper_id = ANY(%s) AND status = 'ok'
"""
# The lengths of chunks whose paper's sketch lacks them (see LENGTH_SQL).
_LENGTHS = chunk_sql("""
SELECT ps.id, {length}
FROM papers_passage ps
JOIN papers_fulltext ft ON ft.paper_id = ps.paper_id
{words}
WHERE ps.id = ANY(%s)
""")
_OVERLAP = """
SELECT ts_rank_cd(to_tsvector('english', body), to_tsquery('simple', %(tsquery)s), 1)
FROM unnest(%(bodies)s::text[]) AS body
"""


# The same counts for texts that are not chunks (the abstracts of papers never read).
_COUNTS = chunk_sql("""
SELECT t.length, t.lexemes, t.counts
FROM unnest(%(bodies)s::text[]) WITH ORDINALITY AS b(body, i)
CROSS JOIN LATERAL (SELECT to_tsvector('english', b.body) AS words) w
CROSS JOIN LATERAL (
    SELECT {length} AS length,
           array_agg(u.lexeme) AS lexemes, array_agg(array_length(u.positions, 1)) AS counts
    FROM unnest(ts_filter(setweight(w.words, 'A', %(words)s::text[]), '{a}')) AS u
) t
ORDER BY b.i
""")


@dataclass
class RankedChunks:
    by_paper: dict[int, list[Chunk]]  # each read paper's best chunks, best first
    # Each candidate paper's best BM25 over its passages (its chunks, or its abstract when it
    # was never read), all scored as one collection: the evidence that reorders the papers.
    evidence: dict[int, float]


def best_chunks(cursor, paper_ids, vector, model: str, lexemes,
                per_paper: int = CHUNKS_PER_PAPER,
                abstracts: dict[int, str] | None = None,
                question: str = "", quantity: bool = False,
                asked_about: Collection[int] = ()) -> RankedChunks:
    """For each of `paper_ids` that has read full text, its best `per_paper` chunks for the
    query (`vector`, and `lexemes`: the query's stemmed words as BM25 saw them); `abstracts`
    (paper id: text) stand for the papers without chunks in the evidence. `quantity`: the
    `question` asks for a number (chat.understanding.quantity), so a sentence stating one is
    better evidence. Papers in `asked_about` keep ASKED_ABOUT_CHUNKS when more than one chunk a
    paper is asked for. Each paper's first chunks are the same whatever `per_paper` (a paper's
    chunks are only read until its first `per_paper` are certain: _by_sentences)."""
    ids = [int(i) for i in paper_ids]
    if not ids or vector is None:
        return RankedChunks({}, {})
    asking = asking_lexemes(question)
    words = sorted({w for w in lexemes if _LEXEME.match(w) and w not in asking})
    sketches = sentence_sketch.current_sketches(cursor, ids)
    cursor.execute(_CHUNKS, {"q": vector_literal(vector), "model": model, "ids": ids,
                             "words": words, "sketched": list(sketches)})  # fmt: skip
    rows = cursor.fetchall()
    if not rows:
        return RankedChunks({}, {})
    chunks = [
        Chunk(pid, paper, "", page, page_end, section or "", start, end, float(sim), 0.0,
              length=length if length is not None else sketches[paper].length(start, end),
              counts=tuple(zip(found or (), counts or (), strict=True)))
        for (pid, paper, page, page_end, section, start, end, sim, length, found, counts) in rows
    ]  # fmt: skip
    if any(c.length is None for c in chunks):  # a chunk its paper's sketch does not know
        chunks = _with_lengths(cursor, chunks)
    if ranking() == "mix":
        chunks = with_texts(cursor, chunks, sketches)
        if words:
            cursor.execute(
                _OVERLAP, {"tsquery": " | ".join(words), "bodies": [c.text for c in chunks]}
            )
            chunks = [_changed(c, overlap=float(r[0]))
                      for c, r in zip(chunks, cursor.fetchall(), strict=True)]
        return RankedChunks(_mixed_per_paper(chunks, per_paper, asked_about), {})
    read = {c.paper_id for c in chunks}
    unread = {pid: text for pid, text in (abstracts or {}).items() if pid not in read and text}
    stand_ins = []
    if unread and words:
        cursor.execute(_COUNTS, {"bodies": list(unread.values()), "words": words})
        stand_ins = [
            Chunk(0, pid, "", None, None, "", 0, 0, 0.0, 0.0, length=length,
                  counts=tuple(zip(found or (), counts or (), strict=True)))
            for pid, (length, found, counts) in zip(unread, cursor.fetchall(), strict=True)
        ]
    pooled = chunks + stand_ins
    evidence: dict[int, float] = {}
    for chunk, score in zip(pooled, bm25_scores(pooled), strict=True):
        evidence[chunk.paper_id] = max(evidence.get(chunk.paper_id, 0.0), score)
    # Within a paper, its own chunks are the collection: a word in most of them (its name,
    # "OPT-175B"'s "175b") tells none apart, however rare it is among the other papers.
    own: dict[int, list[Chunk]] = {}
    for chunk in chunks:
        own.setdefault(chunk.paper_id, []).append(chunk)
    ranked = {paper: _fused_per_paper(with_bm25(mine), len(mine))[paper] for paper, mine in own.items()}
    pools = {
        paper: found[: ASKED_ABOUT_POOL if paper in asked_about else SENTENCE_POOL]
        for paper, found in ranked.items()
    }
    # Only the pools' chunks are read: the sentence evidence and the cards need their text.
    read_pools = with_texts(cursor, [c for found in pools.values() for c in found], sketches)
    if asking_words(question):
        read_pools += _giving_asked_kind(cursor, ranked, pools, question, sketches)
    by_paper = {}
    for chunk in read_pools:
        by_paper.setdefault(chunk.paper_id, []).append(chunk)
    by_paper = {
        paper: _by_sentences(
            found,
            with_asking_words(spelt_idf(chunk_idf(own[paper])), question, len(own[paper])),
            question,
            quantity,
            _kept(paper, per_paper, asked_about),
        )[: _kept(paper, per_paper, asked_about)]
        for paper, found in by_paper.items()
    }
    return RankedChunks(by_paper, evidence)


# Chunks beyond a paper's pool that give the kind of answer asked for ("8 TPUs" for "What
# hardware …": chat.understanding.answer_kinds) join it, at most this many, best fused first:
# neither the cosine nor BM25 of a word the answer never says finds them (MuZero's Appendix G
# ranked below its 32 best chunks for "What hardware was MuZero trained on?").
KIND_POOL = 8


def _giving_asked_kind(cursor, ranked, pools, question: str, sketches) -> list[Chunk]:
    """The chunks of `ranked` (each paper's, best first) outside its pool whose text gives the
    kind of answer `question` asks for, with their text."""
    kinds = set(asking_words(question).values())
    rest = [c for paper, found in ranked.items() for c in found[len(pools[paper]) :]]
    giving: dict[int, list[Chunk]] = {}
    for chunk in with_texts(cursor, rest, sketches):
        mine = giving.setdefault(chunk.paper_id, [])
        if len(mine) < KIND_POOL and any(kind.gives(chunk.text) for kind in kinds):
            mine.append(chunk)
    return [c for found in giving.values() for c in found]


def _kept(paper: int, per_paper: int, asked_about: Collection[int]) -> int:
    """How many of a paper's best chunks are kept: ASKED_ABOUT_CHUNKS for a paper the question is
    about when more than one a paper is wanted, else `per_paper`."""
    return ASKED_ABOUT_CHUNKS if paper in asked_about and per_paper > 1 else per_paper


def with_texts(cursor, chunks: list[Chunk], sketches: dict | None = None) -> list[Chunk]:
    """The chunks with their text, in the same order: each paper's full text read once (_TEXTS),
    with its sentences' filters where the paper's sketch (of `sketches`, else read here) holds
    them for that text."""
    if not chunks:
        return chunks
    papers = sorted({c.paper_id for c in chunks})
    if sketches is None:
        sketches = sentence_sketch.current_sketches(cursor, papers)
    cursor.execute(_TEXTS, [papers])
    texts = dict(cursor.fetchall())
    found = []
    for c in chunks:
        full = texts.get(c.paper_id, "")
        text = full[c.start : c.end]
        sketch = sketches.get(c.paper_id)
        filters = sketch.filters(c.start, c.end, text) if sketch else None
        headed = with_table_head(full, c.start, c.end)
        # Only for a model size's row, what it was made for: REALM's ablation table, read as
        # rows, stopped being quoted for "What is the main baseline REALM is compared with?"
        # (its run of cells, "… Baseline (ORQA) 31.3 13.9 …", had answered it; bench_fulltext).
        if headed is not None and any(
            isinstance(s, RowSentence) and labels_a_size(s.row) for s in passage_sentences(headed)
        ):
            # (its sentences are no longer the sketch's: read, not bounded by it)
            found.append(replace(c, text=headed, filters=None))
            continue
        found.append(_changed(c, text=text, filters=filters))
    return found


def _with_lengths(cursor, chunks: list[Chunk]) -> list[Chunk]:
    cursor.execute(_LENGTHS, [[c.passage_id for c in chunks if c.length is None]])
    lengths = dict(cursor.fetchall())
    return [c if c.length is not None else replace(c, length=lengths.get(c.passage_id, 0))
            for c in chunks]  # fmt: skip


def reordered_by_evidence(paper_ids: list[int], evidence: dict[int, float]) -> list[int]:
    """`paper_ids` (the fused order) fused by reciprocal rank with their order by `evidence`
    (papers with none keep only their fused rank); ties keep the fused order."""
    if not evidence:
        return list(paper_ids)
    by_evidence = sorted(
        (pid for pid in paper_ids if evidence.get(pid, 0) > 0), key=lambda pid: -evidence[pid]
    )
    fused = reciprocal_rank_fusion([
        Ranked("fused", list(paper_ids), [0.0] * len(paper_ids)),
        Ranked("evidence", by_evidence, [evidence[pid] for pid in by_evidence]),
    ])
    position = {pid: i for i, pid in enumerate(paper_ids)}
    return [f.paper_id for f in sorted(fused, key=lambda f: (-f.score, position[f.paper_id]))]


def chunk_idf(chunks: list[Chunk]) -> dict[str, float]:
    """BM25's IDF of each query lexeme, the chunks being the collection."""
    df: dict[str, int] = {}
    for chunk in chunks:
        for lexeme, _ in chunk.counts:
            df[lexeme] = df.get(lexeme, 0) + 1
    documents = len(chunks)
    return {t: math.log(1.0 + (documents - n + 0.5) / (n + 0.5)) for t, n in df.items()}


def with_asking_words(idf: dict[str, float], question: str, documents: int) -> dict[str, float]:
    """`idf` with the lexemes of the question's words that ask for a kind of answer
    (chat.understanding.answer_kinds: "hardware", "big"), which the chunks seldom say: a word in
    none of the `documents` weighs what BM25 gives such a word, its sentences that give the kind
    of answer asked for holding it (sentence_evidence)."""
    asked = set(terms(question))  # (a stopword, "take", is no word of the query)
    asking = [t for t in stems(sorted(asking_words(question))) if t in asked]
    if not asking:
        return idf
    unseen = math.log(1.0 + (documents + 0.5) / 0.5)
    return {**{t: unseen for t in asking}, **idf}


def spelt_idf(idf: dict[str, float]) -> dict[str, float]:
    """`idf` with its printed Greek letters spelled as a sentence's terms spell them ('β1' ->
    'beta1': chat.llm.sentences.terms), so the sentence evidence finds the sentence holding
    the 'β1' BM25 found (a question spelling "beta" asks for it: fulltext.query_terms)."""
    if not any(spells_greek(t) for t in idf):
        return idf
    spelt: dict[str, float] = {}
    for lexeme, weight in idf.items():
        term = terms(lexeme)[0] if spells_greek(lexeme) else lexeme
        spelt[term] = max(weight, spelt.get(term, 0.0))  # ('ε1' and 'ϵ1' are one 'epsilon1')
    return spelt


def bm25_scores(chunks: list[Chunk]) -> list[float]:
    """Each chunk's BM25 score for the query, the candidates being the collection (the IDF and
    average length are theirs: what tells one chunk of these papers from another)."""
    if not chunks:
        return []
    average = sum(c.length for c in chunks) / len(chunks) or 1.0
    idf = chunk_idf(chunks)
    scores = []
    for chunk in chunks:
        if not chunk.counts:
            scores.append(0.0)
            continue
        norm = K1 * (1 - B + B * chunk.length / average)
        scores.append(sum(idf[t] * tf * (K1 + 1) / (tf + norm) for t, tf in chunk.counts))
    return scores


def with_bm25(chunks: list[Chunk]) -> list[Chunk]:
    """The chunks with their BM25 score (`bm25_scores`)."""
    return [_changed(c, bm25=s) for c, s in zip(chunks, bm25_scores(chunks), strict=True)]


def _fused_per_paper(chunks: list[Chunk], per_paper: int) -> dict[int, list[Chunk]]:
    """Within each paper, its chunks by cosine and by BM25 (those with a query word), fused by
    reciprocal rank; ties go to the earlier chunk."""
    by_paper: dict[int, list[Chunk]] = {}
    for chunk in chunks:
        by_paper.setdefault(chunk.paper_id, []).append(chunk)
    ranked = {}
    for paper, found in by_paper.items():
        dense = sorted(found, key=lambda c: (-c.similarity, c.start))
        lexical = sorted((c for c in found if c.bm25 > 0), key=lambda c: (-c.bm25, c.start))
        fused = reciprocal_rank_fusion([
            Ranked("dense", [c.passage_id for c in dense], [c.similarity for c in dense]),
            Ranked("bm25", [c.passage_id for c in lexical], [c.bm25 for c in lexical]),
        ], k=CHUNK_RRF_K)
        by_id = {c.passage_id: c for c in found}
        best = sorted(
            # (fusion names every id `paper_id`: here they are the chunks' passage ids)
            (_changed(by_id[f.paper_id], score=f.score) for f in fused),
            key=lambda c: (-c.score, c.start),
        )
        ranked[paper] = best[:per_paper]
    return ranked


@lru_cache(maxsize=SENTENCE_CACHE)
def _terms_any_sentence_may_hold(text: str) -> frozenset:
    """terms_any_sentence_may_hold, kept as analysed_sentences is."""
    return frozenset(terms_any_sentence_may_hold(text))


def forget_analysed_chunks() -> None:
    """Empty this process's caches of analysed chunks (a benchmark's cold search); the sketches
    in the database stay, as they would for a first search."""
    analysed_sentences.cache_clear()
    _terms_any_sentence_may_hold.cache_clear()


def sentence_evidence(
    text: str, idf: dict[str, float], question: str, quantity: bool, section: str = ""
) -> float:
    """The best sentence of `text` for the query: the IDF of the query's words it holds
    together (words of one sentence answer; the same words spread over a chunk often do not),
    NUMBER_WEIGHT times more for a quantity question when it states a number, less when it is
    about another model size than the asked one (chat.understanding.variants)."""
    best = 0.0
    asking = asking_words(question)
    analysed = analysed_sentences(text)
    heads = _asked_head_lexemes(question, quantity)
    if heads:
        # A list of the things asked for answers every word of the question (names_asked_things).
        items = [words for sentence, words in analysed if isinstance(sentence, ItemSentence)]
        if any(names_asked_things(items, heads)):
            best = sum(idf.values())
    largest = _extreme_rows(analysed, question) if quantity else {}
    heading = frozenset(terms(section)) if section else frozenset()
    if asking and heading and (by_heading := heading_says(heading, question)):
        # ("… uses gold passages from the same mini-batch" under "3.2 Training": how it is
        # trained, for "How is DPR trained?"; chat.understanding.answer_kinds.heading_says.)
        analysed = [(s, words | set(stems(sorted(by_heading)))) for s, words in analysed]
    for sentence, words in analysed:
        if id(sentence) in largest:
            # The largest row of a table of what was asked (extractive._extreme_rows).
            words = words | largest[id(sentence)]
        elif answers_nothing(sentence, idf, question):
            continue
        if asking and (said := said_by_kind(sentence, question)):
            # ("8 TPUs" says the "hardware" asked for: chat.understanding.answer_kinds.)
            words = words | set(stems(sorted(said)))
        score = sum(weight for lexeme, weight in idf.items() if lexeme in words)
        if score > 0:
            score *= number_weight(sentence, question, quantity) * reason_weight(
                sentence, question, heading
            )
        if score > 0 and about_other_size(sentence, question):
            score *= OTHER_SIZE_WEIGHT
        best = max(best, score)
    return best


def _extreme_rows(analysed, question: str) -> dict[int, frozenset[str]]:
    """For a question after the largest or smallest of something, the rows (by id) whose values
    are all the largest of their table (papers.fulltext.tables.extreme_row), with the
    question's extreme word ("largest") they say by it; only for a table whose caption or
    header says another word of the question."""
    words = content_words(question)
    extremes = frozenset(stems([w for w in words if asks_for_extreme(w)]))
    if not extremes:
        return {}
    asked = set(stems([w for w in words if not asks_for_extreme(w)]))
    found = {}
    runs = itertools.groupby(analysed, key=lambda pair: isinstance(pair[0], RowSentence))
    for is_row, run in runs:
        rows = list(run) if is_row else []
        if len(rows) < 2:
            continue
        at = extreme_row([sentence for sentence, _ in rows], any(w in SMALLEST for w in words))
        if at is not None and asked & rows[at][1]:
            found[id(rows[at][0])] = extremes
    return found


@lru_cache(maxsize=64)
def _asked_head_lexemes(question: str, quantity: bool) -> frozenset[str]:
    """What a "what/which X" question asks for (asked_heads), as lexemes; none for a quantity."""
    return frozenset() if quantity else frozenset(stems(asked_heads(question)))


def _by_sentences(
    found: list[Chunk], idf, question: str, quantity: bool, kept: int | None = None
) -> list[Chunk]:
    """One paper's pool of chunks (best first) reordered by reciprocal rank of that order and
    their sentence evidence (weighted SENTENCE_WEIGHT). With `kept`, only the first `kept` are
    asked for, and a chunk's sentences are read only while it could still be among them: the
    chunks go by the most their sentences could score (`terms_any_sentence_may_hold`), and once
    the first `kept` of the fused order are certain whatever the others' sentences say, the rest
    are not split and stemmed (~1 ms a chunk): the same first `kept`, in the same order."""
    if len(found) < 2 or not idf:
        return found
    # A chunk whose stored words hold none of the query's lexemes has no sentence that does:
    # splitting and stemming it (~2 ms a chunk under load) is skipped (bench_search --chunks).
    # (A chunk may answer a question's asking word without saying it: "8 TPUs" for "hardware",
    # chat.understanding.answer_kinds; its sentences may then score that word's weight too.)
    asked_kind = sum(idf.get(t, 0.0) for t in stems(sorted(asking_words(question))))
    if quantity:  # (a table's largest row says "largest": _extreme_rows)
        asked_kind += sum(
            idf.get(t, 0.0) for t in stems([w for w in content_words(question) if asks_for_extreme(w)])
        )
    heads = _asked_head_lexemes(question, quantity)
    read = [c for c in found if c.counts or spells_greek(c.text) or asked_kind]
    evidence = dict.fromkeys((c.passage_id for c in found), 0.0)
    most = number_weight_at_most(quantity) * reason_weight_at_most(question)
    bound = {}
    done: set[int] = set()
    if kept is not None and kept < len(found):
        weighted = [(t, w) for t, w in idf.items() if w > 0]
        masks = [(sentence_sketch.term_mask(t), w) for t, w in weighted]
        for chunk in read:
            if chunk.filters is not None:  # its best sentence's (sentence_sketch)
                bound[chunk.passage_id] = most * sentence_sketch.bound(chunk.filters, masks)
            else:  # all its words', as if one sentence held them
                holds = _terms_any_sentence_may_hold(chunk.text)
                bound[chunk.passage_id] = most * sum(w for t, w in weighted if t in holds)
            bound[chunk.passage_id] += most * asked_kind
            if heads and has_items(chunk.text) and heads & {lexeme for lexeme, _ in chunk.counts}:
                bound[chunk.passage_id] = most * sum(w for _, w in weighted)  # a list of them
        read.sort(key=lambda c: (-bound[c.passage_id], c.start))
        # A chunk that can score nothing scores nothing: it need not be read to be sure.
        while read and bound[read[-1].passage_id] == 0:
            done.add(read.pop().passage_id)
    settled: list[Chunk] | None = None
    for i, chunk in enumerate(read):
        evidence[chunk.passage_id] = sentence_evidence(
            chunk.text, idf, question, quantity, chunk.section
        )
        done.add(chunk.passage_id)
        if bound and i + 1 < len(read):
            settled = _settled(found, evidence, done, read[i + 1 :], bound, kept)
            if settled is not None:
                break
    by_sentence = sorted(
        (c for c in found if evidence[c.passage_id] > 0),
        key=lambda c: (-evidence[c.passage_id], c.start),
    )
    if settled is not None:
        by_sentence = settled
    fused = _sentence_fusion(found, by_sentence, evidence)
    by_id = {c.passage_id: c for c in found}
    order = {c.passage_id: i for i, c in enumerate(found)}
    ranked = [
        _changed(by_id[f.paper_id], score=f.score)
        for f in sorted(fused, key=lambda f: (-f.score, order[f.paper_id]))
    ]
    return ranked[:kept] if kept is not None else ranked


def _sentence_fusion(found: list[Chunk], by_sentence: list[Chunk], evidence) -> list:
    return reciprocal_rank_fusion(
        [
            Ranked("chunks", [c.passage_id for c in found], [c.score for c in found]),
            Ranked(
                "sentences",
                [c.passage_id for c in by_sentence],
                [evidence[c.passage_id] for c in by_sentence],
                SENTENCE_WEIGHT,
            ),
        ],
        k=CHUNK_RRF_K,
    )


def _settled(found, evidence, done, unread, bound, kept) -> list[Chunk] | None:
    """The head of the order by sentence evidence that no unread chunk can enter (its evidence
    is at most its bound, and the order is (evidence desc, start)), when with it the first
    `kept` of the fused order are certain: each of them above the most any other chunk can get
    (its pool rank's share, and the sentence share of the rank after that head, if its evidence
    may be above 0). None while they are not."""
    def after_all_unread(c) -> bool:
        e = evidence[c.passage_id]
        return e > 0 and all(
            e > bound[u.passage_id] or (e == bound[u.passage_id] and c.start < u.start)
            for u in unread
        )

    computed = sorted(
        (c for c in found if c.passage_id in done and evidence[c.passage_id] > 0),
        key=lambda c: (-evidence[c.passage_id], c.start),
    )
    head = []
    for c in computed:
        if not after_all_unread(c):
            break
        head.append(c)
    if len(head) < kept:
        return None
    fused = {f.paper_id: f.score for f in _sentence_fusion(found, head, evidence)}
    rank = {c.passage_id: r for r, c in enumerate(found, start=1)}
    top = sorted(head, key=lambda c: (-fused[c.passage_id], rank[c.passage_id]))[:kept]
    floor = min(fused[c.passage_id] for c in top)
    in_head = {c.passage_id for c in head}
    share = SENTENCE_WEIGHT / (CHUNK_RRF_K + len(head) + 1)
    for c in found:
        if c.passage_id in in_head:
            continue
        may = c.passage_id not in done or evidence[c.passage_id] > 0
        if may and c.passage_id not in bound:
            may = False  # never read: its evidence is 0
        most = 1.0 / (CHUNK_RRF_K + rank[c.passage_id]) + (share if may else 0.0)
        if most >= floor - 1e-12:  # (float sums: never settle on a tie)
            return None
    return head


def _normalised(values: list[float]) -> list[float]:
    high, low = max(values), min(values)
    spread = high - low
    return [(v - low) / spread if spread > 0 else 1.0 for v in values]


def _mixed_per_paper(
    chunks: list[Chunk], per_paper: int, asked_about: Collection[int] = ()
) -> dict[int, list[Chunk]]:
    sims = _normalised([c.similarity for c in chunks])
    overlaps = _normalised([c.overlap for c in chunks]) if any(c.overlap for c in chunks) else [
        0.0
    ] * len(chunks)
    share = CHUNK_DENSE_SHARE
    by_paper: dict[int, list[Chunk]] = {}
    for chunk, sim, overlap in zip(chunks, sims, overlaps, strict=True):
        scored = _changed(chunk, score=share * sim + (1 - share) * overlap)
        by_paper.setdefault(chunk.paper_id, []).append(scored)
    return {
        paper: sorted(found, key=lambda c: (-c.score, c.start))[
            : _kept(paper, per_paper, asked_about)
        ]
        for paper, found in by_paper.items()
    }


def pages_label(page: int | None, page_end: int | None) -> str:
    """How a citation names a chunk's pages: "p. 7", "pp. 7-8"; "" for an abstract."""
    if not page:
        return ""
    if page_end and page_end != page:
        return f"pp. {page}-{page_end}"
    return f"p. {page}"
