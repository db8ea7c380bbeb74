"""Words of a question that only say what kind of thing its answer is, and the sentences that
give such a thing without saying the word.

"How long did the CiteSee deployment last?" is answered by "… for one to two weeks", "What
hardware was MuZero trained on?" by "For each game in Atari, we used 8 TPUs for training", "How
big is the Multi-LexSum dataset?" by "… a collection of 9,280 expert-authored summaries": none
says "long", "hardware" or "big". A sentence that gives the kind of answer asked for counts as
saying the question's asking word, as much as a sentence saying it would: in the composer's
scores (chat.llm.extractive.answering_scores) and in the sentence evidence that picks a paper's
chunks (chat.retrieval.chunks.sentence_evidence).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from chat.understanding.quantity import (
    DURATION_ASKING,
    NUMBER_WORDS,
    asks_for_duration,
    states_duration,
)

_FLAGS = re.IGNORECASE


@dataclass(frozen=True)
class AnswerKind:
    name: str
    asks: object  # question -> bool
    asking: frozenset[str]  # the question's words (lower case) that only ask for it
    gives: object  # sentence -> bool


# What the work ran on: a processor named by its kind or its model ("16 TPUs", "8 NVIDIA P100
# GPUs", "a single machine with a 12GB GPU", "NVIDIA A100").
_HARDWARE_ASKED = re.compile(r"\b(?:hardware|accelerators?)\b", _FLAGS)
HARDWARE_ASKING = frozenset("hardware accelerator accelerators".split())
_HARDWARE = re.compile(r"\b(?:[GTI]PU|CPU)s?\b|\bTPU\s*v\d\b|\b[AHKPV]\d{2,3}\b")

# How big a collection is: "How big / large is …", "What is the size of …", "What size is …";
# not a measured property ("What batch size did …": its value is the answer, chat.understanding
# .quantity).
_SIZE_ASKED = re.compile(
    r"\bhow\s+(?:big|large)\b|\bthe\s+sizes?\s+of\b|\bwhat\s+sizes?\s+(?:is|are|was|were)\b",
    _FLAGS,
)
SIZE_ASKING = frozenset("big large size sizes".split())
# A count of things: a number (or "a dozen", "three thousand") then at most two words before
# a plural noun: "9,280 expert-authored summaries", "4,539 instances", "40,119 source
# documents", "175 billion parameters", "about 2.3M question-answer pairs".
# (A count of one digit is seldom how big a collection is: "… per sample (which is 1 for SDS
# datasets)"; nor are words such as "for" part of what is counted.)
_COUNTED_WORDS = r"(?:(?!(?:for|of|in|on|at|to|per|the|an?|and|or|with|by|from|than)\b)[\w-]+\s+){0,2}"
_COUNT = re.compile(
    r"(?<![\w.,])(?:\d[\d,.]*\d\s*(?:[kKMB]\b|thousand|million|billion|trillion)?"
    r"|\d\s*(?:[kKMB]\b|thousand|million|billion|trillion))"
    r"\s+" + _COUNTED_WORDS + r"[a-z][a-z-]*[a-z]s\b"
    r"|\b(?:" + "|".join(sorted(NUMBER_WORDS)) + r")\s+(?:thousand|million|billion)\s+"
    + _COUNTED_WORDS + r"[a-z][a-z-]*[a-z]s\b",
    _FLAGS,
)
# A year counts nothing ("in 2019 papers"), nor does a duration say how big ("over a period of
# more than 10 years").
_NOT_A_COUNT = re.compile(
    r"^(?:1[89]|20)\d\d\b|\b(?:seconds|minutes|hours|days|weeks|months|years|decades|times)$",
    _FLAGS,
)


def _gives_count(sentence: str) -> bool:
    return any(not _NOT_A_COUNT.search(m.group(0)) for m in _COUNT.finditer(sentence))


# "How long are the passages …?" asks for a length (DPR's "100 words"), not a duration.
_LENGTH_ASKED = re.compile(r"\bhow\s+long\s+(?:is|are|was|were)\b", _FLAGS)


# "What are the limitations of Constitutional AI?", "the drawbacks of RWKV", "What future work do
# the authors propose?": answered by the sentences that state a limit ("we do not …", "remains
# …", "future work", "however, … fails to …"), most of which never say "limitation" (its
# definition of a constitution was quoted for it), and not by others' shortcomings the paper
# sets itself against ("Each of these has distinct drawbacks …" of RWKV's introduction).
_LIMITS_ASKED = re.compile(
    r"\b(?:limitations?|limits|weakness(?:es)?|drawbacks?|shortcomings?|downsides?|caveats?|"
    r"disadvantages?|failure\s+modes?|future\s+(?:work|research|directions?)|open\s+"
    r"(?:problems?|questions?))\b",
    _FLAGS,
)
LIMITS_ASKING = frozenset(
    """limitation limitations limits weakness weaknesses drawback drawbacks shortcoming shortcomings
    downside downsides caveat caveats disadvantage disadvantages failure future""".split()
)
_LIMIT_SAID = re.compile(
    r"\blimitations?\b|\blimited\s+(?:to|by|in)\b|\bdrawbacks?\b|\bweakness(?:es)?\b|"
    r"\bshortcomings?\b|\bcaveats?\b|\bdownsides?\b|\bdisadvantages?\b|\bfuture\s+(?:work|"
    r"research|directions?|studies)\b|\bleave\s+(?:\w+\s+){0,6}?(?:to|for)\s+future\b|\bopen\s+"
    r"(?:questions?|problems?)\b|\bwe\s+(?:do|did|could|can|have)\s+not\b|\bwe\s+(?:cannot|"
    r"can't|didn't|don't|haven't)\b|\bunable\s+to\b|\bnot\s+(?:yet|always|able|well)\b|"
    r"\b(?:does|do|did)\s+not\s+(?:work|generali[sz]e|scale|perform)\b|\bremains?\s+(?:unclear|"
    r"open|challenging|difficult|an?\s+open|to\s+be\s+(?:seen|explored|studied))\b|\bfails?\s+to\b|"
    r"\bstruggles?\b|\bsuffers?\s+from\b|\bsensitive\s+to\b|\bat\s+the\s+cost\s+of\b|"
    r"\bis\s+(?:costly|expensive)\b|\bless\s+(?:effective|accurate|robust|reliable)\b|\boverfits?\b|"
    r"\blacks?\b",
    _FLAGS,
)
# Others' shortcomings: the work the paper improves on, not its own limits.
_OTHERS_LIMITS = re.compile(
    r"\b(?:existing|previous|prior|conventional|traditional|earlier|current)\s+(?:[\w-]+\s+){0,3}?"
    r"(?:methods|approaches|works?|studies|techniques|models|systems|architectures)\b|"
    r"^\s*(?:each|both|all)\s+of\s+these\b|\bet\s+al\.",
    _FLAGS,
)


# The stems of a section's heading that say its sentences are the work's limits ("9
# Limitations", "Weaknesses"; not "6.1 Future Directions", which may well say what the work made
# easier).
_LIMITS_HEADING = frozenset("limit weak drawback shortcom caveat".split())


def heading_says(heading: frozenset[str] | set[str], question: str) -> set[str]:
    """The question's asking words (lower case) that a sentence's section heading (its stems)
    says for it: a question after the work's limits in any word ("drawbacks") is answered by the
    sentences under "9 Limitations"."""
    if asks_for_data(question) and _heading_of(heading, _DATA_HEADING):
        # ("The pre-training corpus contains …" under "2.3 Pre-training Corpus".)
        return {w for w, kind in asking_words(question).items() if kind.name == "data"}
    if asks_for_procedure(question) and method_heading(heading):
        # ("Our best model uses gold passages from the same mini-batch …" under "3.2 Training"
        # says how DPR is trained.)
        return {w for w, kind in asking_words(question).items() if kind.name == "procedure"}
    if not _LIMITS_ASKED.search(question) or not _LIMITS_HEADING & set(heading):
        return set()
    return {w for w, kind in asking_words(question).items() if kind.name == "limits"}


def asks_for_limits(question: str) -> bool:
    """Whether a question asks for the work's limitations, weaknesses or future work."""
    return bool(_LIMITS_ASKED.search(question))


