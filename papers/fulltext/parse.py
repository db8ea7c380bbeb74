"""A PDF's text, page by page, cleaned into one string with page offsets and section headings.

pypdfium2 (PDFium's text layer) was chosen over pypdf and pdfminer.six on the 28 shared arXiv PDFs
(docs/FULLTEXT.md: fastest by far, two-column reading order right, ligatures expanded). Its quirks,
handled here:
- a hyphen at a line end comes as U+FFFE *instead of* the hyphen and the line break, so
  "ef\ufffeficient" (hyphenation) and "dual\ufffeencoder" (a real hyphen) look alike. The paper's
  own vocabulary decides: a capital or digit after it ("GPT-3") -> keep the hyphen; the joined
  word used elsewhere -> join; the hyphenated form used elsewhere, or both halves words of their
  own -> keep it; otherwise join (hyphenation splits words into non-words: "ef-ficient").
- running headers and footers (venue lines, page numbers) repeat at the top or bottom of pages:
  a line seen there on at least a third of the pages (digits ignored) is dropped, as is a bare page
  number and arXiv's identifier stamp.
- the references list is dropped (it would fill searches with other papers' titles); an appendix
  after it is kept.
"""

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

from django.conf import settings

from papers.fulltext import FullTextError

LIGATURES = str.maketrans(
    {"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "ft", "ﬆ": "st", "\u00ad": ""}
)
LINE_END_HYPHEN = "\ufffe"
# Below this many letters per page on average the PDF is a scan or a figure set.
MIN_LETTERS_PER_PAGE = 200

_STAMP = re.compile(r"^arXiv:\S+\s+\[[^\]]+\]\s+\d{1,2}\s+\w{3}\s+\d{4}$")
_PAGE_NUMBER = re.compile(r"^(page\s+)?[ivxlc\d]{1,4}(\s*(of|/)\s*\d+)?$", re.IGNORECASE)
_SPLIT_WORD = re.compile(r"(\w+)\ufffe(\w+)")
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
# "3 Method", "3.2. Training details", "A Hyperparameters", "IV. RESULTS".
_NUMBERED_HEADING = re.compile(
    r"^(?P<num>(?:\d{1,2}(?:\.\d{1,2}){0,3}|[A-H](?:\.\d{1,2}){0,3}|[IVX]{1,5})\.?)\s+"
    r"(?P<title>[A-Z][^\n]{1,78})$"
)
# "Appendix B Search", "APPENDIX A: Proofs", "Appendix C. Hyperparameters" (MuZero's, after its
# references: not seen as headings, the appendices were dropped with the references).
_APPENDIX_HEADING = re.compile(
    r"^(?:Appendix|APPENDIX)\s+(?P<num>[A-Z]|\d{1,2})(?:\.\d{1,2}){0,2}[.:]?"
    r"(?:\s+(?P<title>[A-Z][^\n]{1,70}))?$"
)
_NAMED_HEADINGS = {
    "abstract",
    "introduction",
    "background",
    "related work",
    "method",
    "methods",
    "methodology",
    "experiments",
    "results",
    "discussion",
    "conclusion",
    "conclusions",
    "limitations",
    "acknowledgements",
    "acknowledgments",
    "references",
    "bibliography",
    "appendix",
    "appendices",
    "supplementary material",
    "supplementary materials",
}
_REFERENCES = {"references", "bibliography", "references and notes"}


@dataclass
class ParsedPdf:
    text: str
    page_starts: list[int]
    sections: list[dict] = field(default_factory=list)  # [{"title": ..., "start": offset}]
    pages: int = 0
    parser: str = ""

    def page_of(self, offset: int) -> int:
        """1-based page holding character `offset`."""
        page = 1
        for number, start in enumerate(self.page_starts, start=1):
            if start <= offset:
                page = number
            else:
                break
        return page


def parser_name() -> str:
    import pypdfium2

    return f"pypdfium2 {pypdfium2.version.PYPDFIUM_INFO}"


def page_texts(content: bytes, max_pages: int | None = None) -> list[str]:
    """The raw text layer of each page (PDFium's order and quirks), or FullTextError."""
    import pypdfium2 as pdfium

    max_pages = settings.FULLTEXT_MAX_PAGES if max_pages is None else max_pages
    try:
        document = pdfium.PdfDocument(content)
    except pdfium.PdfiumError as exc:
        message = str(exc)
        if "password" in message.lower():
            raise FullTextError("the PDF is encrypted (it needs a password)") from exc
        raise FullTextError(f"not a readable PDF ({message})") from exc
    try:
        count = len(document)
        if count > max_pages:
            raise FullTextError(f"too long: {count} pages (limit {max_pages})")
        texts = []
        for index in range(count):
            page = document[index]
            textpage = page.get_textpage()
            texts.append(textpage.get_text_range())
            textpage.close()
            page.close()
        return texts
    finally:
        document.close()


def parse_pdf(content: bytes, max_pages: int | None = None) -> ParsedPdf:
    raw = page_texts(content, max_pages)
    letters = sum(sum(ch.isalpha() for ch in text) for text in raw)
    if letters < MIN_LETTERS_PER_PAGE * max(1, len(raw)) / 4:
        raise FullTextError(
            f"no text layer: {letters} letters on {len(raw)} pages (a scan or images only)"
        )
    return clean_pages(raw, parser=parser_name())


def clean_pages(raw_pages: list[str], parser: str = "") -> ParsedPdf:
    """The cleaning on raw page texts (pure: tests and the parser benchmark call it directly)."""
    pages = [_lines(text) for text in raw_pages]
    pages = _drop_running_lines(pages)
    vocabulary = _vocabulary(pages)
    pages = [[_join_split_words(line, vocabulary) for line in lines] for lines in pages]
    pages = _drop_references(pages)

    parts: list[str] = []
    page_starts: list[int] = []
    offset = 0
    for lines in pages:
        page_starts.append(offset)
        for line in lines:
            parts.append(line)
            offset += len(line) + 1
        parts.append("")  # a blank line between pages
        offset += 1
    text = "\n".join(parts)
    return ParsedPdf(
        text=text,
        page_starts=page_starts,
        sections=sections_of(text),
        pages=len(pages),
        parser=parser,
    )


def sections_of(text: str) -> list[dict]:
    """The headings of a cleaned text (one line each), in reading order: [{"title", "start"}].
    From the text alone, so stored full texts get the current rules again when their chunks are
    re-cut (papers.fulltext.rechunk)."""
    sections = []
    offset = 0
    for line in text.split("\n"):
        if title := heading_title(line):
            sections.append({"title": title, "start": offset})
        offset += len(line) + 1
    return sections


def _lines(text: str) -> list[str]:
    text = unicodedata.normalize("NFC", text.translate(LIGATURES))
    lines = []
    for line in re.split(r"\r\n|\r|\n", text):
        line = " ".join(line.split())
        if line and not _STAMP.match(line):
            lines.append(line)
    return lines


def _shape(line: str) -> str:
    return re.sub(r"\d+", "#", line.lower())


def _drop_running_lines(pages: list[list[str]], edge: int = 2) -> list[list[str]]:
    """Drop lines repeated at the top or bottom of at least half the pages, and page numbers."""
    if len(pages) >= 3:
        seen = Counter()
        for lines in pages:
            seen.update({_shape(line) for line in lines[:edge] + lines[-edge:]})
        # A third: running heads that alternate between even and odd pages count too.
        running = {shape for shape, n in seen.items() if n >= max(3, len(pages) / 3)}
    else:
        running = set()
    cleaned = []
    for lines in pages:
        keep = []
        for i, line in enumerate(lines):
            at_edge = i < edge or i >= len(lines) - edge
            if at_edge and (_shape(line) in running or _PAGE_NUMBER.match(line)):
                continue
            keep.append(line)
        cleaned.append(keep)
    return cleaned


def _vocabulary(pages: list[list[str]]) -> set[str]:
    words = set()
    for lines in pages:
        for line in lines:
            # The split words themselves are left out: their halves are not words of the paper.
            for word in _WORD.findall(_SPLIT_WORD.sub(" ", line)):
                words.add(word.lower())
    return words


def _join_split_words(line: str, vocabulary: set[str]) -> str:
    def join(match: re.Match) -> str:
        left, right = match.group(1), match.group(2)
        joined, hyphenated = (left + right).lower(), f"{left}-{right}".lower()
        if right[0].isdigit() or right[0].isupper():  # "GPT-3", "Transformer-XL"
            return f"{left}-{right}"
        if joined in vocabulary:
            return left + right
        if hyphenated in vocabulary or (left.lower() in vocabulary and right.lower() in vocabulary):
            return f"{left}-{right}"
        return left + right

    line = _SPLIT_WORD.sub(join, line)
    return line.replace(LINE_END_HYPHEN, "-")


def heading_title(line: str) -> str | None:
    """The line itself when it looks like a section heading, else None (cheap: numbering, a
    capital, few words, no sentence punctuation, few digits)."""
    if len(line) > 80:
        return None
    bare = line.rstrip(":").strip()
    if bare.lower() in _NAMED_HEADINGS:
        return bare
    appendix = _APPENDIX_HEADING.match(line)
    if appendix:
        title = appendix.group("title") or ""
        # Not a sentence wrapped at a line end: "Appendix B shows that …", "… in\nAppendix B."
        if len(title.split()) <= 8 and not line.endswith((".", ",", ";")):
            return line
        return None
    match = _NUMBERED_HEADING.match(line)
    if not match:
        return None
    title = match.group("title")
    words = title.split()
    if (
        len(words) > 10
        or title.endswith((".", ",", ";", "="))
        or not any(len(w) > 2 for w in words)
    ):
        return None
    digits = sum(ch.isdigit() for ch in title)
    letters = sum(ch.isalpha() for ch in title)
    if letters < 3 or digits > letters * 0.2:
        return None
    return line


def _is_references(line: str) -> bool:
    title = heading_title(line)
    if title is None:
        return False
    match = _NUMBERED_HEADING.match(title)
    name = match.group("title") if match else title
    return name.strip().lower() in _REFERENCES


def _is_appendix(line: str) -> bool:
    title = heading_title(line)
    if title is None:
        return False
    lowered = title.lower()
    if lowered.startswith(("appendix", "appendices", "supplementary")):
        return True
    match = _NUMBERED_HEADING.match(title)
    # "B. Smith, J. Doe, Phys. Rev." wrapped in a reference list is not "B Proofs".
    return (
        bool(match)
        and match.group("num").rstrip(".") in {"A", "B", "A.1", "B.1"}
        and "," not in title
        and not re.search(r"\b[A-Z]\.", match.group("title"))
    )


_FIRST_REFERENCE = re.compile(r"^\[1\](\s|$)")


def _numbered_reference_list(pages: list[list[str]]) -> tuple[int, int] | None:
    """Where a list "[1] …", "[2] …", "[3] …" starts with no heading above it (REVTeX papers
    print none): the last "[1]" that "[2]" and "[3]" follow at line starts."""
    lines = [(p, i, line) for p, page in enumerate(pages) for i, line in enumerate(page)]
    for k in range(len(lines) - 1, -1, -1):
        p, i, line = lines[k]
        if _FIRST_REFERENCE.match(line):
            following = [text for _, _, text in lines[k + 1 : k + 200]]
            if any(t.startswith("[2]") for t in following) and any(
                t.startswith("[3]") for t in following
            ):
                return p, i
    return None


_REFERENCE_ENTRY = re.compile(r"^\[\d{1,3}\]")


def _drop_references(pages: list[list[str]]) -> list[list[str]]:
    """Drop lines from the last "References" heading (or a heading-less "[1] …" list) to an
    appendix heading or the end. A would-be appendix heading followed by more "[n]" entries is
    a wrapped reference title ("A Depth-Progressive Initialization…"), not an appendix."""
    found = None
    for p, lines in enumerate(pages):
        for i, line in enumerate(lines):
            if _is_references(line):
                found = (p, i)
    if found is None:
        found = _numbered_reference_list(pages)
    if found is None:
        return pages
    flat = [(p, i) for p, lines in enumerate(pages) for i in range(len(lines))]
    begin = flat.index(found)
    end = len(flat)
    for k in range(begin + 1, len(flat)):
        p, i = flat[k]
        if _is_appendix(pages[p][i]):
            ahead = [pages[q][j] for q, j in flat[k + 1 : k + 4]]
            if not any(_REFERENCE_ENTRY.match(line) for line in ahead):
                end = k
                break
    dropped = set(flat[begin:end])
    return [
        [line for i, line in enumerate(lines) if (p, i) not in dropped]
        for p, lines in enumerate(pages)
    ]
