"""Sentence splitting and term extraction for abstracts, used by the extractive backend.

Abstracts are full of full stops that end nothing: "e.g.", "et al.", "Fig. 2", initials, and TeX
such as "$p < 0.05$. " or "$\\mathcal{O}(n\\log n)$". A generic splitter (NLTK's Punkt in
llama-index) cuts these into fragments, and a fragment quoted as a "sentence" misrepresents the
paper, so this splitter masks TeX first and then only breaks where a sentence can really end.
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache

from chat.understanding.variants import SIZES
from papers.fulltext.parse import heading_title
from papers.fulltext.tables import RowSentence, find_tables, row_label
from papers.text import american_spelling

# TeX spans whose inner punctuation must never end a sentence.
_TEX = re.compile(
    r"\$\$.+?\$\$|(?<!\\)\$.+?(?<!\\)\$|\\\(.+?\\\)|\\\[.+?\\\]|\\begin\{(\w+\*?)\}.+?\\end\{\1\}",
    re.DOTALL,
)
_PLACEHOLDER = "\x00{}\x00"
_PLACEHOLDER_RE = re.compile("\x00(\\d+)\x00")

# A full stop after these (lower-cased, without their final dot) does not end a sentence.
ABBREVIATIONS = frozenset(
    """e.g i.e et al cf vs viz fig figs eq eqs sec secs ch chap tab ref refs no nos vol pp ed eds
    approx resp dr prof mr mrs ms st jr inc ltd co corp dept univ w.r.t a.k.a i.i.d est max min
    avg var std ca""".split()
)

# Where a sentence may end: terminal punctuation, optional closing quotes/brackets, a footnote's
# mark glued after them in a PDF's text ("… in the end.5 Each passage …"), whitespace.
_CANDIDATE = re.compile(r"[.!?]+[\"')\]]*(?P<mark>\d{1,2})?\s+")
# A list's bullet starts an item of its own, whatever ended the one before ("… dependencies.
# • We release pretrained models …"): the items are sentences, never one run-on.
_TRAILING_MARK = re.compile(r"(\D[.!?][\"')\]]*)\d{1,2}$")  # the paragraph's last one
_BULLETS = "•▪◦●"
_BULLET = re.compile(rf"\s*[{_BULLETS}]\s+")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")


def _has_tex(text: str) -> bool:
    """Whether `text` may hold a _TEX span (each starts with "$" or a backslash): most sentences
    do not, and the pattern's search is a fair part of splitting and tokenising them."""
    return "$" in text or "\\" in text


def _mask_tex(text: str) -> tuple[str, list[str]]:
    spans: list[str] = []
    if not _has_tex(text):
        return text, spans

    def keep(match: re.Match) -> str:
        spans.append(match.group(0))
        return _PLACEHOLDER.format(len(spans) - 1)

    return _TEX.sub(keep, text), spans


def _unmask(text: str, spans: list[str]) -> str:
    if not spans:
        return text
    return _PLACEHOLDER_RE.sub(lambda m: spans[int(m.group(1))], text)


def _ends_sentence(masked: str, start: int, end: int, mark: bool = False) -> bool:
    """Whether the punctuation run masked[start:end] (with its trailing space) ends a sentence;
    `mark`: digits follow the punctuation, a footnote's mark only after a word ("end.5 Each",
    never "3.5 The")."""
    following = masked[end : end + 1]
    if mark and (start == 0 or masked[start - 1].isdigit()):
        return False
    # A sentence starts with a capital, a digit, TeX, or an opening quote/bracket; "e.g. the"
    # and "et al. show" continue the same sentence.
    if not following or not (
        following.isupper() or following.isdigit() or following in "\x00\"'(["
    ):
        return False
    if masked[start] != ".":
        return True  # "?" and "!" always end one
    word = _WORD_BEFORE.search(masked[max(0, start - 30) : start])  # a window: no rescans
    if word is None:
        return True
    token = word.group(1)
    if token.lower().rstrip(".") in ABBREVIATIONS:
        return False
    # An initial ("J. Smith") or a dotted acronym ("U.S.") is not an ending either.
    return not (len(token) == 1 and token.isupper()) and not re.fullmatch(
        r"(?:[A-Za-z]\.)+[A-Za-z]?", token
    )


