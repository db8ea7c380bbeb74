from django.urls import path

from library import views

app_name = "library"

urlpatterns = [
    path("", views.index, name="index"),
    path("new/", views.create_collection, name="create"),
    path("save/", views.save, name="save"),
    path("<int:pk>/", views.collection_page, name="collection"),
    path("<int:pk>/rename/", views.rename_collection, name="rename"),
    path("<int:pk>/delete/", views.delete_collection, name="delete"),
    path("<int:pk>/bibtex/", views.collection_bibtex, name="bibtex"),
    path("<int:pk>/ask/", views.ask_collection, name="ask"),
    path("<int:pk>/saved/<int:saved_pk>/note/", views.edit_note, name="note"),
    path("<int:pk>/saved/<int:saved_pk>/remove/", views.remove_paper, name="remove"),
]
