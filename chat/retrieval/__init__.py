"""Running a search: retrievers, fusion, reranking, snippets, the filters they apply."""
