"""The signed-in user's collections for the "Save" menu (templates/library/_save.html), which
search results, paper pages and source cards include. Read only when a page shows the menu."""

from django.utils.functional import SimpleLazyObject


def save_menu(request):
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}

    def collections():
        from library.models import Collection

        return list(Collection.objects.owned_by(user).only("pk", "name")[:50])

    return {"library_collections": SimpleLazyObject(collections)}
