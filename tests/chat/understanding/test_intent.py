"""The intent of a question, by rules: a table of questions a researcher types, read with the
real analysis (authors, categories, ids, windows) as the pipeline reads them."""

from datetime import UTC, datetime

import pytest

from chat.understanding.analysis import analyse
from chat.understanding.intent import (
    Intent,
    asks_citation_counts,
    classify,
    compare_context,
    list_topic,
    listed_by,
    sources_wanted,
)

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)

# (question, kind, latest)
CASES = [
    # Lists: by author, by category, "papers on X", noun phrases, "latest/recent papers on X".
    ("papers by Jianfeng Gao", "list", False),
    ("Jianfeng Gao's papers since 2023", "list", False),
    ("cs.CL papers", "list", False),
    ("papers on 3D Gaussian splatting", "list", False),
    ("recent papers on 3D gaussian splatting", "list", True),
    ("latest work on LLM hallucination", "list", True),
    ("diffusion language models since last year", "list", False),
    ("Which papers use transformers for speech?", "list", False),
    ("show me work about protein folding", "list", False),
    ("find papers on retrieval-augmented generation", "list", False),
    ("papers on GANs or VAEs?", "list", False),
    # Seed: an id or a URL.
    ("papers like 2309.00267", "seed", False),
    ("https://arxiv.org/abs/2309.00267", "seed", False),
    ("anything similar to arXiv:2311.05437v2?", "seed", False),
    ("newest papers like 2309.00267", "seed", True),
    # A named paper.
    ("what did Segment Anything find?", "named_paper", False),
    ("What does the paper Visual Instruction Tuning propose?", "named_paper", False),
    (
        'summarize the paper "LLaVA-Plus: Learning to Use Tools for Creating Multimodal Agents"',
        "named_paper",
        False,
    ),
    ("summarize 2309.00267", "named_paper", False),
    ("what are the main findings of Attention Is All You Need", "named_paper", False),
    ("What is the paper DeVRF: Fast Deformable Voxel Radiance Fields about?", "named_paper", False),
    ("tell me about the paper Deep Residual Learning for Image Recognition", "named_paper", False),
    # Compare.
    ("compare DPO and RLHF", "compare", False),
    ("DPO vs RLHF for alignment", "compare", False),
    ("What is the difference between GANs and diffusion models?", "compare", False),
    ("How does LoRA differ from full fine-tuning?", "compare", False),
    ("Is LoRA or full fine-tuning better?", "compare", False),
    # Timeline: evolution words, or an overview question over a window of several years.
    ("how has object detection evolved?", "timeline", False),
    ("history of neural machine translation", "timeline", False),
    ("How have vision transformers changed since 2021?", "timeline", False),
    ("what is known about video generation between 2019 and 2024?", "timeline", False),
    # Overview: how/why/what questions.
    ("How do diffusion models handle text generation?", "overview", False),
    ("what was new in reinforcement learning in 2023", "overview", False),
    ("What is RLHF?", "overview", False),
    ("why does dropout work", "overview", False),
    ("what did people think about GANs in 2021?", "overview", False),
    # The authors' own plans, not a request for papers ("future work").
    (
        "What future work do the authors of the SWAP-free QAOA framework suggest?",
        "overview",
        False,
    ),
    # "work" after a plural is the verb, not "works" (papers).
    ("Which classical optimizers work best for QAOA?", "overview", False),
    ("Which optimizers work for noisy devices?", "overview", False),
    ("Does it work with ResNets?", "overview", False),
    ("is there work on RAG?", "list", False),
    ("what work exists on RAG?", "list", False),
    ("What is the state of the art in image segmentation?", "overview", True),
    ("How are LLM agents evaluated these days?", "overview", True),
    # A window that ended long ago is not "the latest".
    ("what was the state of the art on GANs in 2019?", "overview", False),
    ("latest results on GANs in 2019", "list", False),
]


