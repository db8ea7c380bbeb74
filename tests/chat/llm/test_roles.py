"""What a sentence of an abstract does, by rules: contribution, result, background or other."""

import pytest

from chat.llm.roles import BACKGROUND, CONTRIBUTION, OTHER, RESULT, role

CASES = [
    ("We propose a masked diffusion model that generates text in parallel.", CONTRIBUTION),
    ("In this paper, we introduce a universal visual prompting framework.", CONTRIBUTION),
    ("This paper investigates two techniques for efficient vision transformers.", CONTRIBUTION),
    ("Here we present GSGEN, a method for text-to-3D generation.", CONTRIBUTION),
    ("Our method outperforms the strongest baseline by 4.2% on COCO.", RESULT),
    ("Experiments show that the model reaches 57.7 PQ on COCO.", RESULT),
    ("It renders more than four times faster than sorted rasterization.", RESULT),
    ("Exploration with sparse rewards remains a long-standing challenge.", BACKGROUND),
    ("Diffusion models have achieved remarkable success in image generation.", BACKGROUND),
    ("3D Gaussian splatting has recently attracted great attention.", BACKGROUND),
    ("Recently, there has been an increasing number of studies employing RL.", BACKGROUND),
    ("However, existing methods suffer from slow sampling.", BACKGROUND),
    ("Existing ultrasound segmentation methods often struggle with new tasks.", BACKGROUND),
    ("Our model outperforms existing segmentation methods on COCO.", RESULT),
    ("The encoder maps each patch to a token.", OTHER),
]


@pytest.mark.parametrize(("sentence", "expected"), CASES)
def test_role_of_sentence(sentence, expected):
    assert role(sentence, position=2) == expected


def test_an_abstracts_opening_sentence_sets_the_scene_unless_it_says_what_was_done():
    assert role("The encoder maps each patch to a token.", position=0) == BACKGROUND
    assert role("We propose a new encoder.", position=0) == CONTRIBUTION
