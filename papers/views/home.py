from django.shortcuts import render

from papers.catalogue import catalogue_status
from papers.models import Paper


def home(request):
    latest = Paper.objects.visible().only(
        "arxiv_id", "title", "authors_text", "published", "primary_category", "withdrawn"
    )[:8]
    catalogue = catalogue_status()
    return render(
        request,
        "home.html",
        {"latest": latest, "paper_count": catalogue.papers, "catalogue": catalogue},
    )
