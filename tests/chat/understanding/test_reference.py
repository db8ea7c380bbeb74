"""Follow-ups: the table of cases the reference rules are measured on.

A question refers to the previous answer's sources ("which of these…", "the second one", "[3]"),
borrows the previous topic (an ellipsis: "what about since 2024?"), or stands alone (nothing of
earlier turns is searched with it).
"""

import pytest

from chat.pipeline.rewrite import Turn, rule_rewrite
from chat.understanding.reference import SOURCES, STANDALONE, TOPIC, resolve

CARDS = tuple({"number": n, "paper_id": 100 + n, "title": f"Paper {n}"} for n in range(1, 9))
LIST_ANSWER = Turn(
    question="papers on diffusion language models",
    query="papers on diffusion language models",
    topic="papers on diffusion language models",
    sources=CARDS,
)
ONE_PAPER = Turn(question="the second one", query="the second one", sources=CARDS[1:2])
HALLUCINATION = Turn(
    question="latest work on LLM hallucination",
    query="latest work on LLM hallucination",
    topic="work on LLM hallucination",
    sources=CARDS,
)

ALL = tuple(range(1, 9))
# (question, previous turn, kind, source numbers)
CASES = [
    ("which of these use transformers?", LIST_ANSWER, SOURCES, ALL),
    ("Which of them mention RLHF", LIST_ANSWER, SOURCES, ALL),
    ("which of those are from 2024?", LIST_ANSWER, SOURCES, ALL),
    ("which of these were published in the last 2 years?", LIST_ANSWER, SOURCES, ALL),
    ("any of these about protein design?", LIST_ANSWER, SOURCES, ALL),
    ("compare them", LIST_ANSWER, SOURCES, ALL),
    ("summarize these papers", LIST_ANSWER, SOURCES, ALL),
    ("what datasets do they use?", LIST_ANSWER, SOURCES, ALL),
    ("how many of these use masked diffusion?", LIST_ANSWER, SOURCES, ALL),
    ("the second one", LIST_ANSWER, SOURCES, (2,)),
    ("The 3rd paper?", LIST_ANSWER, SOURCES, (3,)),
    ("tell me more about [3]", LIST_ANSWER, SOURCES, (3,)),
    ("what does [5] find?", LIST_ANSWER, SOURCES, (5,)),
    ("more on paper 4", LIST_ANSWER, SOURCES, (4,)),
    ("tell me more about the first one", LIST_ANSWER, SOURCES, (1,)),
    ("and the last one?", LIST_ANSWER, SOURCES, (8,)),
    ("what dataset does it use?", ONE_PAPER, SOURCES, (2,)),
    ("who wrote it?", ONE_PAPER, SOURCES, (2,)),
    # "its" refers to no plural before it: the paper shown, not "participants".
    ("How many participants were in its user study?", ONE_PAPER, SOURCES, (2,)),
    ("what about since 2024?", LIST_ANSWER, TOPIC, ()),
    ("and in 2022?", LIST_ANSWER, TOPIC, ()),
    ("why?", LIST_ANSWER, TOPIC, ()),
    ("any newer ones?", LIST_ANSWER, TOPIC, ()),
    ("how does it compare to autoregressive decoding?", LIST_ANSWER, TOPIC, ()),
    ("what about for code generation?", LIST_ANSWER, TOPIC, ()),
    ("compare DPO and RLHF", HALLUCINATION, STANDALONE, ()),
    ("papers on graph neural networks", LIST_ANSWER, STANDALONE, ()),
    ("what is RLHF and why is it used?", LIST_ANSWER, STANDALONE, ()),
    ("is it true that LLMs hallucinate less with retrieval?", HALLUCINATION, STANDALONE, ()),
    ("does retrieval augmentation reduce hallucination, and how is it measured?", HALLUCINATION, STANDALONE, ()),
    ("Is BERT still used and how does it compare with RoBERTa?", LIST_ANSWER, STANDALONE, ()),
    ("diffusion language models since last year", HALLUCINATION, STANDALONE, ()),
    ("what are mixture of experts models?", LIST_ANSWER, STANDALONE, ()),
    ("recipes for sourdough bread", LIST_ANSWER, STANDALONE, ()),
    ("2309.00267", LIST_ANSWER, STANDALONE, ()),
    ("papers by Jianfeng Gao", LIST_ANSWER, STANDALONE, ()),
    ("how do transformers handle long contexts, and who proposed them?", LIST_ANSWER, STANDALONE, ()),
    ("the second law of thermodynamics in black holes", LIST_ANSWER, STANDALONE, ()),
    # A new listing in its own words: no topic to borrow ("papers since 2025" after "What
    # learning-rate schedule does the Transformer use?" searched that question since 2025).
    ("papers since 2025", HALLUCINATION, STANDALONE, ()),
    ("show me the latest preprints", LIST_ANSWER, STANDALONE, ()),
    ("more papers?", LIST_ANSWER, TOPIC, ()),
    ("any other papers since 2024?", LIST_ANSWER, TOPIC, ()),
    # An inverted question's subject: the words before it are what is asked, not what it is.
    ("what optimizers do they compare?", LIST_ANSWER, SOURCES, ALL),
    ("What BLEU score does it reach on English-German?", ONE_PAPER, SOURCES, (2,)),
    ("What optimizer and learning rate schedule do they use?", LIST_ANSWER, SOURCES, ALL),
    ("Does RWKV scale better than transformers in their inference cost?", LIST_ANSWER, STANDALONE, ()),
    ("which one performs better on open-domain QA?", LIST_ANSWER, TOPIC, ()),
    # An ellipsis that names its thing and asks of it in a clause of its own.
    ("What about Fusion-in-Decoder, how does it use the retrieved passages?", LIST_ANSWER, STANDALONE, ()),
    ("what about Fusion-in-Decoder?", LIST_ANSWER, TOPIC, ()),
    ("and for video, how does it work?", LIST_ANSWER, TOPIC, ()),
    # One of them by a measure: the question is asked of them all.
    ("How many parameters does the largest one have?", LIST_ANSWER, SOURCES, ALL),
    # "which is the most cited?" after a list: of its papers, not a search for "most cited".
    ("which is the most cited?", LIST_ANSWER, SOURCES, ALL),
    ("Which one was the earliest?", LIST_ANSWER, SOURCES, ALL),
    ("which is the most recent one?", LIST_ANSWER, SOURCES, ALL),
    # A part only the papers shown have.
    ("who are the authors?", ONE_PAPER, SOURCES, (2,)),
    ("what are the limitations?", LIST_ANSWER, SOURCES, ALL),
]  # fmt: skip


