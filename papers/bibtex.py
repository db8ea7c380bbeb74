"""BibTeX for papers, in the shape arxiv.org's own "Export BibTeX citation" gives:

    @misc{vaswani2023attentionneed,
          title={Attention Is All You Need},
          author={Ashish Vaswani and Noam Shazeer and ...},
          year={2023},
          eprint={1706.03762},
          archivePrefix={arXiv},
          primaryClass={cs.CL},
          url={https://arxiv.org/abs/1706.03762},
    }

As arXiv does: the year is the latest version's, the key is the first author's surname, the year
and the title's content words, the title keeps its TeX. We add what reference managers need and
arXiv leaves to them: a key unique within one file, braces always balanced (an unbalanced brace in
an abstract-quality title would swallow the rest of the file), and names that hold " and " or a
comma protected by braces so BibTeX does not split or invert them.
"""

import re
from collections.abc import Iterable

from django.http import HttpResponse

from papers.models import Paper
from papers.text import fold_accents, tex_to_plain

# Words arXiv's keys leave out ("Attention Is All You Need" -> "attentionneed").
_KEY_STOPWORDS = frozenset(
    "a an and are as at all be by can do does for from how in into is it its of on or our the"
    " their this to towards toward via we what when where which who why with without you your"
    " using use".split()
)
_KEY_TITLE_WORDS = 4
_NOT_KEY = re.compile(r"[^a-z0-9]+")


def _key_part(text: str) -> str:
    return _NOT_KEY.sub("", fold_accents(tex_to_plain(text)).lower())


def author_names(paper: Paper) -> list[str]:
    """The paper's authors in the order arXiv lists them (Authorship.position); uses a prefetch
    of `authorships__author` when there is one. Falls back to the denormalised list."""
    names = [a.author.name for a in sorted(paper.authorships.all(), key=lambda a: a.position)]
    if names:
        return names
    return [n.strip() for n in paper.authors_text.split(",") if n.strip()]


def citation_key(paper: Paper, names: list[str] | None = None) -> str:
    """arXiv's key: surname of the first author + year + content words of the title."""
    names = author_names(paper) if names is None else names
    surname = _key_part(names[0].split()[-1]) if names and names[0].split() else ""
    words = [
        w
        for w in (_key_part(w) for w in tex_to_plain(paper.title).split())
        if w and w not in _KEY_STOPWORDS
    ][:_KEY_TITLE_WORDS]
    key = f"{surname or 'anon'}{paper.updated.year}{''.join(words)}"
    return key or _key_part(paper.arxiv_id)


def balance_braces(text: str) -> str:
    """`text` with every brace that has no partner removed (with the backslash escaping it, if
    any), so it can sit inside a braced BibTeX value; matched braces (TeX groups) are kept."""
    unmatched: set[int] = set()
    opened: list[int] = []
    for i, ch in enumerate(text):
        if ch == "{":
            opened.append(i)
        elif ch == "}":
            if opened:
                opened.pop()
            else:
                unmatched.add(i)
    unmatched.update(opened)
    if not unmatched:
        return text
    drop = set(unmatched)
    drop.update(i - 1 for i in unmatched if i > 0 and text[i - 1] == "\\")
    return "".join(ch for i, ch in enumerate(text) if i not in drop)


# BibTeX counts an escaped brace as a brace; other parsers (bibtexparser, biber) do not, so a
# title with "$\{0,1\}$" reads differently in each. Its named form reads the same everywhere.
_ESCAPED_BRACE = re.compile(r"\\([{}])")


def _value(text: str) -> str:
    # One line per field: BibTeX does not care, diffs and greps do.
    text = _ESCAPED_BRACE.sub(lambda m: r"\lbrace " if m.group(1) == "{" else r"\rbrace ", text)
    return balance_braces(" ".join(text.split()))


def _name(name: str) -> str:
    name = _value(name)
    # "A and B" inside one name would read as two authors; a comma as "Last, First".
    if re.search(r"\sand\s|,", name, flags=re.IGNORECASE):
        return "{" + name + "}"
    return name


def bibtex_entry(paper: Paper, note: str = "", key: str | None = None) -> str:
    """One paper as an arXiv-style @misc entry; `note` (a reader's note) becomes a note field."""
    names = author_names(paper)
    fields = [
        ("title", _value(paper.title)),
        ("author", " and ".join(_name(n) for n in names)),
        ("year", str(paper.updated.year)),
        ("eprint", paper.arxiv_id),
        ("archivePrefix", "arXiv"),
        ("primaryClass", paper.primary_category),
        ("url", paper.abs_url),
    ]
    if paper.doi:
        fields.append(("doi", _value(paper.doi)))
    if note.strip():
        fields.append(("note", _value(note)))
    body = "".join(f"      {name}={{{value}}},\n" for name, value in fields if value)
    return f"@misc{{{key or citation_key(paper, names)},\n{body}}}\n"


def bibtex_for(papers: Iterable[Paper], notes: dict[int, str] | None = None) -> str:
    """Entries for several papers, each once, in the order given, with keys unique in the file
    (a second "smith2024deep" becomes "smith2024deepb"). `notes` maps paper pk -> note."""
    notes = notes or {}
    seen_papers: set[int] = set()
    used_keys: set[str] = set()
    entries = []
    for paper in papers:
        if paper.pk in seen_papers:
            continue
        seen_papers.add(paper.pk)
        base = citation_key(paper)
        key, suffix = base, ord("b")
        while key in used_keys:
            key = f"{base}{_suffix(suffix)}"
            suffix += 1
        used_keys.add(key)
        entries.append(bibtex_entry(paper, notes.get(paper.pk, ""), key=key))
    return "\n".join(entries)


def _suffix(n: int) -> str:
    # b..z, then z2, z3...: never runs out, stays a valid key.
    return chr(n) if n <= ord("z") else f"z{n - ord('z') + 1}"


def filename_part(text: str, default: str = "papers") -> str:
    """A safe stem for a download's file name ("2401.01234", "hep-th_9901001")."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or default


def bibtex_download(text: str, stem: str) -> HttpResponse:
    """A .bib file download (pages, not the JSON API): `stem` names the file."""
    response = HttpResponse(text, content_type="application/x-bibtex; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename_part(stem)}.bib"'
    return response
