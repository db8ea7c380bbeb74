"""A question that names a paper by what it introduced ("the Transformer", "Fusion-in-Decoder",
"OPT-175B") is answered from THAT paper (issue #12): the names come from the catalogue's own
text (papers.indexing.names, stored in PaperName as papers are indexed and read), the search
puts the named paper first, the composer opens with its passages, and a name the catalogue
holds no paper for is said plainly. Against the real database and the shared arXiv PDFs, read
over HTTP from a local server standing in for arxiv.org."""

import pytest
from django.db import connection

from chat.llm import templates as T
from chat.llm.extractive import ExtractiveBackend
from chat.pipeline.answer import answer_events
from chat.retrieval.filters import SearchFilters
from chat.retrieval.named import find_named
from chat.retrieval.search import search
from papers.indexing.lexical import index_missing, index_papers
from papers.models import Paper, PaperName
from tests.chat.conftest import NOW

# The fixtures of tests/papers/fulltext: a local arXiv PDF server over the shared PDFs.
from tests.papers.fulltext.conftest import pdf_server, shared_papers  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)

OPT, MOBY, FID, TRANSFORMER = "2205.01068", "2301.01531", "2007.01282", "1706.03762"
DPR, RAG = "2004.04906", "2005.11401"


@pytest.fixture
def catalogue_of_pdfs(pdf_server, shared_papers):  # noqa: F811
    """The 28 shared papers indexed (BM25, vectors, names); OPT, MoBYv2AL, Fusion-in-Decoder and
    DPR read over HTTP."""
    from papers.fulltext.read import read_paper
    from papers.indexing.vectors import embed_missing

    index_missing()
    embed_missing()
    for arxiv_id in (OPT, MOBY, FID, DPR):
        assert read_paper(shared_papers[arxiv_id]).status == "ok"
    return shared_papers


def _named(question: str) -> list[str]:
    with connection.cursor() as cursor:
        return [p.arxiv_id for p in find_named(cursor, question, SearchFilters()).papers]


def test_a_method_name_maps_to_the_paper_that_introduced_it(catalogue_of_pdfs):
    names = dict(PaperName.objects.values_list("key", "paper__arxiv_id"))
    # From the abstract ("We propose a new simple network architecture, the Transformer"), the
    # title ("OPT: Open Pre-trained …"), and the body once read ("we refer to it as
    # Fusion-in-Decoder").
    assert names["transformer"] == TRANSFORMER
    assert names["opt"] == OPT
    assert names["fusion in decoder"] == FID
    assert _named("What learning rate did the Fusion-in-Decoder training use?") == [FID]
    assert _named("What label smoothing value did the Transformer use?") == [TRANSFORMER]
    assert _named("How many GPUs were used to train OPT-175B?") == [OPT]  # a size of OPT
    # A version number names another model than the head's paper, unless that paper writes it.
    assert _named("How many GPUs were used to train OPT-2?") == []
    # Not the Transformer's: a longer name around it, another name after the hyphen, a
    # lower-case word.
    assert TRANSFORMER not in _named("What batch size did Vision Transformer pre-training use?")
    assert _named("What learning rate does Adam-FIPSO use?") != ["1412.6980"]
    assert _named("Which transformer layers are frozen?") == []


def test_a_paper_named_by_its_whole_title_is_the_one_asked_about(shared_papers):  # noqa: F811
    # "Teaching Small Language Models to Reason" has no "NAME:" nor coined word: only its whole
    # title names it (its limitations were answered from other papers' chunks).
    index_missing()
    small_lm = "2212.08410"
    with connection.cursor() as cursor:
        named = find_named(
            cursor,
            "What limitations do the authors of Teaching Small Language Models to Reason state?",
            SearchFilters(),
        )
    assert [p.arxiv_id for p in named.papers] == [small_lm] and named.about
    assert named.papers[0].asked == "Teaching Small Language Models to Reason"
    # Quoted, in any case; after a word opening the question's clause.
    assert _named('Which datasets does "teaching small language models to reason" use?') == [
        small_lm
    ]
    assert _named("In Teaching Small Language Models to Reason, how large is the student?") == [
        small_lm
    ]
    # Part of a title, or its words in another order, names no paper.
    assert _named("Which Small Language Models Reason about Teaching?") == []
    assert _named("What does Teaching Small Language Models find?") == []
    # Named, but the question is about other work.
    with connection.cursor() as cursor:
        named = find_named(
            cursor, "Which papers build on Attention Is All You Need?", SearchFilters()
        )
    assert [p.arxiv_id for p in named.papers] == [TRANSFORMER] and not named.about


