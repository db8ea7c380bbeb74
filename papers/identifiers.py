"""arXiv identifiers and categories: one grammar for the catalogue, its pages and API, the ingest
and the reading of search questions.

Identifiers (https://info.arxiv.org/help/arxiv_identifier.html), with an optional version "v2":
- new style: YYMM.NNNN from 0704 to 1412 ("0704.0001"), YYMM.NNNNN from 1501 ("2401.12345");
- old style, 1991 to 2007: archive[.SUBJECT]/YYMMNNN ("hep-th/9901001", "math.GT/0309136"),
  archives of that scheme only.
The catalogue stores an id without version and without subject class, as arXiv does
("math.GT/0309136" is "math/0309136"). `parse_arxiv_id` reads what people paste (bare ids,
"arXiv:…", abs/pdf/html links, the 10.48550 DOI); `find_arxiv_ids` finds them in running text.

Categories: the arXiv taxonomy (https://arxiv.org/category_taxonomy). A filter on a category
matches it exactly; a bare archive ("cs", "cond-mat") matches itself and every category under it
(`matching_categories`).
"""

import re
from collections.abc import Iterable
from datetime import UTC, datetime

# --- Identifiers --------------------------------------------------------------------------------

OLD_ARCHIVES = (
    "acc-phys adap-org alg-geom ao-sci astro-ph atom-ph bayes-an chao-dyn chem-ph cmp-lg comp-gas "
    "cond-mat cs dg-ga funct-an gr-qc hep-ex hep-lat hep-ph hep-th math math-ph mtrl-th nlin "
    "nucl-ex nucl-th patt-sol physics plasm-ph q-alg q-bio quant-ph solv-int supr-con"
).split()
_MONTH = r"(?:0[1-9]|1[0-2])"
NEW_STYLE_ID = (
    rf"(?:(?:07(?:0[4-9]|1[0-2])|(?:0[89]|1[0-4]){_MONTH})\.\d{{4}}"
    rf"|(?:1[5-9]|[2-9]\d){_MONTH}\.\d{{5}})"
)
OLD_STYLE_ID = rf"(?:{'|'.join(OLD_ARCHIVES)})(?:\.[A-Za-z]{{2}})?/(?:9[1-9]|0[0-7]){_MONTH}\d{{3}}"
# For URL patterns and the API schema: no capturing group, archives in lower case.
ARXIV_ID = rf"(?:{NEW_STYLE_ID}|{OLD_STYLE_ID})"

_VERSIONED = re.compile(rf"(?P<id>{ARXIV_ID})(?:v(?P<version>\d+))?", re.IGNORECASE)
_REFERENCE = (
    r"(?:(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html|format)/"
    r"|(?:https?://)?(?:dx\.)?doi\.org/10\.48550/arxiv\.|10\.48550/arxiv\.|arxiv\s*:\s*|arxiv\s+)?"
    rf"{_VERSIONED.pattern}(?:\.pdf)?(?:[?#]\S*)?/?"
)
_PASTED = re.compile(_REFERENCE, re.IGNORECASE)
# In running text, never a piece of a longer token ("x2401.12345", "2401.123456", "1.2401.1234").
_IN_TEXT = re.compile(rf"(?<![\w./-]){_REFERENCE}(?![\w/]|\.\d)", re.IGNORECASE)


class InvalidArxivId(ValueError):
    """Raised for text that is not an arXiv identifier (or abs/pdf link)."""


def _canonical(match: re.Match) -> tuple[str, int | None]:
    arxiv_id = match["id"].lower()
    if "/" in arxiv_id:  # the subject class is not part of the identity
        archive, number = arxiv_id.split("/")
        arxiv_id = f"{archive.split('.')[0]}/{number}"
    return arxiv_id, int(match["version"]) if match["version"] else None


def split_version(versioned_id: str) -> tuple[str, int | None]:
    """ "2401.12345v3" -> ("2401.12345", 3); "math.GT/0309136" -> ("math/0309136", None)."""
    match = _VERSIONED.fullmatch(versioned_id.strip())
    if not match:
        raise InvalidArxivId(f"not an arXiv identifier: {versioned_id!r}")
    return _canonical(match)