def others_limits(sentence: str) -> bool:
    """Whether a sentence speaks of others' shortcomings ("Each of these has distinct drawbacks
    …"): for a question after the work's limits, its word "drawbacks" is no answer."""
    return bool(_OTHERS_LIMITS.search(sentence))


def states_limit(sentence: str) -> bool:
    """Whether a sentence states a limit of the work it is in (see _LIMIT_SAID)."""
    return bool(_LIMIT_SAID.search(sentence)) and not _OTHERS_LIMITS.search(sentence)


# An equation: "What is the key equation of the Transformer?" is answered by "Attention(Q, K, V)
# = softmax(QKT √ dk)V (1)", which says neither "equation" nor "key" (it quoted the sentences
# introducing the Transformer, and "None of these papers mentions “equation”"). A formula sets
# something equal to (or updates it with) an expression, not a hyper-parameter to a value
# ("β1 = 0.9" is a setting).
_EQUATION_ASKED = re.compile(
    r"\b(?:equations?|formulas?|formulae|formulations?|update\s+rules?)\b", _FLAGS
)
EQUATION_ASKING = frozenset(
    "equation equations formula formulas formulae formulation formulations key main core "
    "central".split()
)
_EQUATION = re.compile(
    r"[=←]\s*[^=←]*?(?:[+−·×√∑∏]|\b(?:softmax|max|min|exp|log|arg\s*min|arg\s*max|lim)\b"
    r"|\w\s*\([^()]*\)\s*\(\d{1,2}\))"
)


