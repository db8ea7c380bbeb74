"""Issue #13 against live daphne processes: limits that hold, the client address, bad text,
/healthz, the database down, and the response headers.

Two servers with small limits: `direct` is reached straight from the test (no proxy trusted:
X-Forwarded-For is the client's own word), `proxied` trusts 127.0.0.1 as its reverse proxy.
Throttle counters live in the shared cache (the test database's cache table), cleared before
each drill.
"""

import asyncio
import re

import httpx
import pytest
from django.core.cache import cache
from rest_framework.authtoken.models import Token

from chat.management.commands.serve import daphne_command
from chat.models import Message, Thread
from tests.ops.client import Tab, logged_in_client, login_cookie
from tests.ops.conftest import QUESTION, app_env, live_servers, server_log
from tests.ops.test_database_faults import DatabaseSwitch

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]

LIMITS = {
    "CHAT_RATE_LIMIT_PER_MINUTE": "3",
    "SEARCH_ANON_RATE_LIMIT_PER_MINUTE": "3",
    "LOGIN_FAILURE_LIMIT": "3",
    "SIGNUP_RATE_LIMIT_PER_HOUR": "2",
    "PASSWORD_RESET_RATE_LIMIT_PER_HOUR": "2",
    "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend",
    "REDIS_URL": "",  # the cache in PostgreSQL, which the test can clear
}


@pytest.fixture(scope="module")
def servers(fake_llm, django_db_setup):
    direct = app_env(fake_llm, **LIMITS, TRUSTED_PROXIES="")
    proxied = app_env(fake_llm, **LIMITS, TRUSTED_PROXIES="127.0.0.1")
    with live_servers(direct, proxied) as started:
        yield started
    for live in started:
        log = server_log(live)
        assert "Traceback" not in log and '" 500 ' not in log, log[-3000:]


@pytest.fixture
def direct(servers):
    return servers[0]


@pytest.fixture
def proxied(servers):
    return servers[1]


@pytest.fixture(autouse=True)
def fresh_counters(django_db_setup):
    cache.clear()


def csrf_post(http: httpx.Client, path: str, data: dict, headers: dict | None = None):
    """A form POST the way a browser sends it: the CSRF cookie and token from the form's page."""
    headers = headers or {}
    page = http.get(path, headers=headers)
    token = page.cookies.get("csrftoken") or http.cookies.get("csrftoken")
    return http.post(
        path, data={**data, "csrfmiddlewaretoken": token},
        headers={"Referer": f"{http.base_url}{path}", **headers},
    )


# --- 1. The ask limit counts asks, whatever was deleted since ----------------------------------
def test_deleting_threads_does_not_give_the_ask_limit_back(direct, catalogue, owner):
    token = Token.objects.create(user=owner)
    with httpx.Client(base_url=direct.url, timeout=60,
                      headers={"Authorization": f"Token {token.key}"}) as api:
        statuses = []
        for _ in range(4):
            thread = api.post("/api/threads/", json={"title": "limit"}).json()
            asked = api.post(f"/api/threads/{thread['id']}/messages/", json={"text": QUESTION})
            statuses.append(asked.status_code)
            assert api.delete(f"/api/threads/{thread['id']}/").status_code == 204
    assert statuses[:3] == [201, 201, 201]
    assert statuses[3] == 429, "three asks a minute, deleted threads or not"
    assert asked.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(asked.headers["Retry-After"]) <= 60
    assert not Thread.objects.filter(owner=owner).exists()


# --- 3 and 8. The search page is throttled by client address, X-Forwarded-For only from proxies --
def search_statuses(server, forwarded_for: list[str]) -> list[httpx.Response]:
    with httpx.Client(base_url=server.url, timeout=30) as http:
        return [
            http.get("/search/", params={"q": "diffusion"}, headers={"X-Forwarded-For": address})
            for address in forwarded_for
        ]


def test_anonymous_search_is_limited_per_address_and_a_forged_header_does_not_help(direct):
    # Straight from the client, X-Forwarded-For is whatever the client likes: ignored.
    responses = search_statuses(direct, [f"198.51.100.{i}" for i in range(5)])
    assert [r.status_code for r in responses] == [200, 200, 200, 429, 429]
    assert int(responses[3].headers["Retry-After"]) >= 1
    assert "Too many searches" in responses[3].text
    log = server_log(direct)
    assert "throttled scope=search_anon client=127.0.0.1" in log
    assert "198.51.100." not in log, "the forged address reached the log"


