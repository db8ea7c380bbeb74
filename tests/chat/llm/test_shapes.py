"""Answers shaped by the question's intent, with the offline composer, against the real database.

A slice of the shared arXiv sample is ingested with the real upsert code and embedded with the
hashing embedder; questions are made from what the slice holds (its most prolific author, a
paper's id and title), asked through the real pipeline (chat.pipeline.answer), and every answer
is checked line by line: a line is a fixed template of chat.llm.templates, possibly ending with a
sentence quoted verbatim from the source it cites.
"""

import gzip
import json
import re
from datetime import UTC, date, datetime, timedelta

import pytest
from django.db.models import Count

from chat.llm import AnswerRequest, SourceText
from chat.llm import templates as T
from chat.llm.sentences import terms
from chat.llm.shapes import compose_shaped
from chat.pipeline import prompts
from chat.pipeline.answer import answer_events
from chat.understanding.intent import Intent
from papers.indexing.lexical import index_missing
from papers.indexing.vectors import embed_missing
from papers.ingest.snapshot import parse_snapshot_record
from papers.ingest.upsert import upsert_papers
from papers.models import Author, Paper
from tests.fakes import SHARED_DATA

SLICE = 500
_FIELD = re.compile(r"\\\{(\w+)\\\}")  # a {field} of a template, once re.escape'd


def _sample(shared_data, limit: int) -> list:
    records = []
    with gzip.open(shared_data / "arxiv-snapshot" / "arxiv-sample.jsonl.gz", "rt") as lines:
        for line in lines:
            data = json.loads(line)
            if (data.get("update_date") or "") >= "2023" and "cs." in data.get("categories", ""):
                records.append(parse_snapshot_record(data))
                if len(records) >= limit:
                    break
    return records


OFFLINE = {"EMBEDDING_BACKEND": "hashing", "LLM_BACKEND": "extractive", "LLM_FALLBACK": ""}


@pytest.fixture(scope="module")
def _slice_in_database(django_db_setup, django_db_blocker):
    """The slice, ingested and indexed once for the module (committed: the pipeline reads it on
    threads of its own), and flushed after the module's last test as `transactional_db` would.
    The tests only read it; building it per test cost 16 of this module's 17 setups."""
    from django.core.management import call_command
    from django.test import override_settings

    if not SHARED_DATA.is_dir():
        pytest.skip(f"needs the shared data folder at {SHARED_DATA} (absent in this checkout)")
    with django_db_blocker.unblock(), override_settings(**OFFLINE):
        upsert_papers(_sample(SHARED_DATA, SLICE))
        # Both indexes, as the indexing job builds them: the relevance gate reads BM25 too.
        index_missing()
        embed_missing()
    yield
    with django_db_blocker.unblock():
        call_command("flush", interactive=False, verbosity=0)


@pytest.fixture
def sample_catalogue(_slice_in_database, db, settings):
    for name, value in OFFLINE.items():
        setattr(settings, name, value)


# --- the verbatim check ---------------------------------------------------------------------------


def normalised(text: str) -> str:
    return " ".join(text.split())


def _template_pattern(template: str, titles: list[str]) -> re.Pattern:
    fields = {
        "quote": r"(?P<quote>.+ \[\d+\][.!?]*)",
        "title": "(?:" + "|".join(re.escape(t) for t in titles) + ")",
        "published": r"\d{4}-\d{2}-\d{2}",
    }

    def field(match: re.Match) -> str:
        name = match.group(1)
        if name in fields:
            return fields[name]
        if name in ("rank", "count", "number"):
            return r"\d+"
        return r"[^*\n\[\]]+"  # names, ids, periods, months the template is filled with

    return re.compile(_FIELD.sub(field, re.escape(template)))


def assert_composed_from_sources(answer: str, sources: list[dict], seed: dict | None = None):
    """Every line of `answer` is a template, and every sentence in it that no template wrote is
    a verbatim sentence of the source whose [n] follows it (the seed is never cited)."""
    by_number = {s["number"]: s for s in sources}
    titles = [s["title"] for s in sources] + ([seed["title"]] if seed else [])
    patterns = [_template_pattern(t, titles) for t in T.ALL.values()]
    quotes = 0
    for line in answer.splitlines():
        if not line.strip():
            continue
        match = next((m for p in patterns if (m := p.fullmatch(line))), None)
        assert match, f"not a template: {line!r}"
        quote = match.groupdict().get("quote")
        if quote is None:
            assert not re.search(r"\[\d+\]", line) or re.fullmatch(r".* \[\d+\]", line), line
            continue
        cited = re.fullmatch(r"(?P<body>.+) \[(?P<n>\d+)\](?P<end>[.!?]*)", quote)
        source = by_number[int(cited["n"])]
        sentence = normalised(cited["body"] + cited["end"])
        assert sentence.rstrip(".!?") in normalised(source["passage"]) or sentence == normalised(
            source["title"]
        ), f"not in source {cited['n']}: {sentence!r}"
        quotes += 1
    return quotes


async def _ask(question: str, now: datetime):
    events = [event async for event in answer_events(question, now=now)]
    analysis = next(e for e in events if e["type"] == "analysis")
    sources = next(e for e in events if e["type"] == "sources")["sources"]
    done = events[-1]
    assert done["type"] == "done", done
    return analysis["analysis"], sources, done


# --- the intents through the pipeline -------------------------------------------------------------


@pytest.fixture
def now():
    return datetime(2026, 11, 23, 12, tzinfo=UTC)


async def test_papers_by_an_author_are_listed_never_refused(sample_catalogue, now):
    author = await (
        Author.objects.annotate(n=Count("papers")).filter(n__gte=2).order_by("-n", "name").afirst()
    )
    analysis, sources, done = await _ask(f"papers by {author.name}", now)

    assert analysis["intent"] == "list"
    assert sources and all(author.name in s["authors"] for s in sources)
    assert "not enough" not in done["content"] and "mentions" not in done["content"]
    lines = done["content"].splitlines()
    assert lines[0] == T.LIST_LEAD_AUTHORS.format(
        count=len(sources), papers="papers", authors=author.name
    )
    # One numbered line per paper, newest first, each citing its paper.
    items = [line for line in lines if re.match(r"\d+\. ", line)]
    assert len(items) == len(sources)
    dates = [re.search(r"\((\d{4}-\d{2}-\d{2})\)", line)[1] for line in items]
    assert dates == sorted(dates, reverse=True)
    assert sorted(done["citations"]) == [s["number"] for s in sources]
    assert_composed_from_sources(done["content"], sources)


