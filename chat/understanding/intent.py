"""What shape of answer a question asks for: a list, a seed paper's neighbours, one named paper,
an overview, a comparison or a timeline, and whether it wants the latest work.

`classify(question, analysis)` is rules only (microseconds), run after the question's analysis
(chat.understanding.analysis) so it can lean on what that found: authors, categories or an arXiv
id already make a list or a seed question, whatever the words around them. The order of the rules
matters and is the order below: a comparison or a named paper is said in so many words, a
timeline by its words or by a window of several years, a list by its phrasing; the rest is an
overview ("how", "why", "what is known about ...").

Both the offline composer (chat.llm.shapes) and the LLM prompts (chat.pipeline.prompts) read it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import date, datetime
from typing import Any

from chat.understanding.audience import AUDIENCE
from chat.understanding.pointers import asked_pointer

LIST, SEED, NAMED_PAPER, OVERVIEW, COMPARE, TIMELINE = (
    "list",
    "seed",
    "named_paper",
    "overview",
    "compare",
    "timeline",
)
KINDS = (LIST, SEED, NAMED_PAPER, OVERVIEW, COMPARE, TIMELINE)

# A window at least this long (inclusive years) makes an overview question a timeline.
TIMELINE_MIN_YEARS = 3


@dataclass(frozen=True)
class Intent:
    kind: str  # one of KINDS
    latest: bool = False  # asks for the newest work: the answer says how old the newest is
    subjects: tuple[str, ...] = ()  # compare: the sides as the user wrote them ("DPO", "RLHF")
    title: str = ""  # named_paper: the paper as the user named it (a title or an arXiv id)
    by_filter: bool = False  # list: authors/categories/an id chose the papers, not the topic
    # named_paper: what is asked of the paper's record rather than of its text: AUTHORS ("who
    # wrote Adam?"), DATE ("when was … published?"), ORIGIN ("which paper introduced X?")
    asks: str = ""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["subjects"] = list(self.subjects)
        return data


_FLAGS = re.IGNORECASE
_END = r"\s*[?.!]*\s*$"
# How long a summary should be, after what it is of: "summarize <title> in three sentences".
_HOW_LONG = (
    r"(?:,?\s+(?:in|within|using)\s+(?:one|two|three|four|five|six|a\s+few|a|\d{1,3})\s+"
    r"(?:short\s+)?(?:sentences?|words|lines?|paragraphs?|bullet\s+points?|bullets|points)"
    r"|,?\s+(?:briefly|in\s+(?:short|brief)|" + AUDIENCE + r"))?"
)

# "compare A and B", "A vs B", "difference(s) between A and B", "how does A differ from B".
_COMPARE = [
    re.compile(p, _FLAGS)
    for p in (
        r"\bcompare\s+(?P<a>.+?)\s+(?:and|with|to|against|vs\.?|versus)\s+(?P<b>.+?)" + _END,
        r"\b(?:differences?|contrast|distinction)\s+between\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)" + _END,
        # How two relate is where the papers set them side by side: "the relationship between
        # ResNet and batch normalization" quoted OPT's datasheet on "relationships".
        r"\b(?:relationships?|relations?|connections?)\s+between\s+(?P<a>.+?)\s+and\s+"
        r"(?P<b>.+?)" + _END,
        # "How do DPR and REALM differ in how they train the retriever?": the sides before the
        # verb, what they differ in after it (quoted DPR alone as an overview).
        r"^\s*how\s+(?:do|did)\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)\s+(?:differ|compare)\b",
        r"\bhow\s+(?:does|do|is|are)\s+(?P<a>.+?)\s+(?:differ\s+from|compare\s+(?:to|with)"
        r"|different\s+from)\s+(?P<b>.+?)" + _END,
        r"^(?:is|are|should\s+i\s+use|use|choose|prefer)\s+(?P<a>.+?)\s+or\s+(?P<b>.+?)\s+"
        r"(?:better|preferable|superior|more\s+\w+)\b",
        r"^(?P<a>.+?)\s+(?:vs\.?|versus|compared\s+(?:to|with))\s+(?P<b>.+?)" + _END,
    )
]
# Words that open a compare side but are not part of it ("compare the accuracy of A and B").
_SIDE_LEAD = re.compile(
    r"^(?:(?:what|which|how|why|is|are|does|do)\b(?:.*\b(?:of|between|about)|.*?\b(?:is|are"
    r"|do|does))\s+)?"
    r"(?:the\s+|an?\s+|between\s+|methods?\s+|approaches?\s+)*",
    _FLAGS,
)
# A verb of how something does ("how does LoRA perform compared with…"): at a side's end it is
# dropped ("LoRA"); followed by more words the side is a clause ("retrieval help RAG"), and the
# question weighs one effect against a baseline, not two things named by the user.
_SIDE_VERB = re.compile(
    r"\s+(?:perform|performs|help|helps|work|works|fare|fares|do|does|scale|scales|behave|"
    r"behaves|improve|improves|hurt|hurts|affect|affects|change|changes)\b(?P<rest>.*)$",
    _FLAGS,
)
_SIDE_TAIL = re.compile(
    r"\s+(?:for|in|on|at|when|with\s+respect\s+to|regarding|papers?|methods?|approaches?)\b.*$",
    _FLAGS,
)

# "what did <title> find", "summarize <title>", "the paper <title>", a quoted title.
_NAMED = [
    re.compile(p, _FLAGS)
    for p in (
        r"^\s*(?:what|which)\s+(?:did|does)\s+(?:the\s+paper\s+)?(?P<t>.+?)\s+(?:find|show|"
        r"propose|report|claim|conclude|contribute|achieve|introduce|demonstrate|discover)\b",
        r"^\s*(?:please\s+)?(?:summari[sz]e|tl;?dr(?:\s+of)?|give\s+me\s+(?:a\s+)?summary\s+of"
        r"|(?:a\s+)?summary\s+of|what\s+are\s+the\s+(?:main\s+)?(?:findings|results|"
        r"contributions)\s+of)\s+(?:the\s+paper\s+)?(?P<t>.+?)" + _HOW_LONG + _END,
        r"\bthe\s+paper\s+[\"“'‘](?P<t>[^\"”'’]{8,})[\"”'’]",
        # Unquoted: "what is the paper DeVRF: Fast Deformable … about?" was a list of 8 papers.
        r"^\s*(?:what\s+is|what's|tell\s+me\s+(?:more\s+)?about|explain|describe)\s+the\s+paper\s+"
        r"(?P<t>.+?)(?:\s+about)?" + _END,
        r"[\"“](?P<t>[^\"”]{12,})[\"”]",
    )
]
# The gist of a paper: "What is the main idea of the RWKV paper?", "the key idea behind
# Fusion-in-Decoder" (quoted a figure's caption and a table's row). Of a topic ("the main idea
# of diffusion models") it is an overview: a paper is written as a name.
_GIST = re.compile(
    r"^\s*what(?:\s+is|'s|\s+are|\s+was|\s+were)\s+the\s+(?:main|key|core|central|basic|big|"
    r"primary|headline)\s+(?:ideas?|contributions?|points?|insights?|takeaways?|innovations?|"
    # ("What is the main result of MuZero?" quoted "The best results are highlighted in bold")
    r"novelty|results?|findings?|conclusions?|claims?|messages?)\s+(?:of|"
    r"behind|in|from)\s+(?:the\s+paper\s+)?(?P<t>.+?)" + _HOW_LONG + _END
    # ("What problem does NG-Scope solve?" quoted its CPU usage)
    + r"|^\s*what\s+(?:problems?|challenges?|gaps?|issues?)\s+(?:does|did|do)\s+(?:the\s+paper\s+)?"
    r"(?P<u>.+?)\s+(?:solve|address|tackle|target|fix|overcome)\b"
    # "explain ViT in simple terms" quoted its appendix's AxialResNet timings, "explain NG-Scope
    # in simple terms" its TDD future work: said simply, a paper is its abstract.
    # ("explain the Transformer to a biologist" refused: no paper says "biologist")
    r"|^\s*(?:please\s+)?(?:explain|describe)\s+(?:the\s+paper\s+)?(?P<v>.+?),?\s+" + AUDIENCE
    + _END
    # "who should read the Fusion-in-Decoder paper?" quoted SQuAD's description: who a paper is
    # for is what it is about.
    + r"|^\s*who\s+(?:should|would|might|could)\s+(?:read|care\s+about|be\s+interested\s+in|"
    r"benefit\s+from)\s+(?:the\s+paper\s+)?(?P<w>.+?)" + _END,
    _FLAGS,
)

# "What is QAOA?", "what are diffusion models?": the thing asked to be defined.
_WHAT_IS = re.compile(
    r"^\s*what\s+(?:is|are)\s+(?:an?\s+|(?P<the>the\s+))?(?P<x>[\w][\w .+-]{0,60}?)\s*[?.!]*\s*$",
    re.IGNORECASE,
)


def what_is(question: str) -> tuple[str, bool] | None:
    """For "what is X?", X and whether the question asks of a definite one ("what is the
    retriever?" asks of the retriever being read about; "what is residual learning?" of the
    idea, wherever it is from). None for any other question."""
    asked = _WHAT_IS.match(question)
    return (asked["x"].strip(), bool(asked["the"])) if asked else None

# What a gist question asks the paper's gist in, after its name: "on ImageNet", "for QA".
_GIST_CONTEXT = re.compile(r"\s+(?:on|in|for|at|with|over|against)\s+.*$", _FLAGS)

AUTHORS, DATE, ORIGIN = "authors", "date", "origin"
_PAPER_TAIL = r"(?:\s+(?:paper|article|preprint))?"
# Questions about a paper's record, answered from the catalogue: who wrote it, when it appeared,
# which paper introduced a name. The paper may be named by what it introduced ("the Adam
# paper"), so one word is enough here.
_RECORD = [
    (AUTHORS, re.compile(p, _FLAGS))
    for p in (
        r"^\s*who\s+(?:wrote|authored|(?:are|were)\s+the\s+authors\s+of|is\s+the\s+(?:first\s+)?"
        r"author\s+of)\s+(?:the\s+paper\s+)?(?P<t>.+?)" + _PAPER_TAIL + _END,
        r"^\s*(?:what\s+are\s+the\s+|list\s+the\s+|the\s+)?authors\s+of\s+(?:the\s+paper\s+)?"
        r"(?P<t>.+?)" + _PAPER_TAIL + _END,
        # Of the papers just shown: "who are the authors?", "who are its authors?"
        r"^\s*who\s+(?:are|were|is)\s+(?P<t>the|its|their)\s+(?:first\s+)?authors?" + _END,
    )
] + [
    (DATE, re.compile(p, _FLAGS))
    for p in (
        r"^\s*when\s+(?:was|were|did)\s+(?:the\s+paper\s+)?(?P<t>.+?)" + _PAPER_TAIL
        + r"\s+(?:first\s+)?(?:published|released|posted|submitted|come\s+out|appear)" + _END,
    )
] + [
    (ORIGIN, re.compile(p, _FLAGS))
    for p in (
        r"^\s*(?:which|what)\s+(?:paper|article|work)\s+(?:first\s+)?(?:introduced|proposed|"
        r"presented|invented|coined|defined)\s+(?P<t>.+?)" + _END,
        r"^\s*(?:who|where)\s+(?:first\s+)?(?:introduced|proposed|invented|coined)\s+(?P<t>.+?)"
        + _END,
    )
]


# What a record question calls the paper when it names none: the papers just shown.
_SHOWN = frozenset("it its this that them these they their the".split())


def _record(question: str) -> tuple[str, str] | None:
    """("authors", "the Adam") style: what is asked of a paper's record, and the paper ("" for
    the papers the previous answer showed: "who wrote it?", "who are the authors?")."""
    for asks, pattern in _RECORD:
        match = pattern.search(question)
        if match:
            name = match["t"].strip(" ,;:?!.\"“”'‘’")
            if name.lower() in _SHOWN or re.fullmatch(
                r"(?:these|those|this|that)(?:\s+(?:papers?|ones?))?", name, _FLAGS
            ):
                return asks, ""
            name = re.sub(r"^the\s+", "", name, flags=_FLAGS)
            if name:
                return asks, name
    return None


def asks_of_shown(question: str) -> str:
    """What a record question naming no paper asks of the papers just shown ("who are the
    authors?": AUTHORS), "" for any other question."""
    record = _record(" ".join(question.split()))
    return record[0] if record and not record[1] else ""


_TIMELINE = re.compile(
    r"\b(?:evolv\w*|evolution|histor(?:y|ical|ically)|timeline|trajectory|over\s+(?:the\s+)?"
    r"(?:years|decades?|time)|year\s+by\s+year|trends?\s+(?:in|of)|how\s+(?:has|have|did)\b.*"
    r"\b(?:changed?|developed?|progressed?|grown|shifted|moved)|progress(?:ed)?\s+(?:of|in|on|"
    r"since|over))\b",
    _FLAGS,
)

# The words that ask for a timeline or for papers, not the topic's: "how did diffusion models
# develop over the years?" is on diffusion models (a paper saying "we developed" is not).
_TIMELINE_WORDS = re.compile(
    r"\b(?:how\s+(?:has|have|did|do|does)|evolv\w*|evolution|histor(?:y|ical|ically)|timeline|"
    r"trajectory|over\s+(?:the\s+)?(?:years|decades?|time)|year\s+by\s+year|trends?|"
    r"chang(?:e|es|ed)|develop(?:s|ed|ment)?|progress(?:ed)?|grown|grew|shifted|moved|since|research|"
    r"works?|papers?|studies)\b",
    _FLAGS,
)


def timeline_topic(text: str) -> str:
    """`text` without the words that ask for a timeline ("evolution of transformer models" ->
    "of transformer models"): what a timeline's papers must be on."""
    return " ".join(_TIMELINE_WORDS.sub(" ", text).split())


# "work" is a verb after a plural, a pronoun or an auxiliary ("Which classical optimizers work
# best for QAOA?", "Does it work with ResNets?"), not "work" (papers) on a topic.
_WORK_NOUN = "".join(
    rf"(?<!\b{w}\s)"
    for w in "it we you they i do does did not to can could will would should may might must".split()
) + r"(?<!s\s)work"
# Asking where to start reading, in the reader's words.
_READING = (
    r"\bwhat\s+(?:should|shall|must|do|would\s+you\s+recommend)\s+i\s+(?:to\s+)?read"
    r"(?:\s+(?:first|next|after\s+that|to\s+start))?\b|\bwhat\s+to\s+read(?:\s+first)?\b"
    r"|\bwhere\s+(?:should|do|can|shall|would)\s+i\s+(?:start|begin)(?:\s+reading)?\b"
    r"|\bi\s*(?:'|’)?\s*a?m\s+new\s+to\b|\bgood\s+starting\s+points?\b|\bstarting\s+points?\b"
)
_LIST = re.compile(
    r"\b(?:papers?|articles?|preprints?|publications?|works|" + _WORK_NOUN + r"|studies|research)\s+"
    r"(?:on|about|"
    r"by|in|from|for|using|that|which|regarding|related|concerning|covering|with|of)\b"
    r"|^\s*(?:please\s+)?(?:list|show|find|give|get|recommend|suggest|search|any|which|what)\b"
    r"(?:\s+\w+){0,3}?\s+(?<!future\s)(?:papers?|articles?|preprints?|publications?|works|"
    + _WORK_NOUN + r")\b(?!\s+(?:best|better|well|worse|worst|poorly)\b)"
    r"|^\s*(?:please\s+)?(?:list|show\s+me|find|recommend|suggest)\b"
    r"|\b(?:latest|recent|newest|new)\s+(?:papers?|work|research|preprints?|articles?|"
    r"publications?|results)\b"
    # Papers to read: "Give me a reading list for learning about transformers" (an overview
    # quoted CiteSee's "a practitioner learning about machine learning"); "what should I read
    # first on RAG?", "I'm new to X, where should I start?" (quoted ResNet's "too large to
    # start converging").
    r"|\breading\s+list\b|" + _READING,
    _FLAGS,
)
# The words asking for papers to read or for what they found, not the topic's: "Give me a
# reading list for learning about transformers" is on transformers (CiteSee, on reading, is
# not); "Summarize the findings of the QAOA papers" on QAOA (its head was "findings": one paper
# of four said the word).
_LIST_ASKING = re.compile(
    r"\b(?:give\s+me\s+|suggest\s+|recommend\s+)?(?:an?\s+)?reading\s+list\b"
    r"|\b(?:summari[sz]e\s+)?(?:the\s+)?(?:(?:main|key)\s+)?(?:findings|results|contributions"
    r"|conclusions|takeaways)\s+of\b"
    r"|\b(?:learning|to\s+learn|getting\s+started|to\s+get\s+started|understanding|to\s+understand)"
    r"\s+(?:about|on|with|in)\b|(?:" + _READING + r")(?:\s+(?:on|about|in|with|for))?",
    _FLAGS,
)


def list_topic(text: str) -> str:
    """`text` without the words that ask for papers to read or for what they found: what a
    list's papers must be on."""
    rest = " ".join(_LIST_ASKING.sub(" ", text or "").split())
    return re.sub(r"\s*,\s*(?=[?.!]*$)", "", rest)  # "I'm new to X, where …?" leaves "X, ?"


# What the papers say of something, not which papers: "What do these papers say about
# scaling?", "What hardware do the papers train on?" (lists of papers, each with its
# contribution, none on scaling or hardware).
_ASKS_OF_PAPERS = re.compile(
    r"^\s*what\b(?:\s+[\w-]+){0,3}?\s+(?:do|does|did)\s+(?:the\s+|these\s+|those\s+|all\s+|both\s+)?"
    r"(?:papers?|works|studies|articles|authors)\s+(?!exist)\w+",
    _FLAGS,
)
# Several papers written as one ("the QAOA papers"): "Summarize the findings of the QAOA papers
# since 2024" is no paper's title, but a list of the papers, each with what it found.
_SEVERAL_PAPERS = re.compile(
    r"\b(?:the|these|those|all)\s+(?:[\w-]+\s+){0,3}(?:papers|works|studies|articles)\b", _FLAGS
)
# A question, not a noun phrase: "how ...", "why ...", "does ...", or a question mark.
_QUESTION = re.compile(
    r"\?|^\s*(?:how|why|what|which|when|who|whose|where|does|do|did|is|are|was|were|can|could|"
    r"should|would|will|explain|describe|tell|give|summari[sz]e|compare)\b",
    _FLAGS,
)
_LATEST = re.compile(
    r"\b(?:latest|newest|freshest|most\s+recent|recent(?:ly)?|state[\s-]of[\s-]the[\s-]art|sota"
    r"|cutting[\s-]edge|up[\s-]to[\s-]date|current(?:ly)?|nowadays|these\s+days|lately"
    r"|what'?s\s+new|just\s+(?:published|released))\b",
    _FLAGS,
)


# How often papers are cited, which the catalogue does not know: "which is the most cited?",
# "how many citations does RAG have?", "the most influential papers on X".
_CITATIONS = re.compile(
    r"\b(?:most|highly|least|widely|best)[\s-]+cited\b|\bcitations?\s+counts?\b"
    r"|\bhow\s+(?:many\s+(?:times\s+)?|often\s+(?:is|was|has)\b.*\b)(?:citations|cited)\b"
    r"|\bmost\s+influential\b|\bh-?index\b",
    _FLAGS,
)


def asks_citation_counts(question: str) -> bool:
    return bool(_CITATIONS.search(question or ""))


def _get(analysis: Any, name: str, default=None):
    if analysis is None:
        return default
    if isinstance(analysis, Mapping):
        return analysis.get(name, default)
    return getattr(analysis, name, default)


def _day(value) -> date | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])