# "How is DPR trained?", "how is it trained?", "What is RAG's training procedure?": asked for the
# method, which the paper's training section states ("We optimize the loss function as the
# negative log likelihood of the positive passage", "In-batch negatives …", "We jointly train the
# retriever and generator components …"), while its results say "trained" as often ("a dense
# passage retriever trained using only 1,000 examples already outperforms BM25", "Our Dense
# Passage Retriever (DPR) is exceptionally strong", both quoted for it).
_PROCEDURE_ASKED = re.compile(
    r"\bhow\s+(?:is|are|was|were|do|does|did)\s+(?:[\w'’-]+\s+){0,4}?(?:(?:pre-?|fine-?)?train(?:ed)?|"
    r"fine-?tuned?|optimi[sz]ed?|learn(?:ed|t)?)\b|\btraining\s+(?:procedure|method|objective|"
    r"recipe|scheme|setup|process|loss|regime)s?\b",
    _FLAGS,
)
_METHOD_SAID = re.compile(
    r"\b(?:we|they)\s+(?:\w+\s+){0,2}?(?:train|optimi[sz]e|minimi[sz]e|maximi[sz]e|fine-?tune|"
    r"update|learn|pre-?train)\w*\b|\btrained\s+(?:\w+\s+){0,2}?(?:using|with|by|via|end-to-end|"
    r"jointly)\b|\bjointly\s+(?:train|learn|optimi)|\bend-to-end\b|\bloss(?:es)?\b|"
    r"\bobjective\b|\blog[- ]likelihood\b|\bin-batch\b|\bnegative\s+(?:passages?|examples?|"
    r"samples?)\b|\bgradients?\b|\bback-?propagat\w*|\bsupervis\w*|\bmarginali[sz]\w*",
    _FLAGS,
)
# What a result says: a comparison won, a score, a claim of strength.
_OUTCOME_SAID = re.compile(
    r"\b(?:outperform\w*|surpass\w*|beats?|achiev\w*|attain\w*|state[\s-]of[\s-]the[\s-]art|"
    r"accuracy|exact\s+match|exceptionally|strong(?:er|est)?|better|worse|improves?|improvements?|"
    r"results?)\b|\d+(?:\.\d+)?\s*%",
    _FLAGS,
)
# A result weighs this much for a question after the training method (its method REASON_WEIGHT).
RESULT_FOR_METHOD_WEIGHT = 0.5


def asks_for_procedure(question: str) -> bool:
    """Whether a question asks how something is trained (its method, not its results)."""
    return bool(_PROCEDURE_ASKED.search(question))


