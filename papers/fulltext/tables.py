"""Tables in a paper's text as PDFium lays them out: one line per row, cells joined by single
spaces, the header line(s) above the rows, the caption ("Table 3. Error rates …") above or below
them as ordinary lines:

    model top-1 err. top-5 err.                                  <- header
    ResNet-101 21.75 6.05                                        <- rows
    ResNet-152 21.43 5.71
    Table 3. Error rates (%, 10-crop testing) on ImageNet validation.   <- caption

Cheap and line-based (no character boxes): a row is a short line mostly of numbers; a table is a
run of rows next to a caption; its header the short lines between them (caption above) or just
above the rows (caption below). A run with no caption is not a table here: without one nobody can
say what its numbers are.

Used where a table must stay readable: the chunker keeps a table whole in one chunk when it fits
(papers.fulltext.chunk), and a table's row becomes a sentence of its own that carries its caption
and header (`Table.row_sentence`): what the composer quotes and what a question's words are
matched against (chat.llm.sentences.passage_sentences).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

# A cell that is a value: 21.43, 5.71%, 632M, 1.2e−4, ±0.04, 10K, (dev), -, ✓.
# (A count may be written in lower case, "330m" parameters in REALM's Table 1, and a
# percentage may carry a footnote's letter, "250%a" in MuZero's.)
_VALUE = re.compile(
    r"^[(\[]?[-−+±~≈<>≤≥]?\d[\d.,/]*(?:[eE][-−+]?\d+)?(?:[%×xMBKkGTsmb]|(?<=%)[a-d])*"
    r"[)\]]?[*†‡∗]*$"
    r"|^[-–—−✓✗×]$|^N/A$"
    r"|^[OΘΩ𝑂]\(.*\)$"  # an order of growth, one cell though it has spaces (`row_cells`)
)
# An order of growth opening ("O(n · d²)", "Θ(n"): a cell up to its closing parenthesis.
_GROWTH = re.compile(r"^[OΘΩ𝑂]\(")
_CAPTION = re.compile(r"^(?:Table|TABLE)\s+(?:[0-9]{1,2}|[IVX]{1,5}|[A-Z]\.?\d{1,2})[.:]\s*")
# A line that _CAPTION matches once stripped, anywhere in a text.
_CAPTION_LINE = re.compile(r"^[^\S\n]*" + _CAPTION.pattern.removeprefix("^"), re.MULTILINE)
_REFERENCE = re.compile(r"\s*\[\d{1,3}(?:,\s*\d{1,3})*\]")
# Lines a table's run may skip between rows: a group label "(A)", an exponent PDFium put on a
# line of its own.
MAX_GAP_LINES = 2
MIN_ROWS = 2
MAX_ROW_WORDS = 24
MAX_LABEL_WORDS = 12  # a row's label before its values ("Ours (X = Wikipedia, Z = Wikipedia) Dense …")
MAX_HEADER_LINES = 3
MAX_CAPTION_LINES = 8
# A caption up to this long is said whole with each row, else its first sentence.
CAPTION_WORDS = 45
# Rows this far (in lines) from the caption still belong to it.
CAPTION_REACH = 4


class RowSentence(str):
    """A table row said as a sentence (`Table.row_sentence`), knowing its own cells (`row`): a
    question whose words meet only the caption or header matches every row alike, and must not
    make one row's numbers the answer (chat.llm.sentences.answers_nothing)."""

    row: str
    # The name of the header's first column, what the rows' labels are ("Dataset" of "Dataset
    # Train Dev Test": each row names a dataset); "" without a header.
    labels: str

    # The row said without its header and caption, once a row before it said them: "Table 3:
    # model ResNet-34 B, top-1 err. 24.52, top-5 err. 7.46", "Table 1: TriviaQA 78,785 …".
    brief: str

    def __new__(cls, text: str, row: str = "", labels: str = "", brief: str = ""):
        sentence = super().__new__(cls, text)
        sentence.row = row
        sentence.labels = labels
        sentence.brief = brief or text
        return sentence

    def __getnewargs__(self):  # copy and pickle keep the row (cards are deep-copied)
        return str(self), self.row, self.labels, self.brief

    @property
    def cells(self) -> str:
        """The row without its reference numbers ("Maxout [10] 9.38" -> "Maxout 9.38")."""
        return _REFERENCE.sub("", self.row)