@pytest.mark.parametrize(("question", "kind", "latest"), CASES)
def test_intent_of_question(question, kind, latest):
    intent = classify(question, analyse(question, NOW), NOW.date())

    assert (intent.kind, intent.latest) == (kind, latest), intent


@pytest.mark.parametrize(
    ("question", "sides"),
    [
        ("compare DPO and RLHF", ("DPO", "RLHF")),
        ("DPO vs RLHF for alignment", ("DPO", "RLHF")),
        ("what are the tradeoffs of DPO vs RLHF?", ("DPO", "RLHF")),
        ("difference between GANs and diffusion models", ("GANs", "diffusion models")),
        ("How does LoRA differ from full fine-tuning?", ("LoRA", "full fine-tuning")),
    ],
)
def test_compare_names_both_sides(question, sides):
    assert classify(question, analyse(question, NOW), NOW.date()).subjects == sides


def test_named_paper_keeps_the_title_as_typed():
    question = "what did Visual In-Context Prompting find?"
    intent = classify(question, analyse(question, NOW), NOW.date())
    assert intent.title == "Visual In-Context Prompting"


def test_lists_chosen_by_a_filter_say_so():
    by_author = classify("papers by Jianfeng Gao", analyse("papers by Jianfeng Gao", NOW))
    by_topic = classify("papers on GANs", analyse("papers on GANs", NOW))
    assert by_author.by_filter and not by_topic.by_filter


def test_works_with_the_analysis_dict_and_without_analysis():
    question = "papers by Jianfeng Gao"
    as_dict = analyse(question, NOW).to_dict()
    assert classify(question, as_dict, NOW.date()).kind == "list"
    assert classify("How do transformers work?").kind == "overview"
    assert classify("").kind == "list"  # nothing asked: the search lists what the filters found


def test_timelines_and_filtered_lists_ask_for_more_sources():
    assert sources_wanted(Intent("timeline"), 8) == 16
    assert sources_wanted(Intent("list", by_filter=True), 8) == 12
    assert sources_wanted(Intent("overview"), 8) == 8
    assert sources_wanted(Intent("list"), 8) == 8


@pytest.mark.parametrize(
    ("question", "kind", "sides"),
    [
        # A side that is a clause weighs an effect against a baseline: not two named things.
        ("How much does retrieval help RAG on open-domain QA compared with a closed-book model?",
         "overview", ()),
        ("How does LoRA perform compared with full fine-tuning?", "compare",
         ("LoRA", "full fine-tuning")),
        ("How does RAG compare with a closed-book T5 on Natural Questions?", "compare",
         ("RAG", "closed-book T5")),
    ],
)  # fmt: skip
def test_a_compare_side_is_a_name_not_a_clause(question, kind, sides):
    intent = classify(question, analyse(question, NOW), NOW.date())
    assert (intent.kind, intent.subjects) == (kind, sides)


@pytest.mark.parametrize(
    "question, context",
    [
        ("compare diffusion models and GANs for medical image generation", "medical image generation"),
        ("How do transformers differ from RNNs for time series forecasting?", "time series forecasting"),
        ("DPO vs RLHF for alignment", "alignment"),
        ("compare DPO and RLHF", ""),
        ("How does LoRA differ from full fine-tuning?", ""),
        # After two names, the words in lower case: the second side was "BM25 retrieval
        # accuracy", which no paper mentions.
        ("Compare DPR and BM25 retrieval accuracy", "retrieval accuracy"),
    ],
)
def test_a_comparison_keeps_what_it_compares_its_sides_in(question, context):
    # Each side is searched in it: "GANs" alone found GAN papers on faces and skin lesions, and
    # the paper comparing GANs and diffusion models on brain MR images was left out.
    subjects = classify(question).subjects
    assert len(subjects) == 2 and not set(context.split()) & set(" ".join(subjects).split())
    assert compare_context(question, subjects) == context