async def test_one_paper_by_an_author_is_one_paper(sample_catalogue, now):
    # "1 papers by Kaiming He in the catalogue" (seen in Chromium).
    author = await (
        Author.objects.annotate(n=Count("papers")).filter(n=1).order_by("name").afirst()
    )
    analysis, sources, done = await _ask(f"papers by {author.name}", now)

    assert len(sources) == 1
    assert done["content"].splitlines()[0] == T.LIST_LEAD_AUTHORS.format(
        count=1, papers="paper", authors=author.name
    )


async def test_papers_like_an_id_name_the_seed_first(sample_catalogue, now):
    seed = (
        await Paper.objects.filter(abstract__icontains="we propose").order_by("arxiv_id").afirst()
    )
    analysis, sources, done = await _ask(f"papers like {seed.arxiv_id}", now)

    assert analysis["intent"] == "seed"
    first = done["content"].splitlines()[0]
    assert first == T.SEED_LEAD.format(
        title=" ".join(seed.title.split()),
        published=seed.published.date().isoformat(),
        arxiv_id=seed.arxiv_id,
    )
    assert seed.arxiv_id not in {s["arxiv_id"] for s in sources}
    assert sorted(done["citations"]) == [s["number"] for s in sources]
    seed_card = {"title": " ".join(seed.title.split())}
    assert_composed_from_sources(done["content"], sources, seed_card)


async def test_papers_like_an_unknown_id_say_so_and_answer_from_the_topic(sample_catalogue, now):
    analysis, sources, done = await _ask("papers like 2501.99999 on language models", now)

    assert analysis["intent"] == "seed"
    first = done["content"].splitlines()[0]
    assert first.startswith("arXiv 2501.99999 is not in the catalogue")
    assert first in (
        T.SEED_MISSING.format(arxiv_id="2501.99999"),
        T.SEED_MISSING_NOTHING.format(arxiv_id="2501.99999"),
    )
    assert_composed_from_sources(done["content"], sources)


async def test_a_named_paper_is_answered_from_that_paper(sample_catalogue, now):
    papers = Paper.objects.filter(abstract__iregex=r"\m(we propose|we introduce|we present)\M")
    paper = await papers.order_by("-published", "arxiv_id").afirst()
    title = " ".join(paper.title.split())
    analysis, sources, done = await _ask(f"what did {title} find?", now)

    assert analysis["intent"] == "named_paper"
    number = next(s["number"] for s in sources if s["arxiv_id"] == paper.arxiv_id)
    lead = T.NAMED_LEAD.format(title=title, published=paper.published.date().isoformat())
    assert done["content"].splitlines()[0] == lead
    assert done["citations"] == [number]
    assert assert_composed_from_sources(done["content"], sources) >= 2


async def test_summarize_an_id_cites_the_paper_itself(sample_catalogue, now):
    paper = await Paper.objects.order_by("arxiv_id").afirst()
    analysis, sources, done = await _ask(f"summarize {paper.arxiv_id}", now)

    assert analysis["intent"] == "named_paper"
    assert sources[0]["arxiv_id"] == paper.arxiv_id and sources[0]["number"] == 1
    assert done["citations"] == [1]
    assert_composed_from_sources(done["content"], sources)


async def test_a_timeline_groups_papers_by_period_with_counts(sample_catalogue, now):
    analysis, sources, done = await _ask("how have language models evolved?", now)

    assert analysis["intent"] == "timeline"
    assert len(sources) > 8  # a timeline asks for more papers
    periods = re.findall(r"^\*\*(\d{4})(?:–\d{4})?\*\* \((\d+) papers?\):$", done["content"], re.M)
    assert [p for p, _ in periods] == sorted({s["published"][:4] for s in sources})
    assert sum(int(n) for _, n in periods) == len(sources)
    assert_composed_from_sources(done["content"], sources)


async def test_a_comparison_labels_each_side(sample_catalogue, now):
    analysis, sources, done = await _ask("compare language models and diffusion models", now)

    assert analysis["intent"] == "compare"
    content = done["content"]
    assert T.COMPARE_SIDE.format(side="language models") in content
    assert T.COMPARE_SIDE.format(side="diffusion models") in content
    assert_composed_from_sources(content, sources)


async def test_latest_work_says_how_old_the_newest_paper_is(sample_catalogue, now):
    analysis, sources, done = await _ask("latest work on language models", now)

    newest = max(date.fromisoformat(s["published"]) for s in sources)
    assert (now.date() - newest) > timedelta(days=31)  # the slice ends long before "now"
    assert analysis["intent"] == "list"
    assert (
        done["content"]
        .splitlines()[0]
        .startswith(f"The newest paper on this in the catalogue is from {newest:%B %Y} (")
    )
    assert_composed_from_sources(done["content"], sources)


async def test_latest_work_in_a_fresh_catalogue_says_nothing_of_age(sample_catalogue):
    newest = await Paper.objects.order_by("-published").afirst()
    _, sources, done = await _ask("latest work on language models", newest.published)

    assert "newest paper on this" not in done["content"]


@pytest.mark.parametrize(
    "question",
    [
        "How do language models handle reasoning?",
        "what was new in image segmentation in 2024?",
        "papers on graph neural networks",
        "Why do diffusion models work so well?",
    ],
)
async def test_every_answer_sentence_is_a_template_or_a_quote(sample_catalogue, now, question):
    _, sources, done = await _ask(question, now)

    assert_composed_from_sources(done["content"], sources)


# --- choosing sentences by meaning and by role ----------------------------------------------------

DIFFUSION_LM = SourceText(
    1,
    "Masked diffusion language models",
    "A. Author",
    "2025-02-01",
    "Masked diffusion language models. Autoregressive models dominate language modelling. "
    "We propose a masked diffusion model that generates text by iteratively denoising all "
    "tokens in parallel. It matches autoregressive perplexity on OpenWebText.",
)
ANIMATION = SourceText(
    2,
    "Skinning handles for character animation",
    "B. Author",
    "2024-05-01",
    "Skinning handles for character animation. Artists place handles on a mesh to deform it. "
    "Our method handles text prompts and generation of handle positions for rigging.",
)
BACKGROUND_FIRST = SourceText(
    3,
    "Reward shaping for sparse tasks",
    "C. Author",
    "2023-06-01",
    "Reward shaping for sparse tasks. Exploration in reinforcement learning with sparse rewards "
    "remains a long-standing challenge. In this paper, we propose a reward shaping method that "
    "learns a potential function from demonstrations. It solves 9 of 10 sparse tasks.",
)