def test_names_follow_the_paper_when_its_text_changes(catalogue_of_pdfs):
    transformer = catalogue_of_pdfs[TRANSFORMER]
    Paper.objects.filter(pk=transformer.pk).update(
        abstract="We propose a new simple network architecture, the Attender, based on attention."
    )
    index_papers([transformer.pk])  # what the ingest does for an edited or new version
    keys = set(PaperName.objects.filter(paper=transformer).values_list("key", flat=True))
    assert "attender" in keys and "transformer" not in keys


async def _answer(question: str) -> tuple[list[dict], dict]:
    events = [
        e
        async for e in answer_events(question, now=NOW, backend=ExtractiveBackend(chunk_delay=0))
    ]
    return next(e for e in events if e["type"] == "sources")["sources"], events[-1]


@pytest.mark.asyncio
async def test_the_named_paper_leads_the_search_and_opens_the_answer(catalogue_of_pdfs):
    question = "What batch size was used to train OPT-175B?"
    response = await search(question, k=8, now=NOW)
    assert response.hits[0].arxiv_id == OPT and response.hits[0].named == "OPT"
    assert [p.arxiv_id for p in response.named.papers] == [OPT]

    cards, done = await _answer(question)
    by_number = {c["number"]: c for c in cards}
    first = next(line for line in done["content"].splitlines() if line.startswith("- "))
    cited_first = int(first.rsplit("[", 1)[1].split("]")[0])
    # MoBYv2AL's "batch size at 128" (read, and matching the words) never opens it.
    assert by_number[cited_first]["arxiv_id"] == OPT
    assert "128" not in first
    assert "MoBYv2AL" not in done["content"]  # only the named paper is quoted
    # Its chunks ranked without its name (in every chunk of it): its method section on p. 2
    # (batch sizes, Table 1) is cited, not only the chunks that repeat "OPT-175B".
    cited = [by_number[n] for n in done["citations"]]
    # (Table 1's chunk runs from p. 1 to p. 2: its row for 175B now opens the answer.)
    assert any(
        c["page"] <= 2 <= c["page_end"] and "batch size" in c["passage"].lower() for c in cited
    )
    assert "2M" in first and "175B" in first
    # The question is about OPT: its chunks fill the cards before another paper's (they were
    # 3 of 8, its training setup on p. 2 left out for MoBYv2AL's and ViT's).
    assert [c["arxiv_id"] for c in cards[:6]] == [OPT] * 6


@pytest.mark.asyncio
async def test_two_papers_asked_about_together_share_the_cards_and_the_answer(catalogue_of_pdfs):
    from asgiref.sync import sync_to_async

    from papers.fulltext.read import read_paper

    assert (await sync_to_async(read_paper)(catalogue_of_pdfs[RAG])).status == "ok"

    # "FiD" is no word of Fusion-in-Decoder's paper: its initials, as readers write it.
    names = await sync_to_async(
        lambda: dict(PaperName.objects.values_list("key", "paper__arxiv_id"))
    )()
    assert names["fid"] == FID
    # "RAG and FiD" are one subject, "RAG" alone in the place of a name ("do RAG and …").
    for question in ("How do RAG and FiD combine passages?",
                     "How do RAG and Fusion-in-Decoder combine passages?"):
        assert set(await sync_to_async(_named)(question)) == {RAG, FID}, question
    cards, done = await _answer("How do RAG and FiD combine passages?")
    # The first paper's chunks took all 8 cards, and the answer spoke of RAG alone.
    assert {c["arxiv_id"] for c in cards} == {RAG, FID}
    assert sum(c["arxiv_id"] == FID for c in cards) >= 3 <= sum(c["arxiv_id"] == RAG for c in cards)
    cited = {c["arxiv_id"] for c in cards if c["number"] in done["citations"]}
    assert cited == {RAG, FID}, done["content"]


