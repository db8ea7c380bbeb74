"""Answers as safe HTML: Markdown rendered with raw HTML disabled, then sanitised by nh3.

Model output is untrusted (it may echo an abstract containing `<script>`, or be told to by a
prompt injection in one). Two layers keep it inert: markdown-it never passes raw HTML through
(`html: False` escapes it), and nh3 removes any tag or attribute outside a short allow-list from
whatever markdown-it produced. Citations `[n]` that point to one of the answer's sources become
links to that source's card (`#<prefix>-source-<n>`); any other `[n]` stays plain text.
"""

import re

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

_CITATION = re.compile(r"\[(\d{1,3})\]")

ALLOWED_TAGS = {
    "p", "br", "hr", "strong", "em", "del", "code", "pre", "blockquote",
    "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td", "a", "sup",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title", "class", "data-source"},
    "ol": {"start"},
    "th": {"align"},
    "td": {"align"},
}
URL_SCHEMES = {"http", "https", "mailto"}
ALLOWED_ATTRIBUTES["span"] = {"class", "title"}
ALLOWED_TAGS.add("span")
# Unsupported sentences: marked in the text by two private-use characters, then these tags.
_OPEN, _CLOSE = "\ue000", "\ue001"
UNSUPPORTED_OPEN = '<span class="unsupported" title="not found in the cited source">'


def _citation_rule(state, silent: bool) -> bool:
    """Inline rule: `[n]` with 1 <= n <= the number of sources becomes a citation token."""
    if state.src[state.pos] != "[":
        return False
    match = _CITATION.match(state.src, state.pos)
    if not match:
        return False
    number = int(match.group(1))
    if not 1 <= number <= state.env.get("source_count", 0):
        return False
    if not silent:
        token = state.push("citation", "", 0)
        token.meta = {"number": number}
    state.pos = match.end()
    return True


# Inline TeX as static/js/tex.js finds it: "$" opening before a non-space and closing after one,
# or \(...\). Kept verbatim, so Markdown neither reads "_" and "*" inside it as emphasis nor
# eats the backslash of "\(" or "\{"; the page renders it with KaTeX.
_TEX = re.compile(r"\$(?=[^$\s])[^$\n]*?[^$\s\\]\$|\$[^$\s]\$|\\\(.+?\\\)")


def _tex_rule(state, silent: bool) -> bool:
    if state.src[state.pos] not in "$\\":
        return False
    match = _TEX.match(state.src, state.pos)
    if not match:
        return False
    if not silent:
        state.push("text", "", 0).content = match.group(0)
    state.pos = match.end()
    return True


def _render_citation(self, tokens, idx, options, env) -> str:
    number = tokens[idx].meta["number"]
    prefix = env.get("anchor_prefix", "answer")
    # The card's anchor and data-source are the answer's own number; the reader sees the
    # thread's (chat.references).
    label = env.get("labels", {}).get(number, number)
    return (
        f'<a class="cite" href="#{prefix}-source-{number}" data-source="{number}">[{label}]</a>'
    )


def _build() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.inline.ruler.before("escape", "tex", _tex_rule)
    md.inline.ruler.before("link", "citation", _citation_rule)
    md.add_render_rule("citation", _render_citation)
    return md


_MD = _build()


def sanitize(html: str) -> str:
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
    )


def anchor_prefix(message_id) -> str:
    """The id prefix of one message's source cards (unique within a thread page)."""
    return f"m{str(message_id).replace('-', '')[:12]}"


def _mark_unsupported(text: str, spans) -> str:
    """`text` with each unsupported sentence between two private-use characters, which pass
    through Markdown as text and become the underline's tags after it."""
    # The model's own are not ours: replaced one for one, so the spans still fit.
    text = text.replace(_OPEN, "\ufffd").replace(_CLOSE, "\ufffd")
    for span in sorted(spans, key=lambda s: s["start"], reverse=True):
        start, end = span["start"], span["end"]
        if 0 <= start < end <= len(text):
            text = text[:start] + _OPEN + text[start:end] + _CLOSE + text[end:]
    return text


def render_answer(
    text: str, source_count: int = 0, message_id=None, unsupported=(), labels=None
) -> SafeString:
    """Sanitised HTML for an answer whose sources are numbered 1..source_count; sentences in
    `unsupported` (chat.pipeline.support: spans into `text`) get a dotted underline; `labels`
    (its number -> the thread's, chat.references) is how citations read."""
    env = {
        "source_count": source_count,
        "anchor_prefix": anchor_prefix(message_id or "answer"),
        "labels": labels or {},
    }
    html = _MD.render(_mark_unsupported(text or "", unsupported), env)
    html = html.replace(_OPEN, UNSUPPORTED_OPEN).replace(_CLOSE, "</span>")
    # mark_safe is sound here: the string is what nh3 let through.
    return mark_safe(sanitize(html))