def test_overview_chooses_by_meaning_not_by_shared_words(settings):
    settings.EMBEDDING_BACKEND = "minilm"
    request = AnswerRequest(
        question="How do diffusion models handle text generation?",
        sources=[DIFFUSION_LM, ANIMATION],
        messages=[],
        intent=Intent("overview"),
    )
    answer = compose_shaped(request)

    assert "generates text by iteratively denoising" in answer
    assert "[2]" not in answer  # "handles text prompts" shares words, not meaning


def test_overview_prefers_contributions_to_background(settings):
    settings.EMBEDDING_BACKEND = "minilm"
    request = AnswerRequest(
        question="what was new in reinforcement learning with sparse rewards",
        sources=[BACKGROUND_FIRST],
        messages=[],
        intent=Intent("overview"),
    )
    answer = compose_shaped(request)

    assert "we propose a reward shaping method" in answer
    assert "long-standing challenge" not in answer


def test_list_line_quotes_the_contribution(settings):
    settings.EMBEDDING_BACKEND = "hashing"
    request = AnswerRequest(
        question="models for sparse tasks and text",
        sources=[BACKGROUND_FIRST, DIFFUSION_LM],
        messages=[],
        intent=Intent("list"),
        analysis={"query": "models for sparse tasks and text"},
    )
    lines = compose_shaped(request).splitlines()

    assert lines[0] == T.LIST_LEAD.format(count=2)
    assert lines[2].startswith("1. **Reward shaping for sparse tasks** (2023-06-01): In this paper")
    assert lines[3].startswith("2. **Masked diffusion language models** (2025-02-01): We propose")


def test_a_list_leaves_out_the_papers_that_say_nothing_of_its_topic(settings):
    settings.EMBEDDING_BACKEND = "hashing"
    request = AnswerRequest(
        question="reinforcement learning",
        sources=[BACKGROUND_FIRST, DIFFUSION_LM],
        messages=[],
        intent=Intent("list"),
        analysis={"query": "reinforcement learning"},
    )
    lines = compose_shaped(request).splitlines()
    # The diffusion paper is the search's tail: no word of "reinforcement learning" in it.
    assert lines[0] == T.LIST_LEAD_ONE
    assert "Masked diffusion" not in "\n".join(lines)


def test_prompts_ask_a_model_for_the_same_shapes():
    today = date(2026, 11, 23)
    listing = prompts.answer_messages("papers by X", [DIFFUSION_LM], today, intent=Intent("list"))
    assert "numbered list, one line per source paper" in listing[0]["content"]
    compare = prompts.answer_messages(
        "DPO vs RLHF", [DIFFUSION_LM], today, intent=Intent("compare", subjects=("DPO", "RLHF"))
    )
    assert "DPO versus RLHF" in compare[0]["content"]
    seed = SourceText(0, "Seed title", "S. Eed", "2023-01-01", "Seed title. We do X.", "2301.1")
    like = prompts.answer_messages(
        "papers like 2301.1", [DIFFUSION_LM], today, intent=Intent("seed", latest=True), seed=seed
    )
    assert "Seed paper (arXiv 2301.1" in like[1]["content"]
    assert "The user wants the latest work" in like[0]["content"]
    plain = prompts.answer_messages("q", [DIFFUSION_LM], today)
    assert "How to shape this answer" not in plain[0]["content"]
    who = prompts.answer_messages(
        "who wrote it?", [DIFFUSION_LM], today, intent=Intent("named_paper", asks="authors")
    )
    assert "open with its authors as the source lists them" in who[0]["content"]


def test_the_answer_opens_with_the_answering_sentence_of_any_paper_found(settings):
    # The first paper found only sets the scene; the second paper's chunk card states the
    # number asked for: its sentence opens the answer, its paper's heading first.
    settings.EMBEDDING_BACKEND = "minilm"
    setup = SourceText(
        1,
        "Consistency students",
        "A. Author",
        "2025-01-01",
        "The student is trained with the consistency objective. The GPUs of the cluster and the "
        "training schedule of the student are described in the appendix.",
        arxiv_id="2501.00001",
        where="p. 2, 3 Setup",
    )
    hardware = SourceText(
        2,
        "Distilling students at scale",
        "B. Author",
        "2024-06-01",
        "Hardware. We trained the student on 8 A100 GPUs for three days.",
        arxiv_id="2406.00002",
        where="p. 5, 4 Experiments",
    )
    request = AnswerRequest(
        question="How many GPUs were used to train the student?",
        sources=[setup, hardware],
        messages=[],
        intent=Intent("overview"),
    )
    lines = compose_shaped(request).splitlines()

    assert lines[0] == T.LEAD_IN
    first = next(line for line in lines if line.startswith("- "))
    assert first.startswith("- We trained the student on 8 A100 GPUs for three days")


def test_a_card_that_never_says_the_topic_does_not_open_the_answer(settings):
    # "QAOA" is the topic (the first paper's title says it); Adam's chunk matches the rest of the
    # question best ("parameters", "initialisation") but is about something else.
    settings.EMBEDDING_BACKEND = "minilm"
    qaoa = SourceText(
        1,
        "Parameter landscapes of QAOA for k-SAT",
        "A. Author",
        "2026-05-19",
        "Optimal QAOA parameters concentrate across instances, so angles found on small instances "
        "transfer to larger ones.",
        arxiv_id="2605.00001",
        where="p. 2, 1 Introduction",
    )
    adam = SourceText(
        2,
        "Adam: a method for stochastic optimization",
        "D. Kingma",
        "2014-12-01",
        "A lack of initialisation bias correction would lead to initial steps that are much "
        "larger, since the parameters are initialised at zero.",
        arxiv_id="1412.00002",
        where="p. 3, 3 Initialization bias correction",
    )
    request = AnswerRequest(
        question="How are QAOA parameters initialised?",
        sources=[qaoa, adam],
        messages=[],
        intent=Intent("overview"),
    )
    lines = compose_shaped(request).splitlines()
    first = next(line for line in lines if line.startswith("- "))
    assert "QAOA" in first
    assert lines.index(next(line for line in lines if "Parameter landscapes" in line)) < min(
        [i for i, line in enumerate(lines) if "Adam" in line] or [len(lines)]
    )


