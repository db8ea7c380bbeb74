"""The extractive backend: quotes only real sentences, cites only what it quoted."""

import gzip
import json
import re

import pytest

from chat.llm import AnswerRequest, LLMError, SourceText
from chat.llm.extractive import ExtractiveBackend, compose_answer

DIFFUSION = SourceText(
    1,
    "Denoising Diffusion Probabilistic Models",
    "Jonathan Ho, Ajay Jain, Pieter Abbeel",
    "2020-06-19",
    "Denoising Diffusion Probabilistic Models. We present high quality image synthesis results "
    "using diffusion probabilistic models, a class of latent variable models inspired by "
    "considerations from nonequilibrium thermodynamics. Our best results are obtained by "
    "training on a weighted variational bound, e.g. with a novel connection to denoising score "
    "matching with Langevin dynamics. On CIFAR10 we obtain an FID score of $3.17$. Code is "
    "public.",
)
TRANSFORMER = SourceText(
    2,
    "Attention Is All You Need",
    "Ashish Vaswani et al.",
    "2017-06-12",
    "Attention Is All You Need. The dominant sequence transduction models are based on "
    "recurrent networks as in [12]. We propose the Transformer, a network architecture based "
    "solely on attention mechanisms. Experiments on machine translation show superior quality "
    "with less training time.",
)
PROTEINS = SourceText(
    3,
    "Protein backbones with diffusion",
    "A. Author",
    "2023-03-01",
    "Protein backbones with diffusion. We apply diffusion models to protein backbone "
    "generation, following Ho et al. (2020). The sampled backbones are designable in "
    "silico. Diffusion sampling needs many network evaluations.",
)
SOURCES = [DIFFUSION, TRANSFORMER, PROTEINS]
CITED_LINE = re.compile(r"^- (?P<body>.+) \[(?P<n>\d+)\](?P<end>[.!?]+)$")


def quotes(answer: str) -> list[tuple[int, str]]:
    """(source number, quoted sentence) for each cited line of an answer."""
    found = []
    for line in answer.splitlines():
        if match := CITED_LINE.match(line):
            found.append((int(match["n"]), match["body"] + match["end"]))
    return found


def normalised(text: str) -> str:
    return " ".join(text.split())


def assert_only_real_quotes(answer: str, sources: list[SourceText]) -> None:
    by_number = {s.number: s for s in sources}
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", answer)}
    quoted = quotes(answer)
    assert cited == {n for n, _ in quoted}, "a [n] without a quote of source n"
    for number, sentence in quoted:
        source = by_number[number]
        body = sentence.rstrip(".!?")
        assert body in normalised(source.text) or body == source.title, sentence


def test_answer_quotes_relevant_sentences_with_their_citations():
    answer = compose_answer("How do diffusion models synthesize images?", SOURCES)

    assert answer.startswith("From the retrieved papers:")
    assert_only_real_quotes(answer, SOURCES)
    numbers = [n for n, _ in quotes(answer)]
    assert numbers[0] == 1  # the image synthesis sentence answers best
    assert 3 in numbers  # a second paper on diffusion is drawn on too
    assert 2 not in numbers  # the Transformer paper says nothing about diffusion


def test_answer_draws_on_several_sources_and_covers_3_to_6_sentences():
    answer = compose_answer("diffusion models sampling training protein images", SOURCES)

    quoted = quotes(answer)
    assert 3 <= len(quoted) <= 6
    assert {1, 3} <= {n for n, _ in quoted}
    assert_only_real_quotes(answer, SOURCES)


def test_abbreviations_and_tex_stay_inside_quoted_sentences():
    answer = compose_answer("weighted variational bound score matching", SOURCES)

    assert (
        "- Our best results are obtained by training on a weighted variational bound, e.g. "
        "with a novel connection to denoising score matching with Langevin dynamics [1]."
    ) in answer.splitlines()


def test_sentences_with_numbered_references_are_never_quoted():
    """ "as in [12]" inside an abstract would read as a citation of a source that is not there."""
    answer = compose_answer("sequence transduction models recurrent networks", SOURCES)

    assert "[12]" not in answer
    assert_only_real_quotes(answer, SOURCES)


