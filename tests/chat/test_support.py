"""Each sentence of a model's answer against the sources it cites (chat.pipeline.support), the
passages a model is given (chat.pipeline.passages), and the underline on the page."""

import pytest

from chat.llm.base import SourceText
from chat.markdown import render_answer
from chat.pipeline.passages import select_passages
from chat.pipeline.support import SUPPORTED, answer_sentences, judge, unsupported
from papers.embeddings import get_embedder

SOURCES = [
    {"number": 1, "title": "Denoising diffusion models for video generation",
     "passage": "We extend denoising diffusion probabilistic models to video. Temporal attention "
     "keeps frames consistent. Our video diffusion model improves FVD on UCF-101."},
    {"number": 2, "title": "Latent diffusion transformers scale to high resolution",
     "passage": "Diffusion transformers replace the U-Net backbone with a transformer over latent "
     "patches. Scaling the transformer improves image quality. We train up to 3B parameters."},
    {"number": 3, "title": "Retrieval-augmented generation for open-domain question answering",
     "passage": "Retrieval-augmented generation grounds a language model in retrieved passages. "
     "It reduces hallucination on open-domain QA benchmarks."},
]
# Hand-labelled: what the cited source says (paraphrased), and claims it does not make.
SAID = [
    "Video diffusion models use temporal attention to keep frames consistent [1].",
    "Diffusion transformers swap the U-Net for a transformer on latent patches [2].",
    "Larger transformers give better images [2].",
    "Retrieval grounding reduces hallucinations [3].",
    "Video models improve FVD. [1]",
]
NOT_SAID = [
    "The model was trained on 10 trillion tokens of text [2].",
    "Diffusion models were invented in 1850 by Charles Darwin [1].",
    "It also makes models run ten times faster on mobile phones [3].",
    "Quantum computers factor large primes efficiently [3].",
]


@pytest.fixture(scope="module")
def minilm():
    return get_embedder("minilm")  # the bundled offline model: what production uses


def test_the_threshold_separates_what_sources_say_from_what_they_do_not(minilm):
    answer = "\n".join(f"- {s}" for s in SAID + NOT_SAID)
    judged = judge(answer, SOURCES, minilm)
    assert [j.supported for j in judged] == [True] * len(SAID) + [False] * len(NOT_SAID)
    said = [j.score for j in judged[: len(SAID)]]
    not_said = [j.score for j in judged[len(SAID) :]]
    assert min(said) - SUPPORTED > 0.1 and SUPPORTED - max(not_said) > 0.1  # a clear margin


def test_a_sentence_is_judged_only_against_what_it_cites(minilm):
    # True of source 1, but it cites source 3.
    assert unsupported("Temporal attention keeps video frames consistent [3].", SOURCES, minilm)
    assert not unsupported("Temporal attention keeps video frames consistent [1].", SOURCES, minilm)
    assert unsupported("A sentence citing nothing is not judged.", SOURCES, minilm) == []


def test_sentences_keep_their_spans_and_a_trailing_citation_goes_to_the_sentence_before():
    text = "First claim. [2]\n\n1. Second claim [1][3]. Third, no citation.\n- **Bold** fourth [2]."
    sentences = answer_sentences(text)
    assert [(s.text, s.cited) for s in sentences] == [
        ("First claim.", [2]), ("Second claim [1][3].", [1, 3]),
        ("Third, no citation.", []), ("**Bold** fourth [2].", [2]),
    ]
    assert [text[s.start : s.end] for s in sentences][1:] == [s.text for s in sentences][1:]
    assert text[sentences[0].start : sentences[0].end] == "First claim. [2]"


def test_unsupported_sentences_are_underlined_and_nothing_else_changes():
    text = "Supported [1]. <script>x()</script> Invented \ue001claim [1]."
    spans = [{"start": text.index("<script>"), "end": len(text)}]
    html = str(render_answer(text, 1, "m1", spans))
    assert '<span class="unsupported" title="not found in the cited source">' in html
    assert html.count("<span") == 1 and "\ue001" not in html and "<script>" not in html
    assert "&lt;script&gt;" in html and 'class="cite"' in html
    assert str(render_answer("Plain [1].", 1, "m1")) == str(render_answer("Plain [1].", 1, "m1", []))


@pytest.mark.parametrize("meaning", [False, True])
def test_a_model_reads_each_sources_best_sentences_not_the_whole_abstract(minilm, meaning):
    long = SourceText(1, "Video diffusion", "A. Author", "2024-01-01", (
        "Video generation is a long-standing challenge. Many methods exist. Compute is costly. "
        "We propose temporal attention for video diffusion. It keeps frames consistent. "
        "Code is available online."))
    short = SourceText(2, "Short", "", "", "One sentence only.")
    cut, same = select_passages("how does temporal attention help video diffusion", [long, short],
                                per_source=2, meaning=meaning, embedder=minilm)
    assert same == short
    assert "We propose temporal attention for video diffusion." in cut.text
    assert "Code is available" not in cut.text and "Many methods exist" not in cut.text
    assert cut.text.count("…") >= 1 and len(cut.text) < 0.6 * len(long.text)
    assert (cut.number, cut.title, cut.published) == (1, "Video diffusion", "2024-01-01")


class CountingEmbedder:
    """The real MiniLM, counting the sentences it is asked to embed."""

    def __init__(self, model):
        self.model, self.name, self.embedded = model, model.name + "-counted", []

    def embed_documents(self, texts):
        self.embedded += texts
        return self.model.embed_documents(texts)


def test_a_source_cited_again_is_not_embedded_again(minilm):
    # The support check embeds every sentence of the sources cited: the largest CPU cost of an
    # answer outside search (docs/BENCHMARKS.md, "Cutting the answer path's CPU"). A follow-up
    # citing the same paper pays only for its own new sentences.
    from chat.llm import meaning

    counted = CountingEmbedder(minilm)
    meaning._cache.clear()
    first = judge(SAID[0], SOURCES, counted)
    embedded_first = len(counted.embedded)
    again = judge(SAID[0], SOURCES, counted)
    follow_up = judge("Temporal attention keeps the frames of a video consistent [1].", SOURCES,
                      counted)

    assert embedded_first == 1 + 4  # the claim, the title and source 1's three sentences
    assert len(counted.embedded) == embedded_first + 1  # only the follow-up's claim
    assert [j.score for j in again] == [j.score for j in first]
    fresh = judge(SAID[0], SOURCES, minilm)  # another name: nothing shared, embedded anew
    assert [round(j.score, 5) for j in fresh] == [round(j.score, 5) for j in first]
    assert follow_up[0].supported
