"""A question's ASCII or LaTeX mathematics, written as the papers' text layers print it
(chat.understanding.notation)."""

from chat.understanding.notation import as_printed


def test_square_roots_and_subscripts_are_written_as_printed():
    assert as_printed("why scale by sqrt(d_k)") == "why scale by √dk"
    assert as_printed(r"why divide by \sqrt{d_k}?") == "why divide by √dk?"
    assert as_printed("what is d_{model}?") == "what is dmodel?"


def test_names_with_underscores_and_plain_questions_are_kept():
    assert as_printed("What is warmup_steps set to?") == "What is warmup_steps set to?"
    assert as_printed("How is DPR trained?") == "How is DPR trained?"