def test_a_body_sentence_with_references_is_quoted_with_them_marked_as_the_papers():
    """In a paper's body "[20]" is everywhere, often in the sentence that answers; quoted, it is
    the paper's reference, never our source [2]."""
    diffusion = SourceText(2, DIFFUSION.title, DIFFUSION.authors, DIFFUSION.published,
                           DIFFUSION.text)
    chunk = SourceText(
        1, "Attention Is All You Need", "A. Vaswani", "2017-06-12",
        "5.3 Optimizer. We used the Adam optimizer [2] with β1 = 0.9, β2 = 0.98 and ϵ = 10−9. "
        "We varied the learning rate over the course of training.",
        arxiv_id="1706.03762", where="p. 7",
    )
    answer = compose_answer("What Adam beta2 did the Transformer use?", [chunk, diffusion])

    assert "We used the Adam optimizer [ref. 2] with β1 = 0.9, β2 = 0.98" in answer
    assert "optimizer [2]" not in answer  # source [2] is another paper


def test_a_passage_cut_mid_sentence_is_not_quoted_as_a_sentence():
    cut = SourceText(4, "Cut", "A. B.", "2024-01-01", "Sampling is fast. Diffusion sampling is slo")

    answer = compose_answer("fast sampling", [cut])

    assert "slo" not in answer
    assert quotes(answer) == [(4, "Sampling is fast.")]


def test_unrelated_sources_are_not_enough():
    """Source 1 ends with "Code is public.": one shared word does not make it an answer."""
    answer = compose_answer("What is known about quantum error correction codes?", SOURCES)

    assert "not enough" in answer
    assert "“quantum”" in answer
    assert not re.search(r"\[\d+\]", answer)  # nothing quoted, nothing cited


def test_question_terms_no_source_mentions_are_named():
    answer = compose_answer("protein backbone generation for weather forecasting", SOURCES)

    assert [n for n, _ in quotes(answer)][0] == 3
    assert answer.splitlines()[-1] == (
        "None of these papers mentions “weather” or “forecasting”, so they answer the "
        "question only in part."
    )


def test_a_question_word_the_papers_say_in_another_form_is_not_named_missing():
    muzero = SourceText(
        7, "MuZero", "A. B.", "2019-11-01",
        "MuZero plans without any knowledge of the game rules. It learns a model of the dynamics.",
    )  # fmt: skip

    answer = compose_answer("planning without knowing the game rules or the weather", [muzero])

    assert answer.splitlines()[-1] == (
        "None of these papers mentions “weather”, so they answer the question only in part."
    )


def test_the_title_line_of_a_first_page_is_not_quoted_as_a_sentence():
    first_page = SourceText(
        2, "NG-Scope: Fine-Grained Telemetry for NextG Cellular Networks", "Y. Xie",
        "2022-01-18", "NG-Scope: Fine-Grained Telemetry for NextG Cellular\nNetworks\nYAXIONG XIE "
        "and KYLE JAMIESON, Princeton University, USA\nAccurate telemetry of cellular networks "
        "is crucial.\nNG-Scope decodes the control channel of cellular networks to measure "
        "capacity.", "2201.05281", where="p. 1",
    )  # fmt: skip

    answer = compose_answer("NG-Scope telemetry for cellular networks", [first_page])

    assert quotes(answer) == [
        (2, "NG-Scope decodes the control channel of cellular networks to measure capacity.")
    ]


def test_a_section_label_run_into_a_first_sentence_is_not_quoted():
    swarm = SourceText(
        3, "Benchmarking Swarm Optimization for QAOA", "S. Bhat", "2025-06-01",
        "ABSTRACT The Quantum Approximate Optimization Algorithm (QAOA) is a prominent "
        "variational algorithm for combinatorial optimization.", "2506.06790", where="p. 1",
    )  # fmt: skip

    answer = compose_answer("quantum approximate optimization algorithm", [swarm])

    assert quotes(answer)[0][1].startswith("The Quantum Approximate Optimization Algorithm")


