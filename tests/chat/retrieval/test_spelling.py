"""A question's misspelt words are corrected from the catalogue's own BM25 vocabulary
(chat.retrieval.spelling), searched as corrected, and the answer says so; against the real
database (the chat tests' seven papers, indexed by the real code)."""

import pytest
from django.db import connection

from chat.llm import templates as T
from chat.retrieval.spelling import Correction, _candidates, corrections, edits, english
from papers.indexing.lexical import index_missing
from tests.chat.test_answer_flow import run

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def indexed(catalogue):
    """The chat tests' papers with their BM25 index: the vocabulary corrections come from."""
    index_missing()
    return catalogue


def _fixes(text: str) -> dict[str, str]:
    with connection.cursor() as cursor:
        return {c.typo: c.word for c in corrections(cursor, text)}


def test_edits_count_a_transposition_once():
    assert edits("retreival", "retrieval", 2) == 1
    assert edits("transfomer", "transformer", 2) == 1
    assert edits("bread", "diffusion", 1) == 2  # beyond the limit: limit + 1


def test_an_english_word_is_no_typo_of_the_catalogues():
    # A small catalogue never says "beginners" or "bread": not typos of "begin" or "break"
    # (seen correcting the relevance gate's cooking and sport questions).
    assert english("beginners") and english("bread") and english("leaking")
    assert not english("transfomer") and not english("retreival") and not english("difusion")


def test_a_word_the_catalogue_never_saw_becomes_its_nearest_word(indexed):
    # "diffusion" is in three papers, "transformer(s)" in two.
    assert _fixes("papers on difusion transfomers") == {
        "difusion": "diffusion",
        "transfomers": "transformers",
    }
    assert _fixes("What does the Transfomer replace?") == {"Transfomer": "Transformer"}
    # Known words, names and short words are left alone.
    assert _fixes("papers on diffusion transformers") == {}
    assert _fixes("Is RWKV better than Ankaa on QM9?") == {}
    # "retrieval" is in one paper only: a word that rare is no correction (a paper's own typo).
    assert _fixes("papers on retreival") == {}


@pytest.mark.asyncio
async def test_the_answer_says_what_it_searched_for(indexed):
    _, by = await run("papers on difusion transfomers")
    done = by["done"][0]
    assert done["content"].startswith(
        T.SHOWING_RESULTS.format(question="papers on diffusion transformers") + "\n\n"
    )
    assert by["analysis"][0]["analysis"]["corrections"] == {
        "difusion": "diffusion",
        "transfomers": "transformers",
    }
    cited = {by["sources"][0]["sources"][n - 1]["arxiv_id"] for n in done["citations"]}
    assert "2405.00002" in cited  # "Latent diffusion transformers …"
    # The streamed text is what is saved.
    streamed = "".join(e["text"] for e in by["token"])
    assert streamed.startswith(
        T.SHOWING_RESULTS.format(question="papers on diffusion transformers")
    )


def test_a_correction_is_written_back_in_the_questions_case():
    from chat.retrieval.spelling import corrected, typed

    found = [Correction("Transfomer", "Transformer")]
    assert corrected("What does the Transfomer use?", found) == "What does the Transformer use?"
    assert typed("the Transformer", found) == "the Transfomer"


def test_a_correction_is_written_as_close_to_the_typed_word_as_its_lexeme_allows():
    # "convolutonal" was shown as "convolutal": the lexeme "convolut" with the first ending in
    # reach, not the one the reader meant.
    options = _candidates("convolutonal", "convoluton", [("convolut", 5), ("convex", 9)])
    assert [(written, lexeme) for _, _, written, lexeme in options] == [
        ("convolutional", "convolut")
    ]
