"""Making papers searchable: passages (spans of a paper's text), their vectors, the BM25 index."""
