"""What text may reach the database: everything a user types goes through `check_text` (pages,
forms, API serializers, the chat service) before it is stored or searched.

PostgreSQL refuses a NUL character in text (psycopg raises before the query runs), and a lone
UTF-16 surrogate ("\\ud800", which JSON can spell) cannot be encoded as UTF-8 at all: either one
reaching a query was a 500, or a socket closed with 1011. Both are refused up front with a
message that says which character is wrong and where.
"""

import re

from django.core.exceptions import ValidationError

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class InvalidText(ValueError):
    """Text that cannot be stored; str() is the message for the user."""


def problem(text: str) -> str | None:
    """Why `text` cannot be stored, or None when it can."""
    match = _UNSTORABLE.search(text)
    if match is None:
        return None
    position = match.start() + 1
    if match.group() == "\x00":
        return f"The text contains a NUL character (at position {position}); remove it."
    code = f"U+{ord(match.group()):04X}"
    return f"The text contains an unpaired surrogate {code} (at position {position}): not valid Unicode."


def check_text(text: str) -> str:
    """`text` unchanged when it can be stored; InvalidText otherwise."""
    if (message := problem(text)) is not None:
        raise InvalidText(message)
    return text


def validate_storable(value) -> None:
    """A Django / DRF field validator (both accept Django's ValidationError)."""
    if isinstance(value, str) and (message := problem(value)) is not None:
        raise ValidationError(message, code="invalid_text")


def first_problem(values) -> str | None:
    """The first problem among several inputs (a query string's values, say), or None."""
    for value in values:
        if isinstance(value, str) and (message := problem(value)) is not None:
            return message
    return None
