"""What the papers API returns, and the query parameters it accepts."""

import datetime as dt

from rest_framework import serializers

from papers.identifiers import CATEGORY
from papers.models import Paper

CATEGORY_PATTERN = rf"^{CATEGORY}$"


class PaperSerializer(serializers.ModelSerializer):
    arxiv_id = serializers.CharField(
        read_only=True, help_text="arXiv identifier without version: 2401.12345 or hep-th/9901001."
    )
    authors = serializers.SerializerMethodField(help_text="Author names in paper order.")
    categories = serializers.ListField(
        child=serializers.CharField(), read_only=True, help_text="arXiv categories, e.g. cs.CL."
    )
    abs_url = serializers.URLField(read_only=True, help_text="The paper's arXiv abstract page.")
    pdf_url = serializers.URLField(read_only=True, help_text="The paper's PDF on arXiv.")

    class Meta:
        model = Paper
        fields = [
            "arxiv_id", "version", "title", "abstract", "authors", "primary_category",
            "categories", "published", "updated", "abs_url", "pdf_url", "hidden",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "title": {"help_text": "Title as arXiv gives it (may contain TeX)."},
            "abstract": {"help_text": "Abstract as arXiv gives it (may contain TeX)."},
            "primary_category": {"help_text": "The category arXiv lists first."},
            "hidden": {"help_text": "Hidden by staff; only staff ever see hidden papers."},
        }

    def get_authors(self, paper) -> list[str]:
        # `authorships` is prefetched with its authors by the views: no query per paper.
        return [a.author.name for a in paper.authorships.all()]


class PaperDetailSerializer(PaperSerializer):
    class Meta(PaperSerializer.Meta):
        fields = [
            *PaperSerializer.Meta.fields, "doi", "journal_ref", "comments", "license", "withdrawn",
        ]
        read_only_fields = fields
        extra_kwargs = {
            **PaperSerializer.Meta.extra_kwargs,
            "doi": {"help_text": "DOI of the published version, if any."},
            "journal_ref": {"help_text": "Journal reference, if any."},
            "comments": {"help_text": "The authors' comments (pages, figures, venue)."},
            "license": {"help_text": "License URL given by arXiv."},
            "withdrawn": {"help_text": "Withdrawn by its authors."},
        }


# Built with type() because `from` is a Python keyword but the natural parameter name.
PaperFilterSerializer = type(
    "PaperFilterSerializer",
    (serializers.Serializer,),
    {
        "q": serializers.CharField(
            required=False, max_length=500, allow_blank=True, trim_whitespace=True,
            help_text='Full-text query in web-search syntax: words, "quoted phrases", -excluded, or.',
        ),
        "category": serializers.RegexField(
            CATEGORY_PATTERN, required=False, max_length=40,
            help_text="Only papers listed in this arXiv category (cs.CL, quant-ph); a bare "
            "archive (cs, math) takes every category under it.",
        ),
        "author": serializers.CharField(
            required=False, max_length=200, min_length=2,
            help_text="Only papers with an author whose name has every word of this, in any "
            "order (case and accents ignored; a one-letter word is an initial: G. Hinton).",
        ),
        "from": serializers.DateField(
            required=False, help_text="Only papers first published on or after this day (UTC)."
        ),
        "to": serializers.DateField(
            required=False, help_text="Only papers first published on or before this day (UTC)."
        ),
        "hidden": serializers.BooleanField(
            required=False, allow_null=True, default=None,
            help_text="true lists only hidden papers (staff only: 403 for others); false or "
            "absent lists visible papers.",
        ),
        "validate": lambda self, attrs: _check_window(attrs),
    },
)


def _check_window(attrs: dict) -> dict:
    if attrs.get("from") and attrs.get("to") and attrs["from"] > attrs["to"]:
        raise serializers.ValidationError({"to": ["Must be on or after `from`."]})
    return attrs


def day_start(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time.min, tzinfo=dt.UTC)


def day_end(day: dt.date) -> dt.datetime:
    # time.max rather than "next day": date.max + 1 day would overflow.
    return dt.datetime.combine(day, dt.time.max, tzinfo=dt.UTC)


class SimilarParamsSerializer(serializers.Serializer):
    k = serializers.IntegerField(
        min_value=1, max_value=50, default=10, help_text="How many papers, 1 to 50."
    )


class SimilarPapersSerializer(serializers.Serializer):
    arxiv_id = serializers.CharField(help_text="The paper the others are similar to.")
    model = serializers.CharField(
        allow_blank=True, help_text="The embedding model whose vectors were compared."
    )
    embedded = serializers.BooleanField(
        help_text="False when the paper has no vector for this model yet (then no results)."
    )
    results = PaperSerializer(many=True, help_text="Most similar first; never the paper itself.")


class BibtexSerializer(serializers.Serializer):
    arxiv_id = serializers.CharField(help_text="arXiv identifier without version.")
    key = serializers.CharField(help_text="The entry's citation key (arXiv's convention).")
    bibtex = serializers.CharField(
        help_text="The entry as arXiv's own BibTeX export shapes it: @misc with title (TeX "
        "kept), authors in paper order joined by 'and', year of the latest version, eprint, "
        "archivePrefix={arXiv}, primaryClass and url."
    )
