from datetime import UTC, datetime, timedelta
from itertools import count

import pytest

from papers.embeddings import get_embedder

PROTEIN = (
    "Accurate protein structure prediction with deep learning",
    "Proteins fold into three-dimensional structures determined by their amino acid sequence. "
    "We present a neural network that predicts protein folding and residue contacts from "
    "multiple sequence alignments, reaching near-experimental accuracy on protein structures.",
)
GALAXY = (
    "The stellar mass function of galaxies at high redshift",
    "We measure the abundance of massive galaxies in deep infrared surveys out to redshift four. "
    "Galaxy clusters and dark matter halos in cosmological simulations reproduce the observed "
    "evolution of the stellar mass function of galaxies.",
)


@pytest.fixture(scope="session")
def minilm():
    """The real default backend, loaded once for the whole session (about 0.3 s)."""
    return get_embedder("minilm")


@pytest.fixture(scope="session")
def hashing():
    return get_embedder("hashing")


def long_abstract(sentences: int = 60) -> str:
    """A plausible abstract far longer than the 256-token window, with distinct sentences."""
    return " ".join(
        f"In experiment {i} we observe that the coupling constant g_{i} changes the spectrum "
        f"of the Hamiltonian by {i}.{i} percent."
        for i in range(sentences)
    )


@pytest.fixture
def make_paper(db):
    """Create a Paper with the ORM: make_paper(title=..., abstract=..., hidden=...)."""
    from papers.models import Paper

    numbers = count(1)

    def make(title="A paper", abstract="An abstract.", **fields):
        n = next(numbers)
        published = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=n)
        return Paper.objects.create(
            arxiv_id=f"2401.{n:05d}",
            title=title,
            abstract=abstract,
            published=published,
            updated=published,
            **fields,
        )

    return make
