"""What a question's acronym stands for, in the catalogue's own words: "RAG papers" is a question
on retrieval-augmented generation, which REALM ("Retrieval-Augmented Language Model
Pre-Training", before the acronym existed) and Fusion-in-Decoder are on too, though neither writes
"RAG". Neither retriever sees that alone: BM25 has no "rag" in their abstracts, and the embedder
places "RAG papers" nearer a paper on papers (Paper Plain) than on retrieval.

The long form comes from the papers that define the acronym ("… for retrieval-augmented
generation (RAG) — models which …", papers.indexing.names.acronym_definitions): the abstracts
that hold the acronym's word (the GIN index of search_vector, at most DEFINING_PAPERS of them),
else the read full texts' chunks that do (at most DEFINING_CHUNKS), the long form most of them
write winning. No table of acronyms is kept: any the catalogue defines is expanded ("ViT
papers", "DPR papers"); one it never defines is left as it is. Cost: one or two indexed queries
for a question with an acronym, none for the others.

chat.retrieval.search searches the expanded question ("retrieval-augmented generation (RAG)
papers") when the acronym is what the question is about (topic_acronyms), unless it asks what a
paper it names says ("What is RAG?": chat.retrieval.named), and the list's topic filter (chat.llm.shapes.on_topic) takes
a paper on either form. Which words are acronyms, and the question written with their long forms,
is chat.understanding.acronyms's (pure).
"""

from __future__ import annotations

from collections import Counter

from chat.llm.sentences import stems
from chat.llm.shapes import topic_heads
from chat.understanding.acronyms import acronyms_in
from papers.indexing.names import acronym_definitions, acronym_singular, name_key

DEFINING_PAPERS = 50
DEFINING_CHUNKS = 30
# (Oldest papers first, a paper's chunks in reading order: the same long form, as its first
# definer writes it, whatever order the rows come in: "Dense Passage Retriever", not the
# "dense passage retriever" of DPR's section 3.)

_ABSTRACTS = """
SELECT p.title, p.abstract FROM papers_paper p
WHERE p.search_vector @@ plainto_tsquery('english', %s) AND NOT p.hidden AND NOT p.withdrawn
ORDER BY p.published, p.id
LIMIT %s
"""
_CHUNKS = """
SELECT substr(f.text, c.start + 1, c."end" - c.start)
FROM papers_passage c
JOIN papers_fulltext f ON f.paper_id = c.paper_id AND f.status = 'ok'
JOIN papers_paper p ON p.id = c.paper_id
WHERE c.kind = 'fulltext' AND c.lexemes @@ plainto_tsquery('english', %s)
  AND NOT p.hidden AND NOT p.withdrawn
ORDER BY p.published, c.paper_id, c.position
LIMIT %s
"""


def topic_acronyms(text: str) -> list[str]:
    """The acronyms of `text` that are its topic's head (chat.llm.shapes.topic_heads): "RAG" of
    "RAG papers", "QAOA" of "QAOA since 2024", "RLHF" of "What is RLHF?"; not "RAPT" of "Which
    datasets are used to evaluate RAPT paraphrase generation?", asked of the paper that coined
    it, whose own chunks the long form would only crowd (pure)."""
    heads = topic_heads(text)
    return [a for a in acronyms_in(text) if set(stems([acronym_singular(a).lower()])) <= heads]


def long_forms(cursor, acronyms: list[str]) -> dict[str, str]:
    """{acronym: the long form the catalogue defines it with} for those it defines."""
    forms = {}
    for acronym in acronyms:
        votes: Counter = Counter()
        written: dict[str, str] = {}
        for sql, limit in ((_ABSTRACTS, DEFINING_PAPERS), (_CHUNKS, DEFINING_CHUNKS)):
            cursor.execute(sql, [acronym_singular(acronym), limit])
            for row in cursor.fetchall():
                text = " ".join(" ".join(filter(None, row)).split())
                for long in acronym_definitions(text, acronym):
                    key = name_key(long)
                    votes[key] += 1
                    written.setdefault(key, long)
            if votes:
                break  # the abstracts define it: the bodies are not read
        if votes:
            forms[acronym] = written[votes.most_common(1)[0][0]]
    return forms
