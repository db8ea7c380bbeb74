"""Curation screens: papers (hide, re-embed, refresh from arXiv), authors, ingest runs."""

from django.contrib import admin, messages
from django.db.models import Max, Min
from django.http import HttpResponseRedirect
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.views.decorators.http import require_POST

from papers.catalogue import run_progress_text
from papers.fulltext.queue import request_fulltext
from papers.fulltext.rechunk import stale_fulltexts
from papers.ingest.upsert import refresh_text_index
from papers.jobs import enqueue_indexing, enqueue_ingest, enqueue_recut, enqueue_refresh
from papers.models import Author, Authorship, IngestRun, Paper, Passage, active_embedding_model

# An admin refresh is a few id_list requests, 3 s apart; beyond this, use ingest_arxiv instead.
MAX_REFRESH_IDS = 2000
# Each one is a task and several requests to arXiv, 3 s apart: beyond this, fetch_fulltext.
MAX_FULLTEXT_PAPERS = 200
# A re-cut fetches nothing (1-6 s a paper, docs/BENCHMARKS.md "re-cut"): one task for these many.
MAX_RECUT_PAPERS = 2000


class PublishedYearFilter(admin.SimpleListFilter):
    title = "year published"
    parameter_name = "year"

    def lookups(self, request, model_admin):
        # Two index lookups rather than a scan of every row for its distinct years.
        bounds = Paper.objects.aggregate(first=Min("published"), last=Max("published"))
        if bounds["first"] is None:
            return []
        return [(str(y), str(y)) for y in range(bounds["last"].year, bounds["first"].year - 1, -1)]

    def queryset(self, request, queryset):
        if self.value() and self.value().isdigit():
            return queryset.filter(published__year=int(self.value()))
        return queryset


class EmbeddedFilter(admin.SimpleListFilter):
    title = "embedded (active model)"
    parameter_name = "embedded"

    def lookups(self, request, model_admin):
        # No loadable embedder here: no filter, rather than a wrong one.
        return [("yes", "Yes"), ("no", "No")] if active_embedding_model() else []

    def queryset(self, request, queryset):
        model = active_embedding_model()
        if model is None or self.value() not in ("yes", "no"):
            return queryset
        if self.value() == "yes":
            return queryset.embedded_with(model)
        return queryset.not_embedded_with(model)


class AuthorshipInline(admin.TabularInline):
    model = Authorship
    extra = 0
    raw_id_fields = ("author",)
    ordering = ("position",)