def test_a_run_in_heading_glued_to_its_sentence_is_not_quoted():
    moby = SourceText(
        4, "MoBYv2AL: Self-supervised Active Learning for Image Classification", "R. Caramalau",
        "2023-01-04", "Datasets.For the quantitative evaluation, we put forward four well-known "
        "image classification datasets: CIFAR-10, CIFAR-100 and SVHN.", "2301.01531", where="p. 5",
    )  # fmt: skip

    answer = compose_answer("datasets for the quantitative evaluation of MoBYv2AL", [moby])

    assert quotes(answer)[0][1].startswith("For the quantitative evaluation, we put forward four")


def test_no_sources_says_so():
    answer = compose_answer("diffusion models", [])

    assert "No papers were retrieved" in answer
    assert "[" not in answer


def test_question_without_a_topic_quotes_the_top_papers_openings():
    answer = compose_answer("What's new?", SOURCES)

    assert_only_real_quotes(answer, SOURCES)
    assert [n for n, _ in quotes(answer)] == [1, 2, 3]


def test_same_question_same_answer():
    question = "diffusion sampling cost"
    assert compose_answer(question, SOURCES) == compose_answer(question, SOURCES)


async def test_stream_sends_the_answer_in_word_chunks():
    request = AnswerRequest("How do diffusion models synthesize images?", SOURCES, [])
    stream = ExtractiveBackend(chunk_delay=0).stream(request)

    chunks = [chunk async for chunk in stream]

    assert len(chunks) > 20
    assert "".join(chunks) == compose_answer(request.question, SOURCES, 525)
    assert stream.finish_reason == "stop"


async def test_complete_is_unavailable():
    backend = ExtractiveBackend()

    assert backend.supports_complete is False
    with pytest.raises(LLMError) as caught:
        await backend.complete([{"role": "user", "content": "rewrite this"}])
    assert caught.value.code == "llm_unavailable"


def test_real_abstracts_only_real_quotes(shared_data):
    """Questions made of one paper's title against eight real (TeX-laden) abstracts."""
    path = shared_data / "arxiv-snapshot" / "arxiv-sample.jsonl.gz"
    papers = []
    with gzip.open(path, "rt") as lines:
        for line in lines:
            papers.append(json.loads(line))
            if len(papers) == 160:
                break
    answered = 0
    for start in range(0, 160, 8):
        batch = papers[start : start + 8]
        sources = [
            SourceText(
                i + 1, p["title"], p["authors"], "2020-01-01", f"{p['title']}\n\n{p['abstract']}"
            )
            for i, p in enumerate(batch)
        ]
        answer = compose_answer(f"What is known about {batch[3]['title']}?", sources)
        assert_only_real_quotes(answer, sources)
        answered += 4 in {n for n, _ in quotes(answer)}
    assert answered >= 18  # the paper whose title was asked about is quoted nearly always


def test_a_sentence_giving_a_web_address_answers_only_where_something_is(shared_data):
    import gzip
    import json

    from chat.llm.extractive import answering_scores

    with gzip.open(shared_data / "arxiv-snapshot" / "arxiv-sample.jsonl.gz", "rt") as lines:
        survey = next(r for line in lines if (r := json.loads(line))["id"].startswith("2211.07804"))
    source = SourceText(1, survey["title"], "", "2022-11-14",
                        f"{survey['title']}. {survey['abstract']}", arxiv_id="2211.07804")
    # Its last sentence says the studies' implementations are "at https://github.com/…": it had
    # answered "compare diffusion models and GANs for medical image generation".
    link = "https://github.com/amirhossein-kz/Awesome-Diffusion-Models-in-Medical-Imaging"
    assert link in survey["abstract"]
    # What the composer's shapes (overview, comparison, list) choose from: it was the chosen
    # "On diffusion models" quote of the comparison.
    from chat.llm.shapes import _Scorer

    question = "compare diffusion models and GANs for medical image generation"
    candidates = [s.text for s in _Scorer([source], question).sentences]
    assert candidates and not any(link in text for text in candidates)
    quoted = answering_scores("Where are the implementations of diffusion models for medical "
                              "imaging available?", [source])
    assert link in quoted[1][1]


def test_the_papers_plan_of_itself_is_not_quoted():
    qaoa = SourceText(
        5, "The Effect of Classical Optimizers and Ansatz Depth on QAOA Performance", "A. Pellow",
        "2023-07-01", "The remainder of the paper is structured as follows: Section 1 revises the "
        "QAOA algorithm and Section 3 presents our findings on QAOA optimizers. We find that SPSA "
        "is the best QAOA optimizer under realistic noise.", "2307.10149", where="p. 2",
    )  # fmt: skip

    answer = compose_answer("QAOA optimizers findings", [qaoa])

    assert [q for _, q in quotes(answer)] == [
        "We find that SPSA is the best QAOA optimizer under realistic noise."
    ]


