"""Where one daphne process's Python time goes, per chat: a py-spy profile (`--gil --threads
--format raw`, samples holding the GIL only: what one process can run one at a time) summed by
the pieces of the answer path (docs/BENCHMARKS.md, "TTFT, session 18").

py-spy is not a dependency: install it apart (pip install --target /tmp/prof py-spy). Attach it
after the server's imports, without pausing the process (a paused daphne missed handshakes):

    /tmp/prof/bin/py-spy record --pid <daphne> --rate 250 --nonblocking --gil --threads \\
        --format raw -o OUT.raw
    python -m bench.gil_profile OUT.raw --chats 102 --rate 250

Each sample is put in the first piece whose pattern its stack matches, in the order below.
"""

import argparse
import re
from collections import Counter

PIECES = [
    ("imports (lazy, at the first use of a module)", r"_find_and_load"),
    ("saving the turn (create_turn, its session check)", r"create_turn"),
    (
        "the socket's reads: user at the handshake, ownership, the state sent at opening",
        r"channels/auth\.py|resolve_scope|streaming_snapshot|request_snapshot|owns_thread"
        r"|still_signed_in",
    ),
    ("Channels' close_old_connections before a handler", r"close_old_connections"),
    ("search (chat/retrieval, the query's vector)", r"chat/retrieval/|papers/embeddings"),
    ("saves while streaming and the final save", r"update_message|finish_message|_save_final"),
    ("the LLM request and its stream (openai SDK, its aiohttp transport)", r"openai|aiohttp|httpx|httpcore|chat/llm/"),
    (
        "the pipeline besides search (prompt, quotes, final event)",
        r"chat/pipeline/|chat/markdown|chat/references|_final_event",
    ),
    ("events through the channel layer", r"chat/layers\.py|chat/events\.py|channels/layers"),
    ("socket I/O (twisted, autobahn, daphne)", r"twisted|autobahn|daphne/|txaio"),
    ("the consumer and Channels' dispatch", r"channels/|chat/consumers\.py"),
    ("hand-offs to threads (executors, lanes, asgiref)", r"concurrent/futures|run_in_executor|chat/lanes\.py|asgiref"),
    ("other code of ours or Django's", r"chat/|django/"),
]
_COMPILED = [(name, re.compile(pattern)) for name, pattern in PIECES]


_LOOP_CALLBACK = re.compile(r";Handle\._run \([^;]*\)|;BaseEventLoop\._run_once \([^;]*\)")


def _above_the_loop(stack: str) -> str:
    """The thread's name and the frames above the event loop's last frame, if it is in the
    stack."""
    frames = list(_LOOP_CALLBACK.finditer(stack))
    if not frames:
        return stack
    return stack.split(";", 1)[0] + stack[frames[-1].end():]


def summarise(lines, chats: float, rate: float) -> tuple[Counter, Counter, float]:
    """Milliseconds per chat by piece and by thread, and the total."""
    pieces, threads = Counter(), Counter()
    ms = 1000 / rate / chats
    for line in lines:
        stack, _, count = line.rstrip().rpartition(" ")
        if not stack:
            continue
        spent = int(count) * ms
        thread = stack.split(";", 1)[0]
        main = "MainThread" in thread
        # Daphne, twisted's reactor and asyncio's loop are the bottom of every stack of the main
        # thread: only the frames above the loop's callback say what it was doing.
        stack = _above_the_loop(stack)
        name = "main" if main else re.sub(r"^thread \(\d+\): |([-_]\d+)+$", "", thread)
        threads[name] += spent
        for piece, pattern in _COMPILED:
            if pattern.search(stack):
                pieces[piece] += spent
                break
        else:
            pieces["the event loop, no frame of ours" if main else "other threads"] += spent
    return pieces, threads, sum(pieces.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("raw")
    parser.add_argument("--chats", type=float, default=102, help="chats served (with warm-ups)")
    parser.add_argument("--rate", type=float, default=250, help="py-spy's samples a second")
    args = parser.parse_args()
    with open(args.raw) as raw:
        pieces, threads, total = summarise(raw, args.chats, args.rate)
    print(f"{total:.1f} ms of GIL a chat ({args.chats:g} chats)")
    for piece, spent in pieces.most_common():
        print(f"  {spent:6.1f} ms  {piece}")
    print("by thread:")
    for thread, spent in threads.most_common(10):
        print(f"  {spent:6.1f} ms  {thread}")


if __name__ == "__main__":
    main()