def submission_month(arxiv_id: str) -> datetime:
    """The first day (UTC) of the month an identifier was issued in, which is the month of the
    paper's first version: arXiv numbers papers YYMM.NNNNN (archive/YYMMNNN before April 2007).
    "1706.03762" -> 2017-06-01."""
    digits = arxiv_id.rsplit("/", 1)[-1][:4]
    if not (len(digits) == 4 and digits.isdigit() and 1 <= int(digits[2:]) <= 12):
        raise InvalidArxivId(f"not an arXiv identifier: {arxiv_id!r}")
    year = int(digits[:2])
    return datetime(1900 + year if year >= 91 else 2000 + year, int(digits[2:]), 1, tzinfo=UTC)


def parse_arxiv_id(text: str) -> tuple[str, int | None]:
    """An identifier from what people paste: bare ids, "arXiv:2401.12345v2", abs/pdf URLs
    (`https://arxiv.org/pdf/hep-th/9901001v1.pdf`). Returns (catalogue id, version)."""
    match = _PASTED.fullmatch(text.strip())
    if not match:
        raise InvalidArxivId(f"not an arXiv identifier or link: {text!r}")
    return _canonical(match)


def find_arxiv_ids(text: str) -> list[tuple[str, tuple[int, int]]]:
    """Every arXiv id or link in `text`: (catalogue id, character span)."""
    if not any(ch.isdigit() for ch in text):
        return []
    return [(_canonical(m)[0], m.span()) for m in _IN_TEXT.finditer(text)]


# --- Categories ---------------------------------------------------------------------------------

_SUBJECTS = {
    "cs": "AI AR CC CE CG CL CR CV CY DB DC DL DM DS ET FL GL GR GT HC IR IT LG LO MA MM MS NA "
    "NE NI OH OS PF PL RO SC SD SE SI SY",
    "econ": "EM GN TH",
    "eess": "AS IV SP SY",
    "math": "AC AG AP AT CA CO CT CV DG DS FA GM GN GR GT HO IT KT LO MG MP NA NT OA OC PR QA "
    "RA RT SG SP ST",
    "astro-ph": "CO EP GA HE IM SR",
    "cond-mat": "dis-nn mes-hall mtrl-sci other quant-gas soft stat-mech str-el supr-con",
    "nlin": "AO CD CG PS SI",
    "physics": "acc-ph ao-ph app-ph atm-clus atom-ph bio-ph chem-ph class-ph comp-ph data-an "
    "ed-ph flu-dyn gen-ph geo-ph hist-ph ins-det med-ph optics plasm-ph pop-ph soc-ph space-ph",
    "q-bio": "BM CB GN MN NC OT PE QM SC TO",
    "q-fin": "CP EC GN MF PM PR RM ST TR",
    "stat": "AP CO ME ML OT TH",
}
_ARCHIVES_WITHOUT_SUBJECTS = "gr-qc hep-ex hep-lat hep-ph hep-th math-ph nucl-ex nucl-th quant-ph"

CATEGORIES: dict[str, str] = {}  # lower case -> canonical spelling
_UNDER_ARCHIVE: dict[str, list[str]] = {}  # "cs" -> ["cs.AI", ...]
for _archive in [*_SUBJECTS, *_ARCHIVES_WITHOUT_SUBJECTS.split()]:
    CATEGORIES[_archive] = _archive
    _UNDER_ARCHIVE[_archive] = [f"{_archive}.{s}" for s in _SUBJECTS.get(_archive, "").split()]
    CATEGORIES.update((c.lower(), c) for c in _UNDER_ARCHIVE[_archive])

# The shape of a category (what filters and the ingest accept), in or out of the taxonomy.
CATEGORY = r"[A-Za-z][A-Za-z-]*(?:\.[A-Za-z][A-Za-z-]*)?"


def canonical_category(text: str) -> str | None:
    """ "CS.cl" -> "cs.CL"; None for anything outside the arXiv taxonomy."""
    return CATEGORIES.get(text.strip().lower())


def matching_categories(categories: Iterable[str]) -> list[str]:
    """The categories a paper may list to match a filter on `categories`: each one in its
    canonical spelling, and for a bare archive ("cs") every category of the taxonomy under it.
    One list, so that `categories && list` is a single GIN lookup."""
    found: list[str] = []
    for category in categories:
        canonical = canonical_category(category) or category.strip()
        found += [canonical, *_UNDER_ARCHIVE.get(canonical, ())]
    return list(dict.fromkeys(found))
