"""POST /api/search/arxiv/: search arXiv itself for a question the catalogue could not answer.

The question is read like any search (date window, authors, categories, topic), turned into an
arXiv query by rules (chat.understanding.arxiv_query), run once through the polite client, and
what it finds is imported and indexed at once (papers.ingest.live_search); the client then asks
the question again. Limited per user (ARXIV_LIVE_SEARCHES_PER_HOUR): 429 with Retry-After.
"""

from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from api.errors import error_body
from chat.understanding.analysis import analyse
from chat.understanding.arxiv_query import arxiv_query
from papers.ingest.live_search import InvalidLiveQuery, live_search
from papers.models import Paper

MAX_QUESTION_CHARS = 1000


class ArxivSearchRequestSerializer(serializers.Serializer):
    q = serializers.CharField(
        max_length=MAX_QUESTION_CHARS,
        help_text="The question the catalogue had nothing on, as asked.",
    )


class ArxivSearchResultSerializer(serializers.Serializer):
    status = serializers.CharField(help_text="succeeded, partial or failed.")
    query = serializers.CharField(help_text="The arXiv API query that was sent.")
    run = serializers.IntegerField(help_text="The ingest run that recorded it.")
    new = serializers.IntegerField(help_text="Papers new to the catalogue.")
    updated = serializers.IntegerField(help_text="Papers updated to a newer version.")
    papers = serializers.ListField(
        child=serializers.DictField(), help_text="What arXiv found, in its order of relevance."
    )


class ArxivSearchView(APIView):
    @extend_schema(
        operation_id="search_arxiv",
        summary="Search arXiv for what the catalogue lacks",
        description="Builds an arXiv API query from the question (authors, categories, topic "
        "words, date window), runs it once, imports the papers found and indexes them at once. "
        "Ask the question again afterwards. Limited per user per hour (429 with Retry-After).",
        request=ArxivSearchRequestSerializer,
        responses={
            200: OpenApiResponse(ArxivSearchResultSerializer, description="What was imported."),
            429: OpenApiResponse(description="This user's arXiv searches for the hour are used."),
            502: OpenApiResponse(description="arXiv could not be reached or refused the query."),
        },
        tags=["search"],
    )
    def post(self, request):
        params = ArxivSearchRequestSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        analysis = analyse(params.validated_data["q"], timezone.now()).to_dict()
        query = arxiv_query(analysis)
        if not query:
            raise serializers.ValidationError(
                {"q": ["Nothing to search arXiv for: name a topic, an author or a category."]}
            )
        try:
            result = live_search(query, user_id=request.user.pk)
        except InvalidLiveQuery as exc:
            raise serializers.ValidationError({"q": [str(exc)]}) from None
        if result.status == "limited":
            raise exceptions.Throttled(wait=result.retry_after, detail=result.message)
        if result.status == "failed":
            return Response(error_body("arxiv_unavailable", result.message), status=502)
        found = (
            Paper.objects.visible().filter(arxiv_id__in=result.found).in_bulk(field_name="arxiv_id")
        )
        papers = [
            {
                "arxiv_id": arxiv_id,
                "title": found[arxiv_id].title,
                "published": found[arxiv_id].published.date().isoformat(),
                "withdrawn": found[arxiv_id].withdrawn,
                "url": f"/papers/{arxiv_id}/",
            }
            for arxiv_id in result.found
            if arxiv_id in found
        ]
        return Response(
            {
                "status": result.status,
                "query": result.query,
                "run": result.run_id,
                "new": result.new,
                "updated": result.updated,
                "papers": papers,
            }
        )
