"""papers/bibtex.py: arXiv-shaped BibTeX, checked by parsing it with bibtexparser, against the
shared papers' own arXiv metadata; and its page download and API endpoint."""

import json
import re
from datetime import UTC, datetime
from io import StringIO

import bibtexparser
import pytest
from django.core.management import call_command

from papers.bibtex import balance_braces, bibtex_entry, bibtex_for
from papers.models import Paper

pytestmark = pytest.mark.django_db


def parse(text: str) -> dict[str, dict[str, str]]:
    library = bibtexparser.parse_string(text)
    assert not library.failed_blocks, [b.error for b in library.failed_blocks]
    return {
        e.key: {f.key: f.value for f in e.fields} | {"_type": e.entry_type} for e in library.entries
    }


@pytest.fixture
def shared_papers(shared_data):
    path = shared_data / "arxiv-pdf" / "metadata.jsonl"
    call_command(
        "import_arxiv_snapshot", str(path), "--no-progress", stdout=StringIO(), stderr=StringIO()
    )
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_shared_papers_bibtex_parses_and_matches_arxiv_fields(shared_papers):
    papers = list(Paper.objects.order_by("arxiv_id").prefetch_related("authorships__author"))
    assert len(papers) == len(shared_papers) == 28
    entries = parse(bibtex_for(papers))
    assert len(entries) == 28  # one entry each, keys unique
    by_eprint = {fields["eprint"]: fields for fields in entries.values()}
    for record in shared_papers:
        fields = by_eprint[record["id"]]
        assert fields["_type"] == "misc"
        assert fields["archivePrefix"] == "arXiv"
        assert fields["title"] == " ".join(record["title"].split())
        # arXiv's author order, every author: "A and B and C".
        expected_authors = [
            " ".join(n.split()) for n in re.split(r",\s*|\s+and\s+", record["authors"]) if n.strip()
        ]
        assert fields["author"].split(" and ") == expected_authors, record["id"]
        assert fields["primaryClass"] == record["categories"].split()[0]
        # arXiv's year is the latest version's.
        assert fields["year"] == record["versions"][-1]["created"].split()[3]
        assert fields["url"] == f"https://arxiv.org/abs/{record['id']}"


def test_attention_entry_has_arxivs_shape(shared_papers):
    paper = Paper.objects.get(arxiv_id="1706.03762")
    text = bibtex_entry(paper)
    assert text.startswith("@misc{vaswani2023attentionneed,\n")
    assert "      author={Ashish Vaswani and Noam Shazeer and Niki Parmar" in text
    assert (
        "      eprint={1706.03762},\n      archivePrefix={arXiv},\n      primaryClass={cs.CL},\n"
        in text
    )
    assert text.rstrip().endswith("}")


def test_tex_is_kept_braces_balanced_and_names_protected(add_paper):
    paper = add_paper(
        "2401.00007",
        title=r"$\Psi$PO: {unbalanced $\sim$12,000 $\{x\}$ and \textbf{bold}}}",
        authors=["Ada Lovelace", "The ATLAS and CMS Collaborations", "Smith, John"],
        primary_category="hep-ex",
        updated=datetime(2025, 3, 1, tzinfo=UTC),
    )
    fields = next(iter(parse(bibtex_entry(paper, note="read for {the} survey")).values()))
    assert fields["title"].startswith(r"$\Psi$PO: {unbalanced $\sim$12,000 ")
    assert r"\textbf{bold}" in fields["title"]
    assert r"$\lbrace x\rbrace $" in fields["title"]  # same meaning, no escaped brace
    assert fields["title"].count("{") == fields["title"].count("}")
    assert fields["author"] == (
        "Ada Lovelace and {The ATLAS and CMS Collaborations} and {Smith, John}"
    )
    assert fields["note"] == "read for {the} survey"
    assert fields["year"] == "2025"


def test_balance_braces_drops_only_unpaired():
    assert balance_braces("a {b} c") == "a {b} c"
    assert balance_braces("a } b { c") == "a  b  c"
    assert balance_braces(r"x \{ y") == "x  y"
    assert balance_braces("{{a}") == "{a}"


def test_same_key_twice_gets_suffix_and_same_paper_once(add_paper):
    common = dict(title="Deep nets", authors=["Jo Smith"], updated=datetime(2024, 5, 1, tzinfo=UTC))
    a = add_paper("2405.00001", **common)
    b = add_paper("2405.00002", **common)
    entries = parse(bibtex_for([a, b, a]))
    assert sorted(entries) == ["smith2024deepnets", "smith2024deepnetsb"]


def test_paper_page_offers_bibtex_download(client, add_paper):
    add_paper("2401.00001")
    page = client.get("/papers/2401.00001/")
    assert b'href="/papers/2401.00001/bibtex/"' in page.content
    response = client.get("/papers/2401.00001/bibtex/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/x-bibtex")
    assert 'filename="2401.00001.bib"' in response["Content-Disposition"]
    assert (
        parse(response.content.decode())["lovelace2024studythingsversion1"]["eprint"]
        == "2401.00001"
    )


def test_old_style_id_and_hidden_paper(client, add_paper):
    add_paper("hep-th/9901001")
    response = client.get("/papers/hep-th/9901001/bibtex/")
    assert 'filename="hep-th_9901001.bib"' in response["Content-Disposition"]
    Paper.objects.filter(arxiv_id="hep-th/9901001").update(hidden=True)
    assert client.get("/papers/hep-th/9901001/bibtex/").status_code == 404


def test_api_returns_entry_and_documents_it(owner_client, add_paper):
    add_paper("2401.00001")
    response = owner_client.get("/api/papers/2401.00001v2/bibtex/")
    assert response.status_code == 200
    body = response.json()
    assert body["arxiv_id"] == "2401.00001" and body["key"] == "lovelace2024studythingsversion1"
    assert parse(body["bibtex"])["lovelace2024studythingsversion1"]["archivePrefix"] == "arXiv"
    assert owner_client.get("/api/papers/2499.99999/bibtex/").status_code == 404
    schema = owner_client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    operation = schema["paths"]["/api/papers/{arxiv_id}/bibtex/"]["get"]
    assert operation["operationId"] == "papers_bibtex"