@pytest.mark.parametrize(("question", "previous", "kind", "numbers"), CASES)
def test_reference_table(question, previous, kind, numbers):
    reference = resolve(question, [previous])
    assert reference.kind == kind, reference
    assert reference.numbers == numbers
    assert (reference.followup_of is None) == (kind != SOURCES)


def test_the_rest_of_the_question_is_the_filter():
    assert resolve("which of these use transformers?", [LIST_ANSWER]).rest == "use transformers"


def test_without_history_every_question_stands_alone():
    assert resolve("which of these use transformers?", []).kind == STANDALONE
    assert resolve("the second one", []).kind == STANDALONE


def test_a_number_beyond_the_previous_sources_is_not_a_reference():
    assert resolve("tell me more about [12]", [LIST_ANSWER]).kind != SOURCES


def test_self_contained_questions_are_searched_as_typed():
    # The old rule glued the hallucination topic onto DPO and RLHF.
    assert rule_rewrite("compare DPO and RLHF", [HALLUCINATION]) == "compare DPO and RLHF"
    assert rule_rewrite("is it true that LLMs hallucinate?", [LIST_ANSWER]) == (
        "is it true that LLMs hallucinate?"
    )


def test_an_ellipsis_borrows_the_previous_topic_and_keeps_its_own_window():
    query = rule_rewrite("what about since 2024?", [LIST_ANSWER])
    assert "diffusion language models" in query and "2024" in query


def test_reference_table_accuracy(capsys):
    right = sum(
        resolve(q, [previous]).kind == kind and resolve(q, [previous]).numbers == numbers
        for q, previous, kind, numbers in CASES
    )
    with capsys.disabled():
        print(f"\nfollow-up rules: {right}/{len(CASES)} cases right")
    assert right == len(CASES)


def test_the_second_one_after_a_filtered_follow_up_means_the_list_before_it():
    filtered = Turn(question="which of these use transformers?", sources=CARDS[4:5])
    reference = resolve("the second one", [LIST_ANSWER, filtered])
    assert (reference.kind, reference.numbers, reference.back) == (SOURCES, (2,), 2)


def test_an_ellipsis_after_a_follow_up_on_sources_borrows_the_searched_topic():
    read = Turn(
        question="tell me more about [3]", query="tell me more about [3]", sources=CARDS[2:3]
    )
    query = rule_rewrite("what about since 2024?", [LIST_ANSWER, read])
    assert "diffusion language models" in query and "tell me more" not in query


def test_an_ellipsis_after_papers_like_an_id_keeps_the_id_whole():
    # "what about before 2021?" after "papers like 2004.04906" searched "like.04906" (seen in
    # Chromium): the id's first digits were taken for a year and cut out with the window.
    seed = Turn(question="papers like 2004.04906", query="papers like 2004.04906", sources=CARDS)
    assert rule_rewrite("what about before 2021?", [seed]) == "before 2021 — papers like 2004.04906"


# Several papers at once: card numbers ("[1] and [3]"), or places among the papers as the answer
# showed them ("the first two"), which chat.pipeline.previous maps to cards.
@pytest.mark.parametrize(
    ("question", "numbers", "places", "rest"),
    [
        ("compare the first two", (1, 2), (1, 2), "compare"),
        ("compare [1] and [3]", (1, 3), (), "compare"),
        ("what do the last two have in common?", (7, 8), (-2, -1), "what do have in common"),
        ("compare the first and the third one", (1, 3), (1, 3), "compare"),
        ("summarize the top 3 papers", (1, 2, 3), (1, 2, 3), "summarize"),
        ("the second one", (2,), (2,), ""),
        ("tell me more about [3]", (3,), (), "tell me more about"),
    ],
)
def test_several_papers_by_number_or_by_place(question, numbers, places, rest):
    reference = resolve(question, [LIST_ANSWER])
    assert reference.kind == SOURCES
    assert (reference.numbers, reference.places, reference.rest) == (numbers, places, rest)