def _side(text: str) -> str:
    """The thing a compare side names ("" when the side is a clause, not a name)."""
    text = _SIDE_TAIL.sub("", _SIDE_LEAD.sub("", text.strip(" ,;:?!.\"“”'")))
    if verb := _SIDE_VERB.search(text):
        if verb["rest"].strip():
            return ""
        text = text[: verb.start()]
    return " ".join(text.split()[:6])


# What a comparison compares its named sides in, written before them: "the model sizes of" OPT.
_ASPECT_OF = re.compile(r"^(?:[a-z][\w-]*\s+){1,4}of\s+(?=\S)")


def _named_side(text: str) -> str:
    """A side without the aspect written before its name ("model sizes of OPT" -> "OPT"; not
    "mixture of experts", a topic of its own)."""
    side = _side(text)
    rest = _ASPECT_OF.sub("", side)
    return rest if rest != side and _ONE_NAME.fullmatch(rest) else side


def _listed_sides(text: str) -> list[str]:
    """The sides a comparison lists with commas before its last "and": "OPT, RWKV" of "Compare
    the model sizes of OPT, RWKV and ViT" (it compared "model sizes of OPT, RWKV" with ViT)."""
    parts = [p for p in re.split(r"\s*,\s*(?:and\s+)?", text.strip()) if p]
    if len(parts) > 1 and all(len(p.split()) <= 6 for p in parts):
        return [_named_side(p) for p in parts]
    return [_side(text)]