def has_items(text: str) -> bool:
    """Whether a text holds a bulleted list's items (ItemSentence): a bullet character, found
    without splitting it."""
    return any(bullet in text for bullet in _BULLETS)


class ItemSentence(str):
    """The first sentence of a list's item that a bullet opened ("• Linear Reading: A
    non-personalized baseline …"): the items of one list are quoted together (chat.llm.shapes)."""


_PARAGRAPH_OR_BULLET = re.compile(r"(\n\s*\n|" + _BULLET.pattern + ")")


def split_sentences(text: str) -> list[str]:
    """The sentences of a passage, TeX and abbreviations intact, whitespace collapsed; an item's
    first sentence after a bullet is an ItemSentence."""
    sentences: list[str] = []
    # Blank lines and a list's bullets always separate.
    pieces = _PARAGRAPH_OR_BULLET.split(text)
    for at in range(0, len(pieces), 2):
        paragraph = pieces[at]
        bulleted = at > 0 and any(mark in pieces[at - 1] for mark in _BULLETS)
        first = len(sentences)
        masked, spans = _mask_tex(" ".join(paragraph.split()))
        padded = masked + " "  # so the last stop of the paragraph is a candidate too
        begin = 0
        for match in _CANDIDATE.finditer(padded):
            mark = match.group("mark")
            if _ends_sentence(padded, match.start(), match.end(), mark=bool(mark)):
                # The footnote's mark is not the authors' words: the sentence ends before it.
                end = match.start("mark") if mark else match.end()
                sentences.append(_unmask(masked[begin:end].strip(), spans))
                begin = match.end()
        if rest := _TRAILING_MARK.sub(r"\1", masked[begin:].strip()):
            sentences.append(_unmask(rest, spans))
        if bulleted and len(sentences) > first:
            sentences[first] = ItemSentence(sentences[first])
    return sentences


# A number as a table's or a plot's cells print it ("27.3", "1018", "·", "−0.5", "45%").
_CELL = re.compile(r"[−+-]?\d[\d.,]*%?|[·×]")
_CAPTION_LABEL = re.compile(r"(?:Table|Figure|Fig\.)$", re.IGNORECASE)
CELL_RUN = 4  # this many numbers in a row are a table's or a plot's, never a sentence's words


def _without_printed_cells(sentence: str) -> str:
    """A sentence of a paper's body without the run of a table's or a plot's printed text that
    the PDF's reading order put before it ("Transformer (base model) 27.3 38.1 3.3 · 1018
    Transformer (big) 28.4 41.8 2.3 · 1019 Residual Dropout We apply dropout…"): it starts
    after the last run of CELL_RUN numbers, at the caption when a figure's follows closely. A
    table's printed cells before its caption stay: they are what the caption is about ("ViT-Huge
    32 1280 5120 16 632M Table 1: Details of Vision Transformer model variants.")."""
    words = sentence.split(" ")
    run, end = 0, None
    for i, word in enumerate(words):
        run = run + 1 if _CELL.fullmatch(word) else 0
        if run >= CELL_RUN:
            end = i + 1
    if end is None or end >= len(words):
        return sentence
    rest = words[end:]
    label = next((k for k, w in enumerate(rest[:4]) if _CAPTION_LABEL.match(w)), None)
    if label is not None:
        if rest[label].lower().startswith("tab"):
            return sentence
        rest = rest[label:]
    if len(rest) < 3 or not rest[0][:1].isupper():
        return sentence
    return " ".join(rest)


def labels_a_size(row: str) -> bool:
    """Whether a table's row is labelled by a model size ("big 6 1024 4096 …", "base …")."""
    return row_label(row).lower() in SIZES


