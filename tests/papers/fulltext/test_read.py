"""read_paper over real HTTP against a local arXiv PDF server: the good path, idempotence,
versions, politeness, and every bad input recorded with its reason while the next paper proceeds."""

import time
from itertools import pairwise

import pytest

from papers.embeddings import get_embedder
from papers.fulltext.read import read_paper
from papers.indexing.vectors import embed_missing
from papers.models import FullText, Passage
from tests.papers.fulltext.conftest import SHORT, SHORT_2, blank_pdf, encrypted_pdf


def _abstract_rows(paper_ids):
    return sorted(
        Passage.objects.abstracts()
        .filter(paper_id__in=paper_ids)
        .values_list("paper_id", "position", "start", "end")
    )


def test_reading_a_paper_keeps_text_pages_sections_and_chunks(pdf_server, shared_papers, manifest):
    paper = shared_papers[SHORT]
    fulltext = read_paper(paper)

    assert fulltext.status == FullText.Status.OK, fulltext.reason
    assert (fulltext.version, fulltext.pages) == (2, 6)
    assert fulltext.sha256 == manifest[SHORT]["sha256"]
    assert fulltext.bytes == manifest[SHORT]["bytes"]
    assert fulltext.parser.startswith("pypdfium2")
    text = fulltext.text
    assert "\ufffe" not in text and "arXiv:2007.01282v2 [" not in text
    assert len(fulltext.page_starts) == 6 and fulltext.page_starts == sorted(fulltext.page_starts)
    titles = [s["title"] for s in fulltext.sections]
    assert "1 Introduction" in titles and "3 Method" in titles
    # The references list is gone, the body before it is not.
    assert "References" not in titles
    assert "Fusion-in-Decoder" in text or "Fusion-in-decoder" in text

    chunks = list(Passage.objects.chunks().filter(paper=paper).order_by("position"))
    assert len(chunks) >= 8
    assert {c.model for c in chunks} == {get_embedder().name}
    assert [c.position for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert 0 <= chunk.start < chunk.end <= len(text)
        assert 1 <= chunk.page <= chunk.page_end <= 6
        assert fulltext.page_starts[chunk.page - 1] <= chunk.start
        assert chunk.published == paper.published
    assert {c.section for c in chunks} >= {"1 Introduction", "3 Method"}
    # Overlap: consecutive chunks of one section share text.
    same = [(a, b) for a, b in pairwise(chunks) if a.section == b.section]
    assert any(b.start < a.end for a, b in same)
    assert "Flatuniverse" in pdf_server.requests[0].user_agent


def test_reading_again_is_a_no_op_and_a_newer_version_replaces_the_chunks(
    pdf_server, shared_papers
):
    paper = shared_papers[SHORT]
    first = read_paper(paper)
    old_chunks = set(Passage.objects.chunks().filter(paper=paper).values_list("pk", flat=True))
    read_paper(paper)
    assert len(pdf_server.requests) == 1
    assert set(Passage.objects.chunks().filter(paper=paper).values_list("pk", flat=True)) == (
        old_chunks
    )

    # arXiv posts v3 (here: another paper's bytes, so the change shows).
    pdf_server.serve(SHORT, (pdf_server.data_dir / f"{SHORT_2}v3.pdf").read_bytes())
    paper.version = 3
    paper.save(update_fields=["version"])
    second = read_paper(paper)
    assert second.status == FullText.Status.OK and second.version == 3
    assert second.sha256 != first.sha256
    new_chunks = set(Passage.objects.chunks().filter(paper=paper).values_list("pk", flat=True))
    assert new_chunks and not new_chunks & old_chunks
    assert pdf_server.requests[-1].path.endswith(f"/pdf/{SHORT}v3")
    # The chat sketched the new chunks' sentences (papers.signals.fulltext_indexed), from the
    # new text: every chunk of v3 has its filters, each as its sentences give them.
    from chat.models import ChunkSketch
    from chat.retrieval.sentence_sketch import SIGNATURE, Sketch, sentence_filters

    sketch = ChunkSketch.objects.get(paper=paper)
    assert sketch.signature == SIGNATURE
    kept = Sketch(bytes(sketch.data))
    for chunk in Passage.objects.chunks().filter(paper=paper):
        text = second.text[chunk.start : chunk.end]
        assert kept.filters(chunk.start, chunk.end, text) == sentence_filters(text)


def test_429_is_retried_after_the_servers_retry_after(pdf_server, shared_papers):
    pdf_server.fail_next(1, status=429, retry_after="1")
    fulltext = read_paper(shared_papers[SHORT])
    assert fulltext.status == FullText.Status.OK
    busy, ok = pdf_server.requests
    assert (busy.status, ok.status) == (429, 200)
    assert ok.at - busy.at >= 0.95


def test_downloads_are_spaced_by_the_arxiv_delay(pdf_server, shared_papers, settings):
    settings.ARXIV_DELAY_SECONDS = 0.6
    read_paper(shared_papers[SHORT])
    read_paper(shared_papers[SHORT_2])
    first, second = pdf_server.requests
    assert second.at - first.at >= 0.55
    assert pdf_server.concurrent_peak == 1


def _bad_cases(shared_data):
    pdfs = shared_data / "arxiv-pdf"
    return {
        "no text layer": (
            "2401.00001",
            lambda s: s.serve("2401.00001", blank_pdf(3)),
            "no text layer",
        ),
        "encrypted": (
            "2401.00002",
            lambda s: s.serve("2401.00002", encrypted_pdf(pdfs / f"{SHORT_2}v3.pdf")),
            "encrypted",
        ),
        "truncated": (SHORT_2, lambda s: s.script(SHORT_2, "truncate"), "truncated download"),
        "html": ("2401.00003", lambda s: s.script("2401.00003", "html"), "HTML page instead"),
        "300 pages": (
            "2401.00004",
            lambda s: s.serve("2401.00004", blank_pdf(300)),
            "too long: 300 pages",
        ),
        "withdrawn": ("2401.00005", lambda s: None, "withdrawn"),
        "stall": (SHORT_2, lambda s: s.script(SHORT_2, "stall"), "stalled"),
    }


@pytest.mark.parametrize(
    "case", ["no text layer", "encrypted", "truncated", "html", "300 pages", "withdrawn", "stall"]
)
def test_a_bad_pdf_is_recorded_with_its_reason_and_the_next_paper_proceeds(
    case, pdf_server, shared_papers, shared_data, add_paper, settings
):
    settings.FULLTEXT_TIMEOUT_SECONDS = 1
    settings.FULLTEXT_MAX_PAGES = 120
    arxiv_id, arrange, reason = _bad_cases(shared_data)[case]
    bad = shared_papers.get(arxiv_id) or add_paper(arxiv_id)
    good = shared_papers[SHORT]
    embed_missing(embedder=None)
    abstracts_before = _abstract_rows([bad.pk, good.pk])
    assert abstracts_before
    arrange(pdf_server)

    started = time.monotonic()
    failed = read_paper(bad)
    assert time.monotonic() - started < 20
    assert failed.status == FullText.Status.FAILED
    assert reason in failed.reason and failed.reason.startswith(f"v{bad.version}: ")
    assert not Passage.objects.chunks().filter(paper=bad).exists()
    assert failed.text == ""

    assert read_paper(good).status == FullText.Status.OK
    assert Passage.objects.chunks().filter(paper=good).exists()
    assert _abstract_rows([bad.pk, good.pk]) == abstracts_before


def test_a_pdf_over_the_byte_cap_is_not_downloaded_whole(pdf_server, shared_papers, settings):
    settings.FULLTEXT_MAX_BYTES = 100_000
    fulltext = read_paper(shared_papers[SHORT])
    assert fulltext.status == FullText.Status.FAILED
    assert "too large" in fulltext.reason and "limit 0.1 MB" in fulltext.reason


def test_a_failed_newer_version_keeps_the_older_versions_chunks(pdf_server, shared_papers):
    paper = shared_papers[SHORT]
    read_paper(paper)
    kept = Passage.objects.chunks().filter(paper=paper).count()
    paper.version = 3  # not on the server: 404
    paper.save(update_fields=["version"])
    fulltext = read_paper(paper)
    assert fulltext.status == FullText.Status.FAILED and fulltext.reason.startswith("v3: ")
    assert fulltext.version == 2 and fulltext.text
    assert Passage.objects.chunks().filter(paper=paper).count() == kept
