"""Random pools of a paper's chunks for the sentence evidence's checks (test_chunk_ranking,
test_sentence_sketch): sentences of the question's words among fillers, some stating a number."""

import random
from collections.abc import Iterator

from chat.llm.sentences import stems, term_set
from chat.retrieval.chunks import Chunk

ASKED = ["optimizer", "warmup", "schedule", "dropout", "label", "smoothing", "batch", "gpus"]
VOCABULARY = ASKED + [f"filler{i}" for i in range(40)]


def random_text(draw: random.Random) -> str:
    sentences = [
        " ".join(draw.choice(VOCABULARY) for _ in range(draw.randint(4, 12)))
        + (f" of {draw.randint(2, 512)}" if draw.random() < 0.3 else "")
        + "."
        for _ in range(draw.randint(2, 8))
    ]
    return " ".join(s.capitalize() for s in sentences)


def random_pools(seed: int, count: int) -> Iterator[tuple[str, bool, dict, list[Chunk], int]]:
    """`count` draws of (question, quantity, idf, pool of chunks best first, kept)."""
    draw = random.Random(seed)
    for _ in range(count):
        words = draw.sample(ASKED, 3)
        question = f"Which {' '.join(words)} was used?"
        quantity = draw.random() < 0.5
        idf = {stem: draw.uniform(0.3, 3.0) for stem in stems(words)}
        pool = []
        for pid in range(1, draw.randint(2, 16) + 1):
            text = random_text(draw)
            counts = tuple((t, 1) for t in idf if t in term_set(text))
            pool.append(Chunk(pid, 1, text, 1, 1, "", pid * 100, pid * 100 + 99, 0.5, 0.0,
                              counts=counts))  # fmt: skip
        yield question, quantity, idf, pool, draw.choice([1, 2, 4, 8])
