"""A thread's scope: the papers it asks about when it is not the whole catalogue.

"Ask about this paper" scopes a thread to one paper (its full text when read, else its
abstract); "Ask about this collection" to a library collection's papers. The scope is stored on
the thread (`Thread.scope`) so every later question in it stays inside, and is shown as a chip.
"""

from dataclasses import dataclass

from chat.models import Thread


@dataclass(frozen=True)
class Scope:
    kind: str  # "paper" or "collection"
    ref: str  # the paper's arXiv id, or the collection's id
    label: str  # what the chip says: the paper's title, the collection's name
    paper_ids: tuple[int, ...]  # Paper primary keys the retrieval is restricted to

    def as_json(self) -> dict:
        return {
            "kind": self.kind,
            "ref": self.ref,
            "label": self.label,
            "paper_ids": list(self.paper_ids),
        }


KINDS = ("paper", "collection")


def scope_of(thread: Thread) -> Scope | None:
    """The thread's scope, or None for a thread over the whole catalogue."""
    data = thread.scope or {}
    if data.get("kind") not in KINDS:
        return None
    return Scope(
        kind=data["kind"],
        ref=str(data.get("ref", "")),
        label=str(data.get("label", "")),
        paper_ids=tuple(int(pk) for pk in data.get("paper_ids", [])),
    )


def start_scoped_thread(owner, scope: Scope, title: str = "") -> Thread:
    """A new thread of `owner`'s, restricted to `scope`'s papers."""
    if scope.kind not in KINDS:
        raise ValueError(f"unknown scope kind {scope.kind!r}")
    return Thread.objects.create(
        owner=owner, title=(title or scope.label)[:200], scope=scope.as_json()
    )