def passage_sentences(text: str) -> list[str]:
    """split_sentences for a passage of a paper's full text, where each row of a table whose
    header names its cells (with its caption in the passage: papers.fulltext.tables) is a
    sentence of its own that says its header and caption ("Table 1: Model 175B, #L 96, …, LR
    1.2e−4, Batch 2M (Model architecture details. …)."): the table's lines run together would be
    one "sentence" of every number in it. So is each row of a table whose header names its
    cells less surely, said with the header whole ("Table 1: ViT-Huge 32 1280 5120 16 632M
    (columns: Model Layers Hidden size D MLP size Heads Params) (Details of …)."), when its rows
    stand alone (Table.rows_stand_alone); else it stays that one sentence: its rows alone would
    lose what groups them ("StrategyQA" above "Dataset Size 1648 1648 1319 1319")."""
    tables = find_tables(text)
    sentences: list[str] = []
    cursor = 0
    for table in tables:
        named = table.names_its_rows(text)
        if not (named or table.rows_stand_alone(text)):
            # A model size's own row is said alone all the same ("big 6 1024 4096 16 0.3 300K
            # 4.33 26.4 213" under Table 3's "… params ×10⁶", among rows of groups "(A)" to
            # "(E)" that only vary the base model): the size names what its numbers are of.
            sized = [(a, b) for a, b in table.rows if labels_a_size(text[a:b])]
            if not sized:
                continue
            sentences += split_sentences(_prose(text[cursor : table.start]))
            sentences += [table.row_sentence(text[a:b], pair=False) for a, b in sized]
            later = split_sentences(_CAPTION.sub("", table.caption, count=1))[1:]
            sentences += [CaptionSentence(sentence) for sentence in later]
            cursor = max(cursor, table.end)
            continue
        sentences += split_sentences(_prose(text[cursor : table.start]))
        sentences += [table.row_sentence(text[a:b], pair=named) for a, b in table.rows]
        if not named:
            # The caption's sentences after its first say what every row shares ("All models
            # are fine-tuned with …, a batch size of 512, no weight decay …" under ViT's Table
            # 4): sentences of their own too, as they were when the table was one sentence.
            later = split_sentences(_CAPTION.sub("", table.caption, count=1))[1:]
            sentences += [CaptionSentence(sentence) for sentence in later]
        cursor = max(cursor, table.end)
    sentences += split_sentences(_prose(text[cursor:]))
    return [
        s if isinstance(s, (RowSentence, CaptionSentence)) else _as_note(_without_printed_cells(s))
        for s in sentences
    ]


# A footnote holding a link, as a PDF's text prints it: its mark glued to the address
# ("4https://github.com/NVIDIA/"), then the address's pieces on lines of their own.
_LINK_NOTE = re.compile(r"\d{0,2}(?:https?://|www\.)\S*")
# What a line before a heading ends with: a sentence's stop (with a footnote's mark after it), an
# equation's number ("(32)").
_ENDS_SENTENCE = re.compile(r"(?:[.!?:][\"')\]]*\d{0,2}|\(\d{1,3}\))$")


# A footnote as a PDF's text prints it at the foot of a page: its mark glued to its first word
# ("1Code and demo available at https://github.com/allenai/paper-plain", then "2Example from
# patient testimonials …" on the next line).
_FOOTNOTE_LINE = re.compile(r"\d{1,2}(?=[A-Z][a-z]{2,}\b)")


class NoteSentence(str):
    """A footnote's text, without its mark: complete without a full stop ("Code and demo
    available at https://github.com/allenai/paper-plain")."""


class CaptionSentence(str):
    """A later sentence of a table's caption, said apart from the table's rows ("All models are
    fine-tuned with cosine learning rate decay, …"): the float's text, printed with it."""


def _as_note(sentence: str) -> str:
    mark = _FOOTNOTE_LINE.match(sentence)
    return NoteSentence(sentence[mark.end() :]) if mark else sentence


