"""Measure the `local` backend (xllamacpp + the shipped SmolLM2-135M): load time, time to first
token and generation speed, with a prompt the size of a real one (8 abstracts).

    .venv/bin/python -m bench.llm_local [--answers 5] [--max-tokens 128]

The prompt is the pipeline's own (chat.pipeline.prompts) over 8 real abstracts from
../shared/data/scifact; each answer gets a different question so llama.cpp's prompt cache does not help
more than it would in a real chat (the sources change with every question).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from datetime import date
from pathlib import Path

from bench import SHARED_DATA


async def _run(args) -> None:
    from chat.llm import AnswerRequest, SourceText
    from chat.llm.local import LocalBackend
    from chat.pipeline.prompts import answer_messages

    with open(args.data / "corpus.jsonl") as lines:
        docs = [json.loads(line) for _, line in zip(range(8 * args.answers), lines, strict=False)]
    with open(args.data / "queries.jsonl") as lines:
        questions = [
            json.loads(line)["text"] for _, line in zip(range(args.answers), lines, strict=False)
        ]
    backend = LocalBackend()
    loop = asyncio.get_running_loop()
    started = time.perf_counter()
    await loop.run_in_executor(backend.runtime.executor, backend.runtime.server)
    print(f"model {backend.model}: load {time.perf_counter() - started:.2f} s")

    ttfts, speeds = [], []
    for i, question in enumerate(questions):
        batch = docs[8 * i : 8 * i + 8]
        sources = [SourceText(n, d["title"], "", "", d["text"]) for n, d in enumerate(batch, 1)]
        messages = answer_messages(question, sources, date.today())
        request = AnswerRequest(question, [], messages, max_tokens=args.max_tokens, temperature=0)
        started = time.perf_counter()
        first = None
        stream = backend.stream(request)
        async for _ in stream:
            first = first or time.perf_counter()
        ended = time.perf_counter()
        ttfts.append(first - started)
        tokens = stream.usage.completion_tokens
        speeds.append((tokens - 1) / (ended - first) if ended > first else 0.0)
        print(
            f"answer {i + 1}: prompt {stream.usage.prompt_tokens} tokens, "
            f"ttft {1000 * ttfts[-1]:.0f} ms, {tokens} tokens at {speeds[-1]:.0f} tokens/s"
        )
    print(
        f"median: ttft {1000 * statistics.median(ttfts):.0f} ms, "
        f"{statistics.median(speeds):.0f} tokens/s"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument(
        "--data",
        type=Path,
        default=SHARED_DATA / "scifact",
        help="a BEIR-layout SciFact folder (default ../shared/data/scifact)",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "flatuniverse.settings")
    import django

    django.setup()
    asyncio.run(_run(args))


if __name__ == "__main__":
    main()
