"""The single-process channel layer (chat.layers): what it delivers, and how often it scans."""

import asyncio

import pytest
from channels import layers as channels_layers
from channels.layers import get_channel_layer

from chat import layers

pytestmark = pytest.mark.asyncio


@pytest.fixture
def scans(monkeypatch):
    """How many times Channels' own expiry scan ran (the code below ours)."""
    count = {"scans": 0}
    scan = channels_layers.InMemoryChannelLayer._clean_expired

    def counted(self):
        count["scans"] += 1
        return scan(self)

    monkeypatch.setattr(channels_layers.InMemoryChannelLayer, "_clean_expired", counted)
    return count


async def test_a_burst_of_sends_to_many_groups_scans_for_expired_messages_once(scans):
    layer = get_channel_layer()  # what settings configure without Redis
    assert isinstance(layer, layers.ThrottledInMemoryChannelLayer)
    await layer.flush()
    channels = [await layer.new_channel() for _ in range(100)]
    for i, channel in enumerate(channels):  # a thread group, a user group, a control group each
        for group in (f"thread.{i}", f"user.{i}", f"thread.{i}.control"):
            await layer.group_add(group, channel)

    for frame in range(20):
        for i in range(len(channels)):
            await layer.group_send(f"thread.{i}", {"type": "chat.event", "n": frame})
    received = [await layer.receive(channels[7]) for _ in range(20)]

    assert [m["n"] for m in received] == list(range(20))
    assert scans["scans"] <= 2  # Channels' own layer: 2,020 scans of 300 memberships
    await layer.flush()


async def test_expired_messages_are_still_dropped(monkeypatch):
    monkeypatch.setattr(layers, "CLEAN_EVERY", 0.05)
    layer = layers.ThrottledInMemoryChannelLayer(expiry=0.1)
    stale, live = await layer.new_channel(), await layer.new_channel()
    await layer.group_add("thread.a", stale)
    await layer.group_add("thread.a", live)
    await layer.send(stale, {"type": "chat.event", "n": 1})
    await asyncio.sleep(0.2)

    await layer.group_send("thread.a", {"type": "chat.event", "n": 2})

    assert (await layer.receive(live))["n"] == 2
    with pytest.raises(TimeoutError):  # expired, and its channel left the group
        await asyncio.wait_for(layer.receive(stale), 0.2)


async def test_each_socket_gets_its_own_copy_of_a_message():
    layer = layers.ThrottledInMemoryChannelLayer()
    first, second = await layer.new_channel(), await layer.new_channel()
    await layer.group_add("thread.a", first)
    await layer.group_add("thread.a", second)
    cards = [{"number": 1, "categories": ["cs.CL"], "author_links": {"links": [{"name": "A"}]}}]
    sent = {"type": "chat.event", "event": {"type": "sources", "sources": cards, "at": (1, 2)}}

    await layer.group_send("thread.a", sent)
    one, other = await layer.receive(first), await layer.receive(second)
    one["event"]["sources"][0]["author_links"]["links"].clear()
    cards[0]["categories"].append("changed after sending")

    assert other["event"]["sources"][0] == {
        "number": 1, "categories": ["cs.CL"], "author_links": {"links": [{"name": "A"}]}
    }
    assert other["event"]["at"] == (1, 2)  # not JSON: copied by deepcopy


async def test_a_group_send_delivers_to_every_member_in_order_past_a_full_one(monkeypatch):
    # No task per member any more (a send only queues): counted where Channels started them.
    started = []
    create_task = asyncio.create_task
    monkeypatch.setattr(
        channels_layers.asyncio, "create_task", lambda coro: started.append(1) or create_task(coro)
    )
    layer = layers.ThrottledInMemoryChannelLayer(capacity=2)
    full, first, second = [await layer.new_channel() for _ in range(3)]
    for channel in (full, first, second):
        await layer.group_add("thread.a", channel)
    for n in (0, 1):
        await layer.send(full, {"type": "chat.event", "n": n})

    for n in (2, 3):
        await layer.group_send("thread.a", {"type": "chat.event", "n": n})

    assert started == []
    assert [(await layer.receive(first))["n"] for _ in range(2)] == [2, 3]
    assert [(await layer.receive(second))["n"] for _ in range(2)] == [2, 3]
    assert [(await layer.receive(full))["n"] for _ in range(2)] == [0, 1]  # the rest dropped
    assert layer.channels == {}  # emptied queues are let go, as Channels does