def _prose(text: str) -> str:
    """A passage of a paper's body with blank lines (which always separate sentences) around
    its section headings and in place of its link footnotes: read line by line, "5.2 Hardware
    and Schedule" before "We trained our models on one machine…" would otherwise open that
    sentence, and a footnote's address ("4https://github.com/… gpt3_175B.sh We use an AdamW
    optimizer…") the sentence printed after it. A heading (kept: its words say what the section
    is about, though it is never quoted as a sentence: `is_heading`) is a line
    papers.fulltext.parse.heading_title calls one after a line that ends a sentence or the
    passage's start ("8 NVIDIA P100 GPUs for 12 hours" wrapped from the line before is not one),
    with the short line that ends it when it runs on to a second ("C Parameter and FLOP Count
    for the" / "RWKV Models")."""
    lines = text.split("\n")
    kept: list[str] = []
    in_note = False
    for i, line in enumerate(lines):
        bare = line.strip()
        if _LINK_NOTE.fullmatch(bare) or (in_note and bare and " " not in bare):
            in_note = True  # the address goes on, a piece a line, until a line of words
            kept.append("")
            continue
        in_note = False
        before = next((k.strip() for k in reversed(kept) if k.strip()), "")
        after_stop = not before or not kept[-1].strip() or _ENDS_SENTENCE.search(before)
        if bare and after_stop and heading_title(bare):
            kept += ["", line, ""]
            continue
        if _FOOTNOTE_LINE.match(bare) and kept and kept[-1].strip():
            kept.append("")  # a footnote starts a paragraph of its own
        if kept[-1:] == [""] and len(kept) >= 2 and heading_title(kept[-2].strip()):
            heading = f"{kept[-2].strip()} {bare}"
            following = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if (
                len(bare.split()) <= 6
                and not _ENDS_SENTENCE.search(bare)
                and following[:1].isupper()
                and heading_title(heading)
            ):
                kept[-2] = heading
                continue
        kept.append(line)
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if bare.endswith(":") and following[:1].isupper():
            kept.append("")  # a list opens: "… tested on the validation data:" / "Inception: …"
    return "\n".join(kept)


# What a sentence of a paper's body ends with when it is one: a stop (";" ends a list's item),
# closing quotes or brackets after it. "In our evaluation, we used" (a figure's caption printed
# in the middle of the sentence) ends with none; "… model families and sizes:" opens a list.
_STOPPED = re.compile(r"[.!?;][\"')\]”’]*$")
# Words that bind prose together: a figure's labels and axis ticks read as a "sentence" ("10 M
# 30 M 100 M 300 M Number of JFT pre-training samples 30 40 50 …") have almost none; prose has
# one word in three or four of them.
_FUNCTION_WORDS = frozenset(
    "a an the of to in and or is are was were be been we our for on with that by as this it "
    "from at which their its these".split()
)
PROSE_SHARE = 0.08  # below this share of function words, 12 words or more are not prose
# A sentence opening with the authors and their verb ("We consider", "We evaluate"): no figure's
# printed labels read that way.
_AUTHORS_SAY = re.compile(r"(?:We|Our\s+[a-z]+)\s+[a-z]{2,}")
_CAPTION = re.compile(r"(?:Table|Figure|Fig\.)\s*\d+[.:]\s*", re.IGNORECASE)
_TABLE_LABEL = re.compile(r"\bTable\s*\d+[.:]", re.IGNORECASE)
BARE_CAPTION_WORDS = 6  # "Table 3: Variations on the Transformer architecture." names, says nothing


# A sentence's final stop, as the composer requires of a passage's last sentence (one cut to fit
# a prompt has none): stricter than _STOPPED, which lets a list's item end with ";".
_FINAL_STOP = re.compile(r"[.!?][\"')\]]*$")


def is_stopped(sentence: str) -> bool:
    return bool(_STOPPED.search(sentence))


def has_final_stop(sentence: str) -> bool:
    return bool(_FINAL_STOP.search(sentence))


# Abbreviations a sentence goes on after (of ABBREVIATIONS, those that never end one: "5 min."
# may).
_RUNS_ON = frozenset("e.g i.e al cf vs viz fig figs eq eqs sec secs tab ref refs resp".split())


def runs_on(sentence: str) -> bool:
    """Whether a text's last sentence stops at an abbreviation's dot ("… by a large margin (65.2%
    vs."): a chunk cut there, and the sentence goes on in the next one."""
    word = _WORD_BEFORE.search(sentence.rstrip()[:-1]) if sentence.rstrip().endswith(".") else None
    return word is not None and word[1].lower().rstrip(".") in _RUNS_ON


def is_caption(sentence: str) -> bool:
    """A figure's or table's caption (a table's row said as a sentence opens with its caption):
    a float, printed wherever the page had room, so not part of the section around it."""
    return bool(_CAPTION.match(sentence))


def opens_list(sentence: str) -> bool:
    """A sentence that introduces what follows it ("We benchmark the following model families
    and sizes:"): alone it says nothing, and it is what the list's items are about."""
    return sentence.rstrip().endswith(":")