@dataclass(frozen=True, slots=True)
class Table:
    start: int  # the block: header, rows and caption, whichever comes first and last
    end: int
    caption: str  # whitespace collapsed
    header: str
    rows: tuple[tuple[int, int], ...]  # each row line's span
    header_lines: int = 1

    @property
    def label(self) -> str:
        match = _CAPTION.match(self.caption)
        return match.group(0).strip().rstrip(".:") if match else "Table"

    def columns(self) -> list[str]:
        """The header cut into column names where it can be: "top-1 err." and "F1 score" are one
        name (a short lower-case word with a dot, or a word of _CONTINUES, closes the name
        before it)."""
        names: list[str] = []
        for word in self.header.split():
            if names and (
                re.fullmatch(r"[a-z]{1,5}\.|\([^()]*\)|×\d+", word) or word in _CONTINUES
            ):
                names[-1] += " " + word
            else:
                names.append(word)
        return names

    def _named_cells(self, row: str) -> list[str] | None:
        """The row's cells when the header names them one to one, else None."""
        cells = row_cells(_REFERENCE.sub("", row_text(row)))
        names = self.columns()
        # A row's label may be several words ("ResNet-34 A", "Oxford-IIIT Pets"): words before
        # the first value join while the row has more cells than the header names.
        while len(cells) > len(names) > 0 and len(cells) > 1 and not is_value(cells[1]):
            cells[:2] = [f"{cells[0]} {cells[1]}"]
        if (
            self.header_lines == 1
            and names
            and names[0].lower() in _LABEL_COLUMNS
            and len(names) == len(cells) > 1
            and all(is_value(cell) for cell in cells[1:])
        ):
            return cells
        return None

    def names_its_rows(self, text: str) -> bool:
        """Every row of the table (spans of `text`) pairs with the header's names."""
        return all(self._named_cells(text[a:b]) is not None for a, b in self.rows)

    def rows_stand_alone(self, text: str) -> bool:
        """Each row (spans of `text`) can be said alone, though the header does not surely name
        its cells ("Dataset Train Dev Test" over four numbers a row, a header on two lines): no
        line between the rows (a group's label) and every row labelled, each by another label
        that opens with a capital or a digit. Not "Dataset Size 1648 1648 1319 1319" under
        "StrategyQA 68.12 …" (its label again under GSM8K's), nor "acc. with Calc. - 26.99 …":
        rows of the row above them."""
        first, last = self.rows[0][0], self.rows[-1][1]
        # (A row may span two lines: its label's and its values', _row_spans.)
        inside = sum(text.count("\n", a, b) for a, b in self.rows)
        if text.count("\n", first, last) - inside != len(self.rows) - 1:
            return False
        labels = []
        for a, b in self.rows:
            label = row_label(text[a:b])
            if not label or label[0].islower():
                return False
            labels.append(label)
        return len(set(labels)) == len(labels)

    def row_sentence(self, row: str, pair: bool = True) -> RowSentence:
        """A row said with what its numbers are: "Table 3: model ResNet-152, top-1 err. 21.43,
        top-5 err. 5.71 (Error rates (%, 10-crop testing) on ImageNet validation. …)." When the
        header's names and the row's cells do not surely pair one to one (a header on several
        lines or not naming the labels' column first, a cell after the label that is no value),
        the header is given whole.
        The caption is given whole up to CAPTION_WORDS words (it often says what the header's
        abbreviations stand for: "the peak Learning Rate (LR)"), else its first sentence.
        Without `pair` (the table's other rows do not pair), the header is given whole too: one
        row that seems to pair may not ("VTAB (19 tasks) 2 500 0.01" under "Dataset Steps Base
        LR" is 2,500 steps, not "Steps 2, Base 500")."""
        row = row_text(row)
        named = self._named_cells(row) if pair else None
        cells = " ".join(_REFERENCE.sub("", row).split())
        if named is not None:
            body = brief = ", ".join(f"{n} {c}" for n, c in zip(self.columns(), named, strict=True))
        elif self.header:
            body, brief = f"{cells} (columns: {self.header})", cells
        else:
            body = brief = cells
        about = _CAPTION.sub("", self.caption).strip()
        if len(about.split()) > CAPTION_WORDS:
            about = re.split(r"(?<=[.!?])\s+(?=[A-Z])", about, maxsplit=1)[0]
        # Reference numbers ("VGG-16 [41]") would read as the answer's own citations.
        text = _REFERENCE.sub("", f"{self.label}: {body} ({about.rstrip('.')}).")
        names = self.columns()
        return RowSentence(
            text, row, names[0] if names else "", _REFERENCE.sub("", f"{self.label}: {brief}.")
        )


