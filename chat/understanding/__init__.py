"""Question understanding: what a search question asks for (topic, window, recency, filters)."""
