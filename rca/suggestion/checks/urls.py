"""The URLs a suggestion carries, and which of them the cited runbook does not vouch for."""

from __future__ import annotations

import re
from collections.abc import Iterable

from rca.suggestion.checks import MAX_SCAN_CHARS

__all__ = ["unsourced_urls", "urls_in"]

# What a reader (or a chat client) could follow: a scheme URL, a "www." host, a script or
# data URI, or a bare host under a common public suffix. Texts are cut into tokens first and
# each token is looked at once, so the cost stays linear in the text whatever it holds.
_TOKEN_BREAK = re.compile(r"[\s()\[\]<>\"'`|,;]+")
_URL_START = re.compile(
    r"(?i)[a-z][a-z0-9+.-]{0,30}://"
    r"|(?<![a-z0-9])(?:www\.(?=\w)|(?:javascript|vbscript|data|file):(?=\S))"
)
_HOST_LABEL = re.compile(r"(?i)[a-z0-9-]+")
#: Suffixes a bare ``name.suffix`` must end with to count as a host; ``io``/``ai`` are left
#: out on purpose: ``torchvision.io`` and ``tf.io`` are Python modules, not sites.
_PUBLIC_SUFFIXES = frozenset(
    ("com", "net", "org", "info", "biz", "xyz", "top", "site", "online", "ru", "cn", "tk")
    + ("example",)
)
_URL_TRAILER = ".,;:!?*_~"


def _bare_host(token: str) -> bool:
    """``evil.com`` or ``evil.com:8080/x``: dot-separated labels ending in a public suffix."""
    host, _, port = token.split("/", 1)[0].partition(":")
    labels = host.split(".")
    return (
        len(labels) >= 2
        and labels[-1].lower() in _PUBLIC_SUFFIXES
        and all(_HOST_LABEL.fullmatch(label) for label in labels)
        and (not port or port.isdigit())
    )


def urls_in(text: str) -> list[str]:
    """The URLs a text carries, in order, without trailing sentence punctuation."""
    if not isinstance(text, str):
        return []
    found: list[str] = []
    for token in _TOKEN_BREAK.split(text[:MAX_SCAN_CHARS]):
        token = token.rstrip(_URL_TRAILER)
        start = _URL_START.search(token) if ":" in token or "." in token else None
        url = token[start.start() :] if start else token if _bare_host(token) else ""
        if url and url not in found:
            found.append(url)
    return found


def unsourced_urls(text: str, runbook_texts: Iterable[str]) -> list[str]:
    """URLs in ``text`` that none of ``runbook_texts`` contains (case-insensitive).

    An LLM that read attacker-written incident text may be steered into sending the
    engineer to the attacker's site; a URL is only trusted when our own runbook has it.
    """
    corpus = "\n".join(runbook_texts).lower()
    return [url for url in urls_in(text) if url.lower() not in corpus]