def test_behind_a_trusted_proxy_each_client_address_has_its_own_budget(proxied):
    distinct = search_statuses(proxied, [f"203.0.113.{i}" for i in range(5)])
    assert [r.status_code for r in distinct] == [200] * 5
    # The proxy appends the address it saw; whatever the client put before it is not believed.
    same = search_statuses(proxied, [f"10.9.9.{i}, 192.0.2.7" for i in range(4)])
    assert [r.status_code for r in same] == [200, 200, 200, 429]
    assert "throttled scope=search_anon client=192.0.2.7" in server_log(proxied)


def test_serve_runs_daphne_without_proxy_headers():
    """`--proxy-headers` makes daphne believe X-Forwarded-For from anyone."""
    command = daphne_command("python", "127.0.0.1", 8000)
    assert "--proxy-headers" not in command
    assert command[-1] == "flatuniverse.asgi:application"


# --- 6. Log-in lockout, sign-up and password-reset limits ----------------------------------------
def login(http: httpx.Client, username: str, password: str, headers: dict) -> httpx.Response:
    return csrf_post(http, "/accounts/login/", {"username": username, "password": password},
                     headers)


def test_wrong_passwords_lock_the_account_out_from_that_address(proxied, owner, password):
    at = {"X-Forwarded-For": "192.0.2.10"}
    other = {"X-Forwarded-For": "192.0.2.11"}
    with httpx.Client(base_url=proxied.url, timeout=30) as http:
        # Two wrong, then right: logged in, and the count starts again.
        assert [login(http, owner.username, "wrong", headers=at).status_code
                for _ in range(2)] == [200, 200]
        assert login(http, owner.username, password, headers=at).status_code == 302
    with httpx.Client(base_url=proxied.url, timeout=30) as http:
        wrong = [login(http, owner.username, "wrong", headers=at).status_code for _ in range(3)]
        right = login(http, owner.username, password, headers=at)
    with httpx.Client(base_url=proxied.url, timeout=30) as http:
        elsewhere = login(http, owner.username, password, headers=other)
    assert wrong == [200, 200, 429], "the third failure locks the pair out"
    assert right.status_code == 429, "the right password no longer opens the account"
    assert "Too many failed log-ins" in right.text
    assert elsewhere.status_code == 302, "the account itself is not locked for everyone"
    assert "AXES: Locking out" in server_log(proxied) and "192.0.2.10" in server_log(proxied)


def test_sign_ups_and_reset_mails_are_limited_per_address(direct, owner, password):
    with httpx.Client(base_url=direct.url, timeout=30) as http:
        signups = []
        for name in ("ada", "grace", "edsger"):
            http.cookies.clear()  # each sign-up logs the new user in
            response = csrf_post(http, "/accounts/signup/", {
                "username": f"{name}-{id(http)}", "password1": password, "password2": password,
            })
            signups.append(response.status_code)
        http.cookies.clear()
        resets = [
            csrf_post(http, "/accounts/password_reset/", {"email": owner.email}).status_code
            for _ in range(3)
        ]
    assert signups == [302, 302, 429]
    assert resets == [302, 302, 429]


