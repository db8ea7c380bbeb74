"""A question pointing to a figure or a table (chat.understanding.pointers): its caption opens the
answer, and the label is no paper's name (session 18, helper newuser: "What does Figure 3 of
CiteSee show?" opened with Figure 1's caption; "What does Figure 1 show?" after questions on the
Transformer said the catalogue had nothing on it)."""

import pytest

from chat.llm import templates as T
from chat.llm.base import AnswerRequest, SourceText
from chat.llm.shapes import compose_shaped
from chat.retrieval.named import writes_a_name
from chat.understanding.intent import Intent, classify
from chat.understanding.pointers import Pointer, asked_pointer, is_caption_of


@pytest.mark.parametrize(
    ("question", "pointer"),
    [
        ("What does Figure 3 of CiteSee show?", Pointer("figure", "3")),
        ("what is in fig. 2?", Pointer("figure", "2")),
        ("explain Table 1", Pointer("table", "1")),
        ("How many figures does the paper have?", None),
        ("What does the table show?", None),
    ],
)
def test_the_figure_or_table_a_question_points_to(question, pointer):
    assert asked_pointer(question) == pointer


def test_a_caption_opens_with_its_label_and_a_colon():
    three = Pointer("figure", "3")
    assert is_caption_of("Figure 3: CiteSee augments inline citations.", three)
    assert is_caption_of("Fig. 3. Results on the test set.", three)
    assert not is_caption_of("Figure 3 shows the results after fine-tuning.", three)
    assert not is_caption_of("Figure 31: Another figure.", three)
    assert not is_caption_of("Figure 1: CiteSee augments inline citations.", three)


def test_a_figures_label_is_no_papers_name():
    assert not writes_a_name("What does Figure 1 show?")
    assert not writes_a_name("What is in Table 2?")
    assert writes_a_name("What does Figure 1 of CiteSee show?")


def test_a_figure_of_a_named_paper_is_no_question_on_the_papers_gist():
    # It was a named-paper question titled "Figure 2 of the Adam paper": Adam's abstract.
    assert classify("What does Figure 2 of the Adam paper show?").kind == "overview"


def test_the_asked_figures_caption_opens_the_answer(settings):
    settings.EMBEDDING_BACKEND = "hashing"
    early = SourceText(
        1, "CiteSee: augmenting citations", "J. Chang", "2023-02-14",
        "Figure 1: CiteSee augments inline citations to known papers to help contextualize the "
        "current paper. Scholars read many papers.",
        arxiv_id="2302.07302", where="p. 1, 1 Introduction",
    )  # fmt: skip
    later = SourceText(
        2, "CiteSee: augmenting citations", "J. Chang", "2023-02-14",
        "She opens the same papers in CiteSee (Figure 3) and sees which citations she read. "
        "Figure 3: CiteSee augments inline citations based on a user's reading history and paper "
        "library.",
        arxiv_id="2302.07302", where="p. 4, 3 Design",
    )  # fmt: skip
    request = AnswerRequest(
        question="What does Figure 3 of CiteSee show?", sources=[early, later], messages=[],
        intent=Intent("overview"), analysis={"query": "What does Figure 3 of CiteSee show?"},
    )  # fmt: skip
    lines = compose_shaped(request).splitlines()

    assert lines[0] == T.LEAD_IN
    first = next(line for line in lines if line.startswith("- "))
    assert first.startswith("- Figure 3: CiteSee augments inline citations based on")