def test_it_is_the_paper_when_all_cards_are_chunks_of_one_paper():
    chunks = tuple({"number": n, "paper_id": 7, "title": "One paper"} for n in (1, 2, 3))
    one_paper = Turn(question="the second one", query="the second one", sources=chunks)
    reference = resolve("what dataset does it use?", [one_paper])
    assert reference.kind == SOURCES and reference.numbers == (1, 2, 3)


def test_more_like_that_after_an_answer_on_one_paper_searches_papers_like_it():
    cards = tuple(
        {"number": n, "paper_id": 100 + n, "arxiv_id": f"1706.0376{n}", "title": f"Paper {n}"}
        for n in range(1, 4)
    )
    named = Turn(question="summarize Attention Is All You Need", answer="What it reports: - x [2].",
                 sources=cards)  # fmt: skip
    assert rule_rewrite("more like that", [named]) == "papers similar to arXiv:1706.03762"
    listed = Turn(question="papers on transformers", query="papers on transformers",
                  answer="1. A [1].\n2. B [2].", sources=cards)  # fmt: skip
    assert rule_rewrite("anything similar?", [listed]) == "papers on transformers"


# The Transformer's answer to its optimizer, as the composer quotes it.
OPTIMIZER = Turn(
    question="What optimizer did the Transformer use?",
    query="What optimizer did the Transformer use?",
    answer="From the papers found:\n\n- We used the Adam optimizer [ref. 20] with β1 = 0.9, "
    "β2 = 0.98 and ϵ = 10−9 [1, p. 7].",
    sources=CARDS[:1],
)


@pytest.mark.parametrize(
    "question, named",
    [
        # "that optimizer" is the thing the previous answer named, not the paper it quoted.
        ("Which paper proposed that optimizer?", "Which paper proposed Adam?"),
        ("How does this optimizer work?", "How does Adam work?"),
        ("Who introduced the same optimizer?", "Who introduced Adam?"),
        # Not a kind the previous question asked about, or the papers themselves.
        ("Is it true that attention is all you need?", None),
        ("Who wrote that paper?", None),
        ("Which paper proposed that dataset?", None),
    ],
)
def test_that_x_is_the_x_the_previous_answer_named(question, named):
    from chat.understanding.reference import demonstrated_name

    assert demonstrated_name(question, OPTIMIZER) == named


def test_that_x_needs_a_name_in_the_previous_answer():
    from chat.understanding.reference import demonstrated_name

    # Named after its kind ("the optimizer Adam"), or not named at all.
    after = Turn(question="which optimizer is used?", answer="They train with the optimizer "
                 "AdaMax and a small step size [1].")
    unnamed = Turn(question="which optimizer is used?", answer="The optimizer is stochastic "
                   "gradient descent with momentum [1].")
    assert demonstrated_name("Who proposed that optimizer?", after) == "Who proposed AdaMax?"
    assert demonstrated_name("Who proposed that optimizer?", unnamed) is None


def test_another_authors_papers_are_searched_on_their_own():
    # "papers by Kaiming He", then "what else has Patrick Lewis written?" was searched as
    # "what else has Patrick Lewis written — papers by Kaiming He": He's papers, by Lewis.
    by_he = Turn(question="papers by Kaiming He", query="papers by Kaiming He", sources=CARDS)
    for question in ("what else has Patrick Lewis written?",
                     "which other papers did Patrick Lewis write?"):
        assert resolve(question, [by_he]).kind == STANDALONE
        assert rule_rewrite(question, [by_he]) == question
    # An ellipsis without an author still borrows the topic.
    assert resolve("what else?", [LIST_ANSWER]).kind == TOPIC


def test_an_ordinal_after_an_answer_on_one_paper_counts_in_the_list_before():
    # "summarize the second one", then "compare it with the first" compared nothing: "the
    # first" was read in the summary (one paper: the second itself) and "it" alone was kept.
    summary = Turn(question="summarize the second one", query="summarize the second one",
                   sources=({"number": 1, "paper_id": 102, "title": "Paper 2"},))
    history = [LIST_ANSWER, summary]
    ref = resolve("compare it with the first", history)
    assert (ref.kind, ref.numbers, ref.back, ref.places) == (SOURCES, (2, 1), 2, (None, 1))
    assert ref.rest == "compare"
    ref = resolve("what about the first one?", history)
    assert (ref.kind, ref.numbers, ref.back) == (SOURCES, (1,), 2)
    # With no list before it, the one paper shown is still "the first".
    assert resolve("tell me more about the first one", [summary]).numbers == (1,)