def test_a_sentence_names_the_papers_own_datasets_not_earlier_works():
    from chat.llm.shapes import _dataset_names

    own = "We train on large datasets (NQ, TriviaQA, SQuAD) and small ones (TREC, WQ)."
    assert _dataset_names(own) == {"NQ", "TriviaQA", "SQuAD", "TREC", "WQ"}
    others = "It was mostly considered in previous work for datasets such as NarrativeQA or CoQA."
    assert _dataset_names(others) == set()
    assert _dataset_names("We focus on datasets where the writers did not know the answer.") == set()
    # A quoted example names no corpus: REALM's "Thatcher" sentence opened "What corpus does
    # REALM retrieve from?" for its "United Kingdom" beside "corpora".
    example = (
        "(For instance, the model predicts “Thatcher” for “ is the prime minister of United "
        "Kingdom.” on both corpora, perhaps due to the frequent mention of her name in Wikipedia "
        "articles.)"
    )
    assert _dataset_names(example) == set()
    assert _dataset_names("The retriever reads a large corpus such as Wikipedia.") == {"Wikipedia"}


def _asked(question: str, sources: list, intent: Intent) -> AnswerRequest:
    """A request as the pipeline makes it for `question`, its analysis only the topic."""
    return AnswerRequest(
        question=question, sources=sources, messages=[], intent=intent,
        analysis={"query": question},
    )  # fmt: skip


def test_a_side_named_only_beside_the_other_is_not_called_missing(settings):
    # "What are the advantages of LoRA compared with full fine-tuning?" answered "On LoRA: none
    # of the retrieved papers mentions it", then quoted a sentence naming LoRA beside full
    # fine-tuning.
    settings.EMBEDDING_BACKEND = "hashing"
    both = SourceText(
        1, "Prompting at scale", "A. Author", "2022-02-01",
        "Hu et al. show that full fine-tuning, LoRA, or prompt tuning can still outperform "
        "few-shot prompting. We study prompts for classification.", "2202.1",
    )  # fmt: skip
    one = SourceText(
        2,
        "Fine-tuning vision transformers",
        "B. Author",
        "2021-01-01",
        "Full fine-tuning of every layer costs the most memory. We report linear probes.",
        "2101.1",
    )
    request = _asked(
        "What are the advantages of LoRA compared with full fine-tuning?", [both, one],
        Intent("compare", subjects=("LoRA", "full fine-tuning")),
    )  # fmt: skip
    answer = compose_shaped(request)

    assert T.COMPARE_SIDE_ONLY_BESIDE.format(side="LoRA", other="full fine-tuning") in answer
    assert "none of the retrieved papers mentions it" not in answer
    assert "LoRA, or prompt tuning" in answer  # the sentence naming both, quoted below

    request.intent = Intent("compare", subjects=("QLoRA", "full fine-tuning"))
    assert T.COMPARE_SIDE_MISSING.format(side="QLoRA") in compose_shaped(request)


def test_a_side_beside_its_own_variants_is_not_set_beside_the_other_side(settings, text_of):
    # "compare RAG and REALM" quoted, where the papers set them side by side, "Table 2 shows that
    # RAG-Token performs better than RAG-Sequence …": RAG beside RAG (and BART), never REALM.
    settings.EMBEDDING_BACKEND = "hashing"
    rag, realm = text_of("2005.11401v4"), text_of("2002.08909v1")
    at = rag.index("4.3 Jeopardy Question Generation")
    jeopardy = rag[at : rag.index("4.4", at)]
    at = realm.index("REALM achieves new state-of-the-art")
    results = realm[at : realm.index("modularity.", at) + len("modularity.")]
    # (REALM's paper predates RAG: a sentence as it would set RAG beside its own method.)
    beside = "Unlike RAG, our retriever is pre-trained without any labelled question."
    sources = [
        SourceText(1, "Retrieval-Augmented Generation for Knowledge-Intensive NLP Tasks",
                   "P. Lewis", "2020-05-22", jeopardy, "2005.11401", where="p. 6",
                   section="4.3 Jeopardy Question Generation"),
        SourceText(2, "REALM: Retrieval-Augmented Language Model Pre-Training", "K. Guu",
                   "2020-02-10", f"{results}\n\n{beside}", "2002.08909", where="p. 2",
                   section="1. Introduction"),
    ]  # fmt: skip
    question = "compare RAG and REALM"
    named = {
        "papers": [
            {"arxiv_id": "2005.11401", "name": "RAG", "asked": "RAG"},
            {"arxiv_id": "2002.08909", "name": "REALM", "asked": "REALM"},
        ],
        "unknown": [],
        "about": True,
    }
    request = AnswerRequest(
        question=question, sources=sources, messages=[],
        intent=Intent("compare", subjects=("RAG", "REALM")),
        analysis={"query": question, "named": named},
    )  # fmt: skip
    answer = compose_shaped(request)
    side_by_side = answer.split(T.COMPARE_DIFFERENCE)[-1] if T.COMPARE_DIFFERENCE in answer else ""

    assert "RAG-Token performs better than RAG-Sequence" not in side_by_side
    # In the other side's own paper, a sentence naming one side does set the two side by side.
    assert "Unlike RAG, our retriever" in side_by_side
    assert "**On REALM:**" in answer


def test_a_sides_own_word_names_it_only_in_papers_that_name_the_side(settings):
    # "What is the difference between RAG-Sequence and RAG-Token?" quoted, on RAG-Token, OPT's
    # "Our final corpus contains roughly 180B tokens": without the shared "RAG", "token" is
    # RAG-Token's word only in a paper that names RAG-Token.
    settings.EMBEDDING_BACKEND = "hashing"
    rag = SourceText(
        1, "Retrieval-Augmented Generation for Knowledge-Intensive NLP Tasks", "P. Lewis",
        "2020-05-22", "The RAG-Sequence model uses the same retrieved document to generate the "
        "complete sequence. Unlike RAG-Sequence, RAG-Token can draw a different latent document "
        "for each target token.", "2005.11401",
    )  # fmt: skip
    opt = SourceText(
        2, "OPT: Open Pre-trained Transformer Language Models", "S. Zhang", "2022-05-02",
        "Our final corpus contains roughly 180B tokens.", "2205.01068",
    )  # fmt: skip
    request = _asked(
        "What is the difference between RAG-Sequence and RAG-Token?", [rag, opt],
        Intent("compare", subjects=("RAG-Sequence", "RAG-Token")),
    )

    answer = compose_shaped(request)

    assert "180B tokens" not in answer
    said_beside = T.COMPARE_SIDE_ONLY_BESIDE.format(side="RAG-Token", other="RAG-Sequence")
    assert said_beside in answer
    assert "Unlike RAG-Sequence, RAG-Token can draw" in answer.split(T.COMPARE_DIFFERENCE)[-1]
    assert T.COMPARE_SIDE.format(side="RAG-Token") not in answer.splitlines()  # over nothing


