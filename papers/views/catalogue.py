"""/papers/catalogue/: the catalogue's coverage and indexing progress as JSON (what the home page
and /papers/ poll while indexing). Public: counts and dates; a failed ingest's reason for staff."""

from django.http import JsonResponse
from django.views.decorators.cache import never_cache

from papers.catalogue import catalogue_status


@never_cache
def catalogue_json(request):
    catalogue = catalogue_status()
    return JsonResponse(catalogue.as_json(staff=request.user.is_staff))