@admin.register(Paper)
class PaperAdmin(admin.ModelAdmin):
    list_display = (
        "arxiv_id",
        "short_title",
        "primary_category",
        "published",
        "version",
        "hidden",
        "withdrawn",
    )
    list_display_links = ("arxiv_id", "short_title")
    search_fields = ("=arxiv_id", "title", "authors_text")
    list_filter = ("primary_category", PublishedYearFilter, "hidden", "withdrawn", EmbeddedFilter)
    readonly_fields = ("authors_text", "created_at", "modified_at", "links")
    inlines = [AuthorshipInline]
    actions = [
        "hide",
        "unhide",
        "reembed",
        "refresh_from_arxiv",
        "read_full_text",
        "recut_full_text",
    ]
    # Counting every paper on each page load is the slow part of big changelists.
    show_full_result_count = False
    list_per_page = 50
    fieldsets = (
        (None, {"fields": ("arxiv_id", "version", "title", "abstract", "links")}),
        ("Classification", {"fields": ("primary_category", "categories", "published", "updated")}),
        (
            "Publication",
            {"fields": ("doi", "journal_ref", "comments", "license"), "classes": ("collapse",)},
        ),
        ("Curation", {"fields": ("hidden", "withdrawn")}),
        ("Record", {"fields": ("authors_text", "created_at", "modified_at")}),
    )

    @admin.display(description="title", ordering="title")
    def short_title(self, paper):
        return paper.title if len(paper.title) <= 90 else paper.title[:89] + "…"

    @admin.display(description="links")
    def links(self, paper):
        if not paper.pk:
            return "-"
        return format_html(
            '<a href="/papers/{}/">page</a> · <a href="{}" rel="noopener">arXiv</a> · '
            '<a href="{}" rel="noopener">PDF</a>',
            paper.arxiv_id,
            paper.abs_url,
            paper.pdf_url,
        )

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        text_changed = bool({"title", "abstract"} & set(form.changed_data))
        authors_changed = any(formset.has_changed() for formset in formsets)
        if not (text_changed or authors_changed or not change):
            return
        # Keep search in step with the edit: full-text now, BM25 and vectors by the index job.
        refresh_text_index([form.instance.pk])
        if text_changed:
            Passage.objects.abstracts().filter(paper=form.instance).delete()  # the old text
        enqueue_indexing("paper edited in the admin")

    @admin.action(
        description="Hide selected papers (not shown or searched)", permissions=["change"]
    )
    def hide(self, request, queryset):
        count = queryset.update(hidden=True)
        self.message_user(
            request, f"{count} paper{'s' if count != 1 else ''} hidden.", messages.SUCCESS
        )

    @admin.action(description="Unhide selected papers", permissions=["change"])
    def unhide(self, request, queryset):
        count = queryset.update(hidden=False)
        self.message_user(
            request, f"{count} paper{'s' if count != 1 else ''} shown again.", messages.SUCCESS
        )

    @admin.action(
        description="Re-embed selected papers (new vectors for the active model)",
        permissions=["change"],
    )
    def reembed(self, request, queryset):
        deleted, _ = Passage.objects.abstracts().filter(paper__in=queryset).delete()
        enqueue_indexing("re-embed from the admin")
        self.message_user(
            request,
            f"Removed {deleted} passage vectors of {queryset.count()} papers; the indexing job is"
            " queued and embeds them again.",
            messages.SUCCESS,
        )

    @admin.action(description="Refresh selected papers from arXiv", permissions=["change"])
    def refresh_from_arxiv(self, request, queryset):
        ids = list(queryset.values_list("arxiv_id", flat=True)[: MAX_REFRESH_IDS + 1])
        if len(ids) > MAX_REFRESH_IDS:
            self.message_user(
                request,
                f"Select at most {MAX_REFRESH_IDS} papers to refresh; for more, run ingest_arxiv.",
                messages.ERROR,
            )
            return
        enqueue_refresh(ids)
        self.message_user(
            request,
            f"Refresh of {len(ids)} papers from arXiv queued; see Ingest runs.",
            messages.SUCCESS,
        )

    @admin.action(description="Read full text", permissions=["change"])
    def read_full_text(self, request, queryset):
        papers = list(queryset[: MAX_FULLTEXT_PAPERS + 1])
        if len(papers) > MAX_FULLTEXT_PAPERS:
            self.message_user(
                request,
                f"Select at most {MAX_FULLTEXT_PAPERS} papers to read; for more, run fetch_fulltext.",
                messages.ERROR,
            )
            return
        states = [request_fulltext(paper).status for paper in papers]
        already = states.count("ok")
        self.message_user(
            request,
            f"Reading the full text of {len(papers) - already} papers queued"
            + (f" ({already} already read)" if already else "")
            + "; see the Full text runs and each paper's page.",
            messages.SUCCESS,
        )

    @admin.action(
        description="Re-cut full text with the current chunker (stored text, no fetch)",
        permissions=["change"],
    )
    def recut_full_text(self, request, queryset):
        ids = list(queryset.values_list("arxiv_id", flat=True)[: MAX_RECUT_PAPERS + 1])
        if len(ids) > MAX_RECUT_PAPERS:
            self.message_user(
                request,
                f"Select at most {MAX_RECUT_PAPERS} papers; for more, run fetch_fulltext --rechunk.",
                messages.ERROR,
            )
            return
        stale = stale_fulltexts(retry_failed=True).filter(paper__arxiv_id__in=ids).count()
        if not stale:
            self.message_user(
                request,
                "None of the selected papers has full text cut by an older chunker.",
                messages.INFO,
            )
            return
        enqueue_recut(ids)
        self.message_user(
            request,
            f"Re-cutting the chunks of {stale} paper{'s' if stale != 1 else ''} queued"
            + (f" ({len(ids) - stale} current or not read)" if len(ids) > stale else "")
            + "; see the Full text re-cut runs.",
            messages.SUCCESS,
        )


