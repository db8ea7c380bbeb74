"""The fake LLM of the live benchmarks in a process of its own: prints its URL, serves until killed.

python -m bench.fake_llm "answer text" TOKENS_PER_SECOND
"""

import sys
import time

from tests.fakes.openai_chat import FakeOpenAI, Reply

if __name__ == "__main__":
    fake = FakeOpenAI(default=Reply(sys.argv[1], tokens_per_second=float(sys.argv[2]))).start()
    print(fake.base_url, flush=True)
    while True:
        time.sleep(3600)
