"""Text helpers for the catalogue: TeX to plain text for search, author keys, and display text
without bidirectional controls.

Titles and abstracts are stored as arXiv gives them (TeX included) for display; everything that
feeds the full-text index, and every query matched against it, goes through `tex_to_plain` so
`Schr\\"odinger`, `Schrödinger` and `Schrodinger` all meet on the same lexeme.
"""

import re
import unicodedata

# --- TeX -> plain text --------------------------------------------------------------------------

# \"o, \"{o}, \'{\i}, \v c: an accent command on one letter keeps just the letter.
_ACCENT = re.compile(
    r"""\\(["'`^~=.]|[uvHckrbdt](?![A-Za-z]))\s*(?:\{\s*\\?([A-Za-z])\s*\}|\\?([A-Za-z]))"""
)
# Letters TeX spells as commands: \ss, \o, {\aa}, \L.
_SPECIAL_LETTERS = {
    "ss": "ss",
    "o": "o",
    "O": "O",
    "ae": "ae",
    "AE": "AE",
    "oe": "oe",
    "OE": "OE",
    "aa": "a",
    "AA": "A",
    "l": "l",
    "L": "L",
    "i": "i",
    "j": "j",
}
_COMMAND = re.compile(r"\\([A-Za-z]+)\*?")
# Commands whose argument is a key, not text: drop the command and its argument.
_KEY_COMMANDS = re.compile(
    r"\\(?:cite[a-z]*|ref|eqref|label|bibitem|pageref)\*?\s*(?:\[[^\]]*\])?\s*\{[^{}]*\}"
)
# Commands that read as a word in running text ("$\alpha$-helix", "$\ell_1$", "\LaTeX").
_WORD_COMMANDS = frozenset(
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi"
    " pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta"
    " Lambda Xi Pi Sigma Upsilon Phi Psi Omega ell hbar infty nabla partial TeX LaTeX BibTeX"
    " log exp sin cos tan ln max min sup inf lim det".split()
)
_ESCAPED = re.compile(r"\\([&%$#_{}])")
_SPACING = re.compile(r"\\(?:[,;:! ]|\\|quad\b|qquad\b)|~")
_DASHES = re.compile(r"-{2,}")
_STRIP_CHARS = str.maketrans({"$": "", "{": "", "}": ""})
_WHITESPACE = re.compile(r"\s+")
_NEEDS_TEX = re.compile(r"[\\$~{}]|--")


def _replace_command(match: re.Match) -> str:
    name = match.group(1)
    if name in _SPECIAL_LETTERS:
        return _SPECIAL_LETTERS[name]
    if name in _WORD_COMMANDS:
        # Keep "alpha" glued to what follows unless that is a letter: "\alpha\beta" -> "alpha beta".
        end = match.end()
        following = match.string[end : end + 1]
        return name + " " if following.isalpha() or following == "\\" else name
    return " "


def fold_accents(text: str) -> str:
    """Schrödinger -> Schrodinger, ﬁ -> fi; non-Latin scripts stay as they are."""
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def tex_to_plain(text: str | None) -> str:
    """TeX-ish arXiv text as plain words for search: accents folded, math and commands unwrapped,
    whitespace collapsed. `Schr\\"odinger's $\\alpha$-model` -> `Schrodinger's alpha-model`."""
    if not text:
        return ""
    if _NEEDS_TEX.search(text):
        text = _KEY_COMMANDS.sub(" ", text)
        text = _ACCENT.sub(lambda m: m.group(2) or m.group(3), text)
        text = _ESCAPED.sub(r"\1", text)
        text = _SPACING.sub(" ", text)
        text = _COMMAND.sub(_replace_command, text)
        text = _DASHES.sub("-", text)
        text = text.translate(_STRIP_CHARS)
    text = fold_accents(text)
    return _WHITESPACE.sub(" ", text).strip()


# --- Display text: titles and names ---------------------------------------------------------------

# Unicode bidirectional controls (embeddings, overrides, isolates, marks). A right-to-left override
# in a title makes the rest of the line, and what a page shows after it, read backwards: the
# "Trojan Source" trick. Titles and names need none of them, so they are removed when stored.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_NO_BIDI = str.maketrans("", "", BIDI_CONTROLS)


def strip_bidi(text: str) -> str:
    return text.translate(_NO_BIDI)


def clean_title(text: str) -> str:
    """A title or a name as stored and shown: on one line, single-spaced, no bidi controls."""
    return " ".join(strip_bidi(text).split())


# --- Author names -------------------------------------------------------------------------------

_NOT_WORD = re.compile(r"[^\w]+")


def author_key(name: str) -> str:
    """The identity of an author spelling: lower-cased, accents and punctuation folded.

    "Erwin Schr\\"odinger" and "erwin  schrödinger" share a key; "Hinton, G." and "G Hinton" do not
    (word order is kept: we never guess which part is the surname)."""
    return _NOT_WORD.sub(" ", tex_to_plain(name).lower()).strip()



# --- British to American spelling (queries and the composer's word matching) -------------------

# "initialised", "optimisation", "normalising", "analysed": the -ise/-yse forms of -ize/-yze
# verbs. English stemming keeps them apart ("initialis" against "initi"), so a question asking
# how parameters are "initialised" matched none of the papers' "initialization". Most of arXiv
# writes -ize; queries are spelt that way (papers are indexed as written).
_BRITISH = re.compile(
    r"\b(?P<stem>[A-Za-z]{3,}?)(?P<s>is|ys)(?P<end>e|ed|es|ing|ation|ations|er|ers|able)\b"
)
# Words ending in -ise that are no -ize verb ("promise", "exercise", "noise", "pairwise"…).
_NOT_IZE = frozenset(
    """advise devise revise supervise televise improvise exercise excise incise precise concise
    circumcise promise compromise premise demise surprise enterprise comprise apprise despise
    chastise expertise franchise enfranchise disenfranchise merchandise paradise treatise disguise
    cruise bruise noise poise raise praise arise rise anise valise mortise tortoise porpoise
    turquoise chemise reprise vise guise advertise""".split()
)


def american_spelling(text: str) -> str:
    """`text` with British -ise/-yse verb forms spelt -ize/-yze ("initialised" ->
    "initialized", "analysing" -> "analyzing"); other words as they were."""

    def replace(match: re.Match) -> str:
        stem, s, end = match["stem"], match["s"], match["end"]
        base = f"{stem}{s}e".lower()
        if s == "is" and (base in _NOT_IZE or base.endswith("wise")):
            return match[0]
        return f"{stem}{'iz' if s == 'is' else 'yz'}{end}"

    return _BRITISH.sub(replace, text)
