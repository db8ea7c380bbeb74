"""Fixtures for the LLM backend tests, reusable elsewhere.

`fake_openai` is a started tests.fakes.openai_chat.FakeOpenAI (see that module for its behaviours);
`openai_backend(...)` builds an OpenAIBackend pointed at it with fast retries; `text_of(name)` is
a shared arXiv PDF's text as papers.fulltext.parse reads it (read once a run).
"""

from functools import cache

import pytest

from chat.llm.openai_backend import OpenAIBackend
from chat.llm.retry import RetryPolicy
from papers.fulltext.parse import parse_pdf
from tests.fakes.openai_chat import FakeOpenAI

# Retries in tests wait milliseconds, not seconds; Retry-After still wins when a test sends it.
FAST_RETRY = RetryPolicy(max_retries=3, base_delay=0.01, max_delay=0.05, max_total_wait=2.0)


@pytest.fixture
def fake_openai():
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def openai_backend(fake_openai):
    def make(**overrides) -> OpenAIBackend:
        options = {
            "api_key": "test-key",
            "base_url": fake_openai.base_url,
            "model": "fake-gpt",
            "timeout": 5.0,
            "retry": FAST_RETRY,
        }
        options.update(overrides)
        return OpenAIBackend(**options)

    return make


@cache
def _pdf_text(path) -> str:
    return parse_pdf(path.read_bytes()).text


@pytest.fixture
def text_of(shared_data):
    return lambda name: _pdf_text(shared_data / "arxiv-pdf" / f"{name}.pdf")
