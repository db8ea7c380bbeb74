"""Shared links to a thread (chat.sharing): the owner makes and revokes them on the thread page;
anyone with the link reads the frozen snapshot, signed in or not. An unknown or revoked token is
the site's 404, like any page that is not there."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from chat import sharing
from chat.markdown import anchor_prefix, render_answer
from chat.models import Thread, ThreadShare
from chat.references import cite_labels
from chat.views.threads import _with_quotes


@login_required
@require_POST
def create_share(request, pk):
    thread = get_object_or_404(Thread, pk=pk, owner=request.user)
    share = sharing.create_share(thread)
    url = request.build_absolute_uri(reverse("chat:shared", kwargs={"token": share.token}))
    messages.success(request, f"Read-only link made (answers as they are now): {url}")
    return redirect("chat:thread", pk=thread.pk)


@login_required
@require_POST
def revoke_share(request, pk, share_id):
    share = get_object_or_404(ThreadShare, pk=share_id, thread__pk=pk, thread__owner=request.user)
    sharing.revoke(share)
    messages.success(request, "The link is revoked: it now shows “not found”.")
    return redirect("chat:thread", pk=pk)


def _items(share: ThreadShare) -> list[dict]:
    items = []
    for exchange in share.snapshot.get("exchanges", []):
        sources = exchange.get("sources") or []
        items.append({
            "question": exchange.get("question", ""),
            "status": exchange.get("status", ""),
            "html": render_answer(
                exchange.get("content", ""), len(sources), exchange.get("id"),
                exchange.get("unsupported") or (), labels=cite_labels(sources),
            ),
            "sources": _with_quotes(sources),
            "prefix": anchor_prefix(exchange.get("id") or "answer"),
        })
    return items


@require_GET
def shared_thread(request, token):
    share = sharing.live_share(token)
    if share is None:
        raise Http404("No such shared link (it may have been revoked).")
    return render(request, "chat/shared.html", {
        "share": share, "title": share.snapshot.get("title", ""), "items": _items(share),
    })