def test_a_side_is_named_by_its_words_as_a_name_not_by_them_anywhere(settings):
    # "LoRA compared with prompt tuning" quoted, on prompt tuning, "… reducing the impact of
    # prompt-set-specific tuning" (bench_answers compare-5): "prompt" there qualifies "set".
    from chat.llm.shapes import _mentions, _Scorer

    settings.EMBEDDING_BACKEND = "hashing"
    source = SourceText(
        1, "Evaluating with prompt streams", "A. Author", "2026-05-10",
        "Fresh prompts provide a robust protocol, reducing the impact of prompt-set-specific "
        "tuning. We adapt the model by supervised prompt tuning. Tuning the prompts helps. "
        "Transformers have attracted interest in computer vision. We use convolutional neural "
        "networks.", "2605.1",
    )  # fmt: skip
    said = {s.text.split()[0] + s.text.split()[-1]: s for s in _Scorer([source], "").sentences}

    def names(side: str, sentence: str) -> bool:
        return _mentions(said[sentence], [tuple(terms(side))])

    assert not names("prompt tuning", "Freshtuning.")
    assert names("prompt tuning", "Wetuning.")  # together, in order
    assert names("prompt tuning", "Tuninghelps.")  # the head first, qualified after it
    assert names("vision transformers", "Transformersvision.")
    assert names("convolutional networks", "Wenetworks.")  # one word between
    assert names("LoRA", "Wetuning.") is False


def test_an_overview_quotes_the_papers_on_the_whole_question_when_there_are_some(settings):
    # "Is it true that contrastive learning needs large batches?" quoted a paper on large-batch
    # training of any network (bench_answers change-6) beside those on contrastive learning.
    settings.EMBEDDING_BACKEND = "hashing"
    contrastive = lambda number, title, text: SourceText(  # noqa: E731
        number, title, "A. Author", "2024-01-01", text, f"2401.{number}"
    )
    sources = [
        contrastive(1, "Contrastive pretraining for remote sensing",
                    "Our contrastive method can be trained with larger batches than before."),
        contrastive(2, "Train longer, generalize better",
                    "We present Ghost Batch Normalization, closing the gap of large batch "
                    "training."),
        contrastive(3, "Whitening for self-supervised learning",
                    "Contrastive losses compare many negatives in a batch; we propose a "
                    "whitening loss that needs none."),
    ]  # fmt: skip
    question = "Is it true that contrastive learning needs large batches?"
    request = AnswerRequest(
        question=question, sources=sources, messages=[], intent=Intent("overview"),
        analysis={"query": question},
    )  # fmt: skip
    answer = compose_shaped(request)
    assert "Ghost Batch" not in answer and "[2]" not in answer
    assert "[1]" in answer or "[3]" in answer

    from chat.llm.shapes import _whole_topic

    assert _whole_topic(request, question) == {1, 3}
    # Only one paper on the whole question: any may be quoted.
    request.sources = sources[:2]
    assert _whole_topic(request, question) is None


def test_a_sentence_the_paper_repeats_in_another_chunk_is_quoted_once(settings):
    # "How much does retrieval help RAG … compared with a closed-book model?" quoted "The best
    # performing closed-book … model is T5-11B …" twice: from its chunks on pp. 18 and 19.
    settings.EMBEDDING_BACKEND = "hashing"
    repeated = (
        "The best performing closed-book open-domain QA model is T5-11B with 11 Billion "
        "trainable parameters."
    )
    chunk = lambda number, page, more: SourceText(  # noqa: E731
        number, "Retrieval-Augmented Generation", "P. Lewis", "2020-05-01",
        f"{more} {repeated}", "2005.11401", where=f"p. {page}",
    )  # fmt: skip
    question = "Which closed-book QA model performs best, and with how many parameters?"
    request = AnswerRequest(
        question=question,
        sources=[
            chunk(1, 18, "Appendix."),
            chunk(2, 19, "Closed-book QA models perform best with more parameters."),
        ],
        messages=[], intent=Intent("overview"), analysis={"query": question},
    )  # fmt: skip
    answer = compose_shaped(request)

    assert answer.count("T5-11B") == 1, answer


def _records(shared_data, ids: set[str]) -> dict[str, dict]:
    """The sample's records of `ids` (title and abstract as the catalogue holds them)."""
    found = {}
    with gzip.open(shared_data / "arxiv-snapshot" / "arxiv-sample.jsonl.gz", "rt") as lines:
        for line in lines:
            record = json.loads(line)
            if record["id"] in ids:
                found[record["id"]] = record
    return found