def _compare(question: str) -> tuple[str, ...] | None:
    for pattern in _COMPARE:
        match = pattern.search(question)
        if match:
            listed = _listed_sides(match["a"])
            if len(listed) > 1:
                sides = [*listed, _named_side(match["b"])]
                if all(sides) and len({s.lower() for s in sides}) == len(sides):
                    return tuple(sides)
                continue
            a, b = _named_side(match["a"]), _side(match["b"])
            # "Compare DPR and BM25 retrieval accuracy": after two names, the words in lower
            # case are what they are compared in, not part of the second side.
            first, _, rest = b.partition(" ")
            if (_ONE_NAME.fullmatch(a) and _ONE_NAME.fullmatch(first) and rest
                    and rest.islower()):  # fmt: skip
                b = first
            # Each side names something, and not the same thing ("A or A").
            if a and b and a.lower() != b.lower() and len(a) <= 60 and len(b) <= 60:
                return a, b
    return None


# Words of a comparison that only compare or glue ("compare A and B for C": C is the context).
_COMPARING = frozenset(
    """compare compared comparing comparison comparisons differ differs different difference
    differences between contrast distinction and or with to against vs versus how does do did is
    are was were what which why the a an of in for on from at by than better worse perform
    performs fare fares""".split()
)


def compare_context(question: str, subjects: tuple[str, ...]) -> str:
    """What a comparison compares its sides in ("medical image generation" of "compare diffusion
    models and GANs for medical image generation"): the question's words other than the sides'
    and the comparing ones, "" when there are none ("compare DPO and RLHF")."""
    sides = {w.lower() for side in subjects for w in re.findall(r"[\w-]+", side)}
    words = [
        w for w in re.findall(r"[\w-]+", question)
        if w.lower() not in sides and w.lower() not in _COMPARING
    ]  # fmt: skip
    return " ".join(words)


