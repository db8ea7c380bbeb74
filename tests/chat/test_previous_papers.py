"""Follow-ups over "these": the papers the reader saw, judged from their own text (abstract and
full text), run through `answer_events` on the real database with the extractive composer.

The previous answer here is a list whose first paper brought two cards (a full-text chunk beside
its abstract) and which showed its papers in another order than their card numbers, as a list
sorted newest first does: "these" are its three papers in that order, not its four cards.
"""

import pytest

from chat.llm import get_llm
from chat.pipeline.answer import answer_events
from chat.pipeline.rewrite import Turn
from papers.models import Paper
from tests.chat.conftest import NOW
from tests.chat.fulltext_helpers import add_fulltext
from tests.chat.test_answer_flow import run
from tests.fakes.openai_chat import Reply

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

RELEASE = "Our code and trained models are available at https://github.com/cdiaz/latent-dit."


async def _card(number, arxiv_id, **extra):
    paper = await Paper.objects.aget(arxiv_id=arxiv_id)
    return {"number": number, "paper_id": paper.pk, "arxiv_id": arxiv_id, "title": paper.title,
            "score": 0.5, **extra}  # fmt: skip


@pytest.fixture
async def shown_list(catalogue):
    """A list of three papers on four cards, shown as 2405.00002, 1706.00004, 2301.00001."""
    paper = await Paper.objects.aget(arxiv_id="2405.00002")
    from asgiref.sync import sync_to_async

    await sync_to_async(add_fulltext)(
        paper,
        [
            ["Diffusion transformers model latent patches with self-attention blocks."],
            ["We train on ImageNet at 256 and 512 pixels for 400k steps.",
             "The dataset matters: which dataset is used changes what the model learns. We "
             "report FID on the ImageNet and MS-COCO datasets."],
            [RELEASE],
        ],
        section="Method",
    )
    cards = (
        await _card(1, "2301.00001"),
        await _card(2, "2405.00002"),
        await _card(3, "2405.00002", kind="fulltext", page=2),
        await _card(4, "1706.00004"),
    )
    answer = (
        "3 papers, best match first:\n\n"
        "1. **Latent diffusion transformers scale to high resolution** (2024-05-02): ... [2].\n"
        "2. **Attention is all you need for translation** (2017-06-12): ... [4].\n"
        "3. **Denoising diffusion models for video generation** (2023-01-10): ... [1]."
    )
    return Turn(question="papers on transformers", query="papers on transformers",
                answer=answer, sources=cards)  # fmt: skip


async def test_which_of_these_is_judged_from_the_full_text_with_its_page(shown_list):
    _, by = await run("Which of these are open-source?", [shown_list])
    analysis = by["analysis"][0]["analysis"]
    assert analysis["previous"]["shown"] == 3 and analysis["previous"]["referred"] == 3
    (card,) = by["sources"][0]["sources"]
    # The sentence that says so, from page 3 of the body, is the card's passage and quote.
    assert card["arxiv_id"] == "2405.00002" and card["page"] == 3
    assert card["quote"] == RELEASE
    done = by["done"][0]
    assert done["citations"] == [1]
    assert done["content"].startswith(
        "Of the 3 papers of the previous answer, one says so in its own words:"
    )
    assert "(2024-05-02, p. 3): Our code and trained models are available at" in done["content"]
    # The others are named, so the reader knows what was checked; the unread ones are said.
    assert "Not said in the text of the other 2:" in done["content"]
    assert "Only the abstract of **Attention is all you need for translation**" in done["content"]


async def test_none_of_these_names_the_papers_that_were_checked(shown_list):
    _, by = await run("which of these use reinforcement learning?", [shown_list])
    done = by["done"][0]
    assert by["sources"][0]["sources"] == [] and done["citations"] == []
    assert done["content"].startswith("None of the 3 papers of the previous answer says so")
    assert "**Denoising diffusion models for video generation** (2023-01-10)" in done["content"]