def test_a_paper_sharing_a_topics_words_but_not_its_head_is_off_topic(shared_data, settings):
    from chat.llm.shapes import on_topic, topic_heads

    awgn, splatting = "2604.14915", "2603.04770"  # an AWGN channel; Gaussian splatting for DSA
    gft, post_training, ptq = "2604.14258", "2604.07941", "2604.07674"
    papers = _records(shared_data, {awgn, splatting, gft, post_training, ptq})

    def on(arxiv_id, topic):
        return on_topic(papers[arxiv_id]["title"], papers[arxiv_id]["abstract"], topic)

    assert topic_heads("Gaussian splatting") == set(terms("splatting"))
    assert topic_heads("latest work on post-training quantization of LLMs") == set(
        terms("quantization")
    )
    assert topic_heads("diffusion models") == set(terms("diffusion"))  # a word of any field: out
    assert topic_heads("transformers or CNNs for segmentation") == set()  # two topics
    # "additive white Gaussian noise" shares "Gaussian", half of the topic's words: not its head.
    assert on(splatting, "Gaussian splatting") and not on(awgn, "Gaussian splatting")
    # SFT as policy gradient and a view of LLM post-training say "post-training" and "LLMs", no
    # quantization; they had opened "latest work on post-training quantization of LLMs".
    topic = "post-training quantization of LLMs"
    assert on(ptq, topic) and not on(gft, topic) and not on(post_training, topic)
    # A passage of a long abstract need not hold the head: judged by its words only.
    assert on_topic(papers[gft]["title"], papers[gft]["abstract"], topic, whole=False)
    # A head done in every field comes with the word before it: either will do.
    assert topic_heads("retrieval-augmented generation") == set(terms("augmented generation"))
    # A clitic is no word of the topic: the "s" of "What's" was its head, and every paper of a
    # timeline "since 2021" was off the topic, so none was left out (OPT, CiteSee, QAOA …).
    assert topic_heads("What's new on retrieval-augmented generation?") == set(
        terms("augmented generation")
    )
    fid = next(
        json.loads(line)
        for line in (shared_data / "arxiv-pdf" / "metadata.jsonl").read_text().splitlines()
        if json.loads(line)["id"] == "2007.01282"
    )  # "Passage Retrieval with Generative Models": no "augmented", still on the topic
    assert on_topic(fid["title"], fid["abstract"], "retrieval-augmented generation")


def _record_request(question: str, sources: list, named: list | None = None) -> AnswerRequest:
    from chat.understanding.analysis import analyse
    from chat.understanding.intent import classify

    now = datetime(2026, 11, 29, tzinfo=UTC)
    intent = classify(question, analyse(question, now), now.date())
    papers = [{"arxiv_id": a, "name": n, "asked": n} for a, n in (named or [])]
    analysis = {"query": question, "named": {"papers": papers, "unknown": [], "about": False}}
    return AnswerRequest(
        question=question, sources=sources, messages=[], intent=intent, analysis=analysis
    )


ATTENTION = SourceText(
    1, "Attention Is All You Need", "Ashish Vaswani, Noam Shazeer, Niki Parmar, Jakob "
    "Uszkoreit, Llion Jones, Aidan N. Gomez, Łukasz Kaiser, Illia Polosukhin", "2017-06-01",
    "The dominant sequence transduction models are based on complex recurrent networks. We "
    "propose a new simple network architecture, the Transformer, based solely on attention "
    "mechanisms.", "1706.03762",
)  # fmt: skip
RWKV = SourceText(
    2, "RWKV: Reinventing RNNs for the Transformer Era", "Bo Peng, Eric Alcaide", "2023-05-22",
    "We propose a novel model architecture that combines Transformers with RNNs.", "2305.13048",
)  # fmt: skip


def test_who_wrote_a_paper_named_by_what_it_introduced_is_its_record(settings):
    settings.EMBEDDING_BACKEND = "hashing"
    request = _record_request(
        "Who wrote the Transformer paper?", [RWKV, ATTENTION], [("1706.03762", "Transformer")]
    )
    lines = compose_shaped(request).splitlines()

    assert lines[0] == (
        "**Attention Is All You Need** (arXiv 1706.03762) is by Ashish Vaswani, Noam Shazeer, "
        "Niki Parmar, Jakob Uszkoreit, Llion Jones, Aidan N. Gomez, Łukasz Kaiser and Illia "
        "Polosukhin [1]."
    )
    assert "We propose a new simple network architecture, the Transformer" in lines[-1]


def test_when_a_paper_appeared_says_only_what_the_catalogue_knows(settings):
    settings.EMBEDDING_BACKEND = "hashing"
    # The first of the month its id was given: a date the catalogue had from the id alone.
    asked = compose_shaped(_record_request("When was Attention Is All You Need published?",
                                           [ATTENTION, RWKV]))  # fmt: skip
    assert asked.splitlines()[0].endswith("was first posted to arXiv in June 2017 [1].")
    asked = compose_shaped(_record_request("when did RWKV come out?", [RWKV], [("2305.13048", "RWKV")]))
    assert asked.splitlines()[0].endswith("was first posted to arXiv on 2023-05-22 [2].")


def test_a_record_question_about_a_paper_of_the_previous_answer_is_its_record(settings):
    settings.EMBEDDING_BACKEND = "hashing"
    # "Who are the authors of the first one?", "When was it published?" after a list: the
    # reference kept that paper alone (a list's chunk cards of it), and its record answers,
    # cited to its abstract's card, not to a page of its body.
    chunk = SourceText(
        5, RWKV.title, RWKV.authors, RWKV.published, "RWKV scales to 14 billion parameters.",
        RWKV.arxiv_id, where="p. 9",
    )  # fmt: skip
    for question, lead in [
        ("Who are the authors of the first one?", "is by Bo Peng and Eric Alcaide [2]."),
        ("When was it published?", "was first posted to arXiv on 2023-05-22 [2]."),
    ]:
        request = _record_request(question, [chunk, RWKV])
        request.analysis["previous"] = {"referred": 1, "kept": 1, "question": question}

        assert compose_shaped(request).splitlines()[0].endswith(lead), question


def test_which_paper_introduced_a_name_quotes_where_it_does(settings):
    settings.EMBEDDING_BACKEND = "hashing"
    request = _record_request(
        "Which paper introduced the Transformer?", [RWKV, ATTENTION], [("1706.03762", "Transformer")]
    )
    lines = compose_shaped(request).splitlines()

    assert lines[0].startswith("Transformer was introduced by **Attention Is All You Need** "
                               "(2017-06-01, arXiv 1706.03762), by Ashish Vaswani")  # fmt: skip
    assert lines[-1] == (
        "- We propose a new simple network architecture, the Transformer, based solely on "
        "attention mechanisms [1]."
    )
    # A name in lower case the catalogue's names do not hold: the paper titled by it.
    batch_norm = SourceText(
        3, "Batch Normalization: Accelerating Deep Network Training", "Sergey Ioffe, Christian "
        "Szegedy", "2015-02-01", "We propose a new mechanism, which we call Batch Normalization.",
        "1502.03167",
    )  # fmt: skip
    asked = compose_shaped(_record_request("who proposed batch normalization?", [RWKV, batch_norm]))
    assert asked.startswith("Batch normalization was introduced by **Batch Normalization: ")
    # No paper of the catalogue answers to the name: not a record of another paper.
    unknown = _record_request("Which paper introduced BERT?", [RWKV, ATTENTION])
    assert "was introduced by" not in compose_shaped(unknown)


