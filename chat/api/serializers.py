"""What the chat API reads and returns: threads and their messages."""

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from chat.models import Message, Thread
from chat.understanding.overrides import parse_filters
from papers.text import clean_title
from security import inputs


class ThreadSerializer(serializers.ModelSerializer):
    id = serializers.UUIDField(read_only=True, help_text="The thread's id, used in its URLs.")
    title = serializers.CharField(
        max_length=200, required=False, allow_blank=True, default="",
        help_text="A name for the thread; empty until set or until its first question names it.",
    )
    message_count = serializers.IntegerField(
        read_only=True, help_text="Messages in the thread (questions and answers)."
    )

    def validate_title(self, value: str) -> str:
        # DRF's CharField has already refused NUL and lone surrogates.
        return clean_title(value)

    class Meta:
        model = Thread
        fields = ["id", "title", "created_at", "updated_at", "message_count"]
        read_only_fields = ["id", "created_at", "updated_at", "message_count"]
        extra_kwargs = {
            "created_at": {"help_text": "When the thread was created."},
            "updated_at": {"help_text": "Last change: a new message or a new title."},
        }


class SourceCardSerializer(serializers.Serializer):
    """Documents one entry of a message's `sources` (as chat.pipeline.answer.source_card
    writes it); the stored dict is returned as it is."""

    number = serializers.IntegerField(help_text="The citation number: [1] is number 1.")
    arxiv_id = serializers.CharField(help_text="arXiv identifier of the paper.")
    title = serializers.CharField(help_text="The paper's title.")
    url = serializers.URLField(help_text="The paper's arXiv page.")
    paper_id = serializers.IntegerField(required=False, help_text="Internal paper id.")
    authors = serializers.CharField(required=False, help_text="Authors, comma-separated.")
    published = serializers.CharField(required=False, help_text="First version's day, ISO.")
    primary_category = serializers.CharField(required=False, help_text="Main arXiv category.")
    categories = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="All arXiv categories."
    )
    score = serializers.FloatField(required=False, help_text="Retrieval score (higher = closer).")
    passage = serializers.CharField(
        required=False,
        help_text="The text given to the model: title and abstract, or the full-text chunk used.",
    )
    kind = serializers.ChoiceField(
        ["abstract", "fulltext"], required=False,
        help_text="Whether `passage` is the abstract or a chunk of the paper's full text.",
    )
    page = serializers.IntegerField(
        required=False, allow_null=True, help_text="First PDF page of the chunk (1-based); null for abstracts."
    )
    page_end = serializers.IntegerField(
        required=False, allow_null=True, help_text="Last PDF page of the chunk; null for abstracts."
    )
    pages = serializers.CharField(required=False, help_text='The pages as cited: "p. 7", "pp. 7-8".')
    section = serializers.CharField(required=False, help_text="Section heading of the chunk, if known.")
    quote = serializers.CharField(
        required=False, help_text="The sentence of `passage` that answers the question."
    )
    pdf_url = serializers.CharField(
        required=False, help_text="arXiv's PDF opened at the chunk's page (empty for abstracts)."
    )
    author_links = serializers.DictField(
        required=False,
        help_text='Author pages: {"links": [{"name", "url"}], "more": names not linked}.',
    )


@extend_schema_field(SourceCardSerializer(many=True))
class SourcesField(serializers.ListField):
    """The stored list as it is (no key dropped), documented as source cards."""

    child = serializers.DictField()


