"""The client address: one answer to "who sent this request?" for throttles, log-in lockout
(django-axes) and logs.

`X-Forwarded-For` is only believed when the TCP peer is one of TRUSTED_PROXIES: anyone can write
that header, so from anybody else it is ignored (and daphne runs without `--proxy-headers`,
which would believe it from everyone); so is `X-Forwarded-Proto`. Behind a chain of proxies the header is read from the
right, skipping trusted hops, so the first untrusted address is the client: the leftmost
entries are whatever the client chose to send.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from asgiref.sync import iscoroutinefunction
from django.conf import settings
from django.utils.decorators import sync_and_async_middleware

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(entry, strict=False) for entry in entries)


def trusted_networks() -> tuple[Network, ...]:
    """TRUSTED_PROXIES as networks (an address, or a CIDR range such as 10.0.0.0/8)."""
    return _networks(tuple(settings.TRUSTED_PROXIES))


def _parse(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # "[::1]:443"
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # "203.0.113.5:5000"
        text = text.split(":", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def is_trusted(address: str) -> bool:
    parsed = _parse(address)
    return parsed is not None and any(parsed in net for net in trusted_networks())


def resolve(peer: str, forwarded_for: str | None) -> str:
    """The client's address, from the TCP peer and the X-Forwarded-For header it sent."""
    if not forwarded_for or not is_trusted(peer):
        return peer
    hops = [hop.strip() for hop in forwarded_for.split(",") if hop.strip()]
    for hop in reversed(hops):
        parsed = _parse(hop)
        if parsed is None:
            return peer  # a malformed header from a trusted proxy: keep what we know for sure
        if not is_trusted(hop):
            return str(parsed)
    return str(_parse(hops[0])) if hops else peer  # every hop is ours: the first one sent it


def client_address(request) -> str:
    """The address a request (Django's HttpRequest) came from; computed once per request."""
    cached = getattr(request, "_client_address", None)
    if cached is None:
        meta = request.META
        peer = meta.get("FLATUNIVERSE_PEER_ADDR") or meta.get("REMOTE_ADDR") or ""
        cached = resolve(peer, meta.get("HTTP_X_FORWARDED_FOR"))
        request._client_address = cached
    return cached


def _settle(request) -> None:
    meta = request.META
    meta.setdefault("FLATUNIVERSE_PEER_ADDR", meta.get("REMOTE_ADDR") or "")
    if not is_trusted(meta["FLATUNIVERSE_PEER_ADDR"]):
        # Also a proxy's word (SECURE_PROXY_SSL_HEADER): from anyone else, a client sending
        # "https" over plain HTTP would dodge the HTTPS redirect.
        meta.pop("HTTP_X_FORWARDED_PROTO", None)
    meta["REMOTE_ADDR"] = client_address(request)


@sync_and_async_middleware
def ClientAddressMiddleware(get_response):  # noqa: N802 (a middleware is named like a class)
    """Puts the client address in REMOTE_ADDR (the peer is kept as FLATUNIVERSE_PEER_ADDR), so
    code that reads REMOTE_ADDR itself (DRF's throttles, with NUM_PROXIES = 0; Django's logs)
    agrees with `client_address`. First in MIDDLEWARE."""
    if iscoroutinefunction(get_response):

        async def middleware(request):
            _settle(request)
            return await get_response(request)

    else:

        def middleware(request):
            _settle(request)
            return get_response(request)

    return middleware
