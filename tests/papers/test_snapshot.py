"""The snapshot importer on real snapshot lines and on a file with broken lines."""

import gzip
import json
from datetime import UTC, date, datetime
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django_q.models import OrmQ

from papers.ingest.snapshot import MalformedRecord, import_snapshot, parse_snapshot_record
from papers.models import Author, IngestRun, Paper

pytestmark = pytest.mark.django_db


@pytest.fixture
def head200(shared_data):
    return shared_data / "arxiv-snapshot" / "arxiv-metadata-oai-snapshot.head200.jsonl"


def _line(arxiv_id="2401.00001", **overrides) -> str:
    data = {
        "id": arxiv_id,
        "authors": "A. Author",
        "title": f"Paper {arxiv_id}",
        "abstract": "  An abstract\nwith a line break.\n",
        "categories": "cs.CL cs.LG",
        "comments": None,
        "versions": [{"version": "v1", "created": "Mon, 1 Jan 2024 10:00:00 GMT"}],
        "update_date": "2024-01-01",
        "authors_parsed": [["Author", "A.", ""]],
    }
    data.update(overrides)
    return json.dumps({k: v for k, v in data.items() if v != "<absent>"})


def test_head_of_the_real_snapshot_imports(head200):
    result = import_snapshot(head200)
    assert (result.counts.new, result.problems, result.lines) == (200, 0, 200)
    assert Paper.objects.count() == 200
    paper = Paper.objects.get(arxiv_id="0704.0001")
    assert paper.version == 2
    assert paper.published == datetime(2007, 4, 2, 19, 18, 42, tzinfo=UTC)
    assert paper.updated == datetime(2007, 7, 24, 20, 10, 27, tzinfo=UTC)
    assert paper.title == (
        "Calculation of prompt diphoton production cross sections at Tevatron and LHC energies"
    )
    assert paper.authors_text.startswith("C. Balázs, E. L. Berger, P. M. Nadolsky")
    assert paper.doi == "10.1103/PhysRevD.76.013009" and paper.journal_ref.startswith(
        "Phys.Rev.D76"
    )
    assert paper.primary_category == "hep-ph"
    assert Paper.objects.get(arxiv_id="0704.0002").categories == ["math.CO", "cs.CG"]
    run = IngestRun.objects.get()
    assert (run.source, run.status, run.new) == ("snapshot", "succeeded", 200)
    assert run.finished_at and run.timings["total"] > 0


def test_importing_the_same_file_again_writes_nothing(head200):
    import_snapshot(head200)
    stamps = list(Paper.objects.order_by("pk").values_list("pk", "modified_at"))
    authors = Author.objects.count()
    again = import_snapshot(head200)
    assert (again.counts.new, again.counts.updated, again.counts.unchanged) == (0, 0, 200)
    assert list(Paper.objects.order_by("pk").values_list("pk", "modified_at")) == stamps
    assert Author.objects.count() == authors


def test_broken_lines_are_reported_with_line_numbers_and_skipped(tmp_path):
    lines = [
        _line("2401.00001"),  # 1 good
        '{"id": "2401.00002", "title": "cut off',  # 2 bad JSON
        _line("<absent>").replace('"id": "<absent>", ', ""),  # 3 missing id
        _line("2401.00004", abstract="<absent>"),  # 4 missing abstract
        _line("2401.00005", title="   "),  # 5 missing title
        "",  # 6 blank: ignored
        _line("2401.00001", title="Again"),  # 7 duplicate of line 1
        _line("not-an-id"),  # 8 bad id
        "[1, 2]",  # 9 not an object
        _line("2401.00010"),  # 10 good
    ]
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(lines) + "\n")
    seen = []
    result = import_snapshot(path, on_problem=seen.append)

    assert sorted(Paper.objects.values_list("arxiv_id", flat=True)) == ["2401.00001", "2401.00010"]
    assert (result.problems, result.counts.new) == (7, 2)
    assert Paper.objects.get(arxiv_id="2401.00001").title == "Paper 2401.00001", "first line wins"
    by_line = {p.line: p.error for p in seen}
    assert sorted(by_line) == [2, 3, 4, 5, 7, 8, 9]
    assert by_line[2].startswith("bad JSON")
    assert by_line[3] == "missing id"
    assert by_line[4] == "missing abstract"
    assert by_line[5] == "missing title"
    assert by_line[7] == "duplicate id, first seen on line 1"
    assert "not an arXiv identifier" in by_line[8]
    assert [p.arxiv_id for p in seen if p.line == 2] == ["2401.00002"]
    run = IngestRun.objects.get()
    assert run.status == "partial" and run.new == 2
    assert {e["line"] for e in run.errors} == {2, 3, 4, 5, 7, 8, 9}


def test_duplicates_are_found_across_batches(tmp_path):
    path = tmp_path / "dupes.jsonl"
    path.write_text(
        "\n".join(
            [_line("2401.00001"), _line("2401.00002"), _line("2401.00003"), _line("2401.00001")]
        )
        + "\n"
    )
    seen = []
    import_snapshot(path, batch_size=2, on_problem=seen.append)
    assert [(p.line, p.error) for p in seen] == [(4, "duplicate id, first seen on line 1")]


