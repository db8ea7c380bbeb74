"""URL converter for arXiv identifiers: new style (2401.12345) and old style (hep-th/9901001),
which contains a slash, with an optional version suffix (v2) that the views ignore."""

from papers.identifiers import ARXIV_ID


class ArxivIdConverter:
    regex = rf"{ARXIV_ID}(?:v\d+)?"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value