def test_a_datasheets_questions_to_its_reader_are_not_quoted():
    # OPT's datasheet opened the answer to "What is the relationship between ResNet and batch
    # normalization?" with its form's "If so, please describe how these relationships …".
    opt = SourceText(
        2, "OPT: Open Pre-trained Transformer Language Models", "S. Zhang", "2022-05-02",
        "If so, please describe how these relationships are made explicit. Please describe any "
        "relationships between the instances. There are no explicit relationships between "
        "individual instances.",
        "2205.01068", where="p. 20",
    )  # fmt: skip

    answer = compose_answer("relationships between instances", [opt])

    assert [q for _, q in quotes(answer)] == [
        "There are no explicit relationships between individual instances."
    ]


def test_a_chunk_cut_at_an_abbreviations_dot_is_not_quoted_as_a_sentence():
    # DPR's chunk ended "… by a large margin (65.2% vs." and that was quoted as a sentence.
    dpr = SourceText(
        6, "Dense Passage Retrieval for Open-Domain Question Answering", "V. Karpukhin",
        "2020-04-01", "Our Dense Passage Retriever (DPR) is exceptionally strong against BM25. It "
        "not only outperforms BM25 by a large margin (65.2% vs.", "2004.04906", where="p. 2",
    )  # fmt: skip

    answer = compose_answer("Why does DPR outperform BM25?", [dpr])

    assert [q for _, q in quotes(answer)] == [
        "Our Dense Passage Retriever (DPR) is exceptionally strong against BM25."
    ]


def test_a_publishers_notices_and_index_terms_are_not_quoted():
    plain = SourceText(
        8, "Paper Plain", "T. August", "2022-02-28",
        "Request permissions from permissions@acm.org. Human-centered computing → Empirical "
        "studies in interaction design; User studies. A total of 12 participants completed the "
        "user study.", "2203.00130", where="p. 1",
    )  # fmt: skip

    answer = compose_answer("How many participants were in the user study?", [plain])

    assert [q for _, q in quotes(answer)] == [
        "A total of 12 participants completed the user study."
    ]


def test_who_paid_for_the_work_is_not_quoted_outside_its_acknowledgements():
    # Multi-LexSum's "… was also funded in part by NSF Convergence Accelerator Award ITE-2132318"
    # opened "What datasets does Multi-LexSum provide and how large is it?".
    lexsum = SourceText(
        5, "Multi-LexSum: Real-World Summaries of Civil Rights Lawsuits", "Z. Shen", "2022-06-01",
        "The construction of the Multi-LexSum dataset was also funded in part by NSF Convergence "
        "Accelerator Award ITE-2132318. There are a total of 4,539 instances in this dataset, "
        "along with 40,119 source documents and 9,280 summaries. The dataset is supported by "
        "the court records of the Clearinghouse.", "2206.10883", where="p. 10",
    )  # fmt: skip

    answer = compose_answer("How large is the Multi-LexSum dataset?", [lexsum])

    quoted = [q for _, q in quotes(answer)]
    assert not any("funded" in q for q in quoted)
    assert any("4,539 instances" in q for q in quoted)


def test_a_question_the_paper_asks_is_not_quoted_as_what_it_says():
    # Multi-LexSum's datasheet: "USE Has the dataset been used for any tasks already?" was
    # quoted among the answer's facts.
    lexsum = SourceText(
        7, "Multi-LexSum: Real-World Summaries of Civil Rights Lawsuits", "Z. Shen", "2022-06-01",
        "USE Has the dataset been used for any tasks already? The dataset has been used for "
        "summarization tasks of lawsuits at three granularities.", "2206.10883", where="p. 32",
    )  # fmt: skip

    answer = compose_answer("What tasks has the Multi-LexSum dataset been used for?", [lexsum])

    assert [q for _, q in quotes(answer)] == [
        "The dataset has been used for summarization tasks of lawsuits at three granularities."
    ]
