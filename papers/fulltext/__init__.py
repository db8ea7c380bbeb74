"""Reading a paper's full text from its arXiv PDF: fetch (politely) -> parse -> chunk -> embed.

    fetch.py  the PDF's bytes, under arXiv's politeness and our size caps, or a FullTextError
    parse.py  page texts joined into one text, with page offsets and section headings
    chunk.py  spans of that text of about 200-350 embedder tokens, with pages and section
    read.py   read_paper(paper): the whole walk, recorded on the paper's FullText row
    queue.py  request_fulltext(paper): on demand, through the job queue

The PDF itself is never stored nor served: only its text, its hash and its size.
"""


class FullTextError(Exception):
    """A paper whose full text cannot be read, with the reason people are shown."""

    def __init__(self, reason: str, *, retryable: bool = False):
        self.reason = reason
        # A network fault may pass; a withdrawn paper or an encrypted PDF will not.
        self.retryable = retryable
        super().__init__(reason)