class MessageSerializer(serializers.ModelSerializer):
    id = serializers.UUIDField(read_only=True, help_text="The message's id.")
    sources = SourcesField(
        read_only=True,
        help_text="Papers the answer drew on, in citation order: [1] is the first.",
    )
    analysis = serializers.DictField(
        read_only=True,
        help_text="The temporal analysis of the question: date window, topic, recency intent.",
    )
    citations = serializers.ListField(
        child=serializers.IntegerField(),
        read_only=True,
        help_text="Citation numbers the answer actually uses, each an index into `sources` "
        "starting at 1.",
    )
    timings = serializers.DictField(
        read_only=True, help_text="Where the time went, in milliseconds, by stage."
    )
    unsupported = serializers.ListField(
        child=serializers.DictField(), read_only=True,
        help_text="Sentences of a model's answer that the sources they cite do not support "
        "(lexical overlap and embedding similarity): `index`, `start`/`end` (a span of "
        "`content`), `text`, `cited`, `score`. Empty when all are supported or not checked.",
    )

    class Meta:
        model = Message
        fields = [
            "id", "role", "content", "status", "query", "analysis", "sources", "citations",
            "backend", "model", "prompt_tokens", "completion_tokens", "time_to_first_token_ms",
            "total_ms", "timings", "unsupported", "error", "created_at",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "role": {"help_text": "`user` for a question, `assistant` for an answer."},
            "content": {"help_text": "The question, or the answer's Markdown text with [n] "
                        "citations. Untrusted model output: sanitise before rendering as HTML."},
            "status": {"help_text": "`complete`; `streaming` while an answer is being written; "
                       "`stopped` or `failed` when it ended early (the partial text is kept)."},
            "query": {"help_text": "The standalone question actually searched (follow-ups are "
                      "rewritten with the conversation)."},
            "backend": {"help_text": "LLM backend that wrote the answer."},
            "model": {"help_text": "Model name that wrote the answer."},
            "prompt_tokens": {"help_text": "Prompt size in tokens, when the backend reports it."},
            "completion_tokens": {"help_text": "Answer size in tokens, when reported."},
            "time_to_first_token_ms": {"help_text": "Milliseconds until the first answer token."},
            "total_ms": {"help_text": "Milliseconds from question to finished answer."},
            "error": {"help_text": "Why the answer failed or stopped, if it did."},
            "created_at": {"help_text": "When the message was created."},
        }


class TextField(serializers.CharField):
    """A CharField that refuses numbers and booleans instead of quietly turning them into text."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        if (problem := inputs.problem(data)) is not None:  # NUL, lone surrogates
            raise serializers.ValidationError(problem, code="invalid_text")
        return super().to_internal_value(data)


class FiltersSerializer(serializers.Serializer):
    """Documents `filters` (chat.understanding.overrides): each key given replaces what the
    question says; a key left out keeps it."""

    start = serializers.DateField(
        required=False, allow_null=True,
        help_text="First day of the window (YYYY-MM-DD); null: no lower bound.",
    )
    end = serializers.DateField(
        required=False, allow_null=True,
        help_text="Last day of the window (YYYY-MM-DD); null: no upper bound.",
    )
    recency_weight = serializers.FloatField(
        required=False, min_value=0, max_value=1,
        help_text="How much newer papers are favoured, 0 (not at all) to 1.",
    )
    authors = serializers.ListField(
        child=serializers.CharField(), required=False,
        help_text="Only papers by these authors; [] removes the author filter.",
    )
    categories = serializers.ListField(
        child=serializers.CharField(), required=False,
        help_text="Only papers in these arXiv categories (e.g. cs.CL); [] removes the filter.",
    )
    arxiv_id = serializers.CharField(
        required=False, allow_null=True,
        help_text="Seed paper: papers like this arXiv id; null removes it.",
    )


@extend_schema_field(FiltersSerializer)
class FiltersField(serializers.JSONField):
    """The filter set, checked by the same rules as the chat socket's (clear messages)."""

    def to_internal_value(self, data):
        try:
            return parse_filters(data)
        except (ValueError, TypeError) as exc:
            raise serializers.ValidationError(str(exc)) from None


class AskSerializer(serializers.Serializer):
    text = TextField(
        max_length=settings.CHAT_MAX_QUESTION_CHARS,
        help_text="The question. Follow-ups may refer to earlier turns of the thread.",
    )
    filters = FiltersField(
        required=False,
        help_text="Filters that replace what the question says (an edited chip of an earlier "
        "answer): window, recency, authors, categories, seed paper. The answer's `analysis."
        "filters` keeps them.",
    )


class AskResultSerializer(serializers.Serializer):
    question = MessageSerializer(help_text="Your question, as saved in the thread.")
    answer = MessageSerializer(
        help_text="The answer: `status` is `complete`, or `failed` with `error` (partial text "
        "kept)."
    )
    followups = serializers.ListField(
        child=serializers.CharField(), help_text="Up to three questions worth asking next."
    )
