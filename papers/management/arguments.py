"""Argument types shared by the management commands (papers' and the benchmarks')."""


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (argparse reports the ValueError)."""
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value