@pytest.mark.parametrize(
    "question",
    [
        "Summarize Constitutional AI in three sentences",
        "summarize Constitutional AI briefly",
        "give me a summary of Constitutional AI in 100 words.",
        "Summarize Constitutional AI, in plain English",
    ],
)
def test_how_long_a_summary_should_be_is_not_part_of_the_title(question):
    intent = classify(question, analyse(question, NOW), NOW.date())

    assert (intent.kind, intent.title) == ("named_paper", "Constitutional AI")


# Questions about a paper's record: who wrote it, when it appeared, which paper introduced a name.
@pytest.mark.parametrize(
    ("question", "title", "asks"),
    [
        ("Who wrote the Adam paper?", "Adam", "authors"),
        ("who are the authors of Attention Is All You Need?", "Attention Is All You Need", "authors"),
        ("authors of REALM", "REALM", "authors"),
        ("When was Attention Is All You Need published?", "Attention Is All You Need", "date"),
        ("when did RWKV come out?", "RWKV", "date"),
        ("Which paper introduced the Transformer?", "Transformer", "origin"),
        ("who first proposed dropout?", "dropout", "origin"),
    ],
)
def test_what_is_asked_of_a_papers_record(question, title, asks):
    intent = classify(question, analyse(question, NOW), NOW.date())

    assert (intent.kind, intent.title, intent.asks) == ("named_paper", title, asks)


@pytest.mark.parametrize(
    ("question", "kind", "title"),
    [
        ("What is the main idea of the RWKV paper?", "named_paper", "RWKV"),
        ("What is the key idea behind Fusion-in-Decoder?", "named_paper", "Fusion-in-Decoder"),
        ("Summarize RWKV", "named_paper", "RWKV"),
        ("What is the main idea of Attention Is All You Need?", "named_paper",
         "Attention Is All You Need"),
        ("What problem does NG-Scope solve?", "named_paper", "NG-Scope"),
        # Session 18 (helper newuser): each quoted a paper's appendix or another paper's
        # sentence, not what the paper reports.
        ("What is the main result of MuZero?", "named_paper", "MuZero"),
        ("What is the main result of the DPR paper?", "named_paper", "DPR"),
        ("What is the main result of ResNet on ImageNet?", "named_paper", "ResNet"),
        ("explain ViT in simple terms", "named_paper", "ViT"),
        ("Explain NG-Scope like I'm five", "named_paper", "NG-Scope"),
        ("who should read the Fusion-in-Decoder paper?", "named_paper", "Fusion-in-Decoder"),
        ("explain batch normalization in simple terms", "overview", ""),
        ("what is the main result of contrastive learning on small datasets?", "overview", ""),
        # Of a topic, the gist is an overview.
        ("What is the main idea of diffusion models?", "overview", ""),
        ("summarize diffusion", "overview", ""),
    ],
)
def test_the_gist_of_a_paper_named_by_a_name_or_a_title(question, kind, title):
    intent = classify(question, analyse(question, NOW), NOW.date())

    assert (intent.kind, intent.title) == (kind, title)


def test_a_record_question_names_a_paper():
    question = "what did REALM find?"
    assert classify(question, analyse(question, NOW), NOW.date()).asks == ""


@pytest.mark.parametrize(
    "question", ["who wrote it?", "Who are the authors?", "who are its authors?", "who wrote these papers?"]
)
def test_a_record_question_naming_no_paper_asks_of_the_papers_shown(question):
    intent = classify(question, analyse(question, NOW), NOW.date())
    assert (intent.kind, intent.title, intent.asks) == ("named_paper", "", "authors")


