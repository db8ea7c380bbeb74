from django.shortcuts import render

from papers.models import Paper


def home(request):
    latest = Paper.objects.visible().only(
        "arxiv_id", "title", "authors_text", "published", "primary_category"
    )[:8]
    return render(
        request,
        "home.html",
        {"latest": latest, "paper_count": Paper.objects.visible().count()},
    )
