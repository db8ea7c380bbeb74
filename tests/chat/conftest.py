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

SCRIPT_TITLE = "Attention <script>alert('title')</script> for diffusion transformers"
SCRIPT_ABSTRACT = (
    "We study diffusion transformers for image generation. <script>alert('abstract')</script> "
    "Our diffusion model scales with attention depth and beats convolutional baselines."
)


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
        analysis={"topic": "diffusion transformers", "start": "2023-01-01", "end": None},
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
