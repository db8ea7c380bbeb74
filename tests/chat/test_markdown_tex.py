"""chat/markdown.py keeps inline TeX verbatim for static/js/tex.js: no emphasis inside it, no
backslash eaten, and still no HTML let through."""

from chat.markdown import render_answer


def test_tex_survives_markdown():
    html = render_answer(r"Loss $a_1 * b_2$ and $c_3*$ with \(x_{1}\) [1]", source_count=1)
    assert r"$a_1 * b_2$" in html and r"$c_3*$" in html and r"\(x_{1}\)" in html
    assert "<em>" not in html
    assert 'data-source="1"' in html  # citations still linked


def test_money_is_not_tex_and_markup_stays_text():
    html = render_answer("Costs $5 and $10, *cheap*; $<script>x</script>$")
    assert "$5 and $10, <em>cheap</em>" in html  # money is not TeX; emphasis still works
    assert "<script>" not in html and "&lt;script&gt;" in html
