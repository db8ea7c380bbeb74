"""Fixtures for reading full text: a local arXiv PDF server over the shared PDFs, their catalogue
records, and generated bad PDFs."""

import io
import json

import pytest

from papers.ingest.snapshot import parse_snapshot_record
from papers.ingest.upsert import upsert_papers
from tests.fakes.arxiv_pdfs import FakePdfServer

# The shortest shared PDFs (6 and 7 pages): the embedder's time is what tests pay for.
SHORT = "2007.01282"
SHORT_2 = "2212.08410"


@pytest.fixture
def pdf_server(shared_data, settings):
    server = FakePdfServer(data_dir=shared_data / "arxiv-pdf").start()
    settings.ARXIV_PDF_URL = server.url_template
    settings.ARXIV_DELAY_SECONDS = 0
    settings.ARXIV_MAX_RETRIES = 1
    settings.FULLTEXT_TIMEOUT_SECONDS = 5
    settings.EMBEDDING_BACKEND = "hashing"
    yield server
    server.stop()


@pytest.fixture
def shared_papers(db, shared_data):
    """Catalogue records of the shared PDFs (metadata.jsonl, as import_arxiv_snapshot reads it),
    by arXiv id."""
    from papers.models import Paper

    lines = (shared_data / "arxiv-pdf" / "metadata.jsonl").read_text().splitlines()
    upsert_papers([parse_snapshot_record(json.loads(line)) for line in lines if line.strip()])
    return {p.arxiv_id: p for p in Paper.objects.all()}


@pytest.fixture
def manifest(shared_data) -> dict[str, dict]:
    lines = (shared_data / "arxiv-pdf" / "manifest.jsonl").read_text().splitlines()
    return {r["arxiv_id"]: r for r in map(json.loads, filter(str.strip, lines))}


def blank_pdf(pages: int = 1) -> bytes:
    """A PDF whose pages have no text layer at all (like a scan without OCR)."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument.new()
    for _ in range(pages):
        document.new_page(612, 792)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def encrypted_pdf(source) -> bytes:
    """A real paper, encrypted with a user password."""
    import pypdf

    writer = pypdf.PdfWriter(clone_from=source)
    writer.encrypt("secret")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
