"""The API's JSON parser: DRF's, plus a clear 400 for JSON nested too deeply to decode.

`json` raises RecursionError on "[[[[…" a few thousand levels deep; DRF's parser only turns
ValueError into a ParseError, so a 20 KB body made the API answer 500.
"""

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser as DRFJSONParser


class JSONParser(DRFJSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply.") from None