# What a question with an arXiv id asks of that paper itself, not of papers like it.
_OF_THE_ID = re.compile(
    r"\b(?:what|which|who|how|why)\b.*\b(?:this|that|the)\s+(?:paper|article|preprint|work)\b"
    r"|^\s*(?:please\s+)?(?:summari[sz]e|explain|describe|tl;?dr|tell\s+me\s+about)\b"
    r"|\b(?:summari[sz]e|explain|describe)\s+(?:it|this|that)\b",
    _FLAGS,
)
_LIKE_THE_ID = re.compile(r"\b(?:like|similar|related|alike|neighbou?rs?|cit(?:e|es|ing))\b", _FLAGS)

# One word names a paper when it is written as a name: "RWKV", "Fusion-in-Decoder", "MoBYv2AL"
# (not "transformers" nor "Diffusion").
_ONE_NAME = re.compile(r"\w*[A-Z0-9]\w*[A-Z0-9][\w-]*|[A-Z]\w*(?:-\w+)+")


def _named(question: str) -> str | None:
    for pattern in (*_NAMED, _GIST):
        match = pattern.search(question)
        if match:
            groups = match.groupdict()
            title = next((groups[g] for g in ("t", "u", "v", "w") if groups.get(g)), "")
            title = title.strip(" ,;:?!.\"“”'‘’")
            if asked_pointer(title):
                # "What does Figure 2 of the Adam paper show?" asks for its caption, not for
                # the gist of the paper (its abstract was quoted)
                return None
            one = re.sub(r"^the\s+|\s+(?:paper|model|method)$", "", title, flags=_FLAGS)
            if _ONE_NAME.fullmatch(one):
                return one  # "RWKV" of "the RWKV paper"
            head = _GIST_CONTEXT.sub("", one)
            if pattern is _GIST and _ONE_NAME.fullmatch(head):
                return head  # "ResNet" of "the main result of ResNet on ImageNet"
            if pattern is _GIST and title.islower():
                return None
            if len(title.split()) >= 2 or re.search(r"\d{4}\.\d{4,5}", title):
                return title
    return None


