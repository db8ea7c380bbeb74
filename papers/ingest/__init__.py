"""Getting papers into the catalogue: the arXiv API (nightly), snapshot files (bulk), one upsert."""
