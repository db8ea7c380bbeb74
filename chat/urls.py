from django.urls import path

from chat.views import export, follow, share, threads

app_name = "chat"

urlpatterns = [
    path("", threads.index, name="index"),
    path("new/", threads.new_thread, name="new"),
    # An arXiv id (old-style ones hold a slash): looked up, or 404.
    path("about/<path:arxiv_id>/", threads.ask_about_paper, name="about-paper"),
    path("<uuid:pk>/", threads.thread_page, name="thread"),
    path("<uuid:pk>/rename/", threads.rename_thread, name="rename"),
    path("<uuid:pk>/delete/", threads.delete_thread, name="delete"),
    path("<uuid:pk>/export.md", export.markdown_download, name="export-markdown"),
    path("<uuid:pk>/export.bib", export.bibtex_download_view, name="export-bibtex"),
    path("<uuid:pk>/notion/", export.notion_export, name="export-notion"),
    path("<uuid:pk>/share/", share.create_share, name="share"),
    path("<uuid:pk>/share/<int:share_id>/revoke/", share.revoke_share, name="share-revoke"),
    path("shared/<str:token>/", share.shared_thread, name="shared"),
    path("<uuid:pk>/follow/", follow.follow_thread, name="follow"),
]