# A cell's number and its scale: "632M", "1.2e−4", "5.71%", "12".
_MAGNITUDE = re.compile(
    r"^[(\[]?[~≈<>≤≥]?([-−+]?)(\d[\d,]*(?:\.\d+)?)(?:[eE]([-−+]?\d+))?([KkMmBbGT]?)"
)
_SCALES = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}


def magnitude(cell: str) -> float | None:
    """The number a value's cell says, scaled ("632M" -> 632e6); None for a dash or a word."""
    match = _MAGNITUDE.match(cell)
    if match is None:
        return None
    sign, digits, exponent, scale = match.groups()
    value = float(digits.replace(",", "")) * 10 ** int((exponent or "0").replace("−", "-"))
    value *= _SCALES.get(scale.lower(), 1.0)
    return -value if sign in "-−" and sign else value


def extreme_row(rows: list[RowSentence], smallest: bool = False) -> int | None:
    """The index of the row of one table whose every value is at least every other row's
    (at most, `smallest`), column by column: ViT-Huge's "32 1280 5120 16 632M" over ViT-Base's and
    ViT-Large's, the largest of the model variants the table lists. None when no row is, or the
    rows do not give as many values (their columns may not line up)."""
    values = []
    for row in rows:
        cells = row_cells(row.cells)
        label = list(itertools.takewhile(lambda w: not is_value(w), cells))
        values.append([magnitude(c) for c in cells[len(label) :]])
    if len(values) < 2 or len({len(v) for v in values}) != 1 or not values[0]:
        return None
    sign = -1.0 if smallest else 1.0

    def beats(a: list, b: list) -> bool:
        pairs = [(sign * x, sign * y) for x, y in zip(a, b, strict=True) if None not in (x, y)]
        return bool(pairs) and all(x >= y for x, y in pairs) and any(x > y for x, y in pairs)

    found = [i for i, v in enumerate(values) if all(beats(v, o) for o in values if o is not v)]
    return found[0] if len(found) == 1 else None


def row_label(row: str) -> str:
    """The words a row opens with before its values ("ResNet-152", "big"), or those before its
    last values when it opens with a number ("30× stale MIPS 28.7 15.1"); "" for none."""
    words = row_cells(_REFERENCE.sub("", row_text(row)))
    label = " ".join(itertools.takewhile(lambda w: not is_value(w), words))
    if not label:
        values = list(itertools.takewhile(is_value, reversed(words)))
        label = " ".join(words[: len(words) - len(values)])
    return label


def row_cells(line: str) -> list[str]:
    """A row's cells: its words, but an order of growth is one cell ("O(n² · d)")."""
    found: list[str] = []
    words = line.split()
    i = 0
    while i < len(words):
        j = i
        if _GROWTH.match(words[i]):
            # (Unclosed to the end: its words stay apart.)
            while j < len(words) and _unclosed(" ".join(words[i : j + 1])):
                j += 1
            j = i if j == len(words) else j
        found.append(" ".join(words[i : j + 1]))
        i = j + 1
    return found


def _unclosed(text: str) -> bool:
    return text.count("(") > text.count(")")


