"""The benchmarks run end to end on small data, in scratch databases of their own."""

import json
import os
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from papers.models import Paper

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

CORPUS = [
    {"_id": "d1", "title": "Surface codes", "text": "Quantum error correction with surface codes."},
    {
        "_id": "d2",
        "title": "Bell tests",
        "text": "Bell inequality violation with entangled photons.",
    },
    {"_id": "d3", "title": "Diffusion", "text": "Denoising diffusion models generate images."},
    {"_id": "d4", "title": "Graphs", "text": "Graph neural networks for molecules."},
    {"_id": "d5", "title": "Decoders", "text": "Fast decoders for surface code error correction."},
]
QUERIES = [
    {"_id": "q1", "text": "surface code error correction"},
    {"_id": "q2", "text": "image generation with diffusion"},
    {"_id": "q3", "text": "not judged"},
]
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td5\t1\nq2\td3\t1\n"


@pytest.fixture
def beir(tmp_path):
    folder = tmp_path / "tiny"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in CORPUS))
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in QUERIES))
    (folder / "qrels" / "test.tsv").write_text(QRELS)
    return folder


def scratch_name(prefix: str) -> str:
    return f"{prefix}_{os.getpid()}"


def test_bench_retrieval_json_on_a_tiny_beir_folder(beir, tmp_path, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    catalogue = connection.settings_dict["NAME"]
    out = StringIO()

    call_command(
        "bench_retrieval", "--beir", str(beir), "--json", "--cache-dir", str(tmp_path / "cache"),
        "--database", scratch_name("bench_beir_t"), stdout=out,
    )  # fmt: skip

    data = json.loads(out.getvalue())
    for run in ("hybrid", "dense", "fulltext"):
        assert set(data[run]) == {"ndcg@10", "recall@100"}
        assert 0 <= data[run]["ndcg@10"] <= 1
    assert data["fulltext"]["recall@100"] == 1.0  # every judged document shares words
    assert data["hybrid"]["ndcg@10"] > 0.5
    assert data["dataset"] == {
        "folder": str(beir), "split": "test", "documents": 5, "queries": 2
    }  # fmt: skip
    # The catalogue is untouched and the connection is back on it.
    assert connection.settings_dict["NAME"] == catalogue
    assert not Paper.objects.filter(arxiv_id="d1").exists()
    # The vectors were cached for the next run.
    assert list((tmp_path / "cache").glob("*-hashing-test.npz"))


def test_bench_retrieval_compares_variants_with_the_default_in_one_run(beir, tmp_path, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    out = StringIO()

    call_command(
        "bench_retrieval", "--beir", str(beir), "--json", "--cache-dir", str(tmp_path / "cache"),
        "--database", scratch_name("bench_beir_v"), "--variant", "prf-bm25:2,fusion-gap",
        "--variant", "prf-bm25:2+passage-top2,bm25f:2,bm25:1.2/0.75,proximity,none",
        "--corpus-limit", "4", stdout=out,
    )  # fmt: skip

    data = json.loads(out.getvalue())
    # d5 is judged for q1 but is not among the first 4 documents: only q2 is asked.
    assert data["dataset"]["documents"] == 4 and data["dataset"]["queries"] == 1
    assert list(data["refinements"]) == [
        "prf-bm25:2", "fusion-gap", "prf-bm25:2+passage-top2", "bm25f:2", "bm25:1.2/0.75",
        "proximity", "none",
    ]  # fmt: skip
    # The default is the configured refinement (none: "sentences" is an opt-in); "none" measures
    # what it adds, nothing here.
    assert data["settings"]["refine"] == settings.SEARCH_REFINE == ""
    assert data["refinements"]["none"]["time_ratio"] > 0
    assert data["refinements"]["bm25f:2"]["time_ratio"] is None  # index-time: not timed
    assert data["refinements"]["bm25f:2"]["ndcg@10"] > 0.5
    # Index-time variants are compared with today's lists fused in memory, the same way: today's
    # constants recomputed in memory give the index's own ranking, so no difference at all.
    assert data["refinements"]["bm25:1.2/0.75"]["time_ratio"] is None
    assert data["refinements"]["bm25:1.2/0.75"]["diff"] == 0
    assert data["refinements"]["bm25:1.2/0.75"]["ndcg@10"] == data["index_time_control"]["ndcg@10"]
    for variant in data["refinements"].values():
        assert set(variant) == {
            "ndcg@10", "recall@100", "diff", "ci95", "odd", "even", "time_ratio"
        }  # fmt: skip
        assert variant["ci95"][0] <= variant["diff"] <= variant["ci95"][1]
        assert variant["time_ratio"] is None or variant["time_ratio"] > 0


def test_bench_retrieval_resumes_from_the_vectors_of_an_earlier_prefix_run(
    beir, tmp_path, settings
):
    settings.EMBEDDING_BACKEND = "hashing"
    cache = tmp_path / "cache"
    call_command(
        "bench_retrieval", "--beir", str(beir), "--json", "--cache-dir", str(cache),
        "--database", scratch_name("bench_beir_r"), "--corpus-limit", "4", stdout=StringIO(),
    )  # fmt: skip
    (prefix,) = cache.glob("*-first4-hashing-test.npz")
    # Mark d1's vectors in the prefix cache: a resumed run copies them, a fresh one would not.
    saved = dict(np.load(prefix))
    marked = saved["doc_ids"] == "d1"
    saved["vectors"][marked] = -saved["vectors"][marked]
    np.savez_compressed(prefix, **saved)
    err = StringIO()

    call_command(
        "bench_retrieval", "--beir", str(beir), "--json", "--cache-dir", str(cache),
        "--database", scratch_name("bench_beir_r"), stdout=StringIO(), stderr=err,
    )  # fmt: skip

    full = np.load(next(
        p for p in cache.glob("*-hashing-test.npz")
        if "-first" not in p.name and "-sentences-" not in p.name
    ))  # fmt: skip
    assert sorted(set(full["doc_ids"])) == ["d1", "d2", "d3", "d4", "d5"]
    np.testing.assert_allclose(
        full["vectors"][full["doc_ids"] == "d1"], saved["vectors"][marked], atol=1e-6
    )


def test_bench_retrieval_rejects_an_unknown_variant(beir):
    with pytest.raises(CommandError, match="unknown refinement 'rm4'"):
        call_command("bench_retrieval", "--beir", str(beir), "--variant", "fusion-gap,rm4")


@pytest.mark.parametrize("variant", ["sentences", "learned"])  # both read sentence vectors
def test_bench_retrieval_embeds_and_caches_sentences_for_the_sentence_variants(
    beir, tmp_path, settings, variant
):
    settings.EMBEDDING_BACKEND = "hashing"
    cache = tmp_path / "cache"
    args = [
        "bench_retrieval", "--beir", str(beir), "--json", "--cache-dir", str(cache),
        "--database", scratch_name("bench_beir_s"), "--variant", variant,
    ]  # fmt: skip
    out = StringIO()

    call_command(*args, stdout=out)

    data = json.loads(out.getvalue())
    assert data["refinements"][variant]["time_ratio"] > 0
    (sentences,) = cache.glob("*-sentences-hashing-test.npz")
    (abstracts,) = (p for p in cache.glob("*-hashing-test.npz") if "-sentences-" not in p.name)
    assert len(np.load(sentences)["doc_ids"]) > len(np.load(abstracts)["doc_ids"])
    again = StringIO()
    call_command(*args, stdout=again)  # from both caches: the same vectors, the same ranking
    second = json.loads(again.getvalue())["refinements"][variant]
    assert second["ndcg@10"] == data["refinements"][variant]["ndcg@10"]


def test_bench_retrieval_rejects_a_bad_bm25_variant(beir):
    with pytest.raises(CommandError, match="bm25:K1/B"):
        call_command("bench_retrieval", "--beir", str(beir), "--variant", "bm25:1.2")


def test_bench_retrieval_reports_a_missing_folder(tmp_path):
    with pytest.raises(CommandError, match="corpus file not found"):
        call_command("bench_retrieval", "--beir", str(tmp_path / "nowhere"))


def test_bench_search_on_the_snapshot_head(shared_data, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    snapshot = shared_data / "arxiv-snapshot" / "arxiv-metadata-oai-snapshot.head200.jsonl"
    out = StringIO()

    call_command(
        "bench_search", "--snapshot", str(snapshot), "--json",
        "--database", scratch_name("bench_search_t"), stdout=out,
    )  # fmt: skip

    data = json.loads(out.getvalue())
    correctness = data["correctness"]
    assert correctness["windowed_queries"] > 0
    assert correctness["all_results_inside_window"] == correctness["windowed_queries"]
    assert correctness["k_results_when_k_exist"] == correctness["windowed_queries"]
    assert data["speed"]["p50_ms"] > 0
    assert data["setup"]["papers"] == 200
    assert all(
        row["hnsw_recall@k"] is None or row["hnsw_recall@k"] >= 0 for row in data["dense_plans"]
    )


def test_bench_import_on_the_snapshot_head(shared_data):
    catalogue = connection.settings_dict["NAME"]
    snapshot = shared_data / "arxiv-snapshot" / "arxiv-metadata-oai-snapshot.head200.jsonl"
    out = StringIO()

    call_command("bench_import", str(snapshot), stdout=out)

    assert "re-run  0 new, 0 updated, 200 unchanged" in out.getvalue()
    assert connection.settings_dict["NAME"] == catalogue
    assert not Paper.objects.exists()


def test_bench_search_chunks_measures_the_products_chunk_path(shared_data, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    snapshot = shared_data / "arxiv-snapshot" / "arxiv-metadata-oai-snapshot.head200.jsonl"
    out = StringIO()

    call_command(
        "bench_search", "--snapshot", str(snapshot), "--chunks", "2000", "--compare-precision",
        "--compare-setting", "FULLTEXT_CHUNK_WORDS",
        "--json", "--database", scratch_name("bench_chunks_t"), stdout=out,
    )  # fmt: skip

    data = json.loads(out.getvalue())
    setup, whole = data["setup"], data["whole_search"]
    assert setup["papers"] == 200 and setup["chunks"] == 2000
    # The product's chunk index is the half-precision one, about half the full-precision size.
    assert 0 < setup["halfvec_index_mb"] <= setup["vector_index_mb"]
    # search() itself ran the chunk stages with full text on, and not with it off.
    assert {"chunks", "best_chunks"} <= set(whole["fused"]["stages_p50_ms"])
    assert not {"chunks", "best_chunks"} & set(whole["off"]["stages_p50_ms"])
    assert any(plan.startswith(("hnsw", "exact")) for plan in whole["chunk_plans"])
    assert whole["fused"]["all"]["n"] == whole["off"]["all"]["n"] == 192
    assert set(whole["p50_over_off"]) == {
        "fused", "fused_cards", "fused_chunks", "fulltext_chunk_words_off"
    }
    # The page's search (each paper's best chunk) shows what the chat's (its best chunks) does.
    assert whole["fused_pages_identical_to_fused_cards"] == "192/192"
    # The bodies' BM25 index was built for every paper with full text, and the two word lists'
    # pages compared.
    assert setup["body_index_s"] > 0 and setup["body_champion_terms"] >= 0
    assert 0 < whole["top10_shared_with_fused_chunks"]["fused"] <= 1
    # The compared setting's mode: the product with the chunk word search off, the rest on.
    without = whole["fulltext_chunk_words_off"]
    assert "chunk_words" in whole["fused"]["stages_p50_ms"]
    assert "chunk_words" not in without["stages_p50_ms"]
    assert {"chunks", "best_chunks"} <= set(without["stages_p50_ms"])
    assert without["all"]["n"] == 192
    index = data["chunk_index"]
    for precision in ("halfvec", "vector"):
        assert 0.5 <= index[precision]["10 papers"]["recall"] <= 1.0


def test_bench_learned_fusion_cross_validates_every_model_on_a_tiny_beir_folder(
    beir, tmp_path, settings
):
    settings.EMBEDDING_BACKEND = "hashing"
    out = StringIO()

    call_command(
        "bench_learned_fusion", "--beir", str(beir), "--json", "--folds", "2",
        "--cache-dir", str(tmp_path / "cache"), "--database", scratch_name("bench_beir_l"),
        stdout=out,
    )  # fmt: skip

    data = json.loads(out.getvalue())
    assert data["claims"] == 2 and data["folds"] == 2
    default, *rows = data["rows"]
    assert default["row"].startswith("default") and "diff" not in default
    # Both claims' relevant papers share their words: the default fusion finds them first.
    assert default["ndcg@10"] == pytest.approx(1.0) and default["recall@100"] == 1.0
    fitted = [row for row in rows if "weights" in row]
    assert {row["row"].split(":")[0] for row in fitted} == {"ascent", "logistic", "pairwise"}
    for row in rows:
        assert row["ci95"][0] <= row["diff"] <= row["ci95"][1]
        assert 0 <= row["ndcg@10"] <= 1
    assert "sentence_z" in next(r for r in fitted if r["row"] == "logistic: every feature")["weights"]
    with pytest.raises(CommandError, match="folds"):
        call_command("bench_learned_fusion", "--beir", str(beir), "--folds", "3")
