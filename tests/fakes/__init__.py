"""Local HTTP servers standing in for the outside world (OpenAI, arXiv): real clients, replayed answers."""