def test_what_is_a_name_opens_with_the_sentence_that_says_what_it_is(settings):
    # "What is QAOA?" opened with "The performance of the QAOA at low depths is limited …"
    # (seen in Chromium), where another paper says what the QAOA is.
    settings.EMBEDDING_BACKEND = "hashing"
    multiscale = SourceText(
        1, "Multiscale Quantum Approximate Optimization Algorithm", "P. Zhou", "2023-12-11",
        "The performance of the QAOA at low depths is limited, while the QAOA at higher depths "
        "is constrained. We propose a new version of QAOA with the renormalization group.",
        "2312.06181",
    )  # fmt: skip
    noise = SourceText(
        2, "The Effect of Classical Optimizers and Ansatz Depth on QAOA Performance", "A. Pellow",
        "2023-07-01", "The Quantum Approximate Optimization Algorithm (QAOA) is a variational "
        "quantum algorithm providing approximate solutions for combinatorial optimization "
        "problems. We study the effect of noise on it.", "2307.10149",
    )  # fmt: skip
    request = _asked("What is QAOA?", [multiscale, noise], Intent("overview"))

    quoted = [line for line in compose_shaped(request).splitlines() if line.startswith("- ")]

    assert quoted[0].startswith("- The Quantum Approximate Optimization Algorithm (QAOA) is a")


def test_what_an_acronym_stands_for_is_said_by_where_it_is_spelled_out(settings):
    settings.EMBEDDING_BACKEND = "hashing"
    ulsa = SourceText(
        1, "ULSA: Unified Language of Synthesis Actions for Representation of Synthesis "
        "Protocols", "Z. Wang", "2022-01-23", "We then mapped these paragraphs into ULSA by using "
        "the bi-LSTM model.", "2201.09329", where="p. 13",
    )  # fmt: skip
    noise = SourceText(
        2, "The Effect of Classical Optimizers on QAOA", "A. Pellow", "2023-07-01",
        "The Quantum Approximate Optimization Algorithm (QAOA) is a variational quantum "
        "algorithm. We study noise.", "2307.10149",
    )  # fmt: skip

    def first_quote(question: str) -> str:
        answer = compose_shaped(_asked(question, [ulsa, noise], Intent("overview")))
        assert "“stand”" not in answer  # a word of the asking, not of the topic
        return next(line for line in answer.splitlines() if line.startswith("- "))

    assert first_quote("What does ULSA stand for?").startswith(
        "- ULSA: Unified Language of Synthesis Actions for Representation of Synthesis Protocols ["
    )
    assert first_quote("what does QAOA stand for?").startswith(
        "- The Quantum Approximate Optimization Algorithm (QAOA) is a variational"
    )


def test_an_acronym_spelled_out_only_in_a_title_is_still_an_answer(settings):
    # Its one paper's card a chunk that never spells it out: the title does.
    settings.EMBEDDING_BACKEND = "hashing"
    ulsa = SourceText(
        1, "ULSA: Unified Language of Synthesis Actions", "Z. Wang", "2022-01-23",
        "We then mapped these paragraphs into ULSA by using the bi-LSTM model.", "2201.09329",
        where="p. 13",
    )  # fmt: skip
    request = _asked("What does ULSA stand for?", [ulsa], Intent("overview"))

    assert "- ULSA: Unified Language of Synthesis Actions [1]." in compose_shaped(request)


def test_a_body_says_a_topic_with_its_words_together_and_in_order():
    from chat.llm.shapes import on_topic

    topic = "vision transformer papers"
    assert on_topic("ViT", "We apply a Vision Transformer to image patches.", topic, every=True)
    # RWKV's chunk was listed among "ViT papers": the words apart are not the topic.
    assert not on_topic(
        "RWKV", "Self-attention may not be essential in Transformer-based vision tasks.", topic,
        every=True,
    )  # fmt: skip
    assert on_topic(
        "MuZero", "Model-based reinforcement learning first learns a model of the dynamics.",
        "Which papers use reinforcement learning?", every=True,
    )  # fmt: skip


def test_asking_verbs_and_a_comparisons_glue_are_no_unmentioned_words(settings):
    # "What BLEU score does it reach on English-German?" ended "None of these papers mentions
    # “reach”", and "which one performs better on open-domain QA?" (searched with the sides it
    # borrowed: "— RAG-Sequence vs RAG-Token") "… mentions “vs”".
    settings.EMBEDDING_BACKEND = "hashing"
    transformer = SourceText(
        1, "Attention Is All You Need", "A. Vaswani", "2017-06-01",
        "On the WMT 2014 English-to-German translation task, the big transformer model "
        "establishes a new state-of-the-art BLEU score of 28.4.",
        arxiv_id="1706.03762", where="p. 8",
    )  # fmt: skip
    rag = SourceText(
        2, "Retrieval-Augmented Generation", "P. Lewis", "2020-05-01",
        "RAG-Token performs better than RAG-Sequence on open-domain QA benchmarks.",
        arxiv_id="2005.11401", where="p. 6",
    )  # fmt: skip
    # "What future work does OPT propose?" ended "… mentions “propose”" (session 18).
    opt = SourceText(
        3, "OPT: Open Pre-trained Transformer Language Models", "S. Zhang", "2022-05-02",
        "We believe OPT-175B will also benefit from retrieval-augmentation in future work.",
        arxiv_id="2205.01068", where="p. 8",
    )  # fmt: skip
    for question, source in (
        ("What BLEU score does it reach on English-German?", transformer),
        ("Which one performs better on open-domain QA — RAG-Sequence vs RAG-Token", rag),
        ("What future work does OPT propose?", opt),
    ):
        answer = compose_shaped(_asked(question, [source], Intent("overview")))
        assert source.text.rstrip(".") in answer, answer
        assert "None of these papers mentions" not in answer, answer