_SUPERSCRIPTS = str.maketrans("0123456789−-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁻")
# An exponent PDFium printed on a line of its own, or opening the next line ("O(T" / "2 + T d)").
_EXPONENT = re.compile(r"^[−-]?\d{1,2}(?=\s|\)|$)")
# A row printed over several lines while a parenthesis is open (an exponent raised off the line:
# "Self-Attention O(n" / "2" / "· d) O(1) O(1)"): this many lines at most.
MAX_ROW_LINES = 4


def row_text(row: str) -> str:
    """A row's text (a span of the paper's text, perhaps over several lines) on one line: an
    exponent PDFium put on a line of its own raised again ("O(n" / "2" / "· d)" -> "O(n² · d)"),
    a closing parenthesis joined to what it closes, other lines joined by a space."""
    out = ""
    for part in row.split("\n"):
        part = part.strip()
        if out and _unclosed(out) and out[-1].isalnum() and (raised := _EXPONENT.match(part)):
            out += raised[0].translate(_SUPERSCRIPTS)
            part = part[raised.end() :].strip()
        if not part:
            continue
        out += part if not out or (part.startswith(")") and _unclosed(out)) else " " + part
    return out


def is_value(cell: str) -> bool:
    """A cell that is a number or a dash; "2019)" closes a citation, it is no value."""
    return bool(_VALUE.match(cell)) and cell.count("(") == cell.count(")")


def is_row(line: str) -> bool:
    """A short line whose cells are mostly values (at least two), or a label of a few words
    followed by values only ("REALM with random uniform masks 32.3 24.2", an ablation's row)."""
    words = row_cells(line)
    if not words or len(words) > MAX_ROW_WORDS:
        return False
    values = sum(is_value(w) for w in words)
    if values >= 2 and values >= 0.3 * len(words):
        return True
    label = list(itertools.takewhile(lambda w: not is_value(w), words))
    return (
        values >= 2
        and all(is_value(w) for w in words[len(label) :])
        and 0 < len(label) <= MAX_LABEL_WORDS
        and not any(w.lower() in _PROSE for w in label)
    )


# Lower-case header words that end the column name before them ("F1 score", "Hidden size").
_CONTINUES = frozenset("size score rate steps length time accuracy acc".split())
# A header whose first name is one of these names its rows' labels: then, and only then, names
# and cells are paired (without character positions a header such as "MSMARCO Jeopardy QGen"
# could be two columns or three, with or without the label's).
_LABEL_COLUMNS = frozenset(
    "model models method methods dataset datasets category task tasks setting system systems "
    "approach action name agent game parser variant architecture baseline".split()
)
# Words of prose, not of a table's header.
_PROSE = frozenset("we is are was were that which this our these those their it".split())


def _is_header(line: str) -> bool:
    words = line.split()
    if not words or len(words) > 14 or _CAPTION.match(line) or line.endswith((",", ";")):
        return False
    if any(w.lower() in _PROSE for w in words):
        return False
    # A prose line ends a sentence on a long word ("… in this setting."); "top-5 err." does not.
    last = words[-1]
    return not (last.endswith(".") and len(last.rstrip(".")) >= 5 and last[:-1].isalpha())


def has_caption(text: str, start: int = 0, end: int | None = None) -> bool:
    """Whether text[start:end] has a line opening with a table's caption ("Table 3: …")."""
    return _CAPTION_LINE.search(text, start, len(text) if end is None else end) is not None


# How far before a chunk the table it opens inside may begin (caption and header included).
TABLE_HEAD_REACH = 3000


def with_table_head(text: str, start: int, end: int) -> str | None:
    """text[start:end] (a chunk of a paper's `text`) with the caption and header of the table it
    opens inside, when that table's caption and header are printed above its rows before
    `start`: the chunker cut the table (Table 3 of the Transformer, too long for one chunk), and
    its last rows alone ("big 6 1024 4096 16 0.3 300K 4.33 26.4 213") say nothing of what their
    numbers are ("params ×10⁶"). A group's label opening the chunk ("(D)") is left out: its rows
    are read under the header. None when the chunk does not open inside such a table."""
    lines = text[start : min(end, start + 200)].split("\n", 2)
    if not any(is_row(line.strip()) for line in lines[:2]):
        return None
    begin = max(0, start - TABLE_HEAD_REACH)
    window = text[begin : min(end, start + 400)]
    at = start - begin
    if not has_caption(window, 0, at):
        return None
    for table in find_tables(window):
        first, last = table.rows[0][0], table.rows[-1][1]
        if first < at < last and _CAPTION.match(window[table.start : first].lstrip()):
            # The chunk from its first row on.
            rows = next(a for a, b in table.rows if b > at)
            return window[table.start : first] + text[max(start, begin + rows) : end]
    return None


