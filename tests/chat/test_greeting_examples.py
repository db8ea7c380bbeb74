"""The greeting's example questions name a topic the catalogue's recent titles share, whole."""

import json

from chat.pipeline.direct import _frequent_phrase


def titles(shared_data) -> list[str]:
    metadata = shared_data / "arxiv-pdf" / "metadata.jsonl"
    return [json.loads(line)["title"] for line in metadata.read_text().splitlines()]


def test_a_name_shared_by_titles_is_given_whole_not_cut_after_two_words(shared_data):
    # "Quantum Approximate" is the commonest pair (a "Quantum Approximate Solver" too), but the
    # greeting asked "What is new on quantum approximate?": half of QAOA's name.
    assert _frequent_phrase(titles(shared_data)) == "quantum approximate optimization algorithm"


def test_a_common_pair_is_not_grown_into_a_rarer_phrase():
    recent = [
        "Diffusion models beat GANs on image synthesis",
        "Video diffusion models",
        "Latent diffusion models for images",
        "Consistency of diffusion models",
    ]
    assert _frequent_phrase(recent) == "diffusion models"
    assert _frequent_phrase(["Graph neural networks", "Attention for graphs"]) == ""
