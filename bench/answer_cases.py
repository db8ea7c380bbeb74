"""The cases of the answer-behaviour suite (issue #11, "How to measure"): a question, the turns
asked before it in the same thread, and what a user would check in its answer.

Hand-written where words are enough (topics, small talk, out-of-catalogue questions, follow-ups);
made from the catalogue where a case needs real names and ids, by rules stated beside them:

- authors with at least 3 papers in the slice: "papers by <name>" must cite only their papers;
- seed and named papers: machine-learning papers of 2019-2024 with a plain 5-14 word title,
  taken at a fixed stride through the ids (no hand picking);
- "latest" questions: the three newest papers whose title or abstract matches the topic;
- relative windows: computed here from the day the suite runs, by the calendar rules the issue
  states ("since last year" on 2026-11-23 is 2025-01-01 → today; "past 18 months" starts on the
  same day of the month 18 months back, clamped to the month's end).

Topic predicates are regular expressions over a paper's title and abstract (lower case). They
are deliberately broad (synonyms, abbreviations), so that a cited paper that fails one is truly
off the topic, not phrased differently.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, field
from datetime import date

from bench.answer_checks import (
    Catalogue,
    Expect,
    by_author,
    cites_at_least,
    cites_first,
    cites_nothing,
    cites_one_of,
    cites_only,
    cites_some,
    filters_cleared,
    grouped_by_period,
    in_category,
    is_previous_source,
    lists_papers,
    mentions,
    names,
    no_refusal,
    notes_age,
    offers_examples,
    previous_mentioning_cited,
    published_between,
    query_lacks,
    replies,
    retrieves_nothing,
    says,
    says_nothing_relevant,
    subset_of_previous,
    window_is,
)

INTENTS = [
    "list-author", "list-category", "list-topic", "list-latest", "seed", "named-paper",
    "overview", "compare", "timeline", "freshness", "window", "relative-window", "smalltalk",
    "out-of-catalogue", "followup-refer", "followup-change",
]  # fmt: skip


@dataclass(frozen=True)
class Case:
    name: str
    intent: str
    question: str
    expects: tuple[Expect, ...]
    before: tuple[str, ...] = field(default=())  # asked first, in the same thread (not scored)


# --- Topics: a regular expression each, over title + abstract --------------------------------------
TOPICS = {
    "diffusion": r"diffusion",
    "video diffusion": r"video",
    "transformer": r"transformer|\bvit\b|self-attention",
    "hallucination": r"hallucinat",
    "rag": r"retrieval[- ]augment|\brag\b",
    "gnn": r"graph neural|\bgnns?\b|graph convolution|message[- ]passing",
    "distillation": r"distill",
    "point cloud": r"point[- ]cloud",
    "text-to-image": r"text[- ]to[- ]image|text-conditioned image|image synthesis from text",
    "llm": r"language models?|\bllms?\b",
    "agent": r"\bagent",
    "gan": r"\bgans?\b|generative adversarial",
    "contrastive": r"contrastive",
    "3d reconstruction": r"3d|three-dimensional|reconstruct",
    "rl": r"reinforcement learning|\brl\b|policy",
    "robot": r"robot",
    "adversarial": r"adversarial",
    "vit": r"vision transformer|\bvits?\b|transformer",
    "cnn": r"convolution|\bcnns?\b|resnet",
    "dpo": r"\bdpo\b|direct preference",
    "rlhf": r"\brlhf\b|human feedback|reward model",
    "bert": r"\bbert",
    "gpt": r"\bgpt",
    "lora": r"\blora\b|low-rank adaptation",
    "prompt tuning": r"prompt[- ]tuning|soft prompt|prompt learning",
    "entanglement": r"entangle",
    "segmentation": r"segment",
    "object detection": r"detect",
    "reasoning": r"reason",
    "question answering": r"question[- ]answering|\bqa\b|answer",
    "speech": r"speech|audio|voice",
}


def topic(*names_: str):
    return mentions(*(TOPICS[n] for n in names_))


def on_topic(*names_: str) -> Expect:
    return cites_only(topic(*names_), "on " + " / ".join(names_))


# --- Calendar arithmetic for the relative windows ------------------------------------------------
def months_back(day: date, months: int) -> date:
    """The same calendar day `months` before, clamped to the month's end (2024-02-29 - 12 →
    2023-02-28)."""
    year, month = divmod(day.year * 12 + day.month - 1 - months, 12)
    month += 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def start_of_last_month(day: date) -> date:
    return months_back(day.replace(day=1), 1)


# --- Generated from the catalogue -----------------------------------------------------------------
_PLAIN_TITLE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ,:\-']+$")
MIN_AUTHOR_PAPERS = 3


def prolific_authors(catalogue: Catalogue, n: int) -> list[tuple[str, int]]:
    """Authors with at least MIN_AUTHOR_PAPERS papers, most papers first (ties by name), as
    they are written on the papers."""
    counts: dict[str, int] = {}
    spelled: dict[str, str] = {}
    for paper in catalogue.papers.values():
        for name, key in zip(paper.author_names, paper.authors, strict=True):
            counts[key] = counts.get(key, 0) + 1
            spelled.setdefault(key, name)
    ranked = sorted((-c, k) for k, c in counts.items() if c >= MIN_AUTHOR_PAPERS)
    return [(spelled[k], -c) for c, k in ranked[:n]]


def plain_papers(catalogue: Catalogue, n: int, offset: int) -> list:
    """n machine-learning papers of 2019-2024 with a plain 5-14 word title, at a fixed stride
    through their ids, starting at `offset` (so seed and named cases use different papers)."""
    pool = sorted(
        (
            p
            for p in catalogue.papers.values()
            if 2019 <= p.published.year <= 2024
            and any(c.startswith("cs.") for c in p.categories)
            and _PLAIN_TITLE.match(p.title)
            and 5 <= len(p.title.split()) <= 14
        ),
        key=lambda p: p.arxiv_id,
    )
    if not pool:
        return []
    stride = max(1, len(pool) // (2 * n + 1))
    return [pool[(offset + i * 2 * stride) % len(pool)] for i in range(n)]


def newest_on(catalogue: Catalogue, *names_: str, n: int = 3) -> list:
    fitting = catalogue.matching(topic(*names_))
    return sorted(fitting, key=lambda p: (p.published, p.arxiv_id), reverse=True)[:n]


def _author_cases(catalogue: Catalogue) -> list[Case]:
    phrasings = [
        "papers by {name}", "What has {name} published?", "list the papers of {name}",
        "show me work by {name}", "{name}'s papers", "recent papers by {name}",
    ]  # fmt: skip
    authors = prolific_authors(catalogue, 5)
    gao = [(name, n) for name, n in prolific_authors(catalogue, 10**6) if name == "Jianfeng Gao"]
    cases = []
    for i, (name, count) in enumerate((gao + [a for a in authors if a not in gao])[:6]):
        cases.append(
            Case(
                f"author-{i + 1}", "list-author", phrasings[i % len(phrasings)].format(name=name),
                (no_refusal(), cites_at_least(min(3, count)), lists_papers(min(3, count)),
                 cites_only(by_author(name), f"by {name}")),
            )
        )  # fmt: skip
    return cases


def _seed_cases(catalogue: Catalogue) -> list[Case]:
    phrasings = [
        "papers like {id}", "find papers similar to https://arxiv.org/abs/{id}",
        "more papers like {id}v1", "what is related to arXiv:{id}?",
    ]  # fmt: skip
    cases = []
    for i, paper in enumerate(plain_papers(catalogue, 4, offset=0)):
        cases.append(
            Case(
                f"seed-{i + 1}", "seed", phrasings[i].format(id=paper.arxiv_id),
                (
                    no_refusal(),
                    names(paper.title, "names the seed first", before_other_citations=paper.arxiv_id),
                    cites_some(lambda p, seed=paper.arxiv_id: p.arxiv_id != seed, "other than the seed", 2),
                ),
            )
        )  # fmt: skip
    return cases


def _named_cases(catalogue: Catalogue) -> list[Case]:
    phrasings = [
        "What did “{title}” find?", "summarize {title}", "What is the paper {title} about?",
        "what are the main results of '{title}'?", "Tell me about the paper “{title}”",
    ]  # fmt: skip
    cases = []
    for i, paper in enumerate(plain_papers(catalogue, 5, offset=1)):
        cases.append(
            Case(
                f"named-{i + 1}", "named-paper", phrasings[i].format(title=paper.title),
                (no_refusal(), cites_first(paper.arxiv_id),
                 cites_only(lambda p, want=paper.arxiv_id: p.arxiv_id == want, "that paper")),
            )
        )  # fmt: skip
    return cases


def _latest_cases(catalogue: Catalogue) -> list[Case]:
    cases = []
    for i, (question, names_) in enumerate(
        [
            ("latest papers on large language model agents", ("agent",)),
            ("most recent work on retrieval-augmented generation", ("rag",)),
            ("newest papers on diffusion models", ("diffusion",)),
        ]
    ):
        newest = newest_on(catalogue, *names_)
        cases.append(
            Case(
                f"latest-{i + 1}", "list-latest", question,
                (no_refusal(), cites_at_least(2), lists_papers(2), on_topic(*names_),
                 cites_one_of([p.arxiv_id for p in newest], "the 3 newest on it")),
            )
        )  # fmt: skip
    return cases


def _freshness_cases(catalogue: Catalogue) -> list[Case]:
    cases = []
    for i, (question, names_) in enumerate(
        [
            ("latest work on LLM hallucination", ("hallucination",)),
            ("what's the newest research on video generation?", ("video diffusion",)),
            ("latest papers on reinforcement learning", ("rl",)),
        ]
    ):
        newest = newest_on(catalogue, *names_)
        expects = [no_refusal(), on_topic(*names_),
                   cites_one_of([p.arxiv_id for p in newest], "the 3 newest on it")]  # fmt: skip
        # Only when the catalogue's newest paper on it is more than a month old.
        if newest and (catalogue.today - newest[0].published).days > 31:
            expects.append(notes_age())
        cases.append(Case(f"fresh-{i + 1}", "freshness", question, tuple(expects)))
    return cases


def _relative_cases(catalogue: Catalogue) -> list[Case]:
    today = catalogue.today
    rows = [
        ("diffusion language models since last year", date(today.year - 1, 1, 1), ("diffusion",)),
        ("papers on large language models in the past 18 months", months_back(today, 18), ("llm",)),
        ("reasoning with language models this past year", months_back(today, 12), ("reasoning",)),
        ("object detection in the past decade", months_back(today, 120), ("object detection",)),
        ("agents since last month", start_of_last_month(today), ("agent",)),
        ("segmentation papers over the last two years", months_back(today, 24), ("segmentation",)),
    ]
    cases = []
    for i, (question, start, names_) in enumerate(rows):
        window, about = published_between(start, today), topic(*names_)
        expects = [window_is(start, today), cites_only(window, f"from {start} on")]
        if catalogue.matching(lambda p, w=window, t=about: w(p) and t(p)):
            expects += [no_refusal(), cites_at_least(1)]
        cases.append(Case(f"relative-{i + 1}", "relative-window", question, tuple(expects)))
    return cases


# --- Written by hand ------------------------------------------------------------------------------
def _hand_cases(catalogue: Catalogue) -> list[Case]:
    d = date
    cases = [
        # Lists by category: the filter already found them; only that category is cited.
        *[
            Case(f"category-{i + 1}", "list-category", q,
                 (no_refusal(), cites_at_least(3), lists_papers(3),
                  cites_only(in_category(cat), f"in {cat}")))
            for i, (q, cat) in enumerate([
                ("recent papers in cs.RO", "cs.RO"), ("papers in cs.IR", "cs.IR"),
                ("what is new in cs.SD?", "cs.SD"), ("show me cs.GR papers", "cs.GR"),
            ])
        ],
        # Lists by topic.
        *[
            Case(f"topic-{i + 1}", "list-topic", q,
                 (no_refusal(), cites_at_least(3), lists_papers(3), on_topic(t)))
            for i, (q, t) in enumerate([
                ("papers on point cloud segmentation", "point cloud"),
                ("papers about retrieval-augmented generation", "rag"),
                ("list papers on knowledge distillation", "distillation"),
                ("papers on graph neural networks", "gnn"),
                ("papers on text-to-image diffusion", "text-to-image"),
                ("find work on contrastive learning", "contrastive"),
            ])
        ],
        # Overview, how and why: quoted by meaning, each quote from a paper on the topic.
        *[
            Case(f"overview-{i + 1}", "overview", q, (no_refusal(), cites_at_least(2), on_topic(*t)))
            for i, (q, t) in enumerate([
                ("How do diffusion models handle text generation?", ("diffusion",)),
                ("Why do vision transformers need large datasets?", ("vit",)),
                ("How does contrastive learning work for representation learning?", ("contrastive",)),
                ("What are the main approaches to 3D reconstruction from images?", ("3d reconstruction",)),
                ("How is reinforcement learning used in robotics?", ("rl",)),
                ("Why do large language models hallucinate?", ("hallucination",)),
                ("How do GANs generate images?", ("gan",)),
                ("what is known about adversarial robustness of image classifiers?", ("adversarial",)),
            ])
        ],
        # Compare A vs B: evidence for each side, both named, nothing about neither.
        *[
            Case(f"compare-{i + 1}", "compare", q,
                 (no_refusal(), cites_some(topic(a), f"on {a}"), cites_some(topic(b), f"on {b}"),
                  on_topic(a, b), says(la, la), says(lb, lb)))
            for i, (q, a, b, la, lb) in enumerate([
                ("compare DPO and RLHF", "dpo", "rlhf", r"\bdpo\b", r"\brlhf\b"),
                ("vision transformers vs convolutional networks", "vit", "cnn",
                 r"vision transformer|\bvit", r"convolution|\bcnn"),
                ("GANs versus diffusion models for image generation", "gan", "diffusion",
                 r"\bgans?\b|generative adversarial", r"diffusion"),
                ("BERT vs GPT", "bert", "gpt", r"\bbert", r"\bgpt"),
                ("LoRA compared with prompt tuning", "lora", "prompt tuning",
                 r"\blora\b", r"prompt[- ]tuning"),
            ])
        ],
        # Timelines: grouped by period with counts, over the asked years.
        Case("timeline-1", "timeline", "how has research on generative adversarial networks evolved?",
             (no_refusal(), grouped_by_period(), on_topic("gan"))),
        Case("timeline-2", "timeline", "evolution of transformer models from 2017 to 2024",
             (no_refusal(), grouped_by_period(), on_topic("transformer"),
              window_is(d(2017, 1, 1), d(2024, 12, 31)),
              cites_only(published_between(d(2017, 1, 1), d(2024, 12, 31)), "in 2017-2024"))),
        Case("timeline-3", "timeline", "how did diffusion models develop over the years?",
             (no_refusal(), grouped_by_period(), on_topic("diffusion"))),
        Case("timeline-4", "timeline", "history of reinforcement learning research",
             (no_refusal(), grouped_by_period(), on_topic("rl"))),
        Case("timeline-5", "timeline", "how has work on quantum entanglement changed since 2000?",
             (no_refusal(), grouped_by_period(), on_topic("entanglement"),
              window_is(d(2000, 1, 1), catalogue.today),
              cites_only(published_between(d(2000, 1, 1), None), "since 2000"))),
        # Absolute windows: nothing cited outside them.
        Case("window-1", "window", "what was new in reinforcement learning in 2023",
             (no_refusal(), cites_at_least(2), on_topic("rl"), window_is(d(2023, 1, 1), d(2023, 12, 31)),
              cites_only(published_between(d(2023, 1, 1), d(2023, 12, 31)), "from 2023"))),
        Case("window-2", "window", "papers on diffusion models in 2023",
             (no_refusal(), cites_at_least(2), on_topic("diffusion"), window_is(d(2023, 1, 1), d(2023, 12, 31)),
              cites_only(published_between(d(2023, 1, 1), d(2023, 12, 31)), "from 2023"))),
        Case("window-3", "window", "segmentation papers before 2020",
             (no_refusal(), cites_at_least(2), on_topic("segmentation"), window_is(None, d(2019, 12, 31)),
              cites_only(published_between(None, d(2019, 12, 31)), "before 2020"))),
        Case("window-4", "window", "quantum entanglement between 2000 and 2005",
             (no_refusal(), cites_at_least(1), on_topic("entanglement"),
              window_is(d(2000, 1, 1), d(2005, 12, 31)),
              cites_only(published_between(d(2000, 1, 1), d(2005, 12, 31)), "in 2000-2005"))),
        # Small talk and meta questions: a reply, no retrieval, no citations.
        *[
            Case(f"smalltalk-{i + 1}", "smalltalk", q, (retrieves_nothing(), cites_nothing(), replies(), *extra),
                 before=before)
            for i, (q, extra, before) in enumerate([
                ("hi", (offers_examples(),), ()),
                ("thanks", (), ()),
                ("what can you do?", (offers_examples(),), ()),
                ("who are you?", (), ()),
                ("Hello!", (), ()),
                ("thanks, that was helpful", (), ("papers on point cloud segmentation",)),
            ])
        ],
        # Out of the catalogue: nothing cited, and said so.
        *[
            Case(f"outside-{i + 1}", "out-of-catalogue", q, (cites_nothing(), says_nothing_relevant()))
            for i, q in enumerate([
                "sourdough bread fermentation techniques",
                "the history of the Byzantine empire",
                "migration routes of monarch butterflies",
                "tax law for small businesses in Germany",
                "who won the football world cup in 2022?",
                "symptoms of vitamin D deficiency",
            ])
        ],
        # Follow-ups that refer back: they work on the previous answer's papers.
        Case("refer-1", "followup-refer", "which of these use transformers?",
             (subset_of_previous(), cites_at_least(1), on_topic("transformer"),
              previous_mentioning_cited(topic("transformer"), "on transformers")),
             before=("papers on diffusion models for video generation",)),
        Case("refer-2", "followup-refer", "tell me more about the second one",
             (is_previous_source(2), no_refusal()),
             before=("latest papers on large language model agents",)),
        Case("refer-3", "followup-refer", "tell me more about [3]",
             (is_previous_source(3), no_refusal()), before=("papers on point cloud segmentation",)),
        Case("refer-4", "followup-refer", "which of them were published after 2022?",
             (subset_of_previous(), cites_at_least(1),
              cites_only(published_between(d(2023, 1, 1), None), "after 2022"),
              previous_mentioning_cited(published_between(d(2023, 1, 1), None), "after 2022")),
             before=(f"papers by {_first_author(catalogue)}",)),
        Case("refer-5", "followup-refer", "summarize the first one",
             (is_previous_source(1), no_refusal()), before=("papers on text-to-image diffusion",)),
        Case("refer-6", "followup-refer", "which of these mention a discriminator?",
             (subset_of_previous(), cites_at_least(1), cites_only(mentions(r"discriminat"), "on discriminators"),
              previous_mentioning_cited(mentions(r"discriminat"), "on discriminators")),
             before=("How do GANs generate images?",)),
        Case("refer-7", "followup-refer", "which of those are about question answering?",
             (subset_of_previous(), cites_only(topic("question answering"), "on question answering"),
              previous_mentioning_cited(topic("question answering"), "on question answering")),
             before=("papers about retrieval-augmented generation",)),
        Case("refer-8", "followup-refer", "what do these papers have in common?",
             (subset_of_previous(), cites_at_least(2), no_refusal()),
             before=("Why do large language models hallucinate?",)),
        # Follow-ups that change the topic: nothing of the old one carried.
        Case("change-1", "followup-change", "compare DPO and RLHF",
             (query_lacks("hallucinat"), cites_at_least(1), on_topic("dpo", "rlhf")),
             before=("Why do large language models hallucinate?",)),
        Case("change-2", "followup-change", "What is point cloud segmentation and why is it hard?",
             (query_lacks("video", "diffusion"), cites_at_least(1), on_topic("point cloud")),
             before=("papers on diffusion models for video generation",)),
        Case("change-3", "followup-change", "papers on quantum entanglement",
             (filters_cleared("authors"), cites_at_least(1), on_topic("entanglement")),
             before=(f"papers by {_first_author(catalogue)}",)),
        Case("change-4", "followup-change", "reinforcement learning for robot manipulation",
             (query_lacks("hallucinat"), cites_at_least(1), on_topic("rl", "robot")),
             before=("latest work on LLM hallucination",)),
        Case("change-5", "followup-change", "what is known about adversarial examples?",
             (filters_cleared("categories"), cites_at_least(1), on_topic("adversarial")),
             before=("recent papers in cs.RO",)),
        Case("change-6", "followup-change", "Is it true that contrastive learning needs large batches?",
             (query_lacks("diffusion"), filters_cleared("start", "end"), cites_at_least(1),
              on_topic("contrastive")),
             before=("diffusion language models since last year",)),
    ]  # fmt: skip
    return cases


def _first_author(catalogue: Catalogue) -> str:
    authors = prolific_authors(catalogue, 10**6)
    gao = [name for name, _ in authors if name == "Jianfeng Gao"]
    return gao[0] if gao else (authors[0][0] if authors else "Jianfeng Gao")


def build_cases(catalogue: Catalogue) -> list[Case]:
    """Every case, in a fixed order (by intent as in INTENTS, then as written)."""
    cases = [
        *_author_cases(catalogue),
        *_seed_cases(catalogue),
        *_named_cases(catalogue),
        *_latest_cases(catalogue),
        *_freshness_cases(catalogue),
        *_relative_cases(catalogue),
        *_hand_cases(catalogue),
    ]
    order = {intent: i for i, intent in enumerate(INTENTS)}
    return sorted(cases, key=lambda c: order[c.intent])  # stable: written order within an intent