def _spans_years(analysis: Any, today: date) -> int:
    """Calendar years the window touches (0 without a start)."""
    start = _day(_get(analysis, "start"))
    if start is None:
        return 0
    end = _day(_get(analysis, "end")) or today
    return end.year - start.year + 1


def _wants_latest(question: str, analysis: Any, today: date) -> bool:
    end = _day(_get(analysis, "end"))
    if end is not None and (today - end).days > 31:
        return False  # "latest ... in 2023": newest of a closed window, not of the catalogue
    return bool(_LATEST.search(question)) or float(_get(analysis, "recency_weight", 0) or 0) >= 0.6


def classify(question: str, analysis: Any = None, today: date | None = None) -> Intent:
    """The intent of `question` given its analysis (a QueryAnalysis or its dict, or None)."""
    today = today or date.today()
    question = " ".join((question or "").split())
    latest = _wants_latest(question, analysis, today)
    arxiv_id = _get(analysis, "arxiv_id")
    filtered = bool(_get(analysis, "authors") or _get(analysis, "categories"))

    sides = _compare(question)
    if sides and not arxiv_id:
        return Intent(COMPARE, latest, subjects=sides)
    record = _record(question)
    if record:
        return Intent(NAMED_PAPER, latest, title=record[1], asks=record[0])
    title = _named(question)
    if title and _SEVERAL_PAPERS.search(title):
        return Intent(LIST, latest)
    if title:
        return Intent(NAMED_PAPER, latest, title=title)
    if arxiv_id and _OF_THE_ID.search(question) and not _LIKE_THE_ID.search(question):
        # "https://arxiv.org/abs/2005.11401 what does this paper do?" listed papers like it
        return Intent(NAMED_PAPER, latest, title=arxiv_id)
    if arxiv_id:
        return Intent(SEED, latest, by_filter=True)
    if _TIMELINE.search(question):
        return Intent(TIMELINE, latest)
    if filtered:
        return Intent(LIST, latest, by_filter=True)
    listing = (
        bool(_LIST.search(question)) or not _QUESTION.search(question)
    ) and not _ASKS_OF_PAPERS.search(question)
    if listing:
        return Intent(LIST, latest)
    if _spans_years(analysis, today) >= TIMELINE_MIN_YEARS:
        return Intent(TIMELINE, latest)
    return Intent(OVERVIEW, latest)


