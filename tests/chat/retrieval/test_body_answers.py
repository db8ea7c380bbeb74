"""Body questions on real PDFs read over HTTP (the shared arXiv PDFs behind a local server): what
the offline composer opens with when the answer is the top of a range, or a corpus named by a
proper noun."""

import pytest

from chat.llm.extractive import ExtractiveBackend
from chat.pipeline.answer import answer_events
from chat.understanding.quantity import number_weight, numbers_in
from tests.chat.conftest import NOW

# The fixtures of tests/papers/fulltext: a local arXiv PDF server over the shared PDFs.
from tests.papers.fulltext.conftest import pdf_server, shared_papers  # noqa: F401

RWKV, REALM, RAPT, DPR = "2305.13048", "2002.08909", "2202.00535", "2004.04906"


def test_a_pointer_to_a_table_or_figure_states_no_number():
    sentence = "The following section gives the parameter and FLOP counts in Table 2."
    assert numbers_in(sentence) == set()
    assert numbers_in("In Figure 9 and Fig. 4(b), see Section 2.5 and Eq. (3).") == set()
    assert numbers_in("We trained on 8 GPUs (Table 1).") == {"8"}


def test_a_range_answers_a_question_after_the_largest():
    question = "How many parameters does the largest RWKV model have?"
    ranged = "We release models ranging in size from 169 million to 14 billion parameters."
    single = "The 430M model has 24 layers."
    assert number_weight(ranged, question, True) > number_weight(single, question, True) > 1
    # Without "largest" a range is one more number.
    plain = "How many parameters do RWKV models have?"
    assert number_weight(ranged, plain, True) == number_weight(single, plain, True)


@pytest.fixture
def read_pdfs(pdf_server, shared_papers):  # noqa: F811
    from papers.fulltext.read import read_paper
    from papers.indexing.vectors import embed_missing

    embed_missing()
    for arxiv_id in (RWKV, REALM, RAPT, DPR):
        assert read_paper(shared_papers[arxiv_id]).status == "ok"
    return shared_papers


async def _first_quote(question: str, paper) -> tuple[str, list[dict], dict]:
    events = [
        e
        async for e in answer_events(
            question, now=NOW, backend=ExtractiveBackend(chunk_delay=0), scope_ids=(paper.pk,)
        )
    ]
    cards, done = next(e for e in events if e["type"] == "sources")["sources"], events[-1]
    first = next(line for line in done["content"].splitlines() if line.startswith("- "))
    return first, cards, done


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.usefixtures("tidy_passage_statistics")
async def test_the_largest_model_is_answered_by_the_range_the_paper_gives(read_pdfs):
    first, cards, done = await _first_quote(
        "How many parameters does the largest RWKV model have?", read_pdfs[RWKV]
    )
    # Not "… parameter and FLOP counts in Table 2" (its "2" is no count of anything).
    assert "from 169 million to 14 billion parameters" in first
    number = int(first.rsplit("[", 1)[1].split("]")[0])
    card = next(c for c in cards if c["number"] == number)
    assert card["page"] == 2 and "14 billion" in card["highlight"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.usefixtures("tidy_passage_statistics")
async def test_a_corpus_named_by_a_proper_noun_answers_which_corpus(read_pdfs):
    first, _, done = await _first_quote("Which retrieval corpus does REALM use?", read_pdfs[REALM])
    # The paper's own name ("REALM (Z = 20 Dec 2018 corpus) …") names no corpus.
    assert "Wikipedia" in first and not first.startswith("- REALM")


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.usefixtures("tidy_passage_statistics")
async def test_which_datasets_opens_with_the_papers_list_not_a_table_of_examples(read_pdfs):
    first, _, done = await _first_quote(
        "What datasets does RAPT use to evaluate paraphrase generation?", read_pdfs[RAPT]
    )
    # Not Table 1's example paraphrases ("Input Why do all of my questions get marked as needing
    # improvement LPT … Table 1: Examples of generated paraphrases … from Quora Question Pairs
    # dataset"), whose model names and caption name more words than any item of the list.
    assert "Table 1" not in first and "needing improvement" not in first, done["content"]
    assert any(name in first for name in ("ParaSCI-ACL", "QQP", "MSRPC")), done["content"]
    quotes = [line for line in done["content"].splitlines() if line.startswith("- ")]
    assert not any("Table 1" in line for line in quotes[:3]), done["content"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.usefixtures("tidy_passage_statistics")
async def test_a_table_of_datasets_is_quoted_row_by_row_its_caption_once(read_pdfs):
    first, _, done = await _first_quote(
        "Which question answering datasets is DPR evaluated on?", read_pdfs[DPR]
    )
    quotes = [line for line in done["content"].splitlines() if line.startswith("- ")]
    # Table 1's five rows, each its own line, not one wall of twenty numbers; its header and
    # caption said with the first row only.
    rows = [q for q in quotes if q.startswith("- Table 1:")]
    assert first == rows[0] and "(columns: Dataset Train Dev Test)" in first, done["content"]
    names = ("Natural Questions", "TriviaQA", "WebQuestions", "CuratedTREC", "SQuAD")
    assert [next(n for n in names if n in row) for row in rows] == list(names)
    assert sum("Number of questions" in row for row in rows) == 1
    # The end of a sentence that the table was printed into is not quoted on its own.
    assert "as well as various Web sources" not in done["content"]
