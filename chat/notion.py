"""A thread as a Notion page, through Notion's public API (https://developers.notion.com).

On when settings.NOTION_API_KEY and NOTION_PARENT_PAGE_ID are set: `POST /v1/pages` creates a
page under the parent, titled as the thread, holding its questions (headings), answers
(paragraphs, TeX kept as written) and the thread's one numbered reference list (chat.export),
each reference linked to arXiv at the version read. Notion takes at most 100 blocks per request,
so the rest is appended with `PATCH /v1/blocks/{page}/children`.

Every failure is a NotionError whose message a person can act on (a wrong key, the parent page
not shared with the integration, Notion's rate limit, Notion down); nothing of the thread is
changed either way.
"""

from dataclasses import dataclass

import requests
from django.conf import settings

from chat.export import collect
from chat.models import Thread

MAX_BLOCKS_PER_REQUEST = 100  # Notion's limit for children in one request
MAX_TEXT = 2000  # Notion's limit for one rich-text item's content


class NotionError(Exception):
    def __init__(self, message: str, status: int | None = None, retry_after: int | None = None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.retry_after = retry_after


class NotionNotConfigured(NotionError):
    pass


@dataclass
class NotionPage:
    page_id: str
    url: str


def configured() -> bool:
    return bool(settings.NOTION_API_KEY and settings.NOTION_PARENT_PAGE_ID)


# --- Blocks ---------------------------------------------------------------------------------------


def _text(content: str, link: str | None = None) -> list[dict]:
    """Rich text for `content`, split into Notion's 2,000-character items."""
    pieces = [content[i : i + MAX_TEXT] for i in range(0, len(content), MAX_TEXT)] or [""]
    items = []
    for piece in pieces:
        text = {"content": piece}
        if link:
            text["link"] = {"url": link}
        items.append({"type": "text", "text": text})
    return items


def _block(kind: str, rich_text: list[dict]) -> dict:
    return {"object": "block", "type": kind, kind: {"rich_text": rich_text}}


def thread_blocks(thread: Thread) -> list[dict]:
    export = collect(thread)
    blocks = []
    for exchange in export.exchanges:
        blocks.append(_block("heading_2", _text(" ".join(exchange.question.split()))))
        paragraphs = [p.strip() for p in exchange.answer.split("\n\n") if p.strip()]
        for paragraph in paragraphs or ["(no answer)"]:
            blocks.append(_block("paragraph", _text(paragraph)))
        if exchange.status != "complete":
            blocks.append(_block("paragraph", _text(f"(answer {exchange.status})")))
    if export.references:
        blocks.append(_block("heading_2", _text("References")))
        for ref in export.references:
            year = f" ({ref.published[:4]})" if ref.published[:4].isdigit() else ""
            blocks.append(_block("paragraph", [
                *_text(f"[{ref.label}] {ref.title}. {ref.authors}{year}. "),
                *_text(f"arXiv:{ref.cited_as}", link=ref.url),
            ]))
    return blocks


# --- HTTP -----------------------------------------------------------------------------------------


def _headers() -> dict:
    return {
        "Authorization": f"Bearer {settings.NOTION_API_KEY}",
        "Notion-Version": settings.NOTION_VERSION,
        "Content-Type": "application/json",
    }


def _notion_message(response: requests.Response) -> str:
    try:
        return str(response.json().get("message") or "").strip()
    except ValueError:
        return ""


def _raise_for(response: requests.Response) -> None:
    status = response.status_code
    if status < 400:
        return
    said = _notion_message(response)
    detail = f" Notion said: “{said}”" if said else ""
    if status == 401:
        raise NotionError(
            "Notion refused the API key (401): check NOTION_API_KEY." + detail, status
        )
    if status in (403, 404):
        raise NotionError(
            f"Notion cannot use the parent page ({status}): share it with the integration and "
            "check NOTION_PARENT_PAGE_ID." + detail, status,
        )
    if status == 429:
        try:
            wait = max(1, int(float(response.headers.get("Retry-After", "60"))))
        except ValueError:
            wait = 60
        raise NotionError(
            f"Notion is rate-limiting requests (429); try again in {wait} s.", status, wait
        )
    if status >= 500:
        raise NotionError(
            f"Notion is unavailable (HTTP {status}); nothing was exported, try again later.", status
        )
    raise NotionError(f"Notion refused the page (HTTP {status})." + detail, status)


def _call(method: str, path: str, body: dict) -> dict:
    url = settings.NOTION_API_URL.rstrip("/") + path
    try:
        response = requests.request(
            method, url, json=body, headers=_headers(), timeout=settings.NOTION_TIMEOUT_SECONDS
        )
    except requests.RequestException as exc:
        raise NotionError(f"Could not reach Notion ({type(exc).__name__}); try again later.") from exc
    _raise_for(response)
    try:
        return response.json()
    except ValueError:
        raise NotionError("Notion answered with something that is not JSON.", response.status_code) from None


def export_thread(thread: Thread) -> NotionPage:
    """Create the thread's page under the configured parent; its id and URL."""
    if not configured():
        raise NotionNotConfigured(
            "Notion export is not configured here (NOTION_API_KEY and NOTION_PARENT_PAGE_ID)."
        )
    blocks = thread_blocks(thread)
    first, rest = blocks[:MAX_BLOCKS_PER_REQUEST], blocks[MAX_BLOCKS_PER_REQUEST:]
    page = _call("POST", "/v1/pages", {
        "parent": {"page_id": settings.NOTION_PARENT_PAGE_ID},
        "properties": {"title": {"title": _text(str(thread)[:MAX_TEXT])}},
        "children": first,
    })
    page_id = str(page.get("id") or "")
    if not page_id:
        raise NotionError("Notion created no page (its answer had no id).")
    while rest:
        batch, rest = rest[:MAX_BLOCKS_PER_REQUEST], rest[MAX_BLOCKS_PER_REQUEST:]
        try:
            _call("PATCH", f"/v1/blocks/{page_id}/children", {"children": batch})
        except NotionError as exc:
            exc.message = f"The Notion page was created but is incomplete: {exc.message}"
            raise
    return NotionPage(page_id, str(page.get("url") or ""))