# "Which papers use Adam?", "papers that compare against BM25": papers chosen by what they do,
# not by their topic. The verb's clause is what each paper's line must say.
_PROPERTY = re.compile(
    r"^\s*(?:which|what)\s+(?:papers?|works|studies|articles)\s+(?:that\s+|which\s+)?"
    r"(?!(?:on|about|by|in|from|for|since|before|after|of|with|related|are|were|is|was|do|does|"
    r"did|have|has|can|could|should|would|will|exist|there)\b)(?P<clause>\w[^?]*?)\s*[?.!]*$"
    r"|\b(?:papers?|works|studies|articles)\s+(?:that|which)\s+(?!(?:are|were|is|was)\b)"
    r"(?P<that>\w[^?]*?)\s*[?.!]*$",
    _FLAGS,
)


def listed_by(question: str) -> str:
    """What a list's papers are chosen for doing ("use Adam" of "Which papers use Adam?"), ""
    for a list on a topic ("papers on RAG") or any other question."""
    match = _PROPERTY.search(" ".join((question or "").split()))
    if not match:
        return ""
    return match["clause"] or match["that"] or ""


def sources_wanted(intent: Intent, default: int) -> int:
    """How many sources to retrieve for this intent: a timeline needs papers in several periods,
    a list chosen by author or category shows more of what the filter found."""
    if intent.kind == TIMELINE or (intent.kind == LIST and intent.latest):
        return 2 * default
    if intent.kind == LIST and intent.by_filter:
        return default + default // 2
    return default
