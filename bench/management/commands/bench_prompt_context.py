"""How much shorter the answer prompt is when a model reads each source's best sentences
(chat.pipeline.passages) instead of its whole passage, and what that does to the local model.

    python manage.py bench_prompt_context [--sentences 3] [--local 2] [--max-tokens 48]

For each question: the chat's own search (CHAT_SOURCES sources) on the catalogue of this data
dir, then the chat's own prompt (chat.pipeline.prompts) built twice, whole passages and selected
sentences, in the same process. Prompt size is counted in the embedder's tokens (WordPiece for
MiniLM: within a few percent of a BPE tokenizer on English) for every question, and by the local
model itself (llama.cpp's prompt_tokens) for the first `--local` questions, with its time to
first token and total time for both prompts. The selection's own time is reported too: it is
paid before the first token. Last, the support check's time (chat.pipeline.support, paid after
the last token): an answer of one sentence taken from each of the first four sources plus one
invented sentence, checked with the embedder; it also says which sentences were flagged.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from datetime import date

from django.conf import settings
from django.core.management.base import BaseCommand

QUESTIONS = [
    "How do diffusion models handle text generation?",
    "what was new in reinforcement learning in 2023",
    "latest work on LLM hallucination",
    "graph neural networks for molecules",
    "how are vision transformers made efficient?",
    "retrieval augmented generation evaluation",
    "quantum error correction codes",
    "dark matter detection experiments",
    "speech recognition for low-resource languages",
    "federated learning privacy attacks",
    "protein structure prediction",
    "time series forecasting with transformers",
]


class Command(BaseCommand):
    help = __doc__.splitlines()[0]

    def add_arguments(self, parser):
        parser.add_argument("--sentences", type=int, default=settings.LLM_PROMPT_SENTENCES or 3)
        parser.add_argument("--local", type=int, default=0, help="questions run on the local model")
        parser.add_argument("--max-tokens", type=int, default=48)
        parser.add_argument("--meaning", action="store_true", help="select with the embedder too")

    def handle(self, *args, **options):
        asyncio.run(self._run(options))

    async def _run(self, options) -> None:
        from chat.pipeline.answer import _source_texts, source_card
        from chat.pipeline.passages import select_passages
        from chat.pipeline.prompts import answer_messages
        from chat.retrieval.search import search
        from papers.embeddings import get_embedder

        embedder = get_embedder()
        today = date.today()
        rows, rows_cards = [], []
        for question in QUESTIONS:
            response = await search(question, k=settings.CHAT_SOURCES)
            cards = [source_card(n, hit) for n, hit in enumerate(response.hits, start=1)]
            texts = _source_texts(cards)
            topic = response.analysis.query or question
            started = time.perf_counter()
            chosen = await asyncio.to_thread(
                select_passages, topic, texts, options["sentences"], meaning=options["meaning"]
            )
            select_ms = (time.perf_counter() - started) * 1000
            whole = answer_messages(question, texts, today)
            short = answer_messages(question, chosen, today)
            rows.append((question, whole, short, select_ms, len(cards)))
            rows_cards.append(cards)

        def tokens(messages) -> int:
            return sum(embedder.count_tokens(m["content"]) for m in messages)

        self.stdout.write(
            f"{len(rows)} questions, {settings.CHAT_SOURCES} sources each, "
            f"{options['sentences']} sentences per source "
            f"({'lexical + meaning' if options['meaning'] else 'lexical'}); "
            f"tokens: {embedder.name}"
        )
        ratios, befores, afters, selects = [], [], [], []
        for question, whole, short, select_ms, sources in rows:
            before, after = tokens(whole), tokens(short)
            befores.append(before)
            afters.append(after)
            ratios.append(after / before)
            selects.append(select_ms)
            self.stdout.write(
                f"  {before:5d} -> {after:5d} tokens ({after / before:4.0%}), "
                f"select {select_ms:5.0f} ms, {sources} sources: {question}"
            )
        self.stdout.write(
            f"median prompt {statistics.median(befores):.0f} -> {statistics.median(afters):.0f} "
            f"tokens, median ratio {statistics.median(ratios):.0%}, selection p50 "
            f"{statistics.median(selects):.0f} ms (max {max(selects):.0f} ms)"
        )
        await self._support(rows_cards)
        if options["local"]:
            await self._local(rows[: options["local"]], options["max_tokens"])

    async def _support(self, rows_cards) -> None:
        from chat.llm.sentences import split_sentences
        from chat.pipeline.support import judge

        times, flagged_right, flagged_wrong = [], 0, 0
        for cards in rows_cards:
            lines = [f"{split_sentences(c['passage'])[-1]} [{c['number']}]" for c in cards[:4]]
            lines.append("The authors trained it on the moon in 1850 [1].")
            started = time.perf_counter()
            judged = await asyncio.to_thread(judge, "\n".join(f"- {x}" for x in lines), cards)
            times.append((time.perf_counter() - started) * 1000)
            flagged = [j.sentence.index for j in judged if not j.supported]
            flagged_right += flagged == [len(lines) - 1]
            flagged_wrong += any(i < len(lines) - 1 for i in flagged)
        self.stdout.write(
            f"support check: p50 {statistics.median(times):.0f} ms (max {max(times):.0f} ms) for "
            f"5 sentences; only the invented one flagged in {flagged_right}/{len(times)} answers, "
            f"a quoted one flagged in {flagged_wrong}"
        )

    async def _local(self, rows, max_tokens: int) -> None:
        from chat.llm import AnswerRequest
        from chat.llm.local import LocalBackend

        backend = LocalBackend()
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(backend.runtime.executor, backend.runtime.server)
        self.stdout.write(f"local model {backend.model}, {max_tokens} tokens per answer:")
        for question, whole, short, _, _ in rows:
            for label, messages in (("whole", whole), ("selected", short)):
                request = AnswerRequest(
                    question, [], messages, max_tokens=max_tokens, temperature=0
                )
                started, first = time.perf_counter(), None
                stream = backend.stream(request)
                async for _ in stream:
                    first = first or time.perf_counter()
                ended = time.perf_counter()
                ttft = (first or ended) - started
                self.stdout.write(
                    f"  {label:8s} prompt {stream.usage.prompt_tokens:5d} tokens, "
                    f"ttft {ttft:6.1f} s, total {ended - started:6.1f} s: {question}"
                )