@pytest.mark.asyncio
async def test_a_question_naming_a_paper_the_catalogue_lacks_says_so(catalogue_of_pdfs):
    from asgiref.sync import sync_to_async

    def unknown(question):
        with connection.cursor() as cursor:
            return find_named(cursor, question, SearchFilters()).unknown

    assert await sync_to_async(unknown)("What batch size was used to train LLaMA-2?") == ["LLaMA-2"]
    # GPT-3 has no paper here, OPT's body only mentions it: no paper is GPT-3's (session 19:
    # "GPT-4" was answered from GPT-3's mentions), and the answer quotes those mentions alone.
    assert await sync_to_async(unknown)("What batch size was used to train GPT-3?") == ["GPT-3"]
    _, done = await _answer("What batch size was used to train GPT-3?")
    lead, *quotes = [line for line in done["content"].splitlines() if line.strip()]
    assert lead == T.NAMED_ONLY_MENTIONED.format(names="GPT-3") and done["citations"]
    assert all("GPT-3" in line for line in quotes if line.startswith("- "))
    # GPT-4 is no size of GPT-3 (nor of a GPT paper), and nothing found mentions it.
    assert await sync_to_async(unknown)("How many parameters does GPT-4 have?") == ["GPT-4"]
    _, done = await _answer("How many parameters does GPT-4 have?")
    assert done["citations"] == [] and "GPT-3" not in done["content"]  # (the gate may say so)
    cards, done = await _answer("What batch size was used to train LLaMA-2?")
    assert done["content"] == T.NAMED_ABSENT.format(names="LLaMA-2")
    assert done["citations"] == []
    # A name the catalogue does hold is answered as usual.
    _, done = await _answer("What learning rate did the Fusion-in-Decoder training use?")
    assert done["citations"] and "No paper in the catalogue" not in done["content"]


def _paper(n: int, year: int, abstract: str) -> Paper:
    from datetime import UTC, datetime

    day = datetime(year, 1, 1, tzinfo=UTC)
    paper = Paper.objects.create(
        arxiv_id=f"{year % 100:02d}01.{n:05d}", title=f"A study number {n}", abstract=abstract,
        published=day, updated=day,
    )
    index_papers([paper.pk])
    return paper


def test_the_first_paper_to_introduce_a_name_gets_it_and_a_common_word_names_none():
    proposes = "We propose a new architecture, the Zebraformer, for reading long documents."
    later = _paper(1, 2023, proposes)
    first = _paper(2, 2017, proposes)
    assert _named("What dropout did the Zebraformer use?") == [first.arxiv_id]
    assert later.arxiv_id != first.arxiv_id
    for n in range(3, 6):  # claimed by five papers: a common word, not one paper's name
        _paper(n, 2024, proposes)
    assert _named("What dropout did the Zebraformer use?") == []


def test_who_a_name_belongs_to_is_the_whole_catalogues_to_say_not_the_windows():
    # "latest work on LLM hallucination" searched the last 180 days, where one paper of the
    # thirty claiming "LLM" fell: "LLM" named it, and it led the list of papers on hallucination.
    from datetime import UTC, datetime

    proposes = "We propose a new architecture, the Zebraformer, for reading long documents."
    first = _paper(1, 2017, proposes)
    for n in range(2, 6):  # five claimants in all: a common word
        _paper(n, 2018 + n, proposes)

    def named(start=None, end=None) -> list[str]:
        window = SearchFilters(
            start=start and datetime(start, 1, 1, tzinfo=UTC),
            end=end and datetime(end, 12, 31, tzinfo=UTC),
        )
        with connection.cursor() as cursor:
            question = "What dropout did the Zebraformer use?"
            return [p.arxiv_id for p in find_named(cursor, question, window).papers]

    assert named() == [] and named(start=2023) == []  # one claimant in 2023-: still common
    for paper in Paper.objects.exclude(pk=first.pk):
        PaperName.objects.filter(paper=paper).delete()
    assert named() == [first.arxiv_id]
    assert named(end=2017) == [first.arxiv_id]
    # Its paper is outside the window: the name names none (not the window's own claimant).
    _paper(6, 2024, proposes)  # introduces it again, later
    assert named(start=2020) == []


