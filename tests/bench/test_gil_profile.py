"""bench.gil_profile: a py-spy raw profile summed by the answer path's pieces, per chat."""

from bench.gil_profile import summarise

# The bottom of every stack of daphne's main thread: daphne, twisted's reactor, asyncio's loop.
MAIN = (
    "thread (100): MainThread;<module> (daphne/__main__.py:3);Server.run (daphne/server.py:155);"
    "AsyncioSelectorReactor.run (twisted/internet/asyncioreactor.py:257);"
    "BaseEventLoop._run_once (asyncio/base_events.py:1922);Handle._run (asyncio/events.py:84)"
)
LANE = "thread (101): chat-lane-3;Thread.run (threading.py:982);_worker (concurrent/futures/thread.py:83)"
RAW = [
    # A turn saved on a lane: the turn, not the hand-off to the lane's thread it runs under.
    f"{LANE};_guarded (chat/lanes.py:50);create_turn (chat/turns.py:230) 30\n",
    # Search's SQL under the LLM's module name still counts as search: the first piece wins.
    f"{MAIN};search (chat/retrieval/search.py:80);_lexical (chat/retrieval/lexical.py:10) 20\n",
    f"{MAIN};dataReceived (twisted/internet/tcp.py:250);onMessage (autobahn/websocket/protocol.py:1) 10\n",
    # A lazy import is an import, whatever code asked for it.
    f"{MAIN};get_llm (chat/llm/__init__.py:5);_find_and_load (<frozen importlib._bootstrap>:1176) 25\n",
    # The event loop waiting between callbacks, no frame of ours.
    "thread (100): MainThread;<module> (daphne/__main__.py:3);Server.run (daphne/server.py:155);"
    "BaseEventLoop._run_once (asyncio/base_events.py:1922);select (selectors.py:468) 15\n",
    "\n",
]


def test_samples_go_to_the_first_piece_their_stack_matches_per_chat():
    pieces, threads, total = summarise(RAW, chats=10, rate=250)  # a sample is 4 ms

    assert round(total, 1) == (30 + 20 + 10 + 25 + 15) * 4 / 10
    assert round(pieces["saving the turn (create_turn, its session check)"], 1) == 12.0
    assert round(pieces["search (chat/retrieval, the query's vector)"], 1) == 8.0
    assert round(pieces["socket I/O (twisted, autobahn, daphne)"], 1) == 4.0
    assert round(pieces["imports (lazy, at the first use of a module)"], 1) == 10.0
    assert round(pieces["the event loop, no frame of ours"], 1) == 6.0
    assert "hand-offs to threads (executors, lanes, asgiref)" not in pieces
    assert round(threads["main"], 1) == 28.0 and round(threads["chat-lane"], 1) == 12.0
