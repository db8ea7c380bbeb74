import pytest

from papers.text import american_spelling, author_key, tex_to_plain


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


def test_author_key_folds_case_accents_and_spacing_but_keeps_word_order():
    assert (
        author_key(r"Erwin Schr\"odinger")
        == author_key("erwin  SCHRÖDINGER")
        == "erwin schrodinger"
    )
    assert author_key("Hinton, G.") != author_key("G Hinton")


@pytest.mark.parametrize(
    ("british", "american"),
    [
        ("How are QAOA parameters initialised?", "How are QAOA parameters initialized?"),
        ("optimisation of normalising flows", "optimization of normalizing flows"),
        ("We analysed the randomised trials", "We analyzed the randomized trials"),
        # -ise words that are no -ize verb, and words that only contain "is".
        ("a promising exercise: noise, pairwise, revised", "a promising exercise: noise, pairwise, revised"),
        ("this analysis is the basis", "this analysis is the basis"),
    ],
)  # fmt: skip
def test_american_spelling(british, american):
    assert american_spelling(british) == american