def is_figure_text(sentence: str) -> bool:
    """A figure's or table's printed text read as a sentence (labels, ticks, legends), or a
    caption that only names its figure: neither answers a question."""
    if isinstance(sentence, RowSentence):
        return False  # a table row said as a sentence, with its header: made to be quoted
    caption = _CAPTION.match(sentence)
    if caption and len(sentence[caption.end() :].split()) <= BARE_CAPTION_WORDS:
        return True
    if _TABLE_LABEL.search(sentence):
        return False  # a table's printed cells with its caption: the caption says what they are
    if _AUTHORS_SAY.match(sentence):
        # The authors speaking, however many names follow: "We consider four popular open-domain
        # QA datasets: Natural Questions (NQ) [29], TriviaQA (TQA) [24]." (one function word in
        # fourteen) was never quoted for "which datasets is RAG evaluated on?".
        return False
    words = sentence.split()
    if len(words) < 12:
        return False
    binding = sum(w.lower().strip(",.;:()[]") in _FUNCTION_WORDS for w in words)
    return binding / len(words) < PROSE_SHARE


def is_heading(sentence: str) -> bool:
    """A section heading that passage_sentences gives as a sentence of its own: never quoted."""
    return heading_title(sentence) is not None


def passage_span(passage: str, sentence: str) -> str:
    """The passage's own text of `sentence` (one of `passage_sentences(passage)`), for a card to
    mark it: sentences come out with their whitespace collapsed (a PDF line's break is a space in
    them) and a table row's sentence is said with its header and caption, so the passage holds
    the row's line instead. "" when the passage does not hold it (a card's quote may come from
    elsewhere: "which of these" quotes the paper's best sentence, not always the card's)."""
    wanted = sentence.row if isinstance(sentence, RowSentence) and sentence.row else sentence
    words = wanted.split()
    if not words:
        return ""
    # The words with any whitespace between them, first found: the match of the regex
    # r"\s+".join(map(re.escape, words)), found in the passage with its whitespace collapsed to
    # one space instead. Compiling that regex, a new one for each sentence, cost ~1.7 ms a card,
    # most of what quoting an answer's cards cost (`bench_chat concurrent --profile yappi`,
    # docs/BENCHMARKS.md, session 10).
    needle = " ".join(words)
    collapsed = " ".join(passage.split())
    at = collapsed.find(needle)
    if at < 0:
        return ""
    end = at + len(needle) - 1  # its last character; both ends are inside tokens
    first = collapsed.count(" ", 0, at)  # the token the match starts in
    # The tokens it covers, as split() cut them, with their offsets in the passage.
    covered = list(itertools.islice(_NON_SPACE.finditer(passage), first, first + len(words)))
    start = covered[0].start() + at - (collapsed.rfind(" ", 0, at) + 1)
    stop = covered[-1].start() + end - (collapsed.rfind(" ", 0, end) + 1) + 1
    return passage[start:stop]


_NON_SPACE = re.compile(r"\S+")


_ASKED_HEAD = re.compile(r"\b(?:which|what)\s+((?:[\w-]+\s+){1,3})", re.IGNORECASE)


def asked_heads(question: str) -> list[str]:
    """What a "which/what" question asks for: the last of the words after it, up to a function
    word ("Which Wikipedia dump does …" -> dump; "What is …" -> none)."""
    match = _ASKED_HEAD.search(question)
    heads = []
    for word in match.group(1).lower().split() if match else []:
        if word in STOPWORDS:
            break
        heads.append(word)
    heads = [w for w in heads if len(w) > 1]
    return heads[-1:]  # the head noun: "dump" of "Wikipedia dump", "rank" of "LoRA rank r"


# A bulleted list whose items name things of the kind a "what/which X" question asks for answers
# it whole: "• Linear Reading: A non-personalized baseline …", "• Global Citation Count: A
# non-personalized baseline …" for "What baselines does CiteSee compare against?", where "… by
# comparing it against three baselines" only counts them. At least this many of its items say
# the X.
ASKED_LIST_ITEMS = 2


def names_asked_things(items: list[set[str]], heads: set[str]) -> list[bool]:
    """For the items of one list (each its first sentence's terms), whether each names a thing
    the question asks for (`heads`, stems of asked_heads): the items saying it, when at least
    ASKED_LIST_ITEMS do; all False otherwise."""
    naming = [bool(heads & item) for item in items]
    return naming if heads and sum(naming) >= ASKED_LIST_ITEMS else [False] * len(items)


