"""Triage's table of cases: chat and questions about Flatuniverse itself are answered without a
search; everything that could be a topic, however short, is searched.

The table is what the rules are measured on (`test_triage_table_accuracy` prints the score).
"""

import pytest

from chat.understanding.triage import META, RESEARCH, SMALLTALK, triage

SMALL = [
    "hi", "Hi!", "hello", "Hello there", "hey", "hey!!", "hiya", "good morning", "Good evening!",
    "yo", "hi there, how are you?", "how are you?", "hello flatuniverse", "thanks!", "Thanks",
    "thank you", "Thank you so much!", "thx", "ty", "cheers", "great, thanks", "thanks, that was helpful", "ok great, bye", "ok thanks",
    "perfect", "awesome!", "got it", "that helps", "bye", "goodbye!", "see you later",
    "👋 hi", "hi 🙂", "ok", "okay.", "cool",
]  # fmt: skip
META_CASES = [
    "what can you do?", "What can you do", "what can I ask?", "who are you?", "Who are you",
    "what are you?", "help", "Help!", "how does this work?", "how do I use this?",
    "what is flatuniverse?", "are you a bot?", "what do you know?", "hi, what can you do?",
    "hey who are you", "what papers do you have?", "how can you help me?", "what are you good at?",
    "give me some examples", "what should I ask?",
]  # fmt: skip
RESEARCH_CASES = [
    "hi-c chromatin", "HI absorption lines", "GANs", "BERT", "diffusion", "hello world programs",
    "Hi-C contact maps", "HI 21cm emission in dwarf galaxies", "papers on diffusion language models",
    "which of these use transformers?", "compare DPO and RLHF", "recipes for sourdough bread",
    "thanks to attention, do transformers scale?", "thanks, now papers on GANs", "help me find papers on RLHF",
    "what can you tell me about protein folding?", "who are the main authors on graph neural networks?",
    "what is RLHF?", "good representations for molecules", "cool atoms in optical lattices",
    "great attractor dark flow", "ok so what about LoRA", "hey what's new in quantum error correction",
    "bye-bye boson", "perfect matchings in graphs", "yo-yo dynamics", "see-saw mechanism neutrino",
    "help vectors", "thank-you notes sentiment", "papers by Jianfeng Gao", "papers like 2309.00267",
    "latest work on LLM hallucination", "what was new in reinforcement learning in 2023",
    "How do diffusion models handle text generation?", "LLM", "NeRF", "hi res imaging",
]  # fmt: skip


@pytest.mark.parametrize("text", SMALL)
def test_small_talk_is_not_searched(text):
    verdict = triage(text)
    assert verdict.kind == SMALLTALK, verdict
    assert not verdict.searches


@pytest.mark.parametrize("text", META_CASES)
def test_questions_about_flatuniverse_are_meta(text):
    verdict = triage(text)
    assert verdict.kind == META, verdict


@pytest.mark.parametrize("text", RESEARCH_CASES)
def test_topics_however_short_are_searched(text):
    verdict = triage(text)
    assert verdict.kind == RESEARCH, verdict
    assert verdict.searches


def test_unsure_short_chatty_messages_are_searched_but_flagged():
    verdict = triage("hello world?")
    assert verdict.kind == RESEARCH and not verdict.sure
    assert triage("diffusion language models").sure


def test_triage_table_accuracy(capsys):
    table = [(t, SMALLTALK) for t in SMALL] + [(t, META) for t in META_CASES]
    table += [(t, RESEARCH) for t in RESEARCH_CASES]
    right = sum(triage(text).kind == kind for text, kind in table)
    with capsys.disabled():
        print(f"\ntriage rules: {right}/{len(table)} cases right")
    assert right == len(table)
