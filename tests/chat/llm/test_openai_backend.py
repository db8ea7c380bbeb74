"""The openai backend through the real SDK over real HTTP, against tests/fakes/openai_chat.py."""

import asyncio
import time

import pytest

from chat.llm import AnswerRequest, LLMError, Usage, get_llm
from chat.llm.retry import RetryPolicy
from tests.fakes.openai_chat import BreakMidStream, Fail, Malformed, Reply, Slow

MESSAGES = [
    {"role": "system", "content": "Answer only from the sources."},
    {"role": "user", "content": "What do diffusion models do?"},
]


def ask(max_tokens: int = 200) -> AnswerRequest:
    return AnswerRequest("What do diffusion models do?", [], MESSAGES, max_tokens=max_tokens)


async def collect(stream) -> tuple[list[str], LLMError | None]:
    """Every delta the stream yielded, and the LLMError that ended it (or None)."""
    deltas = []
    try:
        async for delta in stream:
            deltas.append(delta)
    except LLMError as exc:
        return deltas, exc
    return deltas, None


async def test_streamed_chunks_assemble_the_answer_with_usage(fake_openai, openai_backend):
    text = "Diffusion models learn to reverse a noising process [1]. They sample slowly [2]."
    fake_openai.default = Reply(text)
    stream = openai_backend().stream(ask(max_tokens=123))

    deltas, error = await collect(stream)

    assert error is None
    assert "".join(deltas) == text
    assert len(deltas) == len(text.split())  # one word per chunk, as the server sent them
    assert stream.usage == Usage(prompt_tokens=10, completion_tokens=len(deltas))
    assert stream.finish_reason == "stop"
    [request] = fake_openai.chat_requests()
    assert request.body["messages"] == MESSAGES
    assert request.body["model"] == "fake-gpt"
    assert request.body["max_tokens"] == 123
    assert request.body["stream"] is True
    assert request.body["stream_options"] == {"include_usage": True}
    assert request.headers["authorization"] == "Bearer test-key"


async def test_rate_limited_request_waits_for_retry_after_then_succeeds(
    fake_openai, openai_backend
):
    fake_openai.script(Fail(429, retry_after="0.4"), Reply("Answer after the wait."))
    # Our own backoff would wait at most 0.05 s: a longer wait can only come from Retry-After.
    started = time.monotonic()

    deltas, error = await collect(openai_backend().stream(ask()))

    assert error is None
    assert "".join(deltas) == "Answer after the wait."
    assert len(fake_openai.chat_requests()) == 2
    assert time.monotonic() - started >= 0.4


async def test_retry_after_longer_than_the_wait_budget_gives_up_at_once(
    fake_openai, openai_backend
):
    fake_openai.default = Fail(429, retry_after="60")
    backend = openai_backend(retry=RetryPolicy(max_retries=3, max_total_wait=2.0))

    deltas, error = await collect(backend.stream(ask()))

    assert deltas == []
    assert error.code == "llm_rate_limited"
    assert len(fake_openai.chat_requests()) == 1


async def test_server_errors_before_the_stream_are_retried(fake_openai, openai_backend):
    fake_openai.script(Fail(500), Fail(503), Reply("Third time lucky."))

    deltas, error = await collect(openai_backend().stream(ask()))

    assert error is None
    assert "".join(deltas) == "Third time lucky."
    assert len(fake_openai.chat_requests()) == 3


async def test_server_error_every_time_fails_after_max_retries(fake_openai, openai_backend):
    fake_openai.default = Fail(500)

    deltas, error = await collect(openai_backend().stream(ask()))

    assert deltas == []
    assert error.code == "llm_unavailable"
    assert "500" in error.message
    assert len(fake_openai.chat_requests()) == 4  # the first attempt + FAST_RETRY's 3 retries


@pytest.mark.parametrize(("status", "code"), [(400, "llm_bad_request"), (401, "llm_unavailable")])
async def test_client_errors_are_not_retried(fake_openai, openai_backend, status, code):
    fake_openai.default = Fail(status)

    _, error = await collect(openai_backend().stream(ask()))

    assert error.code == code
    assert len(fake_openai.chat_requests()) == 1


