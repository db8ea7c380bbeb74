"""Loops in generated text: "linguistics, linguistics, linguistics, …" three hundred times.

Small models fall into repeating a span once it has appeared twice (each copy makes the next one
likelier). Sampling penalties make that rarer; they cannot rule it out, so the text itself is
watched: `loop_start(text)` finds a tail made of one span repeated, the local backend stops
generating there (chat.llm.local), and `trim_loop` keeps one copy of the span.

A loop is at least MIN_COPIES consecutive copies of a span of MIN_SPAN..MAX_SPAN characters
covering at least MIN_LOOP_CHARS: "the the the" or a list "1, 2, 3, 4" is not one; "[1] [1] [1]
[1] [1] [1] [1] [1] [1] [1]" and a sentence said four times are.
"""

MIN_SPAN = 2
MAX_SPAN = 300
MIN_COPIES = 4
MIN_LOOP_CHARS = 40


def loop_start(text: str) -> int | None:
    """Where the repeated copies of a looping tail begin (after its first copy), or None."""
    size = len(text)
    for span in range(MIN_SPAN, min(MAX_SPAN, size // MIN_COPIES) + 1):
        unit = text[size - span :]
        copies = 1
        while (
            size - (copies + 1) * span >= 0
            and text[size - (copies + 1) * span : size - copies * span] == unit
        ):
            copies += 1
        if copies >= MIN_COPIES and copies * span >= MIN_LOOP_CHARS:
            # The loop began where the text became periodic (a loop may end mid-copy, so the
            # copies counted from the end are rotated): the first whole copy from there stays.
            begin = size - copies * span
            while begin > 0 and text[begin - 1] == text[begin - 1 + span]:
                begin -= 1
            return begin + span
    return None


def trim_loop(text: str) -> str:
    """`text` with a looping tail cut down to one copy of its span."""
    start = loop_start(text.rstrip())
    return text if start is None else text.rstrip()[:start].rstrip()