def test_gzip_limit_and_since(tmp_path):
    path = tmp_path / "sample.jsonl.gz"
    with gzip.open(path, "wt") as f:
        for n, day in enumerate(
            [
                "Mon, 1 Jan 2024 10:00:00 GMT",
                "Mon, 1 Jul 2024 10:00:00 GMT",
                "Wed, 1 Jan 2025 10:00:00 GMT",
                "Thu, 1 May 2025 10:00:00 GMT",
            ]
        ):
            f.write(_line(f"2401.0000{n}", versions=[{"version": "v1", "created": day}]) + "\n")
    recent = import_snapshot(path, since=date(2024, 6, 1), limit=2)
    assert sorted(Paper.objects.values_list("arxiv_id", flat=True)) == ["2401.00001", "2401.00002"]
    assert (recent.filtered, recent.counts.new) == (1, 2)


def test_a_truncated_gzip_keeps_what_was_read_and_fails_the_run(tmp_path, head200):
    whole = gzip.compress(head200.read_bytes())
    path = tmp_path / "truncated.jsonl.gz"
    path.write_bytes(whole[: len(whole) // 2])
    result = import_snapshot(path, batch_size=20)
    assert result.run.status == "failed"
    assert "could not read the file past line" in result.run.errors[-1]["error"]
    assert 0 < Paper.objects.count() < 200


def test_withdrawn_lines_are_kept_and_marked(tmp_path):
    path = tmp_path / "withdrawn.jsonl"
    path.write_text(
        _line("2401.00001", comments="This paper has been withdrawn by the author")
        + "\n"
        + _line("2401.00002", abstract="withdrawn")
        + "\n"
    )
    import_snapshot(path)
    assert Paper.objects.filter(withdrawn=True).count() == 2


def test_author_names_come_from_authors_parsed_without_affiliations():
    record = parse_snapshot_record(
        json.loads(
            _line(
                authors_parsed=[
                    ["Jaffe", "Arthur", "", "Harvard University"],
                    ["Smith", "J.", "Jr"],
                    ["Collaboration"],
                ]
            )
        )
    )
    assert record.authors == ["Arthur Jaffe", "J. Smith Jr", "Collaboration"]
    fallback = parse_snapshot_record(
        json.loads(_line(authors="A. One, B. Two and C. Three", authors_parsed=[]))
    )
    assert fallback.authors == ["A. One", "B. Two", "C. Three"]


def test_versions_fall_back_to_update_date():
    record = parse_snapshot_record(json.loads(_line(versions=[], update_date="2020-02-03")))
    assert record.published == datetime(2020, 2, 3, tzinfo=UTC) and record.version == 1
    with pytest.raises(MalformedRecord, match="no dates"):
        parse_snapshot_record(json.loads(_line(versions=[], update_date=None)))


def test_a_record_without_v1_is_dated_by_its_identifiers_month(shared_data):
    # The shared PDFs' records list only the version in the file: the Transformer's v7 (2023).
    lines = (shared_data / "arxiv-pdf" / "metadata.jsonl").read_text().splitlines()
    transformer = next(json.loads(line) for line in lines if '"1706.03762"' in line)
    assert [v["version"] for v in transformer["versions"]] == ["v7"]
    record = parse_snapshot_record(transformer)
    assert record.published == datetime(2017, 6, 1, tzinfo=UTC)
    assert record.updated == datetime(2023, 8, 2, tzinfo=UTC) and record.version == 7

    late_v2 = [{"version": "v2", "created": "Tue, 9 Jan 2024 10:00:00 GMT"}]
    same_month = parse_snapshot_record(json.loads(_line("2401.00001", versions=late_v2)))
    assert same_month.published == datetime(2024, 1, 9, 10, tzinfo=UTC)  # v1 came days before
    old_style = parse_snapshot_record(
        json.loads(_line("hep-th/9901001", versions=[], update_date="2008-11-26"))
    )
    assert old_style.published == datetime(1999, 1, 1, tzinfo=UTC)
    assert old_style.updated == datetime(2008, 11, 26, tzinfo=UTC)
    complete = parse_snapshot_record(json.loads(_line("2301.00002")))  # lists v1: its own date
    assert complete.published == datetime(2024, 1, 1, 10, tzinfo=UTC)


def test_command_reports_skipped_lines_and_queues_indexing(tmp_path):
    path = tmp_path / "two.jsonl"
    path.write_text(_line("2401.00001") + "\n{oops\n")
    out, err = StringIO(), StringIO()
    call_command("import_arxiv_snapshot", str(path), "--no-progress", stdout=out, stderr=err)
    assert "skipped line 2: bad JSON" in err.getvalue()
    assert "1 new" in out.getvalue() and "1 skipped lines" in out.getvalue()
    assert [task.func() for task in OrmQ.objects.all()] == ["papers.jobs.index_new_papers_job"]


def test_command_refuses_a_missing_file_and_bad_options(tmp_path):
    with pytest.raises(CommandError, match="not found"):
        call_command("import_arxiv_snapshot", str(tmp_path / "nope.jsonl"), "--no-progress")
    with pytest.raises(CommandError, match="--since"):
        call_command("import_arxiv_snapshot", str(tmp_path), "--since", "yesterday")
    assert not IngestRun.objects.exists()


def test_progress_bar_counts_the_file_read_not_the_limit(head200, capsys):
    """A 200-line file with --limit 5000: the bar is in bytes of the file and ends full; the
    command says once why --limit alone gives the oldest papers."""
    out, err = StringIO(), StringIO()
    call_command("import_arxiv_snapshot", str(head200), "--limit", "5000", stdout=out, stderr=err)
    bar = capsys.readouterr().err
    size = head200.stat().st_size
    assert "/5000" not in bar and "5000" not in bar
    assert f"100%|██████████| {size / 1000:.0f}k/{size / 1000:.0f}k" in bar
    assert "sorted oldest first, so --limit alone imports its oldest papers" in err.getvalue()
    assert "200 new" in out.getvalue()
