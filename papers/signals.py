"""What the catalogue tells whoever listens (papers imports no listener: the chat connects)."""

from django.dispatch import Signal

# Sent by the indexing job when it made papers searchable (after the nightly ingest, a refresh
# or an import); `result` is the papers.indexing.run.IndexingResult.
catalogue_indexed = Signal()

# Sent when read papers' chunks got their words (papers.fulltext.read.index_words: a paper read,
# re-read or re-cut), with `paper_ids`; inside the transaction that wrote them, when there is one.
fulltext_indexed = Signal()