def find_tables(text: str) -> list[Table]:
    """The captioned tables of `text` (lines separated by "\\n"), in order.

    Each caption takes the run of rows nearest to it, above or below; a paper printing its
    captions above its tables (ICML's style) is read again with every caption taking the run
    below it, through a caption of several sentences and a header of many short lines (REALM's
    "Table 2. Ablation experiments on NQ's development set." over "Ablation Exact / Match /
    Zero-shot / Retrieval / Recall@5" and its rows, where the nearest run is Table 1's rows just
    above it). The reading that finds more tables, then more of them with a header, wins; the
    nearest on a tie."""
    if not has_caption(text):  # no caption: most passages, and no rows to find
        return []
    lines = _lines(text)
    rows = [is_row(line) for _, _, line in lines]
    runs = _runs(rows, lines)
    readings = [_matched(lines, rows, runs, below) for below in (False, True)]
    best = max(readings, key=lambda found: (len(found), sum(bool(t.header) for t in found)))
    return sorted(best, key=lambda t: t.start)


def _lines(text: str) -> list[tuple[int, int, str]]:
    """(start, end, text stripped) of each line of `text`; a row printed over several lines
    while a parenthesis is open is one line ("Self-Attention O(n" / "2" / "· d) O(1) O(1)"), its
    text as `row_text` says it."""
    raw: list[tuple[int, int, str]] = []
    offset = 0
    for line in text.split("\n"):
        raw.append((offset, offset + len(line), line.strip()))
        offset += len(line) + 1
    lines = []
    i = 0
    while i < len(raw):
        start, end, line = raw[i]
        j = i
        if _unclosed(line):
            for k in range(i + 1, min(i + MAX_ROW_LINES, len(raw))):
                joined = row_text(text[start : raw[k][1]])
                if not raw[k][2]:
                    break
                if not _unclosed(joined):
                    if is_row(joined):
                        j, line = k, joined
                    break
        lines.append((start, raw[j][1], line))
        i = j + 1
    return lines


def _matched(lines, rows: list[bool], runs, below: bool) -> list[Table]:
    """The tables of each caption and its nearest run of rows; `below`: only the run below the
    caption, reached through the rest of its caption and its header (_caption_above)."""
    tables = []
    used_runs: set[int] = set()
    for c, (_, _, line) in enumerate(lines):
        if not _CAPTION.match(line):
            continue
        caption_end = c
        while (
            caption_end - c < MAX_CAPTION_LINES - 1
            and caption_end + 1 < len(lines)
            and not re.search(r"[.:]$", lines[caption_end][2])
            and lines[caption_end + 1][2]
            and not rows[caption_end + 1]
        ):
            caption_end += 1
        if below:
            found = _caption_above(lines, rows, runs, used_runs, c, caption_end)
            if found is None:
                continue
            index, (first, last), caption_end, header_lines = found
        else:
            found = _run_near(runs, used_runs, c, caption_end)
            if found is None:
                continue
            index, (first, last) = found
            header_lines = _header_between(lines, rows, caption_end, first)
        used_runs.add(index)
        caption = " ".join(lines[i][2] for i in range(c, caption_end + 1))
        header = " ".join(lines[i][2] for i in header_lines)
        block = [c, caption_end, first, last, *header_lines]
        tables.append(
            Table(
                start=lines[min(block)][0],
                end=lines[max(block)][1],
                caption=" ".join(caption.split()),
                header=" ".join(header.split()),
                rows=_row_spans(lines, rows, first, last),
                header_lines=len(header_lines),
            )
        )
    return tables


