"""The names a paper introduces ("the Transformer", "Fusion-in-Decoder", "DPR"), read from its
own text, so a question naming a method finds the paper that introduced it (chat.retrieval.named).

Derived from the catalogue, never from a hand-written list: each paper's title, abstract and
(once read) the start of its full text, by these rules, strongest first:

- TITLE (3): a title "NAME: …" with a short or made-up NAME ("REALM: Retrieval-Augmented …",
  "OPT: Open Pre-trained …", "Batch Normalization: Accelerating …"; not "Towards X: …");
- PROPOSED (2): the abstract introduces it: "we propose a new … architecture, the Transformer"
  (not "we propose operating GANs on …": a gerund first does something with the name; "a
  conditional GAN (FC-GAN)" introduces the bracket's name),
  "we introduce Adam", "we present the MuZero algorithm", "which we call Batch Normalization",
  "we refer to the method as ‘Constitutional AI’", "… called CiteSee"; and an acronym defined for
  a run of the title's words ("Dense Passage Retriever (DPR)" in a paper titled "Dense Passage
  Retrieval for …"), in the abstract or the body, with its long form;
- BODY (1): the same introducing phrases in the first BODY_CHARS of the full text ("we refer to
  it as Fusion-in-Decoder"), a coined acronym the abstract defines ("Vision Transformer
  (ViT)": later papers define it as well), and one the body defines with words of the title
  ("residual nets (ResNets)" in "Deep Residual Learning for Image Recognition"). Weaker: a body also renames what it uses ("we refer to it as
  ImageNet in what follows"), so chat.retrieval.named drops a BODY name that an older paper of
  the catalogue already mentions.

A name is stored under its key (`name_key`: lower case, hyphens as spaces) in PaperName, one row
per paper and key with its strongest rule. `name_papers(ids)` rewrites the papers' rows; the
lexical index calls it for every paper it (re)indexes (new papers, new versions, edits), and
reading a paper's full text calls it again. Cost: a few regular expressions over the title,
abstract and 60k characters of body (~1 ms a paper).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from django.db import connection

TITLE, PROPOSED, BODY = 3, 2, 1
BODY_CHARS = 60_000
MAX_NAME_WORDS = 4
MAX_NAME_CHARS = 60

_KEY_SPLIT = re.compile(r"[\s\-‐‑–_/]+")
_QUOTES = "\"'“”‘’«»"


def name_key(name: str) -> str:
    """How a name is stored and looked up: "Fusion-in-Decoder" -> "fusion in decoder"."""
    return " ".join(part for part in _KEY_SPLIT.split(name.strip(_QUOTES + " ").lower()) if part)


# One word of a name: letters, digits, inner hyphens, a trailing "*" ("QRR*").
_NAME_WORD = r"[A-Za-z0-9][\w\-+.*]*[\w*+]|[A-Za-z]"
# A capitalised word of a name: a capital first ("Transformer", "MuZero", "Fusion-in-Decoder")
# or a capital inside ("iBLEU"), or letters with digits ("T5", "MoBYv2AL").
_CAPITAL_WORD = re.compile(r"(?:[A-Z][\w\-+*]*|[a-z]+[A-Z][\w\-+*]*|[A-Za-z]+\d[\w\-]*)")
# Capitalised words that open a clause or name no method ("We", "In", "English", "Wikipedia").
_NOT_NAMES = frozenset(
    """a an the we our in on at to of for by with from this that these those it its they their
    figure fig table section appendix eq equation algorithm i ii iii english german french
    wikipedia github google openai meta deepmind microsoft nvidia facebook amazon gpu gpus tpu
    tpus cpu cpus""".split()
)
_STOP_AFTER = re.compile(
    r"\b(?:on|in|with|for|using|from|to|of|by|that|which|where|and|as|than|at|into|over|"
    r"through|via|across|under|between|while|whose)\b"
)

_TITLE_NAME = re.compile(r"^\s*(?P<name>[^:]{1,60}?)\s*:\s+\S")

# "we propose / introduce / present …": the first capitalised name in the rest of the clause
# (before a preposition: "we present results on ImageNet" introduces nothing).
_PROPOSE = re.compile(
    r"\b(?:we|this\s+(?:paper|work|article)|here\s+we)\s+(?:\w+ly\s+)?"
    r"(?:propose|introduce|present|develop|design|describe|release|build|create)s?\b"
    r"(?P<rest>[^.;:!?()]{0,140})",
    re.IGNORECASE,
)
# "we call it X", "which we call X", "we refer to the method as ‘X’", "a reader called X".
_CALL = re.compile(
    r"(?:\bwe\s+(?:call|dub|name|term|coin)\s+(?:(?:it|this|them|these|our\s+\w+|the\s+\w+)\s+)?"
    r"|\bwe\s+refer\s+to\s+(?:it|this|them|these|our\s+[\w\- ]{1,30}?|the\s+[\w\- ]{1,30}?)\s+as\s+"
    r"|\b(?:called|dubbed|named|termed|coined)\s+)"
    r"[\"“‘']?(?P<name>[^\"”’'.,;:()\[\]]{1,60})",
)
# "Long Form Words (LFW)": an acronym in brackets (its long form is read back from there: a
# pattern that starts at every word to find the long form costs 2 ms an abstract).
_ACRONYM = re.compile(r"\((?P<short>[A-Za-z][A-Za-z0-9\-]*[A-Z][A-Za-z0-9\-]*)\)")
_COINED = re.compile(r"[A-Z][A-Za-z]*[a-z][A-Za-z]*[A-Z][A-Za-z0-9]*")  # ViT, MoBY, PaLM
_LONG_FORM = re.compile(r"(?:[A-Za-z][\w\-]*\s+){1,8}$")


def _clean(name: str) -> str:
    return " ".join(name.strip(_QUOTES + " ,").split())


def _plausible(name: str) -> bool:
    words = name.split()
    return (
        0 < len(words) <= MAX_NAME_WORDS
        and 2 <= len(name) <= MAX_NAME_CHARS
        and name.lower() not in _NOT_NAMES
        and any(ch.isalpha() for ch in name)
    )


_TOPIC_OPENERS = frozenset("towards toward when why how what on a an the beyond rethinking".split())


def coined(word: str) -> bool:
    """ "MuZero", "ViT", "T5", "MoBYv2AL": a capital after a lower-case letter, or letters and
    digits: a made-up name, not a dictionary word ("Hamiltonian") or a plain acronym ("LLM")."""
    return bool(re.search(r"[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]", word))


def _title_name(head: str) -> bool:
    """A title's "HEAD: …" is a name when short ("Batch Normalization", "Constitutional AI") or
    made up ("Skywork UniPic"), not a topic ("Towards Understanding 3D Vision", "Two
    Dimensional Bloch Oscillations")."""
    words = head.split()
    if words and words[0].lower() in _TOPIC_OPENERS:
        return False
    return len(words) <= 2 or any(coined(w) or (w.isupper() and len(w) > 1) for w in words)


def _capitalised_run(text: str) -> str:
    """The first run of capitalised words in `text` ("a new architecture, the Transformer,
    based …" -> "Transformer"; "the MuZero algorithm" -> "MuZero"), before any preposition."""
    stop = _STOP_AFTER.search(text)
    text = text[: stop.start()] if stop else text
    run: list[str] = []
    for m in re.finditer(_NAME_WORD, text):
        word = m[0]
        if _CAPITAL_WORD.fullmatch(word) and word.lower() not in _NOT_NAMES:
            run.append(word)
            continue
        if run:
            break
    return " ".join(run[:MAX_NAME_WORDS])


def _called_name(text: str) -> str:
    """The capitalised words a "we call …" phrase gives ("Batch Normalization, that takes …" ->
    "Batch Normalization"); lower-case words ("internal covariate shift") are no name."""
    words = []
    for word in text.split():
        if not _CAPITAL_WORD.fullmatch(word.strip(_QUOTES)) and not (
            words and word.lower() in ("in", "of", "for", "and")
        ):
            break
        words.append(word.strip(_QUOTES))
    while words and words[-1].lower() in ("in", "of", "for", "and"):
        words.pop()
    return " ".join(words)


_COMPOUND = re.compile(r"[A-Z][a-z]+(?:-[a-z]{1,4})+-[A-Z][a-z]+")


def compound_initials(name: str) -> str:
    """The acronym readers write for a hyphenated name of three or more words, each word's
    first letter as cased: "FiD" for "Fusion-in-Decoder" ("How do RAG and FiD combine
    passages?" named no paper: the paper never writes "FiD"), "MoE", "CoT"; "" for any other
    name."""
    if not _COMPOUND.fullmatch(name):
        return ""
    return "".join(part[0] for part in name.split("-"))


def _initials(words: list[str]) -> str:
    return "".join(part[0] for word in words for part in word.split("-") if part).lower()


def _title_acronym(short: str, long: str, title: str) -> bool:
    """ "DPR" for "Dense Passage Retriever" in a paper titled "Dense Passage Retrieval for …":
    the acronym spells a run of words opening the title (and its long form ends with them)."""
    letters = re.sub(r"[^a-z]", "", short.lower())
    title_words = re.findall(r"[A-Za-z][\w\-]*", title)
    long_words = long.split()
    if len(letters) < 2:
        return False
    # The run opens the title (after "A"/"The"), or its subtitle after "NAME:": a title that
    # ends "… for the Capacitated Vehicle Routing Problem" is about CVRP, it did not name it.
    starts = {0, 1} if title_words and title_words[0].lower() in ("a", "an", "the") else {0}
    if ":" in title:
        starts.add(len(re.findall(r"[A-Za-z][\w\-]*", title.split(":", 1)[0])))
    for i in sorted(starts):
        for j in range(i + 1, min(len(title_words), i + 8) + 1):
            run = title_words[i:j]
            if _initials(run) == letters:
                # The long form's last words spell the same initials (any inflection).
                tail = long_words[-len(run) :] if len(long_words) >= len(run) else []
                if tail and _initials(tail) == letters:
                    return True
    return False


def _title_cased(words: str) -> bool:
    """ "Dense Passage Retriever", "Retrieval-Augmented Generation": a name, not a common noun
    phrase ("question answering (QA)", "dot product (DP)")."""
    parts = words.split()
    return bool(parts) and all(p[0].isupper() for p in parts if p.lower() not in ("of", "for", "and", "in"))


def _shares_title_word(words: str, title: str) -> bool:
    """Whether `words` hold a word of four letters or more of the title ("residual")."""
    title_words = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", title)}
    return any(w.lower() in title_words for w in re.findall(r"[A-Za-z]{4,}", words))


def _acronym_long(long: str, short: str) -> str:
    """The words of `long` whose initials spell `short` (the definition's own long form)."""
    words = long.split()
    # All its letters ("DPR"), or a coined one's capitals ("ViT": Vision Transformer).
    for letters in (re.sub(r"[^a-z]", "", short.lower()), re.sub(r"[^A-Z]", "", short).lower()):
        for n in range(1, len(words) + 1):
            if len(letters) > 1 and _initials(words[-n:]) == letters:
                return " ".join(words[-n:])
    return ""


# As _ACRONYM, or first in its brackets: "Dense Passage Retriever (DPR; Karpukhin et al., 2020)".
_DEFINED = re.compile(r"\((?P<short>[A-Za-z][A-Za-z0-9\-]*[A-Z][A-Za-z0-9\-]*)[);,]")


def acronym_definitions(text: str, short: str) -> list[str]:
    """The long forms `text` defines `short` with, as written: "retrieval-augmented generation"
    of "… for retrieval-augmented generation (RAG) — models which …" (any case; a plural
    acronym defines its singular too: "large language models (LLMs)" for "LLM"). The same
    reading of "Long Form (LF)" as the names' own (_ACRONYM, _acronym_long), for any acronym,
    not only a paper's coinage: what a question's acronym stands for in the catalogue's words."""
    found = []
    wanted = acronym_singular(short).lower()
    for m in _DEFINED.finditer(text):
        defined = acronym_singular(m["short"])
        if defined.lower() != wanted:
            continue
        before = _LONG_FORM.search(text, max(0, m.start() - 200), m.start())
        if before is None:
            continue
        if full := _acronym_long(before[0], defined) or _glued_long(before[0], defined):
            found.append(full)
    return found


_GLUE = frozenset("of for from in on to with and the a an by".split())


def _glued_long(long: str, short: str) -> str:
    """As _acronym_long, the small words inside the long form spelling no letter of it:
    "reinforcement learning from human feedback" for "RLHF"."""
    words = long.split()
    letters = re.sub(r"[^a-z]", "", short.lower())
    for n in range(2, min(len(words), len(letters) + 4) + 1):
        tail = words[-n:]
        if tail[0].lower() in _GLUE:
            continue
        if _initials([w for w in tail if w.lower() not in _GLUE]) == letters:
            return " ".join(tail)
    return ""


def acronym_singular(short: str) -> str:
    """ "LLMs" -> "LLM", "ViTs" -> "ViT"; "RAG", "MoBYv2AL" as they are."""
    return short[:-1] if len(short) > 2 and short.endswith("s") and short[-2].isupper() else short


# "we propose operating / using / applying X": a gerund opening the clause does something with
# X, which a "we propose" then does not name.
_USING = re.compile(r"\s*(?!(?:string|thing|spring|ring|king|wing)s?\b)[a-z]+ing\b")
_BRACKET_NAME = re.compile(r"\s*\((?P<name>[A-Za-z][\w\-+.*]{1,30})\)")


def _phrases(text: str, *, body: bool = False) -> list[str]:
    """Names that `text` introduces with "we propose/introduce/present …" or "we call …" (in a
    body, not "… called X": bodies name their tools and examples that way)."""
    found = []
    for m in _PROPOSE.finditer(text):
        if _USING.match(m["rest"]):
            continue  # "we propose operating GANs on spectra": GANs are the tool, not the name
        if name := _capitalised_run(m["rest"]):
            # "a fast-converging conditional GAN (FC-GAN)": the bracket holds the name.
            bracket = _BRACKET_NAME.match(text, m.end())
            if bracket and m["rest"].rstrip().endswith(name):
                name = bracket["name"]
            found.append(name)
    for m in _CALL.finditer(text):
        if body and not m[0].lower().startswith("we"):
            continue
        if name := _called_name(m["name"]):
            found.append(name)
    return found


def introduced_names(title: str, abstract: str, body: str = "") -> dict[str, tuple[str, int]]:
    """{key: (name as written, strength)} of the names this paper introduces (the module
    docstring's rules), the strongest rule per key."""
    names: dict[str, tuple[str, int]] = {}

    def add(name: str, strength: int) -> None:
        name = _clean(name)
        if not _plausible(name):
            return
        key = name_key(name)
        if key and (key not in names or names[key][1] < strength):
            names[key] = (name, strength)
        if short := compound_initials(name):
            # ("FiD" is no word of its paper; as weak as a body's name: _OLDER_USE applies.)
            short_key = name_key(short)
            if short_key not in names:
                names[short_key] = (short, BODY)

    title = " ".join(title.split())
    abstract = " ".join(abstract.split())
    body = " ".join(body[:BODY_CHARS].split())
    if (m := _TITLE_NAME.match(title)) and _title_name(m["name"]):
        add(m["name"], TITLE)
    for name in _phrases(abstract):
        add(name, PROPOSED)
    for text in (abstract, body):
        for m in _ACRONYM.finditer(text):
            before = _LONG_FORM.search(text, max(0, m.start() - 200), m.start())
            if before is None:
                continue
            short, long = m["short"], before[0]
            full = _acronym_long(long, short)
            if not _title_cased(full):
                if text is body and _COINED.fullmatch(short) and _shares_title_word(full, title):
                    # "residual nets (ResNets)" in "Deep Residual Learning for …": the paper's
                    # own coinage, though its long form is lower case (weak, as a body's name).
                    add(short, BODY)
                    if short.endswith("s") and _COINED.fullmatch(short[:-1]):
                        add(short[:-1], BODY)  # "ResNets" -> "ResNet", as questions write it
                continue
            if _title_acronym(short, long, title):
                add(short, PROPOSED)
                add(full, PROPOSED)
            elif text is abstract and _COINED.fullmatch(short):
                # "Vision Transformer (ViT)": a coined acronym (lower case inside), defined in
                # the abstract; later papers define it too, so weak (BODY) like a body's name.
                add(short, BODY)
                add(full, BODY)
    for name in _phrases(body, body=True):
        add(name, BODY)
    return names


_PAPERS = f"""
SELECT p.id, p.title, p.abstract, substr(coalesce(f.text, ''), 1, {BODY_CHARS})
FROM papers_paper p LEFT JOIN papers_fulltext f ON f.paper_id = p.id AND f.status = 'ok'
WHERE p.id = ANY(%s)
"""


def name_papers(paper_ids: Iterable[int]) -> int:
    """Rewrite the PaperName rows of these papers from their current text. Returns how many
    names they have now. Call inside the writer's transaction (the lexical index does)."""
    ids = sorted({int(i) for i in paper_ids})
    if not ids:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(_PAPERS, [ids])
        rows = cursor.fetchall()
        cursor.execute("DELETE FROM papers_papername WHERE paper_id = ANY(%s)", [ids])
        values = [
            (paper_id, key, name, strength)
            for paper_id, title, abstract, body in rows
            for key, (name, strength) in introduced_names(title, abstract or "", body).items()
        ]
        if values:
            cursor.executemany(
                "INSERT INTO papers_papername (paper_id, key, name, strength)"
                " VALUES (%s, %s, %s, %s)",
                values,
            )
    return len(values)


def name_every_paper(batch: int = 2000) -> None:
    """Names for the whole catalogue, `batch` papers at a time: what a data migration runs when
    these rules change (0015, 0017)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM papers_paper ORDER BY id")
        ids = [row[0] for row in cursor.fetchall()]
    for start in range(0, len(ids), batch):
        name_papers(ids[start : start + batch])
