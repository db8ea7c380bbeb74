"""Whether a question asks for a quantity, and whether a sentence states one.

"How many GPUs…", "What learning rate…", "What batch size…" want a number; the sentence that
answers them holds one ("trained on 8 NVIDIA P100 GPUs", "a rate of Pdrop = 0.1"). Retrieval
prefers the chunk whose matching sentence states a number (chat.retrieval.chunks), and the
offline composer says so plainly when the quoted sentences state none (chat.llm.shapes), rather
than quote a topical sentence as if it answered.
"""

from __future__ import annotations

import re
from functools import lru_cache

_FLAGS = re.IGNORECASE
# A property word that only modifies the noun after it asks for no number: "What is parameter
# initialization in QAOA and why does it matter?", "depth estimation", "error correction". (A
# preposition in -ing is no such noun: "What batch size during pre-training?")
_MODIFIER = (
    r"(?!\s+(?!(?:during|using|including|following|regarding|concerning|according)\b)"
    r"[a-z]+(?:tion|sion|ing|ment|ness|ance|ence|ity|ism|sis)\b)"
)
# "how many / much / long / often / large …", or a question after a measured property.
_HOW = re.compile(
    r"\bhow\s+(?:many|much|long|often|large|big|small|deep|wide|fast|high|low)\b", _FLAGS
)
_PROPERTY = re.compile(
    r"\b(?:what|which)\b.*\b(?:rate|size|stepsize|value|number|dimension|dimensionality|count|"
    r"ratio|length|temperature|threshold|steps?|decay|momentum|dropout|epsilon|alpha|beta\d?|"
    r"accuracy|error|score|percentage|fraction|budget|width|depth|parameters?|resolution|"
    # (a metric: "What exact match does Fusion-in-Decoder large reach on Natural Questions?")
    r"exact\s+match|perplexity|bleu|rouge(?:-\w+)?|f1)\b" + _MODIFIER,
    _FLAGS,
)
# How much more a sentence with the question's words weighs when it also states a number, for a
# quantity question (chunk ranking and the composer's quote alike).
NUMBER_WEIGHT = 1.5
# A digit run that stands alone: not an index or a name's digits ("β2", "P100", "T5": after a
# letter or an underscore), and not a formula's constant ("1 − β1", "1 - p": before an operator
# and a letter), and not a number of dimensions said as an adjective ("2D interpolation of the
# pre-trained position embeddings" states no resolution). The run is atomic so that "10 − β"
# does not yield its "1".
_DIGITS = re.compile(
    r"(?<![\w.,])(?>\d+(?:[.,]\d+)*)(?!\s*[−+]\s*[^\W\d_]|\s+-\s*[^\W\d_]|D\b)"
)
NUMBER_WORDS = frozenset(
    """two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
    sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety
    hundred thousand million billion trillion dozen half""".split()
)
_WORD = re.compile(r"[a-z]+")
# A reference's year is no stated quantity: "Mitchell et al. (2018)", "(Ioffe & Szegedy, 2015)",
# "(He et al., 2016; Wu & He, 2018)".
_CITATION = re.compile(
    r"(?:\bet\s+al\.?|\b[A-Z][a-z]+)\s*\((?:19|20)\d\d[a-z]?\)"
    r"|\([^()]*[A-Za-z][^()]*,\s*(?:19|20)\d\d[a-z]?(?:\s*;[^()]*)?\)"
)


# "What is the largest RWKV model?" asks for a size: the answer states one ("from 169 million
# to 14 billion parameters").
# "Which vision transformer variant is largest?" asks the same after its noun.
_SIZED = r"(?:models?|networks?|versions?|variants?|datasets?|corpus|corpora|batch(?:es)?)"
_LARGEST = re.compile(
    r"\b(?:what|which)\b.*\b(?:largest|biggest|smallest)\s+(?:[\w-]+\s+){0,3}?" + _SIZED + r"\b"
    r"|\b(?:what|which)\b.*\b" + _SIZED + r"\s+(?:is|are|was|were)\s+(?:the\s+)?"
    r"(?:largest|biggest|smallest)\b",
    _FLAGS,
)


def asks_for_quantity(question: str) -> bool:
    """True for "How many…", "What <measured property>…" and "What is the largest <model>…"."""
    return bool(_HOW.search(question) or _PROPERTY.search(question) or _LARGEST.search(question))


_COUNTED = re.compile(r"\bhow\s+(?:many|much)\s+([a-z][a-z0-9-]*)(?:\s+([a-z][a-z0-9-]*))?", _FLAGS)
_MEASURED = re.compile(
    r"\b(rate|size|stepsize|value|number|dimension|dimensionality|count|ratio|length|"
    r"temperature|threshold|steps?|decay|momentum|dropout|epsilon|alpha|accuracy|error|"
    r"score|percentage|fraction|budget|width|depth|parameters|resolution|match|perplexity|"
    r"bleu|rouge|f1)\b" + _MODIFIER,
    _FLAGS,
)


def asked_things(question: str) -> list[str]:
    """The words that may name what the asked number counts or measures: the two after "how
    many" ("GPUs were", "training steps") or the measured property ("rate" of "What learning
    rate…"), lower-cased; [] when none is named. A sentence answering names one of them."""
    if match := _COUNTED.search(question):
        return [w.lower() for w in match.groups() if w]
    if _PROPERTY.search(question) and (match := _MEASURED.search(question)):
        return [match.group(1).lower()]
    return []