def test_a_made_up_name_stays_its_first_users_when_later_abstracts_redefine_it():
    # With 3,000 abstracts imported, "we propose a novel ViT architecture, termed NomMer" (2021)
    # took "ViT" from the 2020 paper whose abstract only defines "Vision Transformer (ViT)" (a
    # weak claim): "what batch size does ViT use?" was answered from NomMer.
    first = _paper(1, 2020, "We show that a Zebra Vision Transformer (ZebViT) works on patches.")
    later = _paper(2, 2021, "We in this paper propose a novel ZebViT architecture, termed NomMer.")
    assert PaperName.objects.get(paper=later, key="zebvit").strength > (
        PaperName.objects.get(paper=first, key="zebvit").strength
    )
    assert _named("What batch size does ZebViT use?") == [first.arxiv_id]
    # A dictionary word keeps the rule of titles and abstracts first: only a made-up name is
    # its first user's whatever the later claims.
    _paper(3, 2019, "We refer to it as the Zebraformer in what follows.")
    proposed = _paper(4, 2022, "We propose a new architecture, the Zebraformer, for long texts.")
    assert _named("What dropout did the Zebraformer use?") == [proposed.arxiv_id]


def test_a_paper_that_proposes_doing_something_with_a_name_does_not_get_it():
    # "How do GANs generate images?" was answered from a speech paper alone: its abstract's "we
    # propose operating GANs on log-Mel filterbank spectra" had made GANs its name.
    user = _paper(1, 2017, "Motivated by image processing, we propose operating GANs on spectra.")
    assert not PaperName.objects.filter(paper=user).exists()
    assert _named("How do GANs generate images?") == []
    # "… a conditional GAN (FC-GAN)": the bracket is the paper's name, not GAN.
    fc = _paper(2, 2018, "In this paper we propose a fast-converging conditional GAN (FC-GAN).")
    assert list(PaperName.objects.filter(paper=fc).values_list("name", flat=True)) == ["FC-GAN"]
    assert _named("What is the FC-GAN trained on?") == [fc.arxiv_id]
    assert _named("How do GANs generate images?") == []


def test_a_coined_acronym_names_its_paper_and_a_name_before_a_noun_still_counts(
    catalogue_of_pdfs,
):
    # "Vision Transformer (ViT) attains excellent results": defined in the abstract.
    assert _named("What batch size did Vision Transformer pre-training use?") == ["2010.11929"]
    assert _named("How many parameters does ViT-Huge have?") == ["2010.11929"]
    # "DPR" qualifies "Wikipedia corpus": still DPR's ("Dense Passage Retriever (DPR)" in its
    # body, the acronym of its title's first words).
    assert _named("How many passages does the DPR Wikipedia corpus contain?") == [DPR]


def test_a_question_about_other_work_around_the_named_paper_is_not_answered_by_it_alone():
    from chat.retrieval.named import NamedPaper, asks_about

    transformer = [NamedPaper(1, TRANSFORMER, "Transformer", "Transformer")]
    assert asks_about("What label smoothing value did the Transformer use?", transformer)
    assert asks_about("What is the Transformer?", transformer)
    # The verb opening the question is still a naming place.
    resnet = [NamedPaper(2, "1512.03385", "ResNet", "ResNet")]
    assert asks_about("Does ResNet use batch normalization?", resnet)
    # So is "<what> of X" before the question's verb.
    rwkv = [NamedPaper(3, "2305.13048", "RWKV", "RWKV")]
    assert asks_about("What limitations of RWKV do the authors acknowledge?", rwkv)
    # A noun of the paper's own work after the name ("Paper Plain's PDF baseline" was quoted
    # for "the CiteSee evaluation").
    citesee = [NamedPaper(4, "2302.07302", "CiteSee", "CiteSee")]
    assert asks_about("What are the baselines in the CiteSee evaluation?", citesee)
    assert asks_about("Explain the NG-Scope system", [NamedPaper(5, "2201.05281", "NG-Scope", "NG-Scope")])
    # The object of the paper's own evaluation (OPT's and another paper's datasets were quoted).
    mobyv2al = [NamedPaper(6, "2301.01531", "MoBYv2AL", "MoBYv2AL")]
    assert asks_about("What datasets were used to evaluate MoBYv2AL?", mobyv2al)
    assert not asks_about("What datasets were used to evaluate models like MoBYv2AL?", mobyv2al)
    assert not asks_about("Which papers compared with RWKV do the authors cite?", rwkv)
    assert not asks_about("What are alternatives to the Transformer for long texts?", transformer)
    assert not asks_about("Which models improve on the Transformer?", transformer)


