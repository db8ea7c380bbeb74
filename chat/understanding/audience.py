"""Who an answer is for, or how plainly it should be said: "explain the Transformer to a
biologist", "what is attention, in plain words?", "for a beginner", "like I'm five".

Those words say how to answer, not what about: searched or matched against the papers they
found nothing ("none of these papers mentions “biologist”" refused "explain the Transformer to
a biologist"; "in plain words" listed Paper Plain for "what is attention?"). So the question's
analysis cuts them from the topic (chat.understanding.analysis), and the intent reads them as a
request for a paper's gist (chat.understanding.intent: said simply, a paper is its abstract).

Pure rules: one regular expression, no I/O.
"""

from __future__ import annotations

import re

# How plainly: anywhere in the question ("in simple terms, what is RAG?").
PLAINLY = (
    r"in\s+(?:simple|plain|layman'?s?|everyday|non-?technical|lay)\s+(?:terms|words|english|"
    r"language)|simply|plainly|like\s+i'?m\s+(?:five|5|a\s+child)"
)
# For whom: a reader named by what they are, at the end of the question ("to a biologist",
# "for a physician", "for complete beginners", "to someone outside the field"). One reader
# ending "-ist" or "-ian" needs its article ("for a biologist"): "for Italian" is a language.
_READERS = (
    r"beginners?|lay\s*(?:person|people|man|men)|laypeople|non-?(?:experts?|specialists?|"
    r"scientists?)|newcomers?|novices?|child(?:ren)?|kids?|students?|researchers?|engineers?|"
    r"developers?|practitioners?|programmers?|teachers?|doctors?|nurses?|lawyers?|"
    r"policy\s*makers?|journalists?|investors?|managers?|executives?|designers?"
)
_MODIFIERS = r"(?:complete\s+|total\s+|curious\s+)?(?:(?!(?:the|a|an)\s)[a-z-]+\s+){0,2}"
FOR_WHOM = (
    rf"(?:to|for)\s+(?:(?:a|an|the|my|our)\s+{_MODIFIERS}(?:[a-z]+(?:ist|ian)s?|{_READERS})"
    rf"|{_MODIFIERS}(?:[a-z]+(?:ists|ians)|{_READERS})"
    r"|someone\s+(?:new\s+to\s+(?:the|this)\s+field|outside\s+(?:the|this|my)\s+field|"
    r"without\s+(?:a\s+)?\w+\s+background))"
)
AUDIENCE = rf"(?:{PLAINLY}|{FOR_WHOM})"

_FLAGS = re.IGNORECASE
# ", in plain words?" / " to a biologist." with the comma before it, up to the end.
_AT_END = re.compile(rf",?\s*\b{FOR_WHOM}\s*(?=[?.!]*\s*$)", _FLAGS)
_ANYWHERE = re.compile(rf",?\s*\b(?:{PLAINLY})\b,?", _FLAGS)
# Words ending like a reader ("-ist", "-ian") that are things a question is about: "for a
# Gaussian", "for the Hessian", "for a checklist". (One reader, "-ist" or "-ian", needs its
# article: "for a biologist", but "for Italian" is a language.)
_NOT_READERS = frozenset(
    "gaussian gaussians hessian hessians laplacian jacobian bayesian lagrangian hamiltonian "
    "hamiltonians euclidean riemannian median medians list lists checklist checklists playlist "
    "playlists".split()
)


# A reader at the end is one only in a request to explain: "How many GPUs were used to train
# the student?" asks of the student model.
_EXPLAINING = re.compile(
    r"\b(?:explain\w*|describe|summari[sz]e|tell|teach|introduce|simplify|what\s+(?:is|are|does|"
    r"do)|what's|how\s+(?:does|do|is|are|can|would))\b",
    _FLAGS,
)


def audience_spans(text: str) -> list[tuple[int, int]]:
    """The character spans of `text` saying who the answer is for or how plainly to say it."""
    spans = [m.span() for m in _ANYWHERE.finditer(text)]
    end = _AT_END.search(text)
    if (
        end
        and end.group().split()[-1].lower().strip(",.?!") not in _NOT_READERS
        and _EXPLAINING.search(text, 0, end.start())
    ):
        spans.append(end.span())
    return spans


def has_audience(text: str) -> bool:
    return bool(audience_spans(" ".join((text or "").split())))