def test_an_acronyms_long_form_is_the_words_that_spell_it(settings):
    # "How does RAG differ from REALM?" set them side by side with REALM's "We start by
    # formalizing REALM's pre-training … as a retrieve-then-predict generative process": RAG's
    # long form was read as "fine-tuning recipe for retrieval-augmented generation", whose
    # "fine-tuning" and "generative" that sentence says.
    settings.EMBEDDING_BACKEND = "hashing"
    formalizing = (
        "We start by formalizing REALM's pre-training and fine-tuning tasks as a "
        "retrieve-then-predict generative process in Section 3.1."
    )
    sources = [
        SourceText(1, "Retrieval-Augmented Generation for Knowledge-Intensive NLP Tasks",
                   "P. Lewis", "2020-05-22",
                   "We explore a general-purpose fine-tuning recipe for retrieval-augmented "
                   "generation (RAG) models. RAG models combine parametric and non-parametric "
                   "memory.", "2005.11401", where="p. 1"),
        SourceText(2, "REALM: Retrieval-Augmented Language Model Pre-Training", "K. Guu",
                   "2020-02-10",
                   "We propose Retrieval-Augmented Language Model (REALM) pre-training. "
                   f"{formalizing} REALM outperforms previous systems by 4-16% accuracy.",
                   "2002.08909", where="p. 3"),
    ]  # fmt: skip
    question = "How does RAG differ from REALM?"
    answer = compose_shaped(_asked(question, sources, Intent("compare", subjects=("RAG", "REALM"))))

    assert "**On RAG:**" in answer and "**On REALM:**" in answer
    side_by_side = answer.split(T.COMPARE_DIFFERENCE)[-1] if T.COMPARE_DIFFERENCE in answer else ""
    assert "We start by formalizing" not in side_by_side, answer


def test_a_contraction_is_no_topics_head():
    # "What's new since 2022 on large language models?" set QAOA papers among its periods: the
    # "s" of "What's" was taken for the topic's head, which no paper says, so every paper was
    # off the topic and the timeline kept the search's tail.
    from chat.llm.shapes import on_topic, topic_heads

    topic = "What's new on large language models?"
    assert topic_heads(topic) == topic_heads("large language models") == set(terms("language"))
    assert on_topic(
        "OPT: Open Pre-trained Transformer Language Models",
        "Large language models trained on massive text collections show few-shot abilities.",
        topic,
    )  # fmt: skip
    assert not on_topic(
        "Benchmarking Quantum Optimization for the Maximum-Cut Problem",
        "We solve large instances of the maximum-cut problem on a superconducting computer.",
        topic,
    )  # fmt: skip


def test_the_key_equation_is_the_papers_formula(settings):
    # "give me the key equation of the Transformer" quoted "In the following sections, we will
    # describe the Transformer …" and ended "None of these papers mentions “equation”".
    settings.EMBEDDING_BACKEND = "hashing"
    transformer = SourceText(
        1, "Attention Is All You Need", "A. Vaswani", "2017-06-01",
        "In the following sections, we will describe the Transformer and motivate "
        "self-attention. We call our particular attention Scaled Dot-Product Attention. "
        "Attention(Q, K, V ) = softmax(QKT √ dk )V (1) The two most commonly used attention "
        "functions are additive attention and dot-product attention.",
        arxiv_id="1706.03762", where="p. 4, 3.2.1 Scaled Dot-Product Attention",
    )  # fmt: skip
    question = "give me the key equation of the Transformer"
    answer = compose_shaped(_asked(question, [transformer], Intent("overview")))

    first = next(line for line in answer.splitlines() if line.startswith("- "))
    assert "softmax(QKT √ dk )V" in first, answer
    assert "“equation”" not in answer, answer
def test_a_list_of_papers_chosen_by_what_they_do_quotes_where_each_says_it(settings):
    """ "Which papers use Adam?": each line is the paper's sentence on Adam, not its
    contribution ("We propose to apply a standard Transformer directly to images") nor a short
    aside that happens to name Adam."""
    settings.EMBEDDING_BACKEND = "hashing"
    adam = SourceText(
        1, "Adam: A Method for Stochastic Optimization", "D. Kingma", "2014-12-01",
        "Adam: A Method for Stochastic Optimization. We introduce Adam, an algorithm for "
        "first-order gradient-based optimization of stochastic objective functions, based on "
        "adaptive estimates of lower-order moments. Some connections to related algorithms, on "
        "which Adam was inspired, are discussed.",
        arxiv_id="1412.6980",
    )
    vit_appendix = SourceText(
        2, "An Image is Worth 16x16 Words", "A. Dosovitskiy", "2020-10-01",
        "We propose to apply a standard Transformer directly to images, with the fewest "
        "possible modifications. ResNets are typically trained with SGD and our use of Adam as "
        "optimizer is quite unconventional.",
        arxiv_id="2010.11929", where="p. 15, D.1 SGD vs. Adam for ResNets",
    )
    request = AnswerRequest(
        question="Which papers use Adam?",
        sources=[adam, vit_appendix],
        messages=[],
        intent=Intent("list"),
        analysis={"query": "Which papers use Adam?"},
    )
    lines = compose_shaped(request).splitlines()

    assert lines[2].endswith("We introduce Adam, an algorithm for first-order gradient-based "
                             "optimization of stochastic objective functions, based on adaptive "
                             "estimates of lower-order moments [1].")
    assert lines[3].endswith("our use of Adam as optimizer is quite unconventional [2].")
    assert len(lines) == 4


def test_a_list_on_a_topic_still_quotes_each_papers_contribution(settings):
    """Only a list chosen by what papers do quotes the words: "papers on sparse tasks" keeps the
    contribution, not the sentence with most of the topic's words."""
    settings.EMBEDDING_BACKEND = "hashing"
    request = AnswerRequest(
        question="papers on sparse rewards",
        sources=[BACKGROUND_FIRST],
        messages=[],
        intent=Intent("list"),
        analysis={"query": "papers on sparse rewards"},
    )
    lines = compose_shaped(request).splitlines()

    assert "we propose a reward shaping method" in lines[2]


def test_a_named_paper_asked_as_the_name_is_the_one_the_name_found():
    # "explain the Transformer to a biologist": the title "the Transformer", the name
    # "Transformer" (not asked about for itself); quoted ViT and OPT instead of its abstract.
    from chat.llm.shapes import asked_papers
    from chat.understanding.intent import NAMED_PAPER, Intent

    named = {"about": False, "papers": [{"name": "Transformer", "asked": "Transformer",
                                         "arxiv_id": "1706.03762"}]}
    assert asked_papers(Intent(NAMED_PAPER, title="the Transformer"), named) == {"1706.03762"}
    assert asked_papers(Intent(NAMED_PAPER, title="the Adam"), named) == set()