# A table's label as its caption opens ("Table 5:", "Table 3."), inside a sentence.
_TABLE_CAPTION = re.compile(r"\bTable\s*\d+[.:]")
# A printed table's cell that is no number: a dash for a missing value.
_DASH = frozenset("- – — −".split())
CELL_SHARE = 0.3  # at least this share of the words before a caption are cells: a table's


def table_cells(sentence: str) -> str | None:
    """A table's own cells in a sentence: a table row's (RowSentence.row), or the printed cells
    that the PDF's reading order ran together before the table's caption ("RAPT 90.56 42.83 …
    NC-RAPT (Low) 96.69 … Table 5: Comparison of different approaches … on different
    datasets.", "Dataset Size 1844 1544 1544 - - Table 1: Task accuracy across arithmetic
    reasoning datasets …"); None for prose."""
    if isinstance(sentence, RowSentence):
        return sentence.cells
    if "Table" not in sentence:
        return None
    caption = _TABLE_CAPTION.search(sentence)
    if caption is None or caption.start() == 0:
        return None
    before = sentence[: caption.start()].split()
    cells = sum(1 for w in before if _CELL.fullmatch(w.strip("()")) or w in _DASH)
    if cells < 3 or cells < CELL_SHARE * len(before):
        return None
    return " ".join(before)


# A float's caption inside a sentence: the words before it are the float's printed text.
_CAPTION_INSIDE = re.compile(r"\b(?:Table|Figure|Fig\.)\s*\d+:")


def is_float_text(sentence: str) -> bool:
    """A table's or figure's printed text, not the paper's prose: a table's row said as a
    sentence, a caption, or cells the PDF's reading order ran into a caption, of numbers or of
    words ("Input Why do all of my questions get marked as needing improvement LPT why do my
    questions … NC-RAPT (Low) … Table 1: Examples of generated paraphrases by different models
    from Quora Question Pairs dataset.")."""
    if isinstance(sentence, (RowSentence, CaptionSentence)) or is_caption(sentence):
        return True
    if table_cells(sentence):
        return True
    inside = _CAPTION_INSIDE.search(sentence)
    return inside is not None and inside.start() > 0


def answers_nothing(sentence: str, query_terms, question: str = "") -> bool:
    """A table's row, or its cells printed before its caption, whose own cells hold none of
    `query_terms`: only its caption or header meet the question, and those match every row
    (every cell) alike: "Table 5: Comparison of … on different datasets" under its cells of
    scores is no answer to "Which datasets are used to evaluate RAPT …?". What a "which X"
    `question` asks for (asked_heads) in a cell labels numbers, it names no X: "Dataset Size 1844
    1544" is no answer to "On which … dataset are the T5 models benchmarked?"."""
    if isinstance(sentence, RowSentence):
        # (Its header names each cell: "Dataset" there is a column's name, not a label.) But a
        # first column named what was asked makes each row's label one: DPR's "Dataset Train Dev
        # Test" over "CuratedTREC 1,353 1,125 133 694" names a dataset it is evaluated on.
        if question and set(terms(sentence.labels)) & _asked_head_terms(question):
            return False
        return not set(query_terms) & set(terms(sentence.cells))
    cells = table_cells(sentence)
    if cells is None:
        return False
    wanted = set(query_terms) - _asked_head_terms(question) if question else set(query_terms)
    return not wanted & set(terms(cells))


@lru_cache(maxsize=256)
def _asked_head_terms(question: str) -> frozenset[str]:
    return frozenset(stems(asked_heads(question)))