# The stems of a section heading that say its sentences are results ("6.2 Results", "5.2
# Ablation Study on Model Training", "5 Experiments: …"), or the method ("3.2 Training").
_RESULTS_HEADING = ("result", "experi", "ablat", "evalu", "analysi", "discuss", "comparison")
_METHOD_HEADING = ("train", "method", "approach", "object", "loss", "optim", "learn")
PROCEDURE_ASKING = frozenset(
    "train trained training pretrained pre-trained fine-tuned finetuned optimized optimised "
    "learned learnt procedure".split()
)


def _heading_of(heading: frozenset[str] | set[str], prefixes: tuple[str, ...]) -> bool:
    return any(stem.startswith(prefixes) for stem in heading)


def method_heading(heading: frozenset[str] | set[str]) -> bool:
    """Whether a section heading (its stems) names the method ("3.2 Training"), not results."""
    return _heading_of(heading, _METHOD_HEADING) and not _heading_of(heading, _RESULTS_HEADING)


def states_method(sentence: str) -> bool:
    """Whether a sentence states how something is trained, and no result (_METHOD_SAID)."""
    return bool(_METHOD_SAID.search(sentence)) and not _OUTCOME_SAID.search(sentence)


def states_result(sentence: str, heading: frozenset[str] | set[str] = frozenset()) -> bool:
    """Whether a sentence says a result, in its words or by its section's heading ("6.2
    Results": "Single and Multi denote that our Dense Passage Retriever (DPR) is trained using
    individual or combined training datasets" is a caption of results)."""
    return bool(_OUTCOME_SAID.search(sentence)) or _heading_of(heading, _RESULTS_HEADING)


def procedure_weight(sentence: str, heading: frozenset[str] | set[str] = frozenset()) -> float:
    """For a question after the training method: RESULT_FOR_METHOD_WEIGHT for a sentence saying a
    result ("… already outperforms BM25"), or under a heading of results without stating the
    method; REASON_WEIGHT for one stating the method under any other heading, or under a heading
    naming the method ("3.2 Training"); 1 else."""
    results = _heading_of(heading, _RESULTS_HEADING)
    if _OUTCOME_SAID.search(sentence):
        return RESULT_FOR_METHOD_WEIGHT
    if _METHOD_SAID.search(sentence):
        return 1.0 if results else REASON_WEIGHT
    if method_heading(heading):
        return REASON_WEIGHT
    return RESULT_FOR_METHOD_WEIGHT if results else 1.0


# What a model was trained on: "What data was OPT trained on?" is answered under "2.3
# Pre-training Corpus" by "The pre-training corpus contains a concatenation of datasets used in
# RoBERTa …, the Pile …, and PushShift.io Reddit", which never says "data" (its limitations'
# "more scrutiny should be afforded to the training data" was quoted for it).
_DATA_ASKED = re.compile(
    r"\b(?:what|which)\s+(?:training\s+|pre-?training\s+)?(?:data|datasets?|data\s+sets?|"
    r"corpus|corpora|text)\b.*\btrain|\btrained\s+on\s+what\b|\b(?:pre-?)?training\s+"
    r"(?:data|corpus|corpora|datasets?)\b",
    _FLAGS,
)
DATA_ASKING = frozenset("data dataset datasets corpus corpora text".split())
_DATA_SAID = re.compile(r"\b(?:corpus|corpora|datasets?|data\s+sets?)\b", _FLAGS)
# A section heading naming the training data ("2.3 Pre-training Corpus", "Training Data").
_DATA_HEADING = ("corpus", "corpora", "dataset", "data")


def asks_for_data(question: str) -> bool:
    """Whether a question asks what a model was trained on (its corpus, not a benchmark)."""
    return bool(_DATA_ASKED.search(question))


def heading_answers(heading: frozenset[str] | set[str], question: str) -> bool:
    """Whether a section's heading (its stems) names what the question asks for as a whole
    section: "3.2 Training" for "How is DPR trained?", "2.3 Pre-training Corpus" for "What data
    was OPT trained on?"."""
    if asks_for_data(question):
        return _heading_of(heading, _DATA_HEADING) and not _heading_of(heading, _RESULTS_HEADING)
    return asks_for_procedure(question) and method_heading(heading)