def _header_between(lines, rows: list[bool], caption_end: int, first: int) -> list[int]:
    """The header's lines: between the caption and the rows (caption above), else the short
    lines just above the rows (caption below)."""
    if first > caption_end:
        header_lines = list(range(caption_end + 1, first))
        return header_lines if len(header_lines) <= MAX_HEADER_LINES else []
    header_lines: list[int] = []
    k = first - 1
    while k >= 0 and len(header_lines) < MAX_HEADER_LINES - 1 and lines[k][2]:
        if rows[k] or not _is_header(lines[k][2]):
            break
        header_lines.insert(0, k)
        k -= 1
    return header_lines


# A header printed one short name a line (REALM's "Ablation Exact / Match / Zero-shot / …"): up
# to this many lines and words between a caption above and its rows.
MAX_TALL_HEADER_LINES = 8
MAX_HEADER_WORDS = 16


def _caption_above(lines, rows: list[bool], runs, used: set[int], c: int, caption_end: int):
    """The run of rows below the caption on lines c..caption_end, with the caption's last line
    and the header's lines: the caption may run on over sentences of prose (a line that is no
    header: "Predictions are evaluated with exact match …"), then the header's short lines, then
    the rows. None when something else comes between."""
    k = caption_end + 1
    while k < len(lines) and k - c < MAX_CAPTION_LINES and lines[k][2] and not rows[k]:
        if _is_header(lines[k][2]):
            break
        k += 1
    header_end = k
    while header_end < len(lines) and lines[header_end][2] and not rows[header_end]:
        if not _is_header(lines[header_end][2]):
            return None
        header_end += 1
    header_lines = list(range(k, header_end))
    words = sum(len(lines[i][2].split()) for i in header_lines)
    if len(header_lines) > MAX_TALL_HEADER_LINES or words > MAX_HEADER_WORDS:
        return None
    for index, (first, last) in enumerate(runs):
        if index not in used and first == header_end:
            return index, (first, last), k - 1, header_lines
    return None


def _row_spans(lines, rows: list[bool], first: int, last: int) -> tuple[tuple[int, int], ...]:
    """Each row line's span; a row whose label was printed on the line above it ("UNREALa" over
    "[19] 250%a 880%a 250M – –" in MuZero's Table 1) spans both lines."""
    spans = []
    for i in range(first, last + 1):
        if not rows[i]:
            continue
        start = lines[i][0]
        if i > first and not rows[i - 1] and lines[i - 1][2] and _OPENS_WITH_REFERENCE.match(
            lines[i][2]
        ):
            start = lines[i - 1][0]
        spans.append((start, lines[i][1]))
    return tuple(spans)


# A row that opens with its label's reference number: the label was printed on the line above.
_OPENS_WITH_REFERENCE = re.compile(r"\[\d{1,3}(?:,\s*\d{1,3})*\]")


def _runs(rows: list[bool], lines) -> list[tuple[int, int]]:
    """(first, last) line indexes of runs of rows, gaps of MAX_GAP_LINES short lines allowed."""
    runs = []
    i = 0
    while i < len(rows):
        if not rows[i]:
            i += 1
            continue
        first = last = i
        j = i + 1
        while j < len(rows):
            if rows[j]:
                last = j
            elif j - last > MAX_GAP_LINES or len(lines[j][2].split()) > 6 or not lines[j][2]:
                break
            j += 1
        if sum(rows[first : last + 1]) >= MIN_ROWS:
            runs.append((first, last))
        i = last + 1
    return runs


def _run_near(runs, used: set[int], caption_first: int, caption_last: int):
    """The run of rows that belongs to the caption on lines caption_first..caption_last: the
    nearest one starting just below it or ending just above it."""
    best = None
    for index, (first, last) in enumerate(runs):
        if index in used:
            continue
        if first > caption_last:
            distance = first - caption_last
        elif last < caption_first:
            distance = caption_first - last
        else:
            continue
        if distance <= CAPTION_REACH and (best is None or distance < best[0]):
            best = (distance, index, (first, last))
    return None if best is None else best[1:]