# --- Terms --------------------------------------------------------------------------------------
# Words of no topic, and words that only ask: "How many participants TOOK PART …", "What
# limitations do the AUTHORS DESCRIBE / ACKNOWLEDGE / MENTION …" (as evidence they made OPT's
# datasheet, "please describe these limits", and RWKV's "We also acknowledge the members of the
# RWKV Discord server" answers about limitations).
STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing done down during each either else
    few for from further had has have having he her here hers him his how however i if in into is
    it its itself just let me more most much my no nor not now of off on once only or other our
    ours out over own same she should so some such than that the their theirs them then there
    these they this those through to too under until up upon us very via was we were what when
    where whether which while who whom whose why will with within without would you your yours
    one two using used use based show shows shown new novel paper papers work works study studies
    research article articles arxiv recent recently latest newest current currently year years
    month months week weeks today tell explain find list summarize summarise summary give know
    known regarding published publish say says said anything something thing things way ways
    like many well may might must need needs get gets make makes made advance advances
    advancement advancements progress development developments trend trends main key major
    important idea ideas different various common kind kinds type types overview take takes
    took taken taking part parts author authors describe describes described describing
    acknowledge acknowledges acknowledged mention mentions mentioned stated""".split()
)
_ONE_CHARACTER = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
# What `tokens` keeps of each byte: [a-z0-9] as it is, any other a space. A code point past ASCII
# is first one byte ("?"), so it ends a run of letters as it would in the regular expression.
_TOKEN_BYTES = bytes(c if chr(c) in _ONE_CHARACTER else 32 for c in range(256))


def tokens(lowered: str) -> list[str]:
    """The runs of [a-z0-9] in `lowered` (re.findall(r"[a-z0-9]+", lowered)), found in C at half
    the regular expression's cost: the words of the sentences of the page's chunks are found on
    each search (`term_set`, `terms_any_sentence_may_hold`; bench_search --chunks)."""
    return lowered.encode("ascii", "replace").translate(_TOKEN_BYTES).decode("ascii").split()


# Greek letters as the words a question types for them ("beta2" for the PDF's "β2", "epsilon"
# for "ϵ"), so that a sentence and a question share the term. Applied after lower().
GREEK_LETTERS = "αβγδεϵζηθϑικλμνξοπρσςτυφϕχψω"
_GREEK = str.maketrans(
    dict(
        zip(
            GREEK_LETTERS,
            "alpha beta gamma delta epsilon epsilon zeta eta theta theta iota kappa lambda mu nu "
            "xi omicron pi rho sigma sigma tau upsilon phi phi chi psi omega".split(),
            strict=True,
        )
    )
)


_ANY_GREEK = re.compile(f"[{GREEK_LETTERS}]", re.IGNORECASE)

# Each spelled letter's printed forms ("epsilon": "εϵ"), and a spelled letter in a question,
# numbered or not ("beta", "betas", "beta2").
_PRINTED = {
    name: "".join(letter for letter in GREEK_LETTERS if letter.translate(_GREEK) == name)
    for name in dict.fromkeys(letter.translate(_GREEK) for letter in GREEK_LETTERS)
}
_SPELLED_LETTER = re.compile(rf"\b(?P<name>{'|'.join(_PRINTED)})(?P<number>\d?)s?\b")


def printed_greek(text: str) -> list[str]:
    """The lexemes (as to_tsvector('english') makes them of a paper's text) that print the Greek
    letters `text` spells: "beta" -> 'β', 'β0' ... 'β9' (a numbered letter is the letter too:
    "What were its beta values?" asks for "β1 = 0.9, β2 = 0.98"), "beta2" -> 'β2'. The reverse
    of `_spelt`, for the lexical search, whose index holds the printed letters."""
    printed = []
    for match in _SPELLED_LETTER.finditer(text.lower()):
        numbers = [match["number"]] if match["number"] else ["", *"0123456789"]
        printed += [letter + n for letter in _PRINTED[match["name"]] for n in numbers]
    return list(dict.fromkeys(printed))


def spells_greek(text: str) -> bool:
    """Whether `terms(text)` would spell out a Greek letter of it ("β2" -> "beta2"): words that
    PostgreSQL's to_tsvector('english') of the same text does not have."""
    return bool(_ANY_GREEK.search(text))


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer  # PyStemmer: Snowball, the stemmer of PostgreSQL's 'english' (our BM25)

    return Stemmer.Stemmer("english")


def _spelt(text: str) -> str:
    """`text` (lower-cased) with its Greek letters spelled out; most texts have none, and
    str.translate costs a dictionary lookup a character. A numbered letter is the letter too
    ("β1 = 0.9, β2 = 0.98" -> "beta1 beta … beta2 beta …"): "What were its beta values?"
    asks for both."""
    if _ANY_GREEK.search(text):
        text = text.translate(_GREEK)
    if _NUMBERED_LETTER.search(text):
        text = _NUMBERED_LETTER.sub(r"\g<0> \g<letter>", text)
    return text


_NUMBERED_LETTER = re.compile(
    r"\b(?P<letter>alpha|beta|gamma|delta|epsilon|lambda|sigma|theta|tau|eta|mu|rho)\d+\b"
)


# "include but are not limited to" lists examples: it says nothing of limits or limitations
# ("Examples of harm include but are not limited to racism, sexism, toxicity" answered "What
# are the limitations of Constitutional AI?").
_NOT_LIMITED = re.compile(r"\b(?:but\s+)?(?:(?:is|are)\s+)?not\s+limited\s+to\b")


def _words(text: str) -> list[str]:
    """Lower-cased tokens of a text, TeX out, Greek letters spelled out ("β2" -> "beta2"), the
    idiom "not limited to" out."""
    text = text.lower()
    if "limited to" in text:
        text = _NOT_LIMITED.sub(" ", text)
    if _has_tex(text):
        text = _TEX.sub(" ", text)
    return tokens(_spelt(text))


def content_words(text: str) -> list[str]:
    """Lower-cased words of a text that carry meaning (stopwords, TeX and 1-letter words out),
    Greek letters spelled out ("β2" -> "beta2")."""
    return [w for w in _words(text) if len(w) > 1 and w not in STOPWORDS]


# The endings of British -ise/-yse forms (papers.text.american_spelling): only such words pay
# for its regular expression.
_BRITISH_ENDINGS = tuple(
    f"{s}{end}" for s in ("is", "ys") for end in ("e", "ed", "es", "ing", "ation", "ations")
)


# Each word's stem, once a process: the sentence evidence stems the words of ~100 sentences a
# search, mostly the same words (a third of the best-chunk stage's profile was stemming).
_STEMS: dict[str, str] = {}
_STEMS_KEPT = 200_000


def stems(words: list[str]) -> list[str]:
    """Snowball stems, British -ise/-yse forms first spelt as the -ize/-yze they stem apart from
    ("initialised" meets "initialization")."""
    known = _STEMS
    found = [known.get(w) for w in words]
    missing = [w for w, stem in zip(words, found, strict=True) if stem is None]
    if not missing:
        return found
    spelt = [american_spelling(w) if w.endswith(_BRITISH_ENDINGS) else w for w in missing]
    fresh = dict(zip(missing, _stemmer().stemWords(spelt), strict=True))
    if len(known) + len(fresh) > _STEMS_KEPT:
        known.clear()
    known.update(fresh)  # (another thread may clear it meanwhile: the answer is `fresh`'s)
    return [fresh[w] if stem is None else stem for w, stem in zip(words, found, strict=True)]


# The stems of words a table's header prints abbreviated ("params" over "213" in the
# Transformer's Table 3), with the abbreviations' stems: a question's word meets its column.
_ABBREVIATED = {"paramet": ("param",), "dimens": ("dim",), "accuraci": ("acc",)}


def with_abbreviations(query: list[str]) -> list[str]:
    """A query's stems, each followed by the stems of its abbreviations (_ABBREVIATED)."""
    return [a for t in query for a in (t, *_ABBREVIATED.get(t, ()))]


def terms(text: str) -> list[str]:
    """The stemmed content words of a text, in order, repeats kept (for term frequencies)."""
    return stems(content_words(text))


def terms_any_sentence_may_hold(text: str) -> set[str]:
    """Every term a sentence of `text` (passage_sentences) can hold: term_set of the whole text
    without taking TeX out (a sentence's own TeX spans are taken out of it, which only drops
    words), with the word a table row's sentence adds ("columns: …"). What a sentence can score
    is bounded by these, without splitting the text into sentences."""
    words = set(tokens(_spelt(text.lower())))
    words.add("columns")
    words -= STOPWORDS
    words -= _ONE_CHARACTER
    return set(stems(list(words)))


def term_set(text: str) -> set[str]:
    """set(terms(text)), each distinct word filtered and stemmed once: what a sentence scorer
    that only asks which terms a sentence holds needs, at about half the cost."""
    words = set(_words(text))
    words -= STOPWORDS
    words -= _ONE_CHARACTER
    return set(stems(list(words)))
