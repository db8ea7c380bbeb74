"""Retrieval pipeline stages: query analysis (dates, authors, categories), search, reranking."""