async def test_a_preposition_of_the_question_is_no_word_the_papers_must_say(shown_list):
    # "compare against BM25" asks for papers saying BM25: "against" is how the question puts
    # it, and the page saying "ImageNet" need not say "against" (session 19: RAG, FiD and REALM
    # print BM25 but none "against" it, and all were left out).
    _, by = await run("Which of these evaluate against ImageNet?", [shown_list])
    analysis = by["analysis"][0]["analysis"]
    assert analysis["previous"]["filtered"] and analysis["previous"]["kept"] == 1
    (card,) = by["sources"][0]["sources"]
    assert card["arxiv_id"] == "2405.00002" and card["page"] == 2
    assert "ImageNet" in card["quote"]


async def test_real_hardware_is_a_device_the_paper_ran_on_not_one_it_simulates(shown_list):
    # Said in many ways, none "real hardware" (session 19: the Max-Cut paper run on Rigetti's
    # Ankaa-2 was missed, and a paper simulating a device was kept for "real devices").
    from asgiref.sync import sync_to_async

    ran = "We performed experiments on the 84-qubit superconducting quantum chip Rigetti Ankaa-2."
    for arxiv_id, sentences in (
        ("2301.00001", ["We describe the circuits in detail.", ran]),
        ("1706.00004", [
            "We utilized a noise model sampled from the IBM Belem quantum computer to simulate "
            "the effects of noise.",
            "While this work uses hardware calibrated simulation backends, real devices introduce "
            "additional challenges.",
            "An important next step is to test the framework on real quantum hardware.",
        ]),
    ):  # fmt: skip
        paper = await Paper.objects.aget(arxiv_id=arxiv_id)
        await sync_to_async(add_fulltext)(paper, [sentences[:1], sentences[1:]], section="Results")
    _, by = await run("Which of these ran on real hardware?", [shown_list])
    assert by["analysis"][0]["analysis"]["previous"]["kept"] == 1
    (card,) = by["sources"][0]["sources"]
    assert card["arxiv_id"] == "2301.00001" and card["quote"] == ran


async def test_the_second_one_is_the_second_paper_shown(shown_list):
    _, by = await run("summarise the second one", [shown_list])
    cards = by["sources"][0]["sources"]
    assert {c["arxiv_id"] for c in cards} == {"1706.00004"}  # shown second, card [4]
    assert by["analysis"][0]["analysis"]["followup_of"] == [4]
    assert by["done"][0]["content"].startswith(
        "What **Attention is all you need for translation** (2017-06-12) reports:"
    )


async def test_a_question_about_one_of_them_is_answered_from_its_full_text(shown_list):
    _, by = await run("how many steps did the first one train for?", [shown_list])
    cards = by["sources"][0]["sources"]
    assert {c["arxiv_id"] for c in cards} == {"2405.00002"}
    done = by["done"][0]
    assert "400k steps" in done["content"]
    cited = [c for c in cards if c["number"] in done["citations"]]
    assert any(c["page"] == 2 for c in cited)


async def test_compare_the_first_two_sets_the_two_shown_side_by_side(shown_list):
    _, by = await run("compare the first two", [shown_list])
    cards = by["sources"][0]["sources"]
    assert [c["arxiv_id"] for c in cards] == ["2405.00002", "1706.00004"]
    content = by["done"][0]["content"]
    assert content.startswith("The 2 papers side by side, each in its own words:")
    first = content.index("**Latent diffusion transformers scale to high resolution**")
    second = content.index("**Attention is all you need for translation**")
    assert first < second and set(by["done"][0]["citations"]) == {1, 2}


async def test_a_list_quotes_each_papers_abstract_once(shown_list):
    # 2405.00002's body matches the words too; a list line says what the paper is, from its
    # abstract, and the paper is one card, not one per chunk.
    _, by = await run("papers on diffusion transformers")
    cards = by["sources"][0]["sources"]
    assert cards and all(c["kind"] == "abstract" and c["page"] is None for c in cards)
    assert len({c["arxiv_id"] for c in cards}) == len(cards)
    assert "2405.00002" in {c["arxiv_id"] for c in cards}


