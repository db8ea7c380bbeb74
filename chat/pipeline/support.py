"""Is each sentence of a model's answer found in the sources it cites?

A model cites [2] after a sentence [2] never says (the local model invented claims; a strong one
does it too, more rarely). After generation, each answer sentence that cites is scored against
its cited sources: the support score is the mean of

- lexical overlap: the share of the sentence's content words (stemmed, as BM25 sees them) that
  occur in the cited source;
- meaning: the best cosine between the sentence and one of the source's sentences, by the
  catalogue's embedder (papers.embeddings; MiniLM offline).

and the sentence is supported when its best cited source scores at least SUPPORTED. Sentences
that cite nothing are not judged here (a lead-in, "the sources do not say"). What is not
supported is kept in the message (`Message.unsupported`: the character spans in its content)
and shown with a dotted underline, "not found in the cited source" (chat.markdown).

`sentence_similarity` is also what picks the passages a model is given (chat.pipeline.passages):
one scorer for "does this text say that".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from chat.llm.meaning import vectors as cached_vectors
from chat.llm.sentences import split_sentences, terms
from papers.embeddings import get_embedder

# Between the two groups of the hand-labelled sentences of tests/chat/test_support.py: with
# MiniLM, sentences their source says (paraphrased) score 0.63-0.89, claims it does not make
# (on the same topic) 0.20-0.29.
SUPPORTED = 0.45

_CITATION = re.compile(r"\[(\d{1,3})\]")
_LEADING_CITATIONS = re.compile(r"^(?:\s*\[\d{1,3}\])+")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,2}[.)]|#{1,6})\s+")


@dataclass
class AnswerSentence:
    index: int  # in reading order
    text: str  # as written, citations included
    start: int  # character span in the answer
    end: int
    cited: list[int]


@dataclass
class Judged:
    sentence: AnswerSentence
    score: float  # best support among the cited sources, 0..1
    source: int | None  # that source's number

    @property
    def supported(self) -> bool:
        return self.score >= SUPPORTED

    def to_dict(self) -> dict:
        s = self.sentence
        return {
            "index": s.index,
            "start": s.start,
            "end": s.end,
            "text": s.text,
            "cited": s.cited,
            "score": round(self.score, 3),
        }


def answer_sentences(text: str) -> list[AnswerSentence]:
    """The sentences of a Markdown answer with their spans and citations. A citation written
    after the full stop ("… text. [2]") belongs to the sentence before it."""
    found: list[AnswerSentence] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        body_start = offset + (m.end() if (m := _LIST_MARKER.match(line)) else 0)
        cursor = body_start
        for sentence in split_sentences(text[body_start : offset + len(line)]):
            where = text.find(sentence, cursor, offset + len(line))
            if where < 0:  # whitespace inside was collapsed: its span is unknown, skip it
                continue
            cursor = where + len(sentence)
            lead = _LEADING_CITATIONS.match(sentence)
            if lead and found and found[-1].end <= where:
                found[-1].cited += [int(n) for n in _CITATION.findall(lead.group())]
                found[-1].end = where + lead.end()
                sentence, where = sentence[lead.end() :].lstrip(), where + lead.end()
                where = text.find(sentence, where) if sentence else where
            if not sentence or not _has_words(sentence):
                continue
            cited = [int(n) for n in _CITATION.findall(sentence)]
            found.append(AnswerSentence(len(found), sentence, where, where + len(sentence), cited))
        offset += len(line)
    return found


def _has_words(text: str) -> bool:
    return bool(terms(_CITATION.sub(" ", text)))


def _claim(text: str) -> str:
    return " ".join(_CITATION.sub(" ", text).split())


def lexical_overlap(claim: str, source: str) -> float:
    """The share of the claim's content stems found in the source."""
    wanted = set(terms(claim))
    if not wanted:
        return 0.0
    return len(wanted & set(terms(source))) / len(wanted)


def sentence_similarity(claims: Sequence[str], passages: Sequence[str], embedder=None):
    """(len(claims), len(passages)) cosine similarities by the catalogue's embedder. Vectors
    of sentences embedded lately are reused (chat.llm.meaning): a source cited again (a
    follow-up, another user's question on the topic) costs nothing to check again."""
    if not claims or not passages:
        return np.zeros((len(claims), len(passages)), dtype=np.float32)
    embedder = embedder or get_embedder()
    vectors = cached_vectors(embedder, [*claims, *passages])
    return vectors[: len(claims)] @ vectors[len(claims) :].T


def judge(answer: str, sources: Sequence[dict], embedder=None) -> list[Judged]:
    """Every citing sentence of `answer`, scored against the sources (cards: number, title,
    passage) it cites. Sync and CPU-bound (the embedder): run it off the event loop."""
    by_number = {card["number"]: f"{card['title']}. {card['passage']}" for card in sources}
    citing = [s for s in answer_sentences(answer) if any(n in by_number for n in s.cited)]
    if not citing:
        return []
    source_sentences = {n: split_sentences(text) or [text] for n, text in by_number.items()}
    numbers = sorted({n for s in citing for n in s.cited if n in by_number})
    flat = [(n, sentence) for n in numbers for sentence in source_sentences[n]]
    claims = [_claim(s.text) for s in citing]
    cosine = sentence_similarity(claims, [sentence for _, sentence in flat], embedder)
    judged = []
    for row, sentence in enumerate(citing):
        best, best_source = 0.0, None
        for n in sentence.cited:
            if n not in by_number:
                continue
            columns = [col for col, (m, _) in enumerate(flat) if m == n]
            meaning = max(0.0, float(cosine[row, columns].max()))
            score = (lexical_overlap(claims[row], by_number[n]) + meaning) / 2
            if score > best:
                best, best_source = score, n
        judged.append(Judged(sentence, best, best_source))
    return judged


def unsupported(answer: str, sources: Sequence[dict], embedder=None) -> list[dict]:
    """The citing sentences no cited source supports: index, span, text, cited, score."""
    return [j.to_dict() for j in judge(answer, sources, embedder) if not j.supported]
