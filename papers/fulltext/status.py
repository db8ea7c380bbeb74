"""What the paper page and its JSON say about a paper's full text: one line for people."""

from papers.models import FullText, Paper

# While in one of these states the page polls papers:fulltext-status.
IN_PROGRESS = (FullText.Status.QUEUED, FullText.Status.FETCHING)


def fulltext_status(paper: Paper) -> dict:
    fulltext = (
        FullText.objects.filter(paper=paper).only("status", "reason", "pages", "version").first()
    )
    if fulltext is None:
        return {"status": "none", "label": "Full text: not read yet", "polling": False}
    if fulltext.status == FullText.Status.OK:
        label = f"Full text: read, {fulltext.pages} page{'s' if fulltext.pages != 1 else ''}"
        if fulltext.version < paper.version:
            label += f" (v{fulltext.version}; v{paper.version} not read yet)"
    elif fulltext.status == FullText.Status.QUEUED:
        label = "Full text: queued"
    elif fulltext.status == FullText.Status.FETCHING:
        label = "Full text: reading…"
    else:
        label = f"Full text: failed: {fulltext.reason}"
    return {
        "status": fulltext.status,
        "label": label,
        "pages": fulltext.pages,
        "version": fulltext.version,
        "reason": fulltext.reason,
        "polling": fulltext.status in IN_PROGRESS,
    }
