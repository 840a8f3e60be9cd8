"""Runbook Markdown to safe HTML: raw HTML in the source is escaped, never passed through.

markdown-it-py with `html` off escapes any tag in the source and refuses `javascript:`
and similar link schemes; nh3 (Ammonia) then allow-lists the output as a second line of
defence when it is installed.
"""

from __future__ import annotations

from functools import lru_cache

from django.utils.safestring import SafeString, mark_safe


@lru_cache(maxsize=1)
def _parser():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def render(source: str) -> SafeString:
    html = _parser().render(source or "")
    try:
        import nh3
    except ImportError:  # markdown-it with html off already escapes raw HTML
        return mark_safe(html)  # noqa: S308 - produced by markdown-it with html disabled
    return mark_safe(nh3.clean(html, link_rel="noopener noreferrer"))  # noqa: S308


def render_inline(source: str) -> SafeString:
    """One line of Markdown (`code`, *emphasis*) without block tags: for suggestion text."""
    html = _parser().renderInline(source or "")
    return mark_safe(html)  # noqa: S308 - markdown-it with html disabled escapes everything