async def test_what_dataset_names_the_datasets_from_the_full_text(shown_list):
    _, by = await run("What dataset did the first one use?", [shown_list])
    done = by["done"][0]
    cards = {c["number"]: c for c in by["sources"][0]["sources"]}
    assert {c["arxiv_id"] for c in cards.values()} == {"2405.00002"}
    # The sentence that names them opens the answer, cited with its page.
    first = done["content"].split("\n- ")[1]
    assert first.startswith("We report FID on the ImageNet and MS-COCO datasets")
    assert cards[int(first.split("[")[1][0])]["page"] == 2


async def test_a_named_paper_is_summarised_from_its_abstract(shown_list):
    _, by = await run("summarize Latent diffusion transformers scale to high resolution")
    done = by["done"][0]
    cards = {c["number"]: c for c in by["sources"][0]["sources"]}
    cited = [cards[n] for n in done["citations"]]
    assert cited and all(c["arxiv_id"] == "2405.00002" and c["kind"] == "abstract" for c in cited)
    assert "Scaling the transformer improves image quality" in done["content"]
    # Its body still backs the answer as the next card, with its page.
    assert any(c["arxiv_id"] == "2405.00002" and c["page"] for c in cards.values())


async def test_a_list_shows_no_paper_that_says_nothing_of_its_topic(catalogue):
    _, by = await run("papers on diffusion models")
    cards = by["sources"][0]["sources"]
    # The search ranks every paper of the small catalogue; the list keeps those on diffusion,
    # and its cards are numbered as its lines.
    assert cards and all("diffusion" in (c["title"] + c["passage"]).lower() for c in cards)
    assert [c["number"] for c in cards] == list(range(1, len(cards) + 1))
    assert sorted(by["done"][0]["citations"]) == [c["number"] for c in cards]


async def test_which_of_them_are_from_a_year_lists_those_and_says_how_many(shown_list):
    _, by = await run("which of them were published before 2020?", [shown_list])
    content = by["done"][0]["content"]
    assert content.startswith("Of the 3 papers of the previous answer, one is in that window:")
    assert "1. **Attention is all you need for translation** (2017-06-12)" in content
    assert [c["arxiv_id"] for c in by["sources"][0]["sources"]] == ["1706.00004"]


async def test_the_last_years_of_them_is_a_window_not_the_last_papers(shown_list):
    # "the last 4 years" is not "the last 4 (papers)": a window over all three papers shown.
    _, by = await run("which of these were published in the last 4 years?", [shown_list])
    content = by["done"][0]["content"]
    assert content.startswith("Of the 3 papers of the previous answer, 2 are in that window:")
    assert [c["arxiv_id"] for c in by["sources"][0]["sources"]] == ["2405.00002", "2301.00001"]


async def test_a_model_is_told_which_papers_say_so_and_reads_the_sentence(shown_list, slow_openai):

    slow_openai.default = Reply("Latent diffusion transformers releases its code [1].")
    events = [
        e
        async for e in answer_events(
            "Which of these are open-source?", history=[shown_list], now=NOW, backend=get_llm()
        )
    ]
    assert events[-1]["type"] == "done" and events[-1]["backend"] == "openai"
    system, user = slow_openai.chat_requests()[-1].body["messages"][:2]
    assert "which of the 3 papers of your previous answer fit the question" in system["content"]
    assert "**Denoising diffusion models for video generation** (2023-01-10)" in system["content"]
    assert RELEASE in user["content"]  # the passage holding it, not cut to its best sentences


async def test_they_after_an_answer_citing_one_paper_is_that_paper(shown_list):
    # "What optimizer and learning rate schedule do they use?" after an answer quoting only the
    # Transformer's BLEU score was searched in every card's paper (DPR's and REALM's schedules).
    one = Turn(
        question="What BLEU score does it reach?", query="What BLEU score does it reach?",
        answer="**Latent diffusion transformers scale to high resolution** (2024-05-02): ... [2].",
        sources=shown_list.sources,
    )  # fmt: skip
    _, by = await run("how many steps do they train for?", [one])
    cards = by["sources"][0]["sources"]
    assert {c["arxiv_id"] for c in cards} == {"2405.00002"}
    assert "400k steps" in by["done"][0]["content"]

    # Picking among them still picks among every card's paper.
    _, by = await run("which of these are open-source?", [one])
    assert by["analysis"][0]["analysis"]["previous"]["referred"] == 3
