"""A question that points into a paper: "What does Figure 3 of CiteSee show?", "what is in
Table 1?". What the paper says its figure or table shows is the caption it prints under that
label ("Figure 3: CiteSee augments inline citations based on a user's reading history …"), so
the composer opens with it (chat.llm.shapes), and a label is no name of a paper
(chat.retrieval.named.writes_a_name: "What does Figure 1 show?" stays on the thread's paper).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FLAGS = re.IGNORECASE
_KINDS = {"fig": "figure", "figure": "figure", "table": "table", "tab": "table"}
# "Figure 3", "Fig. 2", "figure 1b", "Table 4", "Tab. 1".
_ASKED = re.compile(r"\b(?P<kind>fig(?:ure)?|tab(?:le)?)s?\.?\s*(?P<n>\d{1,2})[a-z]?\b", _FLAGS)


@dataclass(frozen=True)
class Pointer:
    kind: str  # "figure" or "table"
    number: str  # "3"


def asked_pointer(question: str) -> Pointer | None:
    """The figure or table a question points to, or None."""
    match = _ASKED.search(question or "")
    if match is None:
        return None
    return Pointer(_KINDS[match["kind"].lower()], match["n"])


def without_pointers(text: str) -> str:
    """`text` without its figure and table labels ("What does Figure 1 show?" -> "What does
    show?"): what is left may name a paper."""
    return " ".join(_ASKED.sub(" ", text).split())


def is_caption_of(sentence: str, pointer: Pointer) -> bool:
    """Whether `sentence` is the caption of that figure or table: it opens with its label and a
    colon or a full stop ("Figure 3: …", "Fig. 3. …", "Table 1: …"), not a sentence referring to
    it ("Figure 3 shows the results …")."""
    prefix = r"fig(?:ure)?\.?" if pointer.kind == "figure" else r"tab(?:le)?\.?"
    return bool(re.match(rf"\s*{prefix}\s*{pointer.number}[a-z]?\s*[:.|]", sentence, _FLAGS))


def refers_to(sentence: str, pointer: Pointer) -> bool:
    """Whether `sentence` names that figure or table anywhere ("… shown in the left and right
    halves of Figure 1"): what the paper says of it when its caption was not found."""
    prefix = r"fig(?:ure)?s?\.?" if pointer.kind == "figure" else r"tab(?:le)?s?\.?"
    return bool(re.search(rf"\b{prefix}\s*{pointer.number}(?![\d.]\d)[a-z]?\b", sentence, _FLAGS))