KINDS = (
    AnswerKind(
        "duration",
        lambda q: asks_for_duration(q) and not _LENGTH_ASKED.search(q),
        frozenset(DURATION_ASKING),
        states_duration,
    ),
    AnswerKind(
        "hardware",
        lambda q: bool(_HARDWARE_ASKED.search(q)),
        HARDWARE_ASKING,
        lambda s: bool(_HARDWARE.search(s)),
    ),
    AnswerKind("size", lambda q: bool(_SIZE_ASKED.search(q)), SIZE_ASKING, _gives_count),
    AnswerKind("limits", lambda q: bool(_LIMITS_ASKED.search(q)), LIMITS_ASKING, states_limit),
    AnswerKind("data", asks_for_data, DATA_ASKING, lambda s: bool(_DATA_SAID.search(s))),
    # A sentence stating the method says the "trained" a question after it asks with.
    AnswerKind("procedure", asks_for_procedure, PROCEDURE_ASKING, states_method),
    AnswerKind(
        "equation",
        lambda q: bool(_EQUATION_ASKED.search(q)),
        EQUATION_ASKING,
        lambda s: bool(_EQUATION.search(s)),
    ),
)


@lru_cache(maxsize=64)
def asked_kinds(question: str) -> tuple[AnswerKind, ...]:
    """The kinds of answer `question` asks for (asked for each of hundreds of sentences)."""
    return tuple(kind for kind in KINDS if kind.asks(question))


def asking_words(question: str) -> dict[str, AnswerKind]:
    """The question's words (lower case) that only ask for a kind of answer, with their kind."""
    kinds = asked_kinds(question)
    if not kinds:
        return {}
    words = re.findall(r"[a-z]+", question.lower())
    return {w: kind for kind in kinds for w in words if w in kind.asking}


def said_by_kind(sentence: str, question: str) -> set[str]:
    """The question's asking words (lower case) that `sentence` says by giving the kind of
    answer they ask for: {"hardware"} for "… we used 8 TPUs for training" and "What hardware
    was MuZero trained on?"."""
    return {w for w, kind in asking_words(question).items() if kind.gives(sentence)}


# "How does batch normalization reduce internal covariate shift?", "Why does the Transformer
# scale the dot products …?", "What is the intuition behind …?": asked for the means or the
# reason. The sentences that only say again what the question says ("Batch Normalization …
# reduces the internal covariate shift", "This allows us to use much higher learning rates")
# share all of its words; the answer shares fewer and says how or why in a connective of its
# own ("… and address the problem by normalizing layer inputs", "We suspect that for large
# values of dk, the dot products grow large …", "… allows to scale to large number of contexts,
# as it only performs self attention over one context at a time").
# (Not "how was the Transformer regularised?", "how is RAG trained?": a procedure, which its
# section tells in sentences of its own, "Residual Dropout We apply dropout …".)
_HOW_ASKED = re.compile(
    r"^\s*(?:(?:and|so|but)\s+)?how\s+(?:does|do|did|can|could|would|should)\b",
    _FLAGS,
)
_WHY_ASKED = re.compile(
    r"^\s*(?:(?:and|so|but)\s+)?(?:why\b|how\s+come\b|what\s+makes\b)|\bwhat(?:\s+is|'s|\s+are)\s+"
    r"the\s+(?:\w+\s+)?(?:intuitions?|reasons?|rationale|motivations?|explanations?)\s+(?:behind|for|"
    r"of)\b",
    _FLAGS,
)
# By what means: "by normalizing", "via a normalization step", "is achieved by".
_MEANS_SAID = re.compile(
    r"\bby\s+(?:\w+ly\s+)?\w+ing\b|\bvia\b|\bby\s+means\s+of\b|\bis\s+achieved\s+by\b|"
    r"\baccomplishes\b",
    _FLAGS,
)
# For what reason, or to what end.
_REASON_SAID = re.compile(
    r"\bbecause\b|\bdue\s+to\b|\bso\s+that\b|\bin\s+order\s+to\b|\bthereby\b|,\s+as\s+(?:it|they|"
    r"this|the)\b|\bwe\s+(?:suspect|hypothesi[sz]e|conjecture|argue|believe)\b|\bthe\s+reasons?\b|"
    r"\bintuitively\b|\bto\s+(?:counteract|prevent|avoid|mitigate|compensate|overcome)\b|"
    r"\b(?:ensures?|prevents?|allows?|enables?)\b",
    _FLAGS,
)
# How much more a sentence with the question's words weighs when it says how or why, for such a
# question (chunk ranking and the composer's quote alike). A plain bonus for "by …ing" changed
# nothing while the answering sentence was not among the cards (the abstract behind a title
# page's chunk: chat.retrieval.search.front_matter).
REASON_WEIGHT = 1.5


