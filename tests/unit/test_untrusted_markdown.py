"""Untrusted text (suggestions, titles, past fixes) renders as inert HTML: no link, no image.

Each row is one way Markdown or HTML can smuggle active content into a page; the text must
still be there for the reader, escaped.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webapp.markdown import MAX_INLINE_CHARS, render, render_inline
from webapp.templatetags.rootcause import md_inline

ATTACKS = {
    "inline link": ("[click](http://evil.example)", "[click](http://evil.example)"),
    "image": ("![x](http://evil.example/x.png)", "![x](http://evil.example/x.png)"),
    "reference link": ("[x][1]\n\n[1]: http://evil.example", "[1]: http://evil.example"),
    "autolink": ("<http://evil.example>", "&lt;http://evil.example&gt;"),
    "email autolink": ("<mallory@evil.example>", "&lt;mallory@evil.example&gt;"),
    "raw anchor": ('<a href="http://evil.example">x</a>', "&lt;a href="),
    "raw img": ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"),
    "javascript link": ("[go](javascript:alert(1))", "[go](javascript:alert(1))"),
    "entity-hidden scheme": ("[go](&#x6A;avascript:alert(1))", "avascript:alert(1))"),
    "data image": ("![p](data:image/svg+xml;base64,PHN2Zz4=)", "![p](data:image/svg+xml"),
    "bare url": ("see http://evil.example/fix now", "see http://evil.example/fix now"),
    "www host": ("see www.evil.example", "see www.evil.example"),
    "script tag": ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
    "link in code": ("`<a href=http://evil.example>`", "<code>&lt;a href=http://evil.example"),
    "link in emphasis": ("*[x](http://evil.example)*", "<em>[x](http://evil.example)</em>"),
}


INERT_TAGS = {"<code>", "</code>", "<em>", "</em>", "<strong>", "</strong>"}


def _tags(html: str) -> list[str]:
    return re.findall(r"<[^>]*>", html)


@pytest.mark.parametrize("source,visible", ATTACKS.values(), ids=ATTACKS.keys())
def test_untrusted_markdown_never_becomes_a_link_or_image(source: str, visible: str):
    html = str(render_inline(source))
    assert "<a" not in html and "<img" not in html and "<script" not in html
    # Every tag is a bare code/em/strong: no href, src, on* handler or URL can be in one.
    # ("href" may still be *visible* text, escaped, when the attacker typed it.)
    assert set(_tags(html)) <= INERT_TAGS, html
    assert "javascript:" not in " ".join(_tags(html))
    assert visible in html  # the text is still there, escaped


def test_the_template_filter_is_the_inert_renderer():
    assert str(md_inline("[click](http://evil.example)")) == "[click](http://evil.example)"
    assert str(md_inline(None)) == ""


def test_harmless_markdown_keeps_its_formatting():
    html = str(render_inline("Set `in_features` to *256* in **model.py** & retry"))
    assert html == (
        "Set <code>in_features</code> to <em>256</em> in <strong>model.py</strong> &amp; retry"
    )


@given(st.text(alphabet=st.sampled_from(list("[]()<>!:/`*_&\"'= \nahijprstvx.@#;")), max_size=80))
def test_no_combination_of_markup_characters_makes_a_tag_with_attributes(source: str):
    assert set(_tags(str(render_inline(source)))) <= INERT_TAGS


def test_runbook_bodies_from_our_corpus_keep_their_links():
    html = str(render("See [the wheels](https://download.pytorch.org/whl/cu121)."))
    assert 'href="https://download.pytorch.org/whl/cu121"' in html
    assert 'rel="noopener noreferrer"' in html
    assert "<script" not in str(render("<script>alert(1)</script>"))


def test_overlong_untrusted_text_is_cut_and_marked():
    html = str(render_inline("a" * (MAX_INLINE_CHARS + 50)))
    assert html == "a" * MAX_INLINE_CHARS + "…"