@pytest.mark.parametrize("how", ["close", "error_event", "end"])
async def test_failure_mid_stream_keeps_partial_text_and_is_not_retried(
    fake_openai, openai_backend, how
):
    fake_openai.default = BreakMidStream("One two three four five six.", after_chunks=3, how=how)

    deltas, error = await collect(openai_backend().stream(ask()))

    assert "".join(deltas) == "One two three"
    assert error.code == "llm_failed_mid_stream"
    assert len(fake_openai.chat_requests()) == 1  # a retry would repeat "One two three"


async def test_server_stalling_mid_stream_keeps_partial_text(fake_openai, openai_backend):
    fake_openai.default = Reply("One two three", tokens_per_second=1)  # a word per second

    deltas, error = await collect(openai_backend(timeout=0.3).stream(ask()))

    assert "".join(deltas) == "One"
    assert error.code == "llm_failed_mid_stream"
    assert len(fake_openai.chat_requests()) == 1


async def test_failure_before_the_first_word_is_retried(fake_openai, openai_backend):
    fake_openai.script(BreakMidStream(after_chunks=0), Reply("A whole answer."))

    deltas, error = await collect(openai_backend().stream(ask()))

    assert error is None
    assert "".join(deltas) == "A whole answer."
    assert len(fake_openai.chat_requests()) == 2


@pytest.mark.parametrize(
    "payload",
    [
        b"data: {this is not json\n\n",
        b'data: {"choices": "not a list"}\n\n',
        b'data: {"choices": [{"index": 0, "delta": {"content": 42}}]}\n\n',
    ],
)
async def test_malformed_chunk_raises_bad_output_after_the_good_text(
    fake_openai, openai_backend, payload
):
    fake_openai.default = Malformed(text_before="Partial answer", payload=payload)

    deltas, error = await collect(openai_backend().stream(ask()))

    assert "".join(deltas) == "Partial answer"
    assert error.code == "llm_bad_output"
    assert len(fake_openai.chat_requests()) == 1


async def test_slow_server_times_out_after_retries(fake_openai, openai_backend):
    fake_openai.default = Slow(seconds=5)
    backend = openai_backend(timeout=0.3, retry=RetryPolicy(max_retries=1, base_delay=0.01))

    deltas, error = await collect(backend.stream(ask()))

    assert deltas == []
    assert error.code == "llm_timeout"
    assert len(fake_openai.chat_requests()) == 2


async def test_one_slow_response_is_retried(fake_openai, openai_backend):
    fake_openai.script(Slow(seconds=5), Reply("Fast this time."))

    deltas, error = await collect(openai_backend(timeout=0.3).stream(ask()))

    assert error is None
    assert "".join(deltas) == "Fast this time."


async def test_closing_the_stream_early_hangs_up_on_the_server(fake_openai, openai_backend):
    fake_openai.default = Reply("word " * 200, tokens_per_second=100)
    stream = openai_backend().stream(ask())

    received = [await stream.__anext__() for _ in range(3)]
    await stream.aclose()

    assert "".join(received) == "word word word"
    [request] = fake_openai.chat_requests()
    for _ in range(100):  # the server notices at its next write, within 10 ms
        if request.client_gone:
            break
        await asyncio.sleep(0.02)
    assert request.client_gone and not request.completed


async def test_concurrent_streams_keep_their_own_usage(fake_openai, openai_backend):
    # The fake echoes the question back, so each answer has its own length.
    fake_openai.default = Reply(lambda body: body["messages"][-1]["content"])
    backend = openai_backend()
    short = backend.stream(AnswerRequest("q", [], [{"role": "user", "content": "one two"}]))
    long = backend.stream(AnswerRequest("q", [], [{"role": "user", "content": "a b c d e f"}]))

    results = await asyncio.gather(collect(short), collect(long))

    assert ["".join(deltas) for deltas, _ in results] == ["one two", "a b c d e f"]
    assert short.usage.completion_tokens == 2
    assert long.usage.completion_tokens == 6


async def test_missing_api_key_fails_without_calling_out(fake_openai, openai_backend):
    _, error = await collect(openai_backend(api_key="").stream(ask()))

    assert error.code == "llm_unavailable"
    assert "OPENAI_API_KEY" in error.message
    assert fake_openai.requests == []


