"""Markdown to safe HTML, in two strengths: runbooks (ours) and untrusted text (theirs).

Runbook bodies come from our own corpus, so their links stay links. Everything else that
reaches the page through Markdown (suggestion action/reason written by an LLM that read
incident text, issue titles, past fixes) is attacker-reachable: it is rendered with no rule
that can produce a link, an image or raw HTML, and nh3 (Ammonia) then keeps only
``code``/``em``/``strong`` without attributes, as a second line of defence. Links, images,
autolinks, reference links, raw HTML, ``javascript:``/``data:`` URLs and bare URLs all come
out as inert, escaped text the reader can still see.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import nh3
from django.utils.safestring import SafeString, mark_safe

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

__all__ = ["MAX_INLINE_CHARS", "UNTRUSTED_TAGS", "render", "render_inline"]

#: Tags untrusted text may produce; none of them can carry a URL, and no attribute is kept.
UNTRUSTED_TAGS = frozenset({"code", "em", "strong"})
#: Untrusted text is cut here: a valid action is at most 200 characters and a reason 400,
#: a title is one line. Emphasis runs such as ``*a**`` cost markdown-it ~25 ms per KB, so
#: the cut keeps any one text within ~25 ms (bench/untrusted_text.py).
MAX_INLINE_CHARS = 1000
#: Inline rules that could turn untrusted text into a link, an image or markup.
_ACTIVE_INLINE_RULES = ["link", "image", "autolink", "html_inline"]


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


@lru_cache(maxsize=1)
def _inert_parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"html": False, "linkify": False})
    return parser.disable(_ACTIVE_INLINE_RULES)


def render(source: str) -> SafeString:
    """A runbook body from our own corpus: raw HTML escaped, links kept (noopener)."""
    html = _parser().render(source or "")
    return mark_safe(nh3.clean(html, link_rel="noopener noreferrer"))  # noqa: S308


def render_inline(source: str) -> SafeString:
    """One line of untrusted Markdown (`code`, *emphasis*): never a link, image or tag.

    Only inline rules run, so block constructs such as reference definitions
    (``[1]: http://...``) are never parsed either; they stay visible as text.
    """
    source = source or ""
    if len(source) > MAX_INLINE_CHARS:
        source = source[:MAX_INLINE_CHARS] + "…"
    html = _inert_parser().renderInline(source)
    clean = nh3.clean(html, tags=set(UNTRUSTED_TAGS), attributes={}, url_schemes=set())
    return mark_safe(clean)  # noqa: S308 - no link/image/html rule ran, and nh3 allow-listed it
