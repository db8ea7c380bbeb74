"""A paper's body split into the sentences the composer may quote (chat.llm.sentences), on the
text of the shared arXiv PDFs as papers.fulltext.parse reads it: a section heading, a footnote
holding a link, a footnote's mark after a full stop and a list's bullets are printed on the lines
around a sentence, and none of them is part of it."""


from chat.llm.sentences import is_heading, passage_sentences


def _around(text: str, marker: str, before: int = 300, after: int = 700) -> list[str]:
    at = text.index(marker)
    return passage_sentences(text[max(0, at - before) : at + after])


def test_a_section_heading_is_a_sentence_of_its_own_never_quoted(text_of):
    sentences = _around(text_of("1706.03762v7"), "5.2 Hardware and Schedule")
    assert "5.2 Hardware and Schedule" in sentences and is_heading("5.2 Hardware and Schedule")
    # The section's first sentence starts where the authors start it.
    assert "We trained our models on one machine with 8 NVIDIA P100 GPUs." in sentences
    assert not any(s.startswith("5.2") and s != "5.2 Hardware and Schedule" for s in sentences)
    assert not any(is_heading(s) for s in sentences if s.endswith("."))


def test_a_heading_wrapped_over_two_lines_is_one_heading(text_of):
    sentences = _around(text_of("2305.13048v1"), "C Parameter and FLOP Count")
    assert "C Parameter and FLOP Count for the RWKV Models" in sentences
    assert any(s.startswith("The following section provides an overview") for s in sentences)


def test_a_footnote_holding_a_link_is_not_glued_to_the_next_sentence(text_of):
    sentences = _around(text_of("2205.01068v1"), "4https://github.com/NVIDIA/")
    adamw = next(s for s in sentences if "AdamW optimizer" in s)
    assert adamw.startswith("We use an AdamW optimizer (Loshchilov and Hutter, 2017)")
    assert not any("github.com" in s for s in sentences)


def test_a_footnotes_mark_after_a_full_stop_ends_the_sentence(text_of):
    # "… which results in 21,015,324 passages in the end.5\nEach passage is also prepended …"
    sentences = _around(text_of("2004.04906v3"), "passages in the end.")
    said = next(s for s in sentences if "21,015,324 passages" in s)
    assert said.endswith("which results in 21,015,324 passages in the end.")
    assert any(s.startswith("Each passage is also prepended with the title") for s in sentences)
    # A decimal number is no footnote's mark.
    assert passage_sentences("Accuracy rose by 3.5 The rest fell.") == [
        "Accuracy rose by 3.5 The rest fell."
    ]


def test_a_lists_bullets_are_sentences_of_their_own(text_of):
    sentences = _around(text_of("2305.13048v1"), "We release pretrained model")
    assert (
        "We release pretrained model ranging in size from 169 million to 14 billion parameters "
        "trained on the Pile (Gao et al., 2020)."
    ) in sentences
    assert not any("•" in s for s in sentences)