def test_topic_words_are_not_a_title_name():
    from datetime import UTC, datetime

    day = datetime(2020, 1, 1, tzinfo=UTC)
    paper = Paper.objects.create(
        arxiv_id="2001.00042", title="Decoherence: How Quantum Memories Fail",
        abstract="We study memories.", published=day, updated=day,
    )
    index_papers([paper.pk])
    assert PaperName.objects.filter(paper=paper, key="decoherence").exists()
    # Written as a topic, not as a name: the paper is not "named".
    assert _named("Decoherence in superconducting qubits since 2020?") == []
    assert _named("How fast is decoherence in trapped ions?") == []
    assert _named("What memory time does Decoherence report?") == [paper.arxiv_id]


REPEATS = (
    "The Zebraformer-XL model card lists 3 Zebraformer-XL sizes. Zebraformer-XL was trained by "
    "the Zebraformer-XL team with the Zebraformer-XL recipe in 2024."
)
SETTING = "Training setup. The batch size was 512 sequences and the warmup 2000 steps."
OTHER = "We keep the batch size at 128 for every selection stage."


@pytest.mark.asyncio
async def test_a_named_papers_chunks_are_ranked_without_its_name(catalogue):
    from asgiref.sync import sync_to_async

    from tests.chat.fulltext_helpers import add_fulltext

    def read():
        named = Paper.objects.get(arxiv_id="2510.00003")
        Paper.objects.filter(pk=named.pk).update(
            title="Zebraformer-XL: long documents",
            abstract="We propose the Zebraformer-XL, a model for long documents.",
        )
        named.refresh_from_db()
        add_fulltext(named, [[REPEATS], ["Related work on long documents."], [SETTING]])
        add_fulltext(Paper.objects.get(arxiv_id="9901.00007"), [[OTHER]])
        index_missing()

    await sync_to_async(read)()
    response = await search("What batch size was used to train Zebraformer-XL?", k=5, now=NOW)
    hit = response.hits[0]
    # Every chunk of it says its name and no other paper's does: the name would pick REPEATS.
    assert hit.arxiv_id == "2510.00003" and hit.named == "Zebraformer-XL"
    assert hit.passage_text == SETTING and hit.page == 3


def test_a_name_the_body_coins_from_the_titles_words_names_its_paper(pdf_server, shared_papers):  # noqa: F811
    # ResNet's abstract never says "ResNet"; its body defines "residual nets (ResNets)", and
    # "residual" is a word of its title ("Deep Residual Learning for Image Recognition").
    from papers.fulltext.read import read_paper

    resnet = "1512.03385"
    index_missing()
    assert _named("Does ResNet use batch normalization?") == []
    assert read_paper(shared_papers[resnet]).status == "ok"
    keys = dict(PaperName.objects.filter(paper__arxiv_id=resnet).values_list("key", "strength"))
    assert keys == {"resnets": 1, "resnet": 1}  # weak: a body's name, nothing else of it
    assert _named("Does ResNet use batch normalization?") == [resnet]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("question", "arxiv_id"),
    [
        # "behind" is no naming place: the gist question itself names the paper. It quoted
        # OPT's datasheet ("explaining the rationale behind them") and a figure's caption.
        ("What is the key idea behind Fusion-in-Decoder?", FID),
        ("What are the key contributions of MoBYv2AL?", MOBY),
    ],
)
async def test_the_gist_of_a_named_paper_is_what_its_abstract_reports(
    catalogue_of_pdfs, question, arxiv_id
):
    cards, done = await _answer(question)
    paper = await Paper.objects.aget(arxiv_id=arxiv_id)
    lead = T.NAMED_LEAD.format(
        title=" ".join(paper.title.split()), published=paper.published.date().isoformat()
    )

    assert done["content"].splitlines()[0] == lead
    cited = [c for c in cards if c["number"] in done["citations"]]
    assert cited and {(c["arxiv_id"], c["kind"]) for c in cited} == {(arxiv_id, "abstract")}
