"""embed_missing / reembed / the embed_papers command, on papers created with the ORM."""

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from papers.embeddings import EmbeddingError
from papers.embeddings.openai_api import OpenAIEmbedder
from papers.indexing.passages import document_text, passage_text
from papers.indexing.vectors import embed_missing, reembed, reembed_all
from papers.models import Paper, Passage
from tests.fakes.openai_embeddings import FakeOpenAIEmbeddings

from .conftest import GALAXY, PROTEIN, long_abstract

pytestmark = pytest.mark.django_db


def test_embeds_every_paper_hidden_or_not_with_spans_and_dates(make_paper, hashing):
    protein = make_paper(*PROTEIN)
    galaxy = make_paper(*GALAXY, hidden=True)
    result = embed_missing(embedder=hashing)
    assert (result.model, result.papers, result.passages, result.skipped) == (
        "hashing-test",
        2,
        2,
        0,
    )
    for paper in (protein, galaxy):
        (passage,) = paper.passages.all()
        assert passage.model == "hashing-test"
        assert passage.published == paper.published
        assert passage_text(paper, passage) == document_text(paper.title, paper.abstract)
        np.testing.assert_allclose(
            passage.embedding, hashing.embed_query(passage_text(paper, passage)), atol=1e-6
        )


def test_a_second_run_embeds_nothing(make_paper, hashing):
    for i in range(3):
        make_paper(f"Paper {i}", f"Abstract number {i}.")
    assert embed_missing(embedder=hashing).papers == 3
    again = embed_missing(embedder=hashing)
    assert (again.papers, again.passages, again.batches) == (0, 0, 0)
    assert Passage.objects.count() == 3


def test_limit_and_batches_resume_where_the_last_run_stopped(make_paper, hashing):
    papers = [make_paper(f"Paper {i}", f"Abstract {i}.") for i in range(7)]
    first = embed_missing(embedder=hashing, limit=3, batch_size=2)
    assert (first.papers, first.batches) == (3, 2)
    assert set(Passage.objects.values_list("paper_id", flat=True)) == {p.pk for p in papers[:3]}
    rest = embed_missing(embedder=hashing, batch_size=2)
    assert rest.papers == 4
    assert Paper.objects.not_embedded_with("hashing-test").count() == 0


def test_a_run_that_dies_keeps_its_committed_batches_and_the_next_run_finishes(make_paper):
    """The OpenAI backend fails for real (HTTP 500, no retries) on the third batch."""
    for i in range(5):
        make_paper(f"Paper {i}", f"Abstract {i}.")
    with FakeOpenAIEmbeddings() as fake:
        embedder = OpenAIEmbedder(api_key="test", base_url=fake.base_url, max_retries=0)
        fake.fail_next(500, after=2)
        with pytest.raises(EmbeddingError):
            embed_missing(embedder=embedder, batch_size=2)
        assert Passage.objects.filter(model=embedder.name).count() == 4
        resumed = embed_missing(embedder=embedder, batch_size=2)
    assert resumed.papers == 1
    assert Paper.objects.not_embedded_with(embedder.name).count() == 0


def test_a_long_abstract_becomes_several_passages_covering_it(make_paper, hashing):
    paper = make_paper("A long one", long_abstract(80))
    result = embed_missing(embedder=hashing)
    passages = list(paper.passages.order_by("position"))
    assert result.passages == len(passages) >= 3
    assert [p.position for p in passages] == list(range(len(passages)))
    text = document_text(paper.title, paper.abstract)
    assert passages[0].start == 0 and passages[-1].end == len(text)
    assert all(hashing.count_tokens(passage_text(paper, p)) <= 256 for p in passages)


def test_two_models_vectors_are_kept_apart_by_name(make_paper, hashing, minilm):
    protein = make_paper(*PROTEIN)
    make_paper(*GALAXY)
    assert embed_missing(embedder=hashing).papers == 2
    # Another model sees both papers as missing: its vectors are separate rows.
    assert Paper.objects.not_embedded_with(minilm.name).count() == 2
    assert embed_missing(embedder=minilm).papers == 2
    assert Passage.objects.filter(model=hashing.name).count() == 2
    assert Passage.objects.filter(model=minilm.name).count() == 2
    stored = protein.passages.get(model=minilm.name).embedding
    np.testing.assert_allclose(stored, minilm.embed_query("\n\n".join(PROTEIN)), atol=1e-5)
    assert not np.allclose(stored, protein.passages.get(model=hashing.name).embedding)


