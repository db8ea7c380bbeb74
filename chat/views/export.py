"""A thread's exports for its owner only: Markdown and BibTeX downloads (chat.export), and a\nNotion page (chat.notion)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_GET, require_POST

from chat import notion
from chat.export import thread_bibtex, thread_markdown
from chat.models import Thread
from papers.bibtex import bibtex_download, filename_part


def _owned_thread(request, pk) -> Thread:
    return get_object_or_404(Thread, pk=pk, owner=request.user)


def _stem(thread: Thread) -> str:
    return filename_part(str(thread)[:60], default="thread")


@login_required
@require_GET
def markdown_download(request, pk):
    thread = _owned_thread(request, pk)
    response = HttpResponse(thread_markdown(thread), content_type="text/markdown; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{_stem(thread)}.md"'
    return response


@login_required
@require_GET
def bibtex_download_view(request, pk):
    thread = _owned_thread(request, pk)
    return bibtex_download(thread_bibtex(thread), _stem(thread))


@login_required
@require_POST
def notion_export(request, pk):
    thread = _owned_thread(request, pk)
    try:
        page = notion.export_thread(thread)
    except notion.NotionError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Exported to Notion: {page.url or page.page_id}")
    return redirect("chat:thread", pk=thread.pk)
