"""Cursor pagination for every API list: stable pages while new rows arrive, no COUNT(*)."""

from django.core.exceptions import FieldDoesNotExist, ValidationError
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.pagination import CursorPagination


class ApiCursorPagination(CursorPagination):
    page_size = 20
    page_size_query_param = "page_size"
    max_page_size = 100
    invalid_cursor_message = "Invalid cursor: pass back a `next` or `previous` link unchanged."

    def decode_cursor(self, request):
        try:
            cursor = super().decode_cursor(request)
        except NotFound:  # DRF's answer to a malformed cursor; it is bad input, not a lost object
            raise serializers.ValidationError({"cursor": [self.invalid_cursor_message]}) from None
        if cursor is not None and cursor.position is not None:
            self._check_position(cursor.position)
        return cursor

    def _check_position(self, position: str) -> None:
        """DRF filters on the cursor's position as given; a forged value that the column cannot
        hold (a date that is not a date) would fail inside the database, so check it here."""
        field_name = self.ordering[0].lstrip("-")  # DRF keeps the ordering as a tuple
        try:
            field = self._model._meta.get_field(field_name)
            field.to_python(position)
        except FieldDoesNotExist:
            return
        except (ValidationError, ValueError, TypeError, OverflowError):
            raise serializers.ValidationError({"cursor": [self.invalid_cursor_message]}) from None

    def paginate_queryset(self, queryset, request, view=None):
        self._model = queryset.model
        return super().paginate_queryset(queryset, request, view)

    def get_paginated_response_schema(self, schema):
        described = super().get_paginated_response_schema(schema)
        props = described["properties"]
        props["next"]["description"] = "Link to the next page; null on the last page."
        props["previous"]["description"] = "Link to the previous page; null on the first page."
        props["results"]["description"] = "This page's items."
        return described

    def get_schema_operation_parameters(self, view):
        params = super().get_schema_operation_parameters(view)
        for param in params:
            if param["name"] == "page_size":
                param["schema"] = {"type": "integer", "minimum": 1, "maximum": self.max_page_size}
                param["description"] = (
                    f"Items per page, 1 to {self.max_page_size} (default {self.page_size})."
                )
            elif param["name"] == "cursor":
                param["description"] = (
                    "Opaque position from a previous page's `next`/`previous` link."
                )
        return params
