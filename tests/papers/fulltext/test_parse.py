"""The cleaning of PDFium's page texts (pure: raw page strings in, text and offsets out)."""

from papers.fulltext.parse import clean_pages, heading_title

HEAD = "Published as a conference paper at ICLR 2015"


def _page(n: int, *body: str) -> str:
    return "\r\n".join([HEAD, *body, str(n)])


def test_line_end_hyphens_join_words_and_keep_real_compounds():
    pages = [
        _page(
            1, "1 Introduction", "A dual-encoder is ef\ufffeficient; we train a dual\ufffeencoder."
        ),
        _page(2, "It is fast and effi\ufffecient, unlike a cross-encoder or a cross\ufffeencoder."),
        _page(3, "We use the tok\ufffeenizer of BERT and a GPT\ufffe3 model."),
    ]
    text = clean_pages(pages).text
    assert "efficient" in text and "effi-cient" not in text and "ef-ficient" not in text
    assert "dual-encoder." in text and "cross-encoder." in text
    assert "tokenizer" in text  # neither half is a word of the paper: hyphenation
    assert "\ufffe" not in text


def test_running_heads_page_numbers_and_the_arxiv_stamp_are_dropped():
    pages = [
        _page(1, "Attention is all you need", "arXiv:1706.03762v7 [cs.CL] 2 Aug 2023"),
        _page(2, "2 Background", "The body of page two."),
        _page(3, "More body text on page three."),
        _page(4, "And page four."),
    ]
    parsed = clean_pages(pages)
    assert HEAD not in parsed.text and "arXiv:1706" not in parsed.text
    assert "\n2\n" not in parsed.text and not parsed.text.rstrip().endswith("4")
    assert parsed.text[parsed.page_starts[1] :].startswith("2 Background")
    assert [s["title"] for s in parsed.sections] == ["2 Background"]


def test_references_are_dropped_and_an_appendix_after_them_is_kept():
    pages = [
        _page(1, "1 Introduction", "We cite a paper [1]."),
        _page(2, "5 Conclusion", "It works.", "References", "[1] A. Author. A title. 2020."),
        _page(3, "[2] B. Author. Another title. 2021.", "A Hyperparameters", "lr = 0.001"),
    ]
    parsed = clean_pages(pages)
    assert "A title. 2020" not in parsed.text and "Another title" not in parsed.text
    assert "A Hyperparameters\nlr = 0.001" in parsed.text
    titles = [s["title"] for s in parsed.sections]
    assert titles == ["1 Introduction", "5 Conclusion", "A Hyperparameters"]
    for section in parsed.sections:
        assert parsed.text[section["start"] :].startswith(section["title"])
    assert parsed.page_of(parsed.text.index("lr = 0.001")) == 3


def test_ligatures_are_expanded():
    assert "first flow" in clean_pages(["\ufb01rst \ufb02ow of text"]).text


def test_heading_recognition_is_cheap_but_not_fooled_by_table_rows_or_sentences():
    assert heading_title("3.2 Training Details") == "3.2 Training Details"
    assert heading_title("IV. EXPERIMENTS") == "IV. EXPERIMENTS"
    assert heading_title("Abstract") == "Abstract"
    assert heading_title("1 BERT 84.3 91.2 88.0") is None
    assert (
        heading_title("2 Then we minimise the loss over all the training examples we have.") is None
    )


def test_a_reference_list_without_a_heading_is_dropped_and_a_wrapped_title_is_no_appendix():
    # REVTeX prints no "References" heading; a wrapped reference title looks like "A <Title>".
    pages = [
        _page(1, "I. INTRODUCTION", "QAOA is studied [1, 2]."),
        _page(
            2,
            "II. RESULTS",
            "It works [3].",
            "[1] E. Farhi and J. Goldstone, A quantum",
            "algorithm, arXiv (2014).",
        ),
        _page(
            3,
            "[2] B. Smith, Another one (2020).",
            "A Depth-Progressive Initialization Strategy for",
            "Quantum Optimization, PRX 1, 2 (2021).",
            "[3] C. Doe, Last (2022).",
        ),
    ]
    text = clean_pages(pages).text
    assert "It works [3]." in text
    assert "Farhi" not in text and "Depth-Progressive" not in text and "Last (2022)" not in text


def test_appendix_headings_after_the_references_are_kept_and_sentences_are_not_headings():
    assert heading_title("Appendix B Search") == "Appendix B Search"
    assert heading_title("APPENDIX A: Proofs") == "APPENDIX A: Proofs"
    assert heading_title("Supplementary Materials") == "Supplementary Materials"
    assert heading_title("Appendix B shows that the") is None
    assert heading_title("Appendix B.") is None  # "… described in\nAppendix B."
    pages = [
        _page(1, "1 Introduction", "We cite a paper [1]."),
        _page(2, "References", "[1] A. Author. A title. 2020.", "[2] B. Author. More. 2021."),
        _page(3, "Appendix G Training", "We used 16", "TPUs for training."),
    ]
    parsed = clean_pages(pages)
    assert "A title. 2020" not in parsed.text
    assert "Appendix G Training\nWe used 16\nTPUs for training." in parsed.text
    assert parsed.page_of(parsed.text.index("TPUs for training")) == 3


def test_muzero_appendices_are_read_from_the_real_pdf(shared_data):
    # MuZero prints its references before "Appendix A …" to "Appendix I …" (pages 11-16).
    from papers.fulltext.parse import parse_pdf

    parsed = parse_pdf((shared_data / "arxiv-pdf" / "1911.08265v2.pdf").read_bytes())
    titles = [s["title"] for s in parsed.sections]
    assert "Appendix G Training" in titles and "Appendix C Hyperparameters" in titles
    at = parsed.text.index("we used 16\nTPUs for training")
    assert parsed.page_of(at) == 15
    assert "Tobias Pohlen" not in parsed.text  # its references (p. 10) are still dropped
