"""Sentence splitting that survives abbreviations and TeX, on made-up and real abstracts."""

import json
import re

import pytest

from chat.llm.sentences import (
    content_words,
    spells_greek,
    split_sentences,
    term_set,
    terms,
    tokens,
)


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        (
            "We study priors, e.g. Gaussian ones. They help.",
            ["We study priors, e.g. Gaussian ones.", "They help."],
        ),
        (
            "Following Ho et al. (2020) we train. It works.",
            ["Following Ho et al. (2020) we train.", "It works."],
        ),
        ("As in Fig. 3 the loss drops. Fine.", ["As in Fig. 3 the loss drops.", "Fine."]),
        ("J. Smith proposed it. We agree.", ["J. Smith proposed it.", "We agree."]),
        (
            "The error is $p < 0.05$. The bound is $O(n. m)$ here.",
            ["The error is $p < 0.05$.", "The bound is $O(n. m)$ here."],
        ),
        (
            "We show \\(x. Y\\) holds. $N$-body codes are slow.",
            ["We show \\(x. Y\\) holds.", "$N$-body codes are slow."],
        ),
        ("Is it good? Yes! See Sec. 4.", ["Is it good?", "Yes!", "See Sec. 4."]),
        ("Accuracy rose by 3.5%. Costs fell.", ["Accuracy rose by 3.5%.", "Costs fell."]),
        (
            "A title without a stop\n\nThe abstract starts.",
            ["A title without a stop", "The abstract starts."],
        ),
        ("Hard-wrapped\nlines are   joined. Yes.", ["Hard-wrapped lines are joined.", "Yes."]),
        ("", []),
    ],
)
def test_split_sentences(text, sentences):
    assert split_sentences(text) == sentences


def test_terms_drop_question_words_and_stem():
    assert content_words("What are the latest papers on Diffusion Models?") == [
        "diffusion",
        "models",
    ]
    assert terms("diffusion models, a model of $x_t$") == ["diffus", "model", "model"]


def test_greek_letters_are_the_words_a_question_types_for_them():
    # "What beta2 value…" and the PDF's "β2 = 0.98" share the term; so do "epsilon" and "ϵ".
    assert terms("Adam with β2 = 0.98 and ϵ = 10−9") == terms("Adam beta2 98 epsilon 10")
    assert "beta2" in terms("What beta2 value did the Transformer use?")
    # A numbered letter is the letter too: "What were its beta values?" asks for β1 and β2.
    assert "beta" in terms("We used the Adam optimizer with β1 = 0.9, β2 = 0.98")


def test_real_abstracts_split_without_losing_text(shared_data):
    """Every character of 200 real abstracts (TeX, line breaks) lands in exactly one sentence,
    and no sentence ends on an abbreviation."""
    path = shared_data / "arxiv-snapshot" / "arxiv-metadata-oai-snapshot.head200.jsonl"
    abstracts = [json.loads(line)["abstract"] for line in path.read_text().splitlines()]
    assert len(abstracts) == 200
    for abstract in abstracts:
        sentences = split_sentences(abstract)
        assert " ".join(sentences) == " ".join(abstract.split())
        for sentence in sentences[:-1]:
            assert not re.search(r"\b(e\.g|i\.e|et al|Fig|Eq|cf|vs)\.$", sentence), sentence


@pytest.mark.parametrize(
    "text",
    [
        "Diffusion models, a model of $x_t$ and \\(y\\), trained for 3 days.",
        "Adam with β2 = 0.98 and ϵ = 10−9; Β and Ω in capitals.",
        "What are the latest papers on a b c 1 2 models? The models, the MODELS.",
        "",
    ],
)
def test_term_set_is_the_set_of_terms(text):
    assert term_set(text) == set(terms(text))


@pytest.mark.parametrize(
    "text",
    [
        "warmup_steps = 4000; lr=3e-4, β2 0.98 (İstanbul, café, naïve, ﬁne-tuning, K-means)",
        "\x00nul\ud800lone surrogate\u00adsoft hyphen\u200bzero width\tTAB\nline",
        "https://github.com/x_y/z.py?a=1#b, a@b.com, 1,000.5, e.g., i.e., GPT-3's",
        "",
    ],
)
def test_tokens_are_the_runs_of_lower_case_letters_and_digits(text):
    lowered = text.lower()
    assert tokens(lowered) == re.findall(r"[a-z0-9]+", lowered)


def test_tokens_of_real_abstracts_are_the_regular_expressions(shared_data):
    path = shared_data / "arxiv-snapshot" / "arxiv-metadata-oai-snapshot.head200.jsonl"
    for line in path.read_text().splitlines():
        lowered = json.loads(line)["abstract"].lower()
        assert tokens(lowered) == re.findall(r"[a-z0-9]+", lowered)


def test_spells_greek():
    assert spells_greek("β2 = 0.98") and spells_greek("Ω(n)")
    assert not spells_greek("beta2 = 0.98, $\\alpha$")


def test_a_british_spelling_stems_as_the_american_one():
    # "How are QAOA parameters initialised?": "initialis" and "initi" were different stems, so
    # the papers' "initialization" never matched the question's main word.
    from chat.llm.sentences import terms

    assert terms("initialised initialisation") == terms("initialized initialization")
    assert terms("optimised, analysed") == terms("optimized, analyzed")
    assert terms("promise noise") == ["promis", "nois"]


def test_the_authors_naming_their_datasets_is_prose_not_a_figures_text():
    # One function word in fourteen, so RAG's list of its datasets was taken for a figure's
    # labels and never quoted for "which datasets is RAG evaluated on?".
    from chat.llm.sentences import is_figure_text

    assert not is_figure_text(
        "We consider four popular open-domain QA datasets: Natural Questions (NQ) [29], "
        "TriviaQA (TQA) [24]."
    )
    assert is_figure_text(
        "10 M 30 M 100 M 300 M Number of JFT pre-training samples 30 40 50 60 70 Linear 5-shot"
    )