# --- 5. NUL and lone surrogates: a clear 400 / invalid_question everywhere -----------------------
def test_nul_and_surrogates_are_refused_on_pages_api_and_socket(direct, owner, password, thread):
    Message.objects.create(thread=thread, role="user", content="A fine question?")
    token = Token.objects.create(user=owner)
    with logged_in_client(direct.url, owner.username, password) as http:
        csrf = http.cookies["csrftoken"]
        form = {"csrfmiddlewaretoken": csrf}
        referer = {"Referer": direct.url + "/chat/"}
        pages = {
            "search": http.get("/search/?q=a%00b"),
            "papers": http.get("/papers/?q=a%00b"),
            "papers_author": http.get("/papers/?author=%00"),
            "new_chat": http.post("/chat/new/", data={**form, "text": "a\x00b"}, headers=referer),
            "rename": http.post(f"/chat/{thread.pk}/rename/", data={**form, "title": "a\x00b"},
                                headers=referer),
        }
    api = {"Authorization": f"Token {token.key}", "Content-Type": "application/json"}
    with httpx.Client(base_url=direct.url, timeout=30, headers=api) as client:
        raw = {
            "api_title": client.post("/api/threads/", content=b'{"title": "a\\u0000b"}'),
            "api_surrogate_title": client.post("/api/threads/", content=b'{"title": "a\\ud800b"}'),
            "api_ask": client.post(f"/api/threads/{thread.pk}/messages/",
                                   content=b'{"text": "a\\ud800b"}'),
            "api_search": client.get("/api/search/?q=a%00b"),
        }
    for name, response in {**pages, **raw}.items():
        assert response.status_code == 400, (name, response.status_code, response.text[:300])
    assert "NUL character" in pages["new_chat"].text
    assert "surrogate" in raw["api_ask"].text

    cookie = login_cookie(direct.url, owner.username, password)

    async def socket():
        tab = await Tab.open(direct.ws_url, thread.pk, cookie, origin=direct.url)
        refusals = []
        for text in ("a\u0000b", "a\ud800b"):
            await tab.ask(text)  # json.dumps writes them as \u0000 and \ud800
            refusals.append(await tab.refusal())
        await tab.send({"type": "ping"})
        pong = await tab.next_event()
        await tab.close()
        return refusals, pong

    refusals, pong = asyncio.run(socket())
    assert [r["code"] for r in refusals] == ["invalid_question", "invalid_question"]
    assert "NUL" in refusals[0]["message"] and "surrogate" in refusals[1]["message"]
    assert pong == {"type": "pong"}, "the socket stays open"
    assert list(Message.objects.filter(thread=thread).values_list("content", flat=True)) == [
        "A fine question?"
    ]
    assert Thread.objects.filter(owner=owner).count() == 1


# --- 7. /healthz: status and booleans for anyone, details for staff ------------------------------
def test_healthz_details_are_for_staff_only(direct, fake_llm, staff, password):
    anonymous = httpx.get(direct.url + "/healthz", timeout=10)
    assert anonymous.status_code == 200
    assert fake_llm.base_url not in anonymous.text
    assert anonymous.json()["llm"] == {"ready": True}
    with logged_in_client(direct.url, staff.username, password) as http:
        detailed = http.get("/healthz")
    assert fake_llm.base_url in detailed.json()["llm"]["detail"]


# --- 10. The database down: the documented 503, pages and API alike ------------------------------
def test_database_down_is_a_503_on_pages_and_api(server, owner, password, django_db_setup):
    token = Token.objects.create(user=owner)
    cookie = login_cookie(server.url, owner.username, password)
    switch = DatabaseSwitch()
    try:
        switch.cut(refuse_new=True)
        with httpx.Client(base_url=server.url, timeout=30) as http:
            api = http.get("/api/threads/", headers={"Authorization": f"Token {token.key}"})
            ask = http.post("/api/threads/00000000-0000-0000-0000-000000000000/messages/",
                            headers={"Authorization": f"Token {token.key}"}, json={"text": "x"})
            pages = [http.get(path, headers={"Cookie": cookie})
                     for path in ("/chat/", "/papers/", "/search/?q=diffusion")]
            anonymous_page = http.get("/papers/")
    finally:
        switch.close()
    for response in (api, ask):
        assert response.status_code == 503, response.text
        assert response.json()["error"]["code"] == "database_unavailable"
        assert response.headers["Retry-After"]
    for response in [*pages, anonymous_page]:
        assert response.status_code == 503, (response.url, response.status_code)
        assert "The database cannot be reached" in response.text
    after = httpx.get(server.url + "/api/threads/",
                      headers={"Authorization": f"Token {token.key}"}, timeout=30)
    assert after.status_code == 200


# --- 12. The Content-Security-Policy the pages satisfy -------------------------------------------
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I)
INLINE_HANDLER = re.compile(r"<[^>]+\son[a-z]+\s*=", re.I)


def test_pages_carry_a_csp_without_inline_script(direct, owner, password, thread):
    with logged_in_client(direct.url, owner.username, password) as http:
        pages = {path: http.get(path) for path in (
            "/", "/chat/", f"/chat/{thread.pk}/", "/search/?q=diffusion", "/papers/",
            "/accounts/tokens/", "/api/docs/",
        )}
    for path, response in pages.items():
        assert response.status_code == 200, path
        policy = response.headers["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy.split("style-src")[0]
        assert not INLINE_SCRIPT.search(response.text), path
        assert not INLINE_HANDLER.search(response.text), path
