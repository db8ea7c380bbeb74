"""Who may keep a socket open, and how much it may ask of the server, against a live daphne.

A socket opened while signed in is closed when its session ends (log-out in another tab, a
password change, a deactivation), and refuses to ask once it has; one user's sockets are capped;
`sync`/`ping`/`stop` floods are refused without touching the database.
"""

import asyncio

import pytest
from django.conf import settings
from websockets.exceptions import ConnectionClosed

from chat.models import Message
from tests.ops.client import Tab, logged_in_client, login_cookie

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True), pytest.mark.timeout(90)]


async def assert_closed_signed_out(tab: Tab) -> None:
    event = await tab.next_event()
    assert event["type"] == "error" and event["code"] == "signed_out", event
    with pytest.raises(ConnectionClosed) as closed:
        await tab.next_event()
    assert closed.value.rcvd.code == 4401


def test_logging_out_in_another_tab_closes_the_open_socket(server, owner, password, thread):
    with logged_in_client(server.url, owner.username, password) as browser:
        name = settings.SESSION_COOKIE_NAME
        cookie = f"{name}={browser.cookies[name]}"

        async def scenario():
            tab = await Tab.open(server.ws_url, thread.pk, cookie, origin=server.url)
            # The other tab of the same browser presses "Log out" (the form in base.html).
            response = await asyncio.to_thread(
                browser.post,
                "/accounts/logout/",
                data={"csrfmiddlewaretoken": browser.cookies["csrftoken"]},
                headers={"Referer": server.url + "/chat/"},
            )
            assert response.status_code == 302
            await assert_closed_signed_out(tab)

        asyncio.run(scenario())


def test_a_deactivated_user_cannot_ask_on_a_socket_opened_before(server, owner, password, thread):
    """Deactivated outside the server (here: the test's own process, which shares no channel
    layer with it): the socket is not told, but its next ask is refused and it is closed."""
    cookie = login_cookie(server.url, owner.username, password)

    async def ask_deactivated(tab: Tab):
        await tab.ask("What is new on diffusion models?")
        await assert_closed_signed_out(tab)

    # One event loop for the socket; the update runs between, on this thread's connection.
    loop = asyncio.new_event_loop()
    try:
        tab = loop.run_until_complete(Tab.open(server.ws_url, thread.pk, cookie, origin=server.url))
        type(owner).objects.filter(pk=owner.pk).update(is_active=False)
        loop.run_until_complete(ask_deactivated(tab))
    finally:
        loop.close()
    assert not Message.objects.filter(thread=thread).exists(), "nothing was asked"


def test_one_user_gets_at_most_the_socket_limit(server, owner, password, thread):
    limit = 20  # WS_MAX_SOCKETS_PER_USER's default, which the drill server runs with
    cookie = login_cookie(server.url, owner.username, password)

    async def scenario():
        tabs = [
            await Tab.open(server.ws_url, thread.pk, cookie, origin=server.url)
            for _ in range(limit)
        ]
        over = await Tab.open_raw(server.ws_url, thread.pk, cookie, origin=server.url)
        refusal = await over.next_event()
        with pytest.raises(ConnectionClosed) as closed:
            await over.next_event()
        await tabs.pop().close()
        again = await Tab.open(server.ws_url, thread.pk, cookie, origin=server.url)
        for tab in [*tabs, again]:
            await tab.close()
        return refusal, closed.value.rcvd.code, again.ready

    refusal, code, ready = asyncio.run(scenario())
    assert refusal["code"] == "too_many_sockets" and refusal["limit"] == limit
    assert code == 4429
    assert ready["type"] == "ready", "a closed socket frees its place"


def test_a_flood_of_sync_frames_is_refused_beyond_the_allowance(server, owner, password, thread):
    cookie = login_cookie(server.url, owner.username, password)
    frames = 300

    async def scenario():
        tab = await Tab.open(server.ws_url, thread.pk, cookie, origin=server.url)
        for _ in range(frames):
            await tab.send({"type": "sync"})
        kinds = []
        for _ in range(frames):
            event = await tab.next_event()
            kinds.append(event["type"] if event["type"] != "error" else event["code"])
        await tab.send({"type": "ping"})  # still open, and served once the bucket refills
        await asyncio.sleep(1.1)
        await tab.send({"type": "ping"})
        later = [await tab.next_event(), await tab.next_event()]
        await tab.close()
        return kinds, later

    kinds, later = asyncio.run(scenario())
    answered = kinds.count("ready")
    # WS_CONTROL_BURST (10) at once, plus one a second for the time the flood took.
    assert 10 <= answered <= 15, answered
    assert kinds.count("rate_limited") == frames - answered
    assert later[-1] == {"type": "pong"}