async def test_complete_returns_the_reply_text(fake_openai, openai_backend):
    fake_openai.script(Fail(429, retry_after="0"), Reply("What are diffusion models?"))

    text = await openai_backend().complete(MESSAGES, max_tokens=50)

    assert text == "What are diffusion models?"
    requests = fake_openai.chat_requests()
    assert len(requests) == 2
    assert not requests[-1].stream
    assert requests[-1].body["max_tokens"] == 50


async def test_complete_with_unreadable_reply_raises_bad_output(fake_openai, openai_backend):
    fake_openai.default = Malformed()

    with pytest.raises(LLMError) as caught:
        await openai_backend().complete(MESSAGES)

    assert caught.value.code == "llm_bad_output"


async def test_get_llm_uses_the_settings(fake_openai, settings):
    settings.LLM_BACKEND = "openai"
    settings.OPENAI_API_KEY = "from-settings"
    settings.OPENAI_BASE_URL = fake_openai.base_url
    settings.LLM_MODEL = "configured-model"
    fake_openai.default = Reply("Configured.")

    backend = get_llm()
    deltas, error = await collect(backend.stream(ask()))

    assert (backend.name, backend.model) == ("openai", "configured-model")
    assert "".join(deltas) == "Configured." and error is None
    [request] = fake_openai.chat_requests()
    assert request.body["model"] == "configured-model"
    assert request.headers["authorization"] == "Bearer from-settings"


# --- the stream read without the SDK's per-chunk models (chat.llm.openai_backend._sse_chunks) ---
def sse_body(body: bytes):
    import httpx2

    return httpx2.Response(200, content=body, request=httpx2.Request("POST", "http://llm/"))


async def read_all(body: bytes) -> list:
    from chat.llm.openai_backend import _sse_chunks

    return [chunk async for chunk in _sse_chunks(sse_body(body))]


async def test_sse_events_join_their_data_lines_and_stop_at_done():
    body = (
        b": a comment\n\ndata: {\"choices\": []}\n\n"
        b"event: ignored\ndata: {\"a\":\ndata: 1}\n\n"
        b"data: [DONE]\n\ndata: {\"after\": \"done\"}\n\n"
    )
    assert await read_all(body) == [{"choices": []}, {"a": 1}]


async def test_an_error_event_in_the_stream_is_an_api_error_with_its_message():
    import openai

    body = b'data: {"choices": []}\n\ndata: {"error": {"message": "overloaded"}}\n\n'
    with pytest.raises(openai.APIError, match="overloaded"):
        await read_all(body)


async def test_a_chunk_that_is_not_json_is_a_value_error():
    with pytest.raises(ValueError):
        await read_all(b"data: {not json\n\n")


# --- the aiohttp transport: what its errors mean, and its sessions closed with their loops ------
async def test_a_refused_connection_is_unavailable_not_a_timeout(openai_backend):
    # Nothing listens on this port: the connection is refused at once. The SDK's aiohttp
    # transport calls that a connect timeout ("did not answer in time"); the user must read that
    # the service could not be reached, and it is retried as any connection error is.
    from tests.live_server import free_port

    backend = openai_backend(base_url=f"http://127.0.0.1:{free_port()}/v1")
    started = time.perf_counter()
    _, error = await collect(backend.stream(ask()))

    assert error.code == "llm_unavailable"
    assert error.message == "The language model service could not be reached."
    assert time.perf_counter() - started < 4  # retried fast, not waited out


def test_each_loop_closes_its_client_session_when_it_ends(fake_openai, openai_backend, caplog):
    """Each event loop (asyncio.run, async_to_sync, a test's) gets its own client; the loop's
    end closes its aiohttp session, so none is left for the garbage collector to complain
    about ("Unclosed client session", "Unclosed connector")."""
    import gc
    import warnings

    from asgiref.sync import async_to_sync

    fake_openai.default = Reply("Closed with its loop.")
    backend = openai_backend()

    async def one_answer():
        deltas, error = await collect(backend.stream(ask()))
        assert error is None and "".join(deltas) == "Closed with its loop."

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(one_answer())
        asyncio.run(one_answer())
        async_to_sync(one_answer)()
        gc.collect()

    unclosed = [str(w.message) for w in caught if "Unclosed" in str(w.message)]
    assert unclosed == [] and "Unclosed" not in caplog.text
    assert len(fake_openai.chat_requests()) == 3
