"""The answer pipeline: plain async modules, one stage each, knowing nothing of HTTP or sockets.

rewrite (follow-up → standalone question) → retrieval (chat.retrieval) → prompts → LLM streaming
(chat.llm) → citations check. `answer.answer_events` strings them together as one async generator
of JSON-ready events; chat.runner runs it in the background and the consumer relays it.
"""
