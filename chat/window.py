"""The understood time window of a question, as the short label of a chip ("2023-01 → now")."""


def _day(value) -> str:
    return str(value or "")[:10]


def window_label(analysis: dict | None) -> str:
    """'' when the question had no time window; else e.g. 'since 2023-01-01' or 'a → b'."""
    analysis = analysis or {}
    if analysis.get("window_label"):
        return str(analysis["window_label"])
    window = analysis.get("window") if isinstance(analysis.get("window"), dict) else analysis
    start, end = _day(window.get("start")), _day(window.get("end"))
    if start and end:
        return f"{start} → {end}"
    if start:
        return f"since {start}"
    if end:
        return f"until {end}"
    return ""
