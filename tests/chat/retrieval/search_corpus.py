"""A small hand-made catalogue for search tests, written through the real ingest, embedding and
BM25 code paths (upsert_papers, embed_missing with the hashing embedder, index_missing).

Dates are chosen around NOW so windows have known contents; the hashing embedder makes texts
that share words close, so what should rank first is predictable.
"""

from datetime import UTC, datetime

from papers.ingest.upsert import PaperRecord, upsert_papers

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


DIFFUSION = "Diffusion models for image generation"
DIFFUSION_ABSTRACT = (
    "We study denoising diffusion models for image generation and synthesis. "
    "Score based diffusion improves sample quality of generated images."
)
QUANTUM = "Quantum error correction with surface codes"
QUANTUM_ABSTRACT = (
    "Quantum error correction protects logical qubits. We analyse surface codes, decoders "
    "and fault tolerant thresholds for quantum error correction."
)
GRAPH = "Graph neural networks for molecules"
GRAPH_ABSTRACT = (
    "Graph neural networks learn molecular properties. Message passing on molecular graphs "
    "predicts chemistry."
)

# (arxiv_id, title, abstract, authors, categories, published)
# fmt: off
PAPERS = [
    ("1901.00001", DIFFUSION + " in 2019", DIFFUSION_ABSTRACT, ["Geoffrey Hinton"], ["cs.CV"], "2019-03-01"),
    ("2104.00002", DIFFUSION + " revisited", DIFFUSION_ABSTRACT + " Revisited.", ["Ada Lovelace"], ["cs.CV", "cs.LG"], "2021-04-10"),
    ("2306.00003", "Latent " + DIFFUSION, DIFFUSION_ABSTRACT + " Latent space.", ["Geoffrey Hinton", "Yann LeCun"], ["cs.LG"], "2023-06-15"),
    ("2406.00004", "Fast " + DIFFUSION, DIFFUSION_ABSTRACT + " Fast sampling.", ["Yann LeCun"], ["cs.CV"], "2024-06-20"),
    ("2503.00005", "Video " + DIFFUSION, DIFFUSION_ABSTRACT + " Video frames.", ["Ada Lovelace"], ["cs.CV"], "2025-03-05"),
    ("2512.00006", "Guided " + DIFFUSION, DIFFUSION_ABSTRACT + " Guidance.", ["Geoffrey Hinton"], ["cs.LG"], "2025-12-01"),
    ("2605.00007", "Consistency " + DIFFUSION, DIFFUSION_ABSTRACT + " Consistency.", ["Alan Turing"], ["cs.CV"], "2026-05-02"),
    ("2610.00008", "Sparse " + DIFFUSION, DIFFUSION_ABSTRACT + " Sparse.", ["Alan Turing"], ["cs.LG"], "2026-10-30"),
    ("1805.00009", QUANTUM, QUANTUM_ABSTRACT, [], ["quant-ph"], "2018-05-01"),
    ("2202.00010", QUANTUM + " and decoders", QUANTUM_ABSTRACT + " Decoders.", ["Alan Turing"], ["quant-ph"], "2022-02-02"),
    ("2508.00011", QUANTUM + " at scale", QUANTUM_ABSTRACT + " Scale.", ["Ada Lovelace"], ["quant-ph", "cs.ET"], "2025-08-08"),
    ("2009.00012", GRAPH, GRAPH_ABSTRACT, ["Yann LeCun"], ["cs.LG", "q-bio.BM"], "2020-09-09"),
    ("2411.00013", GRAPH + " at scale", GRAPH_ABSTRACT + " Scale.", ["Yann LeCun"], ["cs.LG"], "2024-11-30"),
    (
        "2601.00014",
        "Escaping in diffusion abstracts",
        "Diffusion models <script>alert('x')</script> & image generation <b>bold</b>.",
        ["Mallory Attacker"],
        ["cs.CR"],
        "2026-01-10",
    ),
]
# fmt: on
HIDDEN_ID = "2611.00099"  # the best diffusion match of all, hidden by staff


def record(arxiv_id, title, abstract, authors, categories, published) -> PaperRecord:
    when = day(published)
    return PaperRecord(
        arxiv_id=arxiv_id,
        version=1,
        title=title,
        abstract=abstract,
        authors=list(authors),
        primary_category=categories[0],
        categories=list(categories),
        published=when,
        updated=when,
    )


def index_all() -> None:
    """Vectors (hashing embedder) and BM25 weights for every paper that lacks them."""
    from papers.embeddings import get_embedder
    from papers.indexing.lexical import index_missing
    from papers.indexing.vectors import embed_missing

    embed_missing(embedder=get_embedder("hashing"))
    index_missing()


def build_corpus(extra: list[tuple] = ()) -> dict[str, int]:
    """Write the catalogue; returns arXiv id -> paper id."""
    from papers.models import Paper

    rows = [*PAPERS, *extra]
    rows.append(
        (
            HIDDEN_ID,
            DIFFUSION + " hidden",
            DIFFUSION_ABSTRACT + " " + DIFFUSION_ABSTRACT,
            ["Geoffrey Hinton"],
            ["cs.CV"],
            "2026-11-01",
        )
    )
    upsert_papers([record(*row) for row in rows])
    Paper.objects.filter(arxiv_id=HIDDEN_ID).update(hidden=True)
    index_all()
    return dict(Paper.objects.values_list("arxiv_id", "id"))