# A pointer to a part of the paper is no stated quantity: "in Table 2", "Figure 9", "Fig. 4(b)",
# "Section 2.5", "Eq. (3)", "Appendix C.1", "Algorithm 1" ("The following section gives …
# parameter counts in Table 2" does not say how many parameters), a user study's name ("In
# Study 2, we use the winning strategy as part of a field deployment study" says nothing of how
# long the deployment lasted).
_POINTER = re.compile(
    r"\b(?:tables?|tab\.|figures?|figs?\.|sections?|secs?\.|§|equations?|eqs?\.|appendix|"
    r"appendices|algorithms?|alg\.|chapters?|theorems?|lemmas?|definitions?|footnotes?|rq|"
    r"(?-i:Study|Studies))"
    r"\s*\(?\d+(?:\.\d+)*[a-z]?\)?(?:\s*(?:,|and|-|–)\s*\(?\d+(?:\.\d+)*[a-z]?\)?)*",
    _FLAGS,
)


def numbers_in(text: str) -> set[str]:
    """The numbers a text states: digit runs ("0.1", "21,015,324", the 28 of "28x28"; not the
    2 of "β2" nor the 1 of "1 − β1" nor a reference's year nor the 2 of "Table 2") and number
    words ("five", "sixteen")."""
    text = _POINTER.sub(" ", _CITATION.sub(" ", text))
    found = set(_DIGITS.findall(text))
    found.update(w for w in _WORD.findall(text.lower()) if w in NUMBER_WORDS)
    return found


def states_new_number(sentence: str, question: str) -> bool:
    """Whether `sentence` states a number the question does not already name (the "50" of
    "ResNet-50" asked about is not an answer)."""
    return bool(numbers_in(sentence) - _asked_numbers(question))


@lru_cache(maxsize=64)
def _asked_numbers(question: str) -> frozenset[str]:
    """numbers_in(question), once a question: the sentence scorers ask for each of hundreds of
    sentences."""
    return frozenset(numbers_in(question))


# "the largest model", "the maximum context length": the end of a range a sentence gives.
_EXTREME = re.compile(
    r"\b(?:largest|biggest|smallest|longest|shortest|deepest|widest|highest|lowest|maximum|"
    r"minimum|max|min)\b",
    _FLAGS,
)
_NUMBER = r"(?:\d[\d.,]*|" + "|".join(sorted(NUMBER_WORDS)) + r")"
# "ranging in size from 169 million to 14 billion", "up to 64 layers", "as large as 14B".
_RANGE = re.compile(
    rf"\bfrom\s+{_NUMBER}\S*(?:\s+\S+)?\s+(?:to|up\s+to)\s+{_NUMBER}|\bup\s+to\s+{_NUMBER}"
    rf"|\bas\s+(?:large|big|many|much|long|deep|high)\s+as\s+{_NUMBER}",
    _FLAGS,
)


# The extremes that ask for the smallest end ("Which model is the smallest?").
SMALLEST = frozenset("smallest shortest lowest minimum min".split())


def asks_for_extreme(question: str) -> bool:
    """ "How many parameters does the largest RWKV model have?": one end of a range."""
    return bool(_EXTREME.search(question))


def states_range(sentence: str) -> bool:
    """Whether a sentence gives a range of numbers, whose end answers a question after the
    largest or the smallest ("models ranging in size from 169 million to 14 billion")."""
    return bool(_RANGE.search(sentence))


# "How long did the field deployment last?", "How long does training take?": a duration.
_HOW_LONG = re.compile(r"\bhow\s+long\b", _FLAGS)
# What a question after a duration says only to ask ("long", "last", "take"): a sentence giving
# one says them ("… for one to two weeks" answers how long the deployment lasted).
DURATION_ASKING = ("long", "last", "lasted", "take", "took")
_DURATION = re.compile(
    r"(?:\b\d+(?:[.,]\d+)*|\b(?:one|a|an|" + "|".join(sorted(NUMBER_WORDS)) + r"))"
    r"(?:\s*(?:to|or|-|–)\s*(?:\d+(?:[.,]\d+)*|" + "|".join(sorted(NUMBER_WORDS)) + r"))?"
    r"[\s-]*(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?)\b",
    _FLAGS,
)


def asks_for_duration(question: str) -> bool:
    return bool(_HOW_LONG.search(question))


def states_duration(sentence: str) -> bool:
    """Whether a sentence says how long something lasted ("for one to two weeks", "a 60-minute
    interview", "12 hours")."""
    return bool(_DURATION.search(sentence))


def number_weight_at_most(quantity: bool) -> float:
    """The largest factor number_weight can give a sentence for such a question."""
    return NUMBER_WEIGHT * NUMBER_WEIGHT if quantity else 1.0


def number_weight(sentence: str, question: str, quantity: bool) -> float:
    """How much more a sentence with the question's words weighs for what it states: NUMBER_WEIGHT
    for a quantity question when it states a number, NUMBER_WEIGHT again when the question asks
    for the largest or smallest and it gives a range (the question's "largest" is in no
    sentence: "from 169 million to 14 billion parameters" says it)."""
    weight = 1.0
    if quantity and states_new_number(sentence, question):
        weight *= NUMBER_WEIGHT
        if asks_for_extreme(question) and states_range(sentence):
            weight *= NUMBER_WEIGHT
    return weight