def reason_weight_at_most(question: str) -> float:
    """The most reason_weight gives any sentence for `question` (a bound for chunk ranking)."""
    return REASON_WEIGHT if asks_for_procedure(question) or asks_for_reason(question) else 1.0


def asks_for_reason(question: str) -> bool:
    """Whether a question asks how or why (not how many, how long: those ask for a number)."""
    return bool(_HOW_ASKED.search(question) or _WHY_ASKED.search(question))


def _word_start(word: str) -> str:
    return word.lower()[:5]


def reason_weight(
    sentence: str, question: str, heading: frozenset[str] | set[str] = frozenset()
) -> float:
    """REASON_WEIGHT for a sentence saying by what means or for what reason, for a question asking
    how or why, in a connective the question does not say itself ("Batch Normalization
    allows us to use much higher learning rates" says again "Why does batch normalization allow
    higher learning rates?"); for a question after how something is trained, procedure_weight
    (its method before its results); 1 otherwise."""
    if asks_for_procedure(question):
        return procedure_weight(sentence, heading)
    if not asks_for_reason(question):
        return 1.0
    # ("… by reducing the dependence of gradients on the scale of the parameters" says why
    # batch normalization allows higher learning rates as much as how.)
    said = _MEANS_SAID.findall(sentence) + _REASON_SAID.findall(sentence)
    if not said:
        return 1.0
    asked = {_word_start(w) for w in re.findall(r"[a-z]{4,}", question.lower())}
    # ("By processing passages independently in the encoder, … this method differs from …"
    # says again how "Why does Fusion-in-Decoder process passages independently …?".)
    own = [
        c for c in said if not any(_word_start(w) in asked for w in re.findall(r"[a-z]{4,}", c.lower()))
    ]
    return REASON_WEIGHT if own else 1.0


# A sentence that gives its reason by pointing back to the one before it: "To counteract this
# effect, we scale the dot products by 1/√dk" answers "Why does the Transformer scale the dot
# products by √dk?" only after "We suspect that for large values of dk, the dot products grow
# large in magnitude, pushing the softmax function into regions where it has extremely small
# gradients" (quoted alone, it says again what the question says and "this effect" is no reason).
_REASON_BEFORE = re.compile(
    r"^\s*(?:to\s+(?:counteract|prevent|avoid|mitigate|compensate\s+for|overcome|address|remedy)"
    r"\s+(?:this|these|that|such|the\s+(?:above|former))\b|for\s+(?:this|these|that)\s+reasons?\b|"
    r"this\s+is\s+(?:why|because)\b|(?:therefore|hence|thus|consequently|as\s+a\s+result)\b)",
    _FLAGS,
)


def reason_is_before(sentence: str, question: str) -> bool:
    """Whether, for a question asking how or why, `sentence` points back to the sentence before
    it for its reason ("To counteract this effect, …", "For this reason, …", "Therefore, …")."""
    return asks_for_reason(question) and bool(_REASON_BEFORE.search(sentence))


def answers_kind_asked(sentence: str, question: str) -> bool:
    """Whether a sentence gives what a question after the work's limits asks for, in other
    words than the question's (states_limit). Such a sentence is an answer, never
    scene-setting, whatever its words ("… remains challenging", "However, …"). (How and why
    weigh only in the answering scores, reason_weight: a bonus in the overview's choice by
    meaning changed which papers "How do GANs generate images?" quoted, and "which of these
    mention a discriminator?" then found none: bench_answers refer-6.)"""
    return bool(_LIMITS_ASKED.search(question)) and states_limit(sentence)