def test_reembed_replaces_only_the_given_papers_for_that_model(make_paper, hashing, minilm):
    changed = make_paper("Old title", "Old abstract.")
    untouched = make_paper("Other", "Other abstract.")
    embed_missing(embedder=hashing)
    embed_missing(embedder=minilm)
    before = untouched.passages.get(model=hashing.name)
    changed.abstract = long_abstract(80)
    changed.save()

    result = reembed([changed.pk, 999_999], embedder=hashing)

    assert result.papers == 1 and result.passages >= 3
    assert changed.passages.filter(model=hashing.name).count() == result.passages
    assert changed.passages.filter(model=minilm.name).count() == 1  # other model untouched
    assert untouched.passages.get(model=hashing.name).pk == before.pk


def test_reembed_all_rebuilds_every_paper(make_paper, hashing):
    papers = [make_paper(f"Paper {i}", f"Abstract {i}.") for i in range(3)]
    embed_missing(embedder=hashing)
    old_ids = set(Passage.objects.values_list("pk", flat=True))
    result = reembed_all(embedder=hashing, batch_size=2)
    assert result.papers == 3
    new_ids = set(Passage.objects.values_list("pk", flat=True))
    assert len(new_ids) == 3 and not old_ids & new_ids
    assert {p.paper_id for p in Passage.objects.all()} == {p.pk for p in papers}


def test_bad_arguments_are_refused(hashing):
    with pytest.raises(ValueError, match="batch_size"):
        embed_missing(embedder=hashing, batch_size=0)
    with pytest.raises(ValueError, match="limit"):
        embed_missing(embedder=hashing, limit=-1)


def test_command_embeds_with_the_chosen_backend(make_paper, capsys):
    for i in range(3):
        make_paper(f"Paper {i}", f"Abstract {i}.")
    call_command("embed_papers", "--backend", "hashing", "--limit", "2", "--batch-size", "1")
    out = capsys.readouterr()
    assert "hashing-test: 2 papers, 2 passages" in out.out
    assert "paper/s" in out.err  # the progress bar, on stderr
    call_command("embed_papers", "--backend=hashing", "--reembed-all", verbosity=0)
    assert Passage.objects.filter(model="hashing-test").count() == 3


@pytest.mark.parametrize(
    "args, message",
    [
        (["--batch-size", "0"], "batch-size"),
        (["--limit", "x"], "limit"),
        (["--backend", "bert"], "invalid choice"),
    ],
)
def test_command_rejects_bad_options(args, message):
    with pytest.raises(CommandError, match=message):
        call_command("embed_papers", *args)


def test_command_reports_a_missing_api_key(settings):
    settings.OPENAI_API_KEY = ""
    from papers.embeddings import _cache

    _cache.pop("openai", None)
    with pytest.raises(CommandError, match="OPENAI_API_KEY"):
        call_command("embed_papers", "--backend", "openai")


def test_shards_split_a_backfill_without_overlap(make_paper, hashing):
    papers = [make_paper(title=f"Paper {i}", abstract=f"Abstract number {i}.") for i in range(7)]
    first = embed_missing(embedder=hashing, shard=(0, 2))
    second = embed_missing(embedder=hashing, shard=(1, 2))
    assert first.papers + second.papers == len(papers)
    embedded = set(Passage.objects.filter(model=hashing.name).values_list("paper_id", flat=True))
    assert embedded == {p.pk for p in papers}
    assert {p.pk % 2 for p in papers if p.pk in embedded} == {0, 1}
    assert embed_missing(embedder=hashing).papers == 0


def test_command_refuses_a_bad_shard():
    with pytest.raises(CommandError):
        call_command("embed_papers", "--shard", "3/2")
