"""Search API: the retrieval engine's `search()` (the one the search page and the chat use),
with its temporal analysis and ranked papers, limited per user."""

from asgiref.sync import async_to_sync
from django.conf import settings
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from chat.retrieval.search import MAX_K, MAX_QUERY_CHARS, SearchError, search
from security.throttles import SearchUserThrottle


# --- What a search returns (documentation of SearchResponse.to_dict()) --------------------------
class AnalysisSerializer(serializers.Serializer):
    query = serializers.CharField(help_text="The topic searched: the question without its date "
                                  "phrase and filters.")
    original = serializers.CharField(help_text="The text as given.")
    is_temporal = serializers.BooleanField(help_text="Whether a date window or recency was found.")
    start = serializers.DateTimeField(allow_null=True, help_text="Window start (UTC, inclusive).")
    end = serializers.DateTimeField(allow_null=True, help_text="Window end (UTC, inclusive).")
    year = serializers.IntegerField(allow_null=True, help_text="The single year asked, if any.")
    recency_weight = serializers.FloatField(help_text="0..1: how much newer papers are favoured.")
    weight = serializers.FloatField(help_text="Same as recency_weight.")
    phrase = serializers.CharField(allow_blank=True, help_text="The date phrase recognised.")
    authors = serializers.ListField(child=serializers.CharField(), help_text="Author filters.")
    categories = serializers.ListField(child=serializers.CharField(),
                                       help_text="arXiv category filters.")
    arxiv_id = serializers.CharField(allow_null=True,
                                     help_text="A paper named in the query: papers like it.")
    source = serializers.CharField(help_text="`rules`, or `llm` when a model helped.")
    confident = serializers.BooleanField(help_text="Whether the rules were sure of the reading.")


class SearchHitSerializer(serializers.Serializer):
    paper_id = serializers.IntegerField(help_text="Internal paper id.")
    arxiv_id = serializers.CharField(help_text="arXiv identifier (GET /api/papers/{arxiv_id}/).")
    title = serializers.CharField(help_text="Title as arXiv gives it (may contain TeX).")
    authors = serializers.CharField(allow_blank=True, help_text="Authors, comma-separated.")
    published = serializers.DateTimeField(help_text="First version's date.")
    primary_category = serializers.CharField(allow_blank=True, help_text="Main arXiv category.")
    categories = serializers.ListField(child=serializers.CharField(),
                                       help_text="All arXiv categories.")
    abstract = serializers.CharField(allow_blank=True, help_text="The abstract.")
    score = serializers.FloatField(help_text="Final ranking score (higher is better).")
    dense_rank = serializers.IntegerField(allow_null=True,
                                          help_text="Rank among vector matches, if there.")
    fulltext_rank = serializers.IntegerField(allow_null=True,
                                             help_text="Rank among BM25 matches, if there.")
    passage = serializers.CharField(allow_blank=True, help_text="The passage that matched best.")
    snippet_html = serializers.CharField(
        allow_blank=True, help_text="Escaped snippet with matches in <mark>: safe as HTML."
    )
    why = serializers.ListField(child=serializers.CharField(),
                                help_text="Why it matched, in words.")
    named = serializers.CharField(
        allow_blank=True,
        help_text="The name by which the query names this paper, as the paper introduced it "
        "(\"Transformer\"); empty otherwise. Named papers come first.",
    )
    url = serializers.URLField(help_text="The paper's arXiv page.")


class SearchResultSerializer(serializers.Serializer):
    analysis = AnalysisSerializer(help_text="How the query was read.")
    results = SearchHitSerializer(many=True, help_text="Papers, best first.")
    timings = serializers.DictField(child=serializers.FloatField(),
                                    help_text="Milliseconds per stage, and `total`.")
    notices = serializers.ListField(child=serializers.CharField(),
                                    help_text="Things to know about this search.")
    plan = serializers.DictField(help_text="How the retrievers ran (for diagnosis).")
    named = serializers.DictField(
        help_text="`papers`: the papers the query names by what they introduced (arxiv_id, name, "
        "asked); `unknown`: names of models the query asks about that no paper in the "
        "catalogue introduces."
    )
    vectors_pending = serializers.BooleanField(
        help_text="Some papers are not indexed for semantic search yet: they were matched by "
        "keywords (BM25) alone."
    )


# Built with type() because `from` is a Python keyword; the names match /api/papers/ and the
# search page's chip.
SearchParamsSerializer = type(
    "SearchParamsSerializer",
    (serializers.Serializer,),
    {
        "q": serializers.CharField(
            max_length=MAX_QUERY_CHARS,
            help_text='The question or keywords; dates are understood: "diffusion models from '
            'the last 2 years", "papers by Hinton since 2020", "papers like 2401.12345".',
        ),
        "k": serializers.IntegerField(
            min_value=1, max_value=MAX_K, required=False,
            help_text=f"How many papers, 1 to {MAX_K} (default: the SEARCH_RESULTS setting).",
        ),
        "from": serializers.DateField(
            required=False, help_text="Replaces the window start read from the query (UTC day)."
        ),
        "to": serializers.DateField(
            required=False, help_text="Replaces the window end read from the query (UTC day)."
        ),
        "recency": serializers.FloatField(
            min_value=0, max_value=1, required=False,
            help_text="Replaces how much newer papers are favoured, 0 to 1.",
        ),
    },
)
# Parameter name -> search() override name.
OVERRIDES = {"from": "start", "to": "end", "recency": "recency_weight"}


def run_search(text: str, *, k: int, **kwargs):
    """search() from synchronous code (a DRF view); SearchError becomes a 400."""
    try:
        return async_to_sync(search)(text, k=k, **kwargs)
    except SearchError as exc:
        raise serializers.ValidationError({"q": [str(exc)]}) from None


class SearchView(APIView):
    throttle_classes = [SearchUserThrottle]  # shared with the search page

    @extend_schema(
        operation_id="search",
        summary="Search papers",
        description="Time-aware hybrid search (BM25 + vectors, fused, recency-weighted when the "
        "query asks for recent work): the same engine as the search page and the chat. Returns "
        "how the query was read and the ranked papers.",
        parameters=[SearchParamsSerializer],
        responses=OpenApiResponse(SearchResultSerializer,
                                  description="The reading of the query and the papers."),
        examples=[OpenApiExample(
            "temporal", parameter_only=("q", "query"),
            value="diffusion models from the last 2 years",
        )],
        tags=["search"],
    )
    def get(self, request):
        params = SearchParamsSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        overrides = {name: data[param] for param, name in OVERRIDES.items() if param in data}
        result = run_search(
            data["q"], k=data.get("k", settings.SEARCH_RESULTS), overrides=overrides or None
        )
        return Response(result.to_dict())
