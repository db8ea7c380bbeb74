"""A thread written out: Markdown (questions, answers, one numbered reference list with arXiv
links and the versions read) and its sources as BibTeX (papers.bibtex, arXiv's shape).

Text is exported as it was saved: TeX stays TeX, and citations read as the thread's page shows
them (chat.references): the thread's numbers, with a full-text card's pages ("[1, p. 8]").
"""

from dataclasses import dataclass

from chat.models import Message, Thread
from chat.references import cite_labels, relabel, thread_labels
from papers.bibtex import bibtex_for
from papers.models import Paper


@dataclass
class Reference:
    label: int
    arxiv_id: str
    cited_as: str  # the version read, "2401.01234v2" (the bare id for old cards)
    title: str
    authors: str
    published: str

    @property
    def url(self) -> str:
        return f"https://arxiv.org/abs/{self.cited_as}"


@dataclass
class Exchange:
    question: str
    answer: str  # citations as the thread numbers them
    status: str


@dataclass
class ThreadExport:
    title: str
    exchanges: list[Exchange]
    references: list[Reference]


def _cited_as(card: dict) -> str:
    if card.get("cited_as"):
        return card["cited_as"]
    version = card.get("version")
    return f"{card['arxiv_id']}v{version}" if version else card["arxiv_id"]


def collect(thread: Thread) -> ThreadExport:
    """The thread's questions, answers and references, in order."""
    rows = list(thread.messages.order_by("created_at"))
    answers = [m for m in rows if m.role == Message.Role.ASSISTANT]
    labelled = dict(zip(answers, thread_labels(m.sources for m in answers), strict=True))
    exchanges, references, question = [], {}, ""
    for message in rows:
        if message.role == Message.Role.USER:
            question = message.content
            continue
        if message.status == Message.Status.STREAMING:
            continue  # not written yet
        cards = labelled[message]
        exchanges.append(
            Exchange(question, relabel(message.content, cite_labels(cards)), message.status)
        )
        for card in cards:
            references.setdefault(
                card["label"],
                Reference(
                    label=card["label"], arxiv_id=card["arxiv_id"], cited_as=_cited_as(card),
                    title=" ".join(str(card.get("title", "")).split()),
                    authors=str(card.get("authors", "")), published=str(card.get("published", "")),
                ),
            )
    return ThreadExport(str(thread), exchanges, [references[k] for k in sorted(references)])


def reference_line(ref: Reference) -> str:
    """"[3] Title. A. One, B. Two (2024). arXiv:2401.01234v2. <https://arxiv.org/abs/…>" """
    year = f"({ref.published[:4]})" if ref.published[:4].isdigit() else ""
    who = " ".join(part for part in (ref.authors, year) if part)
    pieces = [part for part in (ref.title, who, f"arXiv:{ref.cited_as}") if part]
    return f"[{ref.label}] " + ". ".join(pieces) + f". <{ref.url}>"


def thread_markdown(thread: Thread) -> str:
    export = collect(thread)
    parts = [f"# {export.title}", ""]
    for n, exchange in enumerate(export.exchanges, 1):
        parts += [f"## {n}. {' '.join(exchange.question.split())}", ""]
        answer = exchange.answer.strip() or "_(no answer)_"
        if exchange.status != Message.Status.COMPLETE:
            answer += f"\n\n_(answer {exchange.status})_"
        parts += [answer, ""]
    if export.references:
        parts += ["## References", ""]
        parts += [f"- {reference_line(ref)}" for ref in export.references]
        parts.append("")
    return "\n".join(parts)


def thread_papers(thread: Thread) -> list[Paper]:
    """The papers of the thread's references, in reference order (visible ones)."""
    ids = [ref.arxiv_id for ref in collect(thread).references]
    papers = Paper.objects.visible().filter(arxiv_id__in=ids).prefetch_related(
        "authorships__author"
    )
    by_id = {p.arxiv_id: p for p in papers}
    return [by_id[i] for i in ids if i in by_id]


def thread_bibtex(thread: Thread) -> str:
    return bibtex_for(thread_papers(thread))
