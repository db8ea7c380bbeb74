"""Which address a request comes from (security/client.py): X-Forwarded-For only from
TRUSTED_PROXIES, read from the right."""

import pytest
from django.test import RequestFactory, override_settings

from security.client import ClientAddressMiddleware, client_address, resolve

PROXIES = ["10.0.0.0/8", "127.0.0.1", "::1"]


@pytest.mark.parametrize(
    "peer, forwarded_for, expected",
    [
        ("203.0.113.9", None, "203.0.113.9"),
        ("203.0.113.9", "1.2.3.4", "203.0.113.9"),  # not a proxy: its header is its own word
        ("127.0.0.1", "198.51.100.7", "198.51.100.7"),
        ("127.0.0.1", "6.6.6.6, 198.51.100.7", "198.51.100.7"),  # leftmost is the client's say
        ("127.0.0.1", "198.51.100.7, 10.1.2.3", "198.51.100.7"),  # skip our own hops
        ("10.0.0.5", "10.0.0.4, 10.0.0.3", "10.0.0.4"),  # all ours: the first sent it
        ("127.0.0.1", "not-an-address", "127.0.0.1"),
        ("127.0.0.1", "[2001:db8::1]:443", "2001:db8::1"),
        ("::1", "198.51.100.7:5000", "198.51.100.7"),
    ],
)
def test_resolve(peer, forwarded_for, expected):
    with override_settings(TRUSTED_PROXIES=PROXIES):
        assert resolve(peer, forwarded_for) == expected


def test_without_trusted_proxies_the_header_is_ignored():
    with override_settings(TRUSTED_PROXIES=[]):
        assert resolve("127.0.0.1", "198.51.100.7") == "127.0.0.1"


def test_the_middleware_puts_the_client_in_remote_addr_and_drops_an_untrusted_proto():
    seen = {}

    def view(request):
        seen.update(
            remote=request.META["REMOTE_ADDR"],
            ip=client_address(request),
            proto=request.META.get("HTTP_X_FORWARDED_PROTO"),
        )
        return None

    factory = RequestFactory()
    with override_settings(TRUSTED_PROXIES=["127.0.0.1"]):
        ClientAddressMiddleware(view)(
            factory.get(
                "/",
                REMOTE_ADDR="127.0.0.1",
                HTTP_X_FORWARDED_FOR="198.51.100.7",
                HTTP_X_FORWARDED_PROTO="https",
            )
        )
        assert seen == {"remote": "198.51.100.7", "ip": "198.51.100.7", "proto": "https"}
        ClientAddressMiddleware(view)(
            factory.get(
                "/",
                REMOTE_ADDR="203.0.113.9",
                HTTP_X_FORWARDED_FOR="198.51.100.7",
                HTTP_X_FORWARDED_PROTO="https",
            )
        )
        assert seen == {"remote": "203.0.113.9", "ip": "203.0.113.9", "proto": None}
