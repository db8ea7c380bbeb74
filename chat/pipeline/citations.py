"""Checking an answer's [n] citations against the sources it was given.

A model may cite [7] when it had five sources, or invent a range. After streaming, every
bracketed group of numbers is checked: numbers that point to a source are kept (and normalised
to "[1][3]"), the others are removed, so no citation is ever shown that leads nowhere. What was
removed is reported, so the message can record it.
"""

import re
from dataclasses import dataclass, field

# "[3]", "[1, 2]", "[1-3]", "[2; 4]": digits, separators and ranges inside one pair of brackets.
# Not followed by "(" (that would be a Markdown link). The spaces before it go with an emptied group.
_GROUP = re.compile(r"(?P<lead>[ \t]*)\[(?P<inner>\s*\d{1,3}(?:\s*(?:,|;|-|–|and)\s*\d{1,3})*\s*)\](?!\()")
_NUMBER_OR_RANGE = re.compile(r"(\d{1,3})\s*(?:(?:-|–)\s*(\d{1,3}))?")
# A range wider than this is not a citation (e.g. "[1-100]" in a quoted formula).
_MAX_RANGE = 20


@dataclass
class CheckedAnswer:
    text: str
    kept: list[int] = field(default_factory=list)  # cited source numbers, in first-cited order
    dropped: list[int] = field(default_factory=list)  # numbers that pointed to no source


def _numbers(inner: str) -> list[int]:
    numbers = []
    for match in _NUMBER_OR_RANGE.finditer(inner):
        start = int(match.group(1))
        end = int(match.group(2)) if match.group(2) else start
        if end < start or end - start > _MAX_RANGE:
            numbers.append(start)
            continue
        numbers.extend(range(start, end + 1))
    return numbers


def check_citations(text: str, source_count: int) -> CheckedAnswer:
    """Keep citations 1..source_count, remove the rest (with the space before an emptied group)."""
    kept: list[int] = []
    dropped: list[int] = []

    def replace(match: re.Match) -> str:
        valid = []
        for n in _numbers(match.group("inner")):
            if 1 <= n <= source_count:
                if n not in valid:
                    valid.append(n)
                if n not in kept:
                    kept.append(n)
            elif n not in dropped:
                dropped.append(n)
        if not valid:
            return ""
        return match.group("lead") + "".join(f"[{n}]" for n in valid)

    return CheckedAnswer(text=_GROUP.sub(replace, text), kept=kept, dropped=dropped)


# What is left of an answer once its citations are taken out, when it says something.
_WORD = re.compile(r"[^\W\d_]{2,}")


def only_citations(text: str) -> bool:
    """True when an answer says nothing but citation numbers ("[1] [2] … [13]"), or nothing at
    all: a small model's failure that must not be saved as an answer."""
    return _WORD.search(_GROUP.sub(" ", text)) is None


# The end of a streamed text that later text may still change: spaces (the lead of a group that
# may be removed), a bracket that may still close as a group, a group that closed at the very
# end (a "(" next would make it a Markdown link).
_OPEN_GROUP_TAIL = re.compile(r"[ \t]*\[[\d\s,;\-–and]*\Z")
_CLOSED_GROUP_TAIL = re.compile(r"[ \t]*\[[^\[\]]*\]\Z")
_SPACE_TAIL = re.compile(r"[ \t]+\Z")


class CitationStream:
    """`check_citations` applied while the text streams, so what a reader is shown is the text
    that is saved: "[7]" with five sources, or "[1]" with none, is never shown and then taken
    away. The text is released up to a point no later text can change (see the tails above),
    each released piece checked on its own: no citation group spans such a point, so the pieces
    add up to `check_citations` of the whole text. Nothing is released while the text is
    citation numbers only (`only_citations`): that answer is replaced, not shown.

        stream = CitationStream(len(cards))
        shown = stream.feed(delta)   # for each delta; may be ""
        shown = stream.end()         # the rest, once the text is complete
    """

    def __init__(self, source_count: int):
        self.source_count = source_count
        self.text = ""  # everything fed
        self.released = 0  # characters of `text` checked and shown
        self.says_something = False

    def feed(self, delta: str) -> str:
        self.text += delta
        if not self.says_something:
            if only_citations(self.text):
                return ""
            self.says_something = True
        end = len(self.text)
        for tail in (_OPEN_GROUP_TAIL, _CLOSED_GROUP_TAIL, _SPACE_TAIL):
            match = tail.search(self.text, self.released)
            if match:
                end = min(end, match.start())
        return self._release(end)

    def end(self) -> str:
        return self._release(len(self.text))

    def _release(self, end: int) -> str:
        if end <= self.released:
            return ""
        piece = self.text[self.released : end]
        self.released = end
        return check_citations(piece, self.source_count).text
