"""The one arXiv grammar (papers.identifiers): ids, links, ids in running text, categories."""

import pytest

from papers.identifiers import (
    InvalidArxivId,
    canonical_category,
    find_arxiv_ids,
    matching_categories,
    parse_arxiv_id,
    split_version,
)

# text -> (catalogue id, version); None: not an arXiv identifier.
IDS = [
    ("2401.12345", ("2401.12345", None)),
    ("2401.12345v3", ("2401.12345", 3)),
    ("0704.0001", ("0704.0001", None)),  # the first new-style id
    ("1412.6980v9", ("1412.6980", 9)),  # four digits until 1412
    ("1501.00001", ("1501.00001", None)),  # five from 1501
    ("hep-th/9901001v2", ("hep-th/9901001", 2)),
    ("cond-mat/0101001", ("cond-mat/0101001", None)),
    ("math.GT/0309136", ("math/0309136", None)),  # the subject class is not part of the id
    ("cs.AI/0101001v1", ("cs/0101001", 1)),
    ("HEP-TH/9901001", ("hep-th/9901001", None)),
    ("2401.1234", None),  # four digits after 2014
    ("1412.12345", None),  # five digits before 2015
    ("0703.1234", None),  # before the new scheme began (April 2007)
    ("2413.12345", None),  # no month 13
    ("hep-th/0801001", None),  # old style ended in 2007
    ("foo/9901001", None),  # not an archive of the old scheme
    ("hep-th/990100", None),
    ("2401.123456", None),
    ("abc", None),
    ("", None),
]


@pytest.mark.parametrize(("text", "expected"), IDS)
def test_split_version(text, expected):
    if expected is None:
        with pytest.raises(InvalidArxivId):
            split_version(text)
    else:
        assert split_version(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://arxiv.org/abs/2401.12345v2", ("2401.12345", 2)),
        ("http://export.arxiv.org/abs/2401.12345", ("2401.12345", None)),
        ("https://arxiv.org/pdf/hep-th/9901001v1.pdf", ("hep-th/9901001", 1)),
        ("https://arxiv.org/abs/math.GT/0309136", ("math/0309136", None)),
        ("arxiv.org/pdf/2401.12345", ("2401.12345", None)),
        ("https://www.arxiv.org/html/2401.12345v3/", ("2401.12345", 3)),
        ("https://doi.org/10.48550/arXiv.2401.12345", ("2401.12345", None)),
        ("arXiv:1707.08567v1", ("1707.08567", 1)),
        ("https://arxiv.org/abs/2401.12345?context=cs", ("2401.12345", None)),
        (" quant-ph/0201082 ", ("quant-ph/0201082", None)),
        *[(text, expected) for text, expected in IDS if expected],
    ],
)
def test_parse_arxiv_id_from_links(text, expected):
    assert parse_arxiv_id(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "abc",
        "https://example.org/abs/2401.12345",
        "2401.123",
        "https://arxiv.org/abs/2401.1234",
        *[text for text, expected in IDS if expected is None],
    ],
)
def test_parse_arxiv_id_rejects_other_text(text):
    with pytest.raises(InvalidArxivId):
        parse_arxiv_id(text)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("papers like 2401.12345 and math.GT/0309136v2", ["2401.12345", "math/0309136"]),
        ("see https://arxiv.org/abs/hep-th/9901001.", ["hep-th/9901001"]),
        ("GPT-4 (2023), 1000 layers, v2.1.0", []),
        ("x2401.12345 or 2401.123456 or 1.2401.12345", []),
        ("2401.1234 is not an id of 2024", []),
    ],
)
def test_find_arxiv_ids_in_text(text, found):
    assert [arxiv_id for arxiv_id, _ in find_arxiv_ids(text)] == found


def test_find_arxiv_ids_gives_the_span_to_cut():
    text = "similar to arXiv:2401.12345v2 please"
    [(arxiv_id, (start, end))] = find_arxiv_ids(text)
    assert (arxiv_id, text[start:end]) == ("2401.12345", "arXiv:2401.12345v2")


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("CS.cl", "cs.CL"),
        ("physics.OPTICS", "physics.optics"),
        ("quant-ph", "quant-ph"),
        ("cs", "cs"),
        ("cs.ZZ", None),
        ("english", None),
    ],
)
def test_canonical_category(text, canonical):
    assert canonical_category(text) == canonical


def test_an_archive_matches_every_category_under_it_and_a_category_only_itself():
    cs = matching_categories(["cs"])
    assert cs[0] == "cs" and {"cs.CL", "cs.LG", "cs.AI"} <= set(cs)
    assert all(c == "cs" or c.startswith("cs.") for c in cs)
    assert matching_categories(["CS.lg"]) == ["cs.LG"]
    assert matching_categories(["quant-ph", "hep-th"]) == ["quant-ph", "hep-th"]
    assert set(matching_categories(["cond-mat"])) >= {"cond-mat", "cond-mat.mes-hall"}
    # Outside the taxonomy: taken as written, exactly.
    assert matching_categories(["cs.XX"]) == ["cs.XX"]
