"""`bench_chat concurrent`'s clients (`Command._chats`): with `--open-first` every socket is open
before any chat asks, a socket refused at its handshake holds nobody up, and each first token is
counted. The code under test is the bench's client; a local WebSocket server stands in for daphne
(the protocol's three frames only: `ready`, then a `token` and `done` for each `ask`)."""

import asyncio
from types import SimpleNamespace

import pytest
from aiohttp import web

from bench.management.commands.bench_chat import Command


@pytest.fixture
async def server():
    """(port, log, refused): `log` lists ("open"|"ask", thread) in the order the server saw them;
    threads named in `refused` get a 403 at the handshake."""
    log, refused = [], set()

    async def thread_socket(request):
        thread = request.match_info["thread"]
        if thread in refused:
            return web.Response(status=403)
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        log.append(("open", thread))
        await ws.send_json({"type": "ready"})
        async for message in ws:
            if message.json()["type"] == "ask":
                log.append(("ask", thread))
                await ws.send_json({"type": "token", "offset": 0, "text": "hi"})
                await ws.send_json({"type": "done", "content": "hi"})
        return ws

    app = web.Application()
    app.router.add_get("/ws/threads/{thread}/", thread_socket)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    yield port, log, refused
    await runner.cleanup()


def chats(n):
    threads = [SimpleNamespace(pk=f"t{i}") for i in range(n)]
    return threads, ["cookie"] * n, [f"question {i}" for i in range(n)]


async def test_with_open_first_every_socket_opens_before_any_chat_asks(server):
    port, log, _ = server
    threads, cookies, asked = chats(8)
    opened, firsts = [], []

    results = await asyncio.wait_for(
        Command()._chats(
            [port],
            threads,
            cookies,
            asked,
            0,
            first_token=lambda: firsts.append(1),
            all_open=lambda: opened.append(len(log)),
        ),
        timeout=30,
    )

    assert [kind for kind, _ in log] == ["open"] * 8 + ["ask"] * 8
    assert opened == [8]  # called once, when the eighth socket was open
    assert len(firsts) == 8 and all(r.get("ttft") is not None for r in results)


async def test_a_socket_refused_at_its_handshake_does_not_hold_the_others(server):
    port, log, refused = server
    threads, cookies, asked = chats(4)
    refused.add("t2")
    opened = []

    results = await asyncio.wait_for(
        Command()._chats([port], threads, cookies, asked, 0, all_open=lambda: opened.append(1)),
        timeout=30,
    )

    assert opened == [1]
    assert "403" in results[2]["error"]
    assert sorted(thread for kind, thread in log if kind == "ask") == ["t0", "t1", "t3"]


async def test_by_default_each_chat_asks_once_its_own_socket_is_open(server):
    port, log, _ = server
    threads, cookies, asked = chats(4)

    results = await asyncio.wait_for(
        Command()._chats([port], threads, cookies, asked, 0), timeout=30
    )

    assert all(r.get("ttft") is not None for r in results)
    for thread in ("t0", "t1", "t2", "t3"):
        assert log.index(("open", thread)) < log.index(("ask", thread))
