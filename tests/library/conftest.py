"""Library test data: a few real papers (through the real upsert) and a collection of the owner's."""

import pytest

from library.models import Collection, save_paper
from tests.chat.conftest import saved_thread  # noqa: F401  (fixture)
from tests.papers.conftest import add_paper  # noqa: F401  (fixture)


@pytest.fixture
def papers(add_paper):  # noqa: F811
    return [
        add_paper("2401.00001", title="Diffusion models for video"),
        add_paper("2402.00002", title="Retrieval-augmented generation"),
        add_paper("2403.00003", title="Graph networks for molecules"),
    ]


@pytest.fixture
def collection(owner, papers):
    collection = Collection.objects.create(owner=owner, name="Reading list")
    save_paper(collection, papers[0], "Read section 3")
    return collection
