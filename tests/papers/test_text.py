import pytest

from papers.text import (
    InvalidArxivId,
    author_key,
    is_arxiv_id,
    parse_arxiv_id,
    split_version,
    tex_to_plain,
)


@pytest.mark.parametrize(
    ("tex", "plain"),
    [
        (r"Schr\"odinger equation", "Schrodinger equation"),
        (r"Schr\"{o}dinger and {\"O}rsted", "Schrodinger and Orsted"),
        ("Schrödinger", "Schrodinger"),
        (r"Erd\H{o}s, \v{C}ech, Ho\c{c}a, \ss{} and \o", "Erdos, Cech, Hoca, ss and o"),
        (r"The $(k,\ell)$-pebble game", "The (k,ell)-pebble game"),
        (r"$\alpha\beta$-divergence with $O(n^2)$ cost", "alpha beta-divergence with O(n^2) cost"),
        (r"\emph{very} \textbf{bold} claims \cite{smith2020}", "very bold claims"),
        (r"100\% of \LaTeX{} users~agree --- mostly", "100% of LaTeX users agree - mostly"),
        ("  leading spaces\n  and line\nbreaks  ", "leading spaces and line breaks"),
        ("", ""),
        (None, ""),
    ],
)
def test_tex_to_plain(tex, plain):
    assert tex_to_plain(tex) == plain


def test_split_version():
    assert split_version("2401.12345v3") == ("2401.12345", 3)
    assert split_version("2401.12345") == ("2401.12345", None)
    assert split_version("hep-th/9901001v2") == ("hep-th/9901001", 2)
    assert split_version("math.AG/0101001") == ("math.AG/0101001", None)
    with pytest.raises(InvalidArxivId):
        split_version("abc")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://arxiv.org/abs/2401.12345v2", ("2401.12345", 2)),
        ("http://export.arxiv.org/abs/2401.12345", ("2401.12345", None)),
        ("https://arxiv.org/pdf/hep-th/9901001v1.pdf", ("hep-th/9901001", 1)),
        ("arxiv.org/pdf/2401.12345", ("2401.12345", None)),
        ("arXiv:1707.08567v1", ("1707.08567", 1)),
        (" quant-ph/0201082 ", ("quant-ph/0201082", None)),
    ],
)
def test_parse_arxiv_id_from_links(text, expected):
    assert parse_arxiv_id(text) == expected


@pytest.mark.parametrize("text", ["abc", "https://example.org/abs/2401.12345", "2401.123", ""])
def test_parse_arxiv_id_rejects_other_text(text):
    with pytest.raises(InvalidArxivId):
        parse_arxiv_id(text)


def test_is_arxiv_id_means_without_version():
    assert is_arxiv_id("2401.12345") and is_arxiv_id("cs/0503050")
    assert not is_arxiv_id("2401.12345v1")


def test_author_key_folds_case_accents_and_spacing_but_keeps_word_order():
    assert (
        author_key(r"Erwin Schr\"odinger")
        == author_key("erwin  SCHRÖDINGER")
        == "erwin schrodinger"
    )
    assert author_key("Hinton, G.") != author_key("G Hinton")
