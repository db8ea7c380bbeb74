"""The live-server helper really serves this test run's database."""

import httpx
import pytest

from tests.live_server import LiveServer


@pytest.mark.django_db(transaction=True)
def test_live_server_sees_rows_written_by_the_test(owner, password):
    with LiveServer() as server:
        with httpx.Client(base_url=server.url, follow_redirects=False) as http:
            login_page = http.get("/accounts/login/")
            token = login_page.cookies["csrftoken"]
            response = http.post(
                "/accounts/login/",
                data={"username": owner.username, "password": password,
                      "csrfmiddlewaretoken": token},
                headers={"Referer": server.url + "/accounts/login/"},
            )
            assert response.status_code == 302
            assert http.get("/chat/").status_code == 200
