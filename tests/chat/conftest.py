"""Chat test helpers: saved threads, sessions for sockets, and a small real catalogue.

The catalogue is a slice of the shared arXiv sample, ingested with the real upsert code and
embedded with the deterministic hashing embedder (fast; no model to load). A handful of
hand-made papers is added on top, one of them with `<script>` in its title and abstract.
"""

import gzip
import json
from datetime import UTC, datetime

import pytest
from django.conf import settings as django_settings

from chat.models import Message, Thread
from papers.indexing.vectors import embed_missing
from papers.ingest.upsert import PaperRecord, upsert_papers

SCRIPT_TITLE = "Attention <script>alert('title')</script> for diffusion transformers"
SCRIPT_ABSTRACT = (
    "We study diffusion transformers for image generation. <script>alert('abstract')</script> "
    "Our diffusion model scales with attention depth and beats convolutional baselines."
)


@pytest.fixture(autouse=True)
async def close_async_connections():
    """The async ORM runs on asgiref's executor thread, answers and searches on threads of their
    own (chat.lanes); their connections outlive the test and would keep the test database from
    being dropped."""
    yield
    from asgiref.sync import sync_to_async
    from django.db import connections

    from chat import lanes

    await sync_to_async(connections.close_all)()
    await sync_to_async(lanes.close_connections, thread_sensitive=False)()


@pytest.fixture
def saved_thread(owner):
    """A thread of the owner with one finished answer citing two sources (one hostile)."""
    thread = Thread.objects.create(owner=owner, title="Diffusion transformers")
    Message.objects.create(thread=thread, role="user", content="What about diffusion transformers?")
    Message.objects.create(
        thread=thread,
        role="assistant",
        status="complete",
        query="diffusion transformers",
        content="Diffusion transformers scale well [1]. <script>alert('model')</script> See [2].",
        citations=[1, 2],
        analysis={"query": "diffusion transformers", "start": "2023-01-01T00:00:00+00:00", "end": None},
        sources=[
            {
                "number": 1, "paper_id": 1, "arxiv_id": "2401.00001", "title": SCRIPT_TITLE,
                "authors": "Ada Lovelace, Alan Turing", "published": "2024-01-02",
                "primary_category": "cs.CV", "categories": ["cs.CV"], "score": 0.9,
                "passage": SCRIPT_ABSTRACT, "url": "https://arxiv.org/abs/2401.00001",
            },
            {
                "number": 2, "paper_id": 2, "arxiv_id": "2402.00002",
                "title": "Scaling laws for image diffusion", "authors": "Grace Hopper",
                "published": "2024-02-03", "primary_category": "cs.LG", "categories": ["cs.LG"],
                "score": 0.8, "passage": "Scaling laws.", "url": "https://arxiv.org/abs/2402.00002",
            },
        ],
        backend="extractive",
        model="extractive",
    )
    return thread


def session_cookie(user) -> bytes:
    """A `Cookie` header value for a logged-in session of `user` (saved in the database)."""
    from django.test import Client

    client = Client()
    client.force_login(user)
    return f"{django_settings.SESSION_COOKIE_NAME}={client.cookies[django_settings.SESSION_COOKIE_NAME].value}".encode()


def sample_records(shared_data, limit: int) -> list[dict]:
    path = shared_data / "arxiv-snapshot" / "arxiv-sample.jsonl.gz"
    records = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            if record.get("abstract") and "cs." in record.get("categories", ""):
                records.append(record)
            if len(records) >= limit:
                break
    return records


def hostile_record() -> dict:
    return {
        "id": "2401.99999",
        "title": SCRIPT_TITLE,
        "abstract": SCRIPT_ABSTRACT,
        "authors": "Ada Lovelace and Alan Turing",
        "categories": "cs.CV cs.LG",
        "versions": [{"version": "v1", "created": "Tue, 2 Jan 2024 10:00:00 GMT"}],
        "update_date": "2024-01-02",
    }


NOW = datetime(2026, 6, 30, tzinfo=UTC)


# --- A small real catalogue ----------------------------------------------------------------------
def _record(arxiv_id, title, abstract, authors, categories, day):
    published = datetime.fromisoformat(day).replace(tzinfo=UTC)
    return PaperRecord(
        arxiv_id=arxiv_id, version=1, title=title, abstract=abstract, authors=authors,
        primary_category=categories[0], categories=categories, published=published,
        updated=published,
    )


CATALOGUE = [
    ("2301.00001", "Denoising diffusion models for video generation",
     "We extend denoising diffusion probabilistic models to video. Temporal attention keeps "
     "frames consistent. Our video diffusion model improves FVD on UCF-101.",
     ["Ana Silva", "Bo Chen"], ["cs.CV"], "2023-01-10"),
    ("2405.00002", "Latent diffusion transformers scale to high resolution",
     "Diffusion transformers replace the U-Net backbone with a transformer over latent patches. "
     "Scaling the transformer improves image quality. We train up to 3B parameters.",
     ["Carla Diaz"], ["cs.CV", "cs.LG"], "2024-05-02"),
    ("2510.00003", "Fast sampling for diffusion models with consistency distillation",
     "Consistency distillation reduces diffusion sampling to four steps. Quality stays close to "
     "the teacher. We release code.",
     ["Dan Evans", "Eve Fox"], ["cs.LG"], "2025-10-20"),
    ("1706.00004", "Attention is all you need for translation",
     "The transformer relies entirely on attention. It reaches state of the art BLEU on "
     "English-German translation while training faster.",
     ["Noam Vaswani"], ["cs.CL"], "2017-06-12"),
    ("2402.00005", "Retrieval-augmented generation for open-domain question answering",
     "Retrieval-augmented generation grounds a language model in retrieved passages. It reduces "
     "hallucination on open-domain QA benchmarks.",
     ["Fay Green"], ["cs.CL", "cs.IR"], "2024-02-14"),
    ("2511.00006", "Graph neural networks for molecule property prediction",
     "Message passing graph neural networks predict molecular properties. We benchmark on "
     "QM9 and show gains from equivariance.",
     ["Gus Hall"], ["cs.LG"], "2025-11-03"),
    ("9901.00007", "Quantum entanglement in two-qubit systems",
     "We quantify entanglement of two-qubit mixed states with concurrence.",
     [], ["quant-ph"], "1999-01-05"),
]


@pytest.fixture
def catalogue(transactional_db, settings):
    """Seven papers plus the hostile one, ingested and embedded with the real code."""
    settings.EMBEDDING_BACKEND = "hashing"
    records = [_record(*row) for row in CATALOGUE]
    records.append(
        _record("2401.99999", SCRIPT_TITLE, SCRIPT_ABSTRACT, ["Ada Lovelace", "Alan Turing"],
                ["cs.CV", "cs.LG"], "2024-01-02")
    )
    upsert_papers(records)
    embed_missing()
    return records


# --- The OpenAI backend against the local fake server --------------------------------------------
@pytest.fixture
def fake_openai():
    from tests.fakes.openai_chat import FakeOpenAI

    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def slow_openai(fake_openai, settings):
    """Settings pointing the `openai` backend at the fake server (set `.default` per test)."""
    settings.LLM_BACKEND = "openai"
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = fake_openai.base_url
    settings.OPENAI_MAX_RETRIES = 0
    settings.LLM_MODEL = "fake-gpt"
    settings.LLM_FALLBACK = "extractive"
    return fake_openai


def slow_reply(text: str, tokens_per_second: float):
    from tests.fakes.openai_chat import Reply

    return Reply(text, tokens_per_second=tokens_per_second)
