"""Notion export of a thread (chat.notion) against a local fake of Notion's API over real HTTP:
the request Notion receives, its auth and version headers, long threads split into requests of
100 blocks, and clear messages for 401, 404, 429 and 5xx; the page button and the API."""

import pytest

from chat import notion
from chat.models import Message
from tests.chat.test_export import two_answer_thread  # noqa: F401 (the fixture)
from tests.fakes.notion import FakeNotion

pytestmark = pytest.mark.django_db

PARENT = "1f2e3d4c-0000-4000-8000-000000000001"


@pytest.fixture
def fake_notion(settings):
    with FakeNotion(key="secret_abc") as fake:
        settings.NOTION_API_KEY = "secret_abc"
        settings.NOTION_PARENT_PAGE_ID = PARENT
        settings.NOTION_API_URL = fake.url
        yield fake


def texts(block: dict) -> str:
    return "".join(item["text"]["content"] for item in block[block["type"]]["rich_text"])


def test_page_created_under_parent_with_thread_blocks(fake_notion, two_answer_thread):  # noqa: F811
    page = notion.export_thread(two_answer_thread)
    assert page.url.startswith("https://www.notion.so/")
    ((method, path, headers, body),) = fake_notion.requests
    assert (method, path) == ("POST", "/v1/pages")
    assert headers["Authorization"] == "Bearer secret_abc"
    assert headers["Notion-Version"] == "2022-06-28"
    assert body["parent"] == {"page_id": PARENT}
    assert texts({"type": "t", "t": {"rich_text": body["properties"]["title"]["title"]}}) == (
        "Policy optimisation"
    )
    blocks = [(b["type"], texts(b)) for b in body["children"]]
    assert blocks[0] == ("heading_2", r"What is $\Psi$PO?")
    assert ("paragraph", r"Retrieval scales [3], unlike $\Psi$PO [1].") in blocks
    assert ("heading_2", "References") in blocks
    last = body["children"][-1]["paragraph"]["rich_text"]
    assert last[-1]["text"] == {
        "content": "arXiv:2403.00003v1", "link": {"url": "https://arxiv.org/abs/2403.00003v1"}
    }


def test_long_thread_is_sent_in_requests_of_100_blocks(fake_notion, two_answer_thread):  # noqa: F811
    for n in range(120):
        Message.objects.create(thread=two_answer_thread, role="user", content=f"q{n}")
        Message.objects.create(thread=two_answer_thread, role="assistant", status="complete",
                               content="x" * 4500)  # one paragraph, three rich-text items
    page = notion.export_thread(two_answer_thread)
    methods = [(m, p) for m, p, _, _ in fake_notion.requests]
    assert methods[0] == ("POST", "/v1/pages")
    assert methods[1:] == [("PATCH", f"/v1/blocks/{page.page_id}/children")] * 2
    assert len(fake_notion.pages[page.page_id]) == len(notion.thread_blocks(two_answer_thread))


@pytest.mark.parametrize(
    ("status", "headers", "says"),
    [
        (401, {}, "Notion refused the API key (401)"),
        (404, {}, "share it with the integration"),
        (429, {"Retry-After": "7"}, "try again in 7 s"),
        (503, {}, "Notion is unavailable (HTTP 503)"),
    ],
)
def test_failures_say_what_to_do(fake_notion, two_answer_thread, status, headers, says):  # noqa: F811
    fake_notion.fail_next(status, headers)
    with pytest.raises(notion.NotionError) as failure:
        notion.export_thread(two_answer_thread)
    assert says in failure.value.message
    assert failure.value.status == status


def test_wrong_key_is_refused_by_notion(fake_notion, settings, two_answer_thread):  # noqa: F811
    settings.NOTION_API_KEY = "secret_wrong"
    with pytest.raises(notion.NotionError, match="API token is invalid"):
        notion.export_thread(two_answer_thread)


def test_unreachable_notion(settings, two_answer_thread):  # noqa: F811
    settings.NOTION_API_KEY, settings.NOTION_PARENT_PAGE_ID = "k", PARENT
    settings.NOTION_API_URL = "http://127.0.0.1:9"  # nothing listens there
    with pytest.raises(notion.NotionError, match="Could not reach Notion"):
        notion.export_thread(two_answer_thread)


def test_thread_page_button_exports_and_reports(owner_client, fake_notion, two_answer_thread):  # noqa: F811
    url = f"/chat/{two_answer_thread.pk}/"
    assert b'data-role="export-notion"' in owner_client.get(url).content
    page = owner_client.post(f"{url}notion/", follow=True)
    assert "Exported to Notion: https://www.notion.so/" in page.content.decode()
    fake_notion.fail_next(500)
    page = owner_client.post(f"{url}notion/", follow=True)
    assert "Notion is unavailable (HTTP 500)" in page.content.decode()


def test_no_button_without_configuration(owner_client, two_answer_thread):  # noqa: F811
    assert b"export-notion" not in owner_client.get(f"/chat/{two_answer_thread.pk}/").content


def test_api_export_and_errors(owner_client, stranger_client, fake_notion, settings,
                               two_answer_thread):  # noqa: F811
    path = f"/api/threads/{two_answer_thread.pk}/notion/"
    response = owner_client.post(path, content_type="application/json")
    assert response.status_code == 201 and response.json()["url"].startswith("https://www.notion")
    fake_notion.fail_next(429, {"Retry-After": "3"})
    response = owner_client.post(path, content_type="application/json")
    assert response.status_code == 502
    assert response.json()["error"] == {
        "code": "notion_error", "message": "Notion is rate-limiting requests (429); try again in 3 s."
    }
    assert stranger_client.post(path, content_type="application/json").status_code == 404
    settings.NOTION_API_KEY = ""
    response = owner_client.post(path, content_type="application/json")
    assert response.status_code == 409 and response.json()["error"]["code"] == "not_configured"
    assert len(fake_notion.requests) == 2  # the stranger and the unconfigured call sent nothing
