"""Mathematics a question types in ASCII or LaTeX, written as a PDF's text layer prints it.

"why scale by sqrt(d_k)" asks about the Transformer's "we scale the dot products by 1/√dk": its
text layer has "√" and the subscript run into its symbol ("dk", "dmodel"), never "sqrt" nor
"d_k", so neither the search, nor the thread's paper (chat.pipeline.rewrite
.on_the_threads_papers: does it say every word?), nor the composer found the question's words.
"""

from __future__ import annotations

import re

# sqrt(x), \sqrt{x}, sqrt x: the root sign before its argument.
_SQRT = re.compile(r"\\?sqrt\s*(?:\(([^()]{1,20})\)|\{([^{}]{1,20})\}|(?=\s*\w))", re.IGNORECASE)
# A one-letter symbol's subscript, d_k, d_{model}, W_{1}: printed run into it (dk, dmodel, W1).
# (A longer name with an underscore is an identifier the paper prints as it is: "warmup_steps".)
_SUBSCRIPT = re.compile(r"(?<![\w\\])([A-Za-z])_(?:\{([A-Za-z0-9]{1,8})\}|([A-Za-z0-9]{1,8})(?!\w))")


def as_printed(question: str) -> str:
    """`question` with its ASCII or LaTeX square roots and one-letter symbols' subscripts written
    as papers' text prints them: "why scale by sqrt(d_k)" -> "why scale by √dk"."""
    if "_" not in question and "sqrt" not in question.lower():
        return question
    text = _SUBSCRIPT.sub(lambda m: m.group(1) + (m.group(2) or m.group(3)), question)
    return _SQRT.sub(lambda m: "√" + (m.group(1) or m.group(2) or "").strip(), text)