@admin.register(Author)
class AuthorAdmin(admin.ModelAdmin):
    list_display = ("name", "key")
    search_fields = ("name", "key")
    show_full_result_count = False


@admin.register(IngestRun)
class IngestRunAdmin(admin.ModelAdmin):
    change_list_template = "papers/admin/ingestrun_change_list.html"
    # Twelve narrow columns overflowed 1280 px next to the filters: the window and the four
    # counts are one column each.
    list_display = (
        "started",
        "source",
        "status",
        "window",
        "counts",
        "error_count",
        "duration",
        "progress_now",
    )
    list_filter = ("source", "status")
    readonly_fields = (
        "source",
        "status",
        "params",
        "window_start",
        "window_end",
        "cursor",
        "new",
        "updated",
        "unchanged",
        "skipped",
        "error_list",
        "timings",
        "started_at",
        "finished_at",
    )
    exclude = ("errors",)

    def has_add_permission(self, request):
        return False  # runs are made by ingests, not by hand

    def has_change_permission(self, request, obj=None):
        return False

    def get_list_display(self, request):
        # The progress column is only worth its width while a run is working.
        if IngestRun.objects.filter(status=IngestRun.Status.RUNNING).exists():
            return self.list_display
        return tuple(c for c in self.list_display if c != "progress_now")

    @admin.display(description="started", ordering="started_at")
    def started(self, run):
        return f"{timezone.localtime(run.started_at):%Y-%m-%d %H:%M}"

    @admin.display(description="window")
    def window(self, run):
        if not (run.window_start or run.window_end):
            return "-"
        start = f"{run.window_start:%Y-%m-%d}" if run.window_start else "…"
        end = f"{run.window_end:%Y-%m-%d}" if run.window_end else "…"
        return f"{start} – {end}"

    @admin.display(description="papers")
    def counts(self, run):
        counts = {
            "new": run.new,
            "updated": run.updated,
            "unchanged": run.unchanged,
            "skipped": run.skipped,
        }
        return ", ".join(f"{n} {name}" for name, n in counts.items() if n) or "none"

    @admin.display(description="errors")
    def error_count(self, run):
        return len(run.errors)

    @admin.display(description="duration")
    def duration(self, run):
        if not run.finished_at:
            return "-"
        return f"{(run.finished_at - run.started_at).total_seconds():.1f} s"

    @admin.display(description="progress")
    def progress_now(self, run):
        if run.status != IngestRun.Status.RUNNING:
            return "-"
        return run_progress_text(run)

    @admin.display(description="errors")
    def error_list(self, run):
        if not run.errors:
            return "-"
        return format_html(
            "<ul>{}</ul>",
            format_html_join(
                "",
                "<li>{}</li>",
                (
                    (", ".join(f"{k}: {v}" for k, v in e.items() if v is not None),)
                    for e in run.errors
                ),
            ),
        )

    def get_urls(self):
        start = self.admin_site.admin_view(require_POST(self.start_ingest_view))
        return [
            path("start-ingest/", start, name="papers_ingestrun_start"),
            *super().get_urls(),
        ]

    def has_start_ingest_permission(self, request) -> bool:
        return request.user.has_perm(IngestRun.START_PERMISSION)

    def changelist_view(self, request, extra_context=None):
        # While a run is active the page reloads itself, so its progress is live.
        running = IngestRun.objects.filter(status=IngestRun.Status.RUNNING).exists()
        extra_context = {
            **(extra_context or {}),
            "has_running": running,
            "can_start_ingest": self.has_start_ingest_permission(request),
        }
        return super().changelist_view(request, extra_context)

    def start_ingest_view(self, request):
        """The "Start ingest now" button: queue the nightly job now (staff with the
        papers.start_ingest permission, POST, CSRF-checked)."""
        if not self.has_start_ingest_permission(request):
            messages.error(
                request,
                "You may not start an ingest (it needs the “Can start an"
                " ingest from arXiv” permission).",
            )
        else:
            enqueue_ingest("ingest-now")
            messages.success(
                request,
                "Ingest queued: the job cluster fetches new arXiv papers now; a new run appears"
                " here when it starts.",
            )
        return HttpResponseRedirect(reverse("admin:papers_ingestrun_changelist"))