def test_a_question_after_citation_counts_is_known():
    for question in ["which is the most cited?", "How many citations does RAG have?",
                     "the most influential papers on QAOA", "Which paper is highly cited?"]:
        assert asks_citation_counts(question), question
    for question in ["papers citing RAG", "What does CiteSee show beside cited papers?"]:
        assert not asks_citation_counts(question), question


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        # Session 18 (helper newuser): a list of papers like RAG, never RAG itself.
        ("https://arxiv.org/abs/2005.11401 what does this paper do?", "named_paper"),
        ("explain arXiv:2005.11401", "named_paper"),
        ("2005.11401 - what is the paper about?", "named_paper"),
        ("what papers are like 2005.11401?", "seed"),
        ("https://arxiv.org/abs/2005.11401", "seed"),
        ("Which papers cite 2005.11401 and what does the paper do?", "seed"),
    ],
)
def test_a_question_on_the_paper_an_arxiv_id_names_asks_about_it(question, kind):
    intent = classify(question, analyse(question, NOW), NOW.date())

    assert intent.kind == kind
    if kind == "named_paper":
        assert intent.title == "2005.11401"


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        # Several papers written as one are no title: each paper with what it found.
        ("Summarize the findings of the QAOA papers since 2024", "list"),
        ("What are the main contributions of the QAOA papers?", "list"),
        ("Summarize Attention Is All You Need", "named_paper"),
        # Papers to read.
        ("Give me a reading list for learning about transformers", "list"),
        # What the papers say of something, not which papers.
        ("What do these papers say about scaling?", "overview"),
        ("What hardware do these papers train on?", "overview"),
        ("what work exists on RAG?", "list"),
    ],
)
def test_questions_over_several_papers(question, kind):
    assert classify(question, analyse(question, NOW), NOW.date()).kind == kind


@pytest.mark.parametrize(
    ("question", "sides"),
    [
        ("How do DPR and REALM differ in how they train the retriever?", ("DPR", "REALM")),
        ("What is the relationship between ResNet and batch normalization?",
         ("ResNet", "batch normalization")),
    ],
)
def test_two_things_set_side_by_side_are_a_comparison(question, sides):
    intent = classify(question, analyse(question, NOW), NOW.date())

    assert (intent.kind, intent.subjects) == ("compare", sides)


@pytest.mark.parametrize(
    ("question", "clause"),
    [
        ("Which papers use Adam?", "use Adam"),
        ("Which papers compare against BM25?", "compare against BM25"),
        ("papers that release code", "release code"),
        ("Which papers are about QAOA?", ""),
        ("papers on 3D Gaussian splatting", ""),
        ("what work exists on RAG?", ""),
    ],
)
def test_a_list_chosen_by_what_papers_do(question, clause):
    assert listed_by(question) == clause


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        ("Give me a reading list for learning about transformers", "for transformers"),
        ("Summarize the findings of the QAOA", "the QAOA"),
        ("papers on QAOA", "papers on QAOA"),
    ],
)
def test_what_a_lists_papers_must_be_on(question, topic):
    assert list_topic(question) == topic


@pytest.mark.parametrize(
    "question, kind, topic",
    [
        # Where to start reading is a list of papers, on the topic without the asking words
        # (an overview quoted ResNet's "too large to start converging").
        ("I'm new to deep learning for images, where should I start?", "list",
         "deep learning for images?"),
        ("what should I read first on retrieval-augmented generation?", "list",
         "retrieval-augmented generation?"),
        ("where should I start with QAOA?", "list", "QAOA?"),
        ("does the model start from scratch?", "overview", None),
    ],
)
def test_where_to_start_reading_is_a_list(question, kind, topic):
    understood = analyse(question, NOW)
    assert classify(question, understood, NOW.date()).kind == kind
    if topic is not None:
        assert list_topic(understood.query) == topic


@pytest.mark.parametrize(
    "question, title",
    [
        ("explain the Transformer to a biologist", "the Transformer"),
        ("explain Fusion-in-Decoder for complete beginners", "Fusion-in-Decoder"),
        ("describe RWKV to a physician", "RWKV"),
    ],
)
def test_a_paper_explained_to_a_reader_is_its_gist(question, title):
    intent = classify(question, analyse(question, NOW), NOW.date())
    assert (intent.kind, intent.title) == ("named_paper", title)
