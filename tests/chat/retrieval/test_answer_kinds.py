"""Questions whose answer never says the question's words, on real PDFs read over HTTP (the shared
arXiv PDFs behind a local server): "What hardware …" is answered by "8 TPUs", "How big …" by a
count of things, "What baselines …" by the list that names them, "Which … variant is largest?"
by the largest row of the table of variants (chat.understanding.answer_kinds, chat.llm.extractive,
chat.retrieval.chunks)."""

import pytest

from chat.llm.extractive import ExtractiveBackend
from chat.pipeline.answer import answer_events
from chat.understanding.answer_kinds import asking_words, said_by_kind
from chat.understanding.quantity import asks_for_quantity
from papers.fulltext.tables import RowSentence, extreme_row
from tests.chat.conftest import NOW

# The fixtures of tests/papers/fulltext: a local arXiv PDF server over the shared PDFs.
from tests.papers.fulltext.conftest import pdf_server, shared_papers  # noqa: F401

MUZERO, LEXSUM, CITESEE, VIT = "1911.08265", "2206.10883", "2302.07302", "2010.11929"


def test_a_sentence_giving_the_kind_of_answer_says_the_asking_word():
    hardware = "What hardware was MuZero trained on?"
    assert said_by_kind("For each game in Atari, we used 8 TPUs for training.", hardware) == {
        "hardware"
    }
    assert said_by_kind("We trained MuZero for K = 5 hypothetical steps.", hardware) == set()
    big = "How big is the Multi-LexSum dataset?"
    assert said_by_kind("… a collection of 9,280 expert-authored summaries drawn from …", big)
    assert not said_by_kind("The dataset was released in 2022 under a CC license.", big)
    # A length is no duration: "8.8 hours on 8 GPUs" does not say how long DPR's passages are.
    assert asking_words("How long did the CiteSee field deployment last?")
    assert asking_words("How long are the passages DPR splits Wikipedia into?") == {}
    # A measured property's value is the answer, not how big a collection is.
    assert asking_words("What batch size did Vision Transformer pre-training use?") == {}
    assert asks_for_quantity("Which vision transformer variant is largest?")


def test_a_formula_says_equation_and_a_setting_does_not():
    # "give me the key equation of the Transformer" quoted the sentences introducing it, then
    # "None of these papers mentions “equation”" (session 18).
    asked = "give me the key equation of the Transformer"
    assert said_by_kind("Attention(Q, K, V ) = softmax(QKT √ dk )V (1)", asked) == {
        "equation", "key"
    }  # fmt: skip
    assert said_by_kind("Formally, we let the layers fit F(x) := H(x)−x.", asked)
    assert said_by_kind("mt ← β1 · mt−1 + (1 − β1) · gt", "What is Adam's update formula?")
    assert not said_by_kind("We used the Adam optimizer with β1 = 0.9, β2 = 0.98.", asked)
    assert not said_by_kind("In this work we propose the Transformer.", asked)
    assert asking_words("What is the key idea of the Transformer?") == {}


def test_the_largest_row_is_the_one_whose_every_value_is_the_largest():
    rows = [
        RowSentence("…", "ViT-Base 12 768 3072 12 86M"),
        RowSentence("…", "ViT-Large 24 1024 4096 16 307M"),
        RowSentence("…", "ViT-Huge 32 1280 5120 16 632M"),
    ]
    assert extreme_row(rows) == 2 and extreme_row(rows, smallest=True) == 0
    # Rows that trade one value for another (agents' scores) have no largest.
    agents = [RowSentence("…", "Ape-X 434.1% 1695.6% 22.8B"), RowSentence("…", "R2D2 1920.6% 4024.9% 12.5B")]
    assert extreme_row(agents) is None


@pytest.fixture
def read_pdfs(pdf_server, shared_papers, settings):  # noqa: F811
    from papers.fulltext.read import read_paper
    from papers.indexing.vectors import embed_missing

    # The product's embedder (the chunks' cosine ranks them with BM25), not the tests' hashing.
    settings.EMBEDDING_BACKEND = "minilm"
    embed_missing()
    for arxiv_id in (MUZERO, LEXSUM, CITESEE, VIT):
        assert read_paper(shared_papers[arxiv_id]).status == "ok"
    return shared_papers


async def _quotes(question: str, paper) -> tuple[list[str], dict]:
    events = [
        e
        async for e in answer_events(
            question, now=NOW, backend=ExtractiveBackend(chunk_delay=0), scope_ids=(paper.pk,)
        )
    ]
    done = events[-1]
    return [line for line in done["content"].splitlines() if line.startswith("- ")], done


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.usefixtures("tidy_passage_statistics")
async def test_answers_that_never_say_the_questions_words(read_pdfs):
    # The TPUs of Appendix G, never called "hardware", and no caveat that none says it.
    quotes, done = await _quotes("What hardware was MuZero trained on?", read_pdfs[MUZERO])
    assert "TPUs" in quotes[0], done["content"]
    assert "“hardware”" not in done["content"]

    # A count of its summaries or instances, not its datasheet's template.
    quotes, done = await _quotes("How big is the Multi-LexSum dataset?", read_pdfs[LEXSUM])
    assert "9,280" in quotes[0], done["content"]

    # The list of the baselines, each named, before the sentences that only count three.
    quotes, done = await _quotes("What baselines does CiteSee compare against?", read_pdfs[CITESEE])
    assert quotes[0].startswith("- Reencountered Citations (System):"), done["content"]
    for baseline in ("Linear Reading:", "Global Citation Count:", "Specter Similarity"):
        assert any(q.startswith(f"- {baseline}") for q in quotes[1:4]), done["content"]

    # Table 1's largest row (ViT-Huge, 632M parameters), not "the largest models at the largest
    # resolutions".
    quotes, done = await _quotes("Which vision transformer variant is largest?", read_pdfs[VIT])
    assert quotes[0].startswith("- Table 1: ViT-Huge") and "632M" in quotes[0], done["content"]



TRANSFORMER = "1706.03762"


@pytest.fixture
def read_transformer(pdf_server, shared_papers, settings):  # noqa: F811
    from papers.fulltext.read import read_paper
    from papers.indexing.vectors import embed_missing

    settings.EMBEDDING_BACKEND = "minilm"
    embed_missing()
    assert read_paper(shared_papers[TRANSFORMER]).status == "ok"
    return shared_papers[TRANSFORMER]


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.usefixtures("tidy_passage_statistics")
async def test_a_figure_is_answered_by_what_the_paper_says_of_it(read_transformer):
    # "What does Figure 1 show?" on the Transformer opened with "See Figure 2" (session 18).
    quotes, done = await _quotes("What does Figure 1 show?", read_transformer)
    assert "Figure 1" in quotes[0], done["content"]
