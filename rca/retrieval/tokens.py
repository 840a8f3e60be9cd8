"""Code-aware tokenisation shared by BM25 queries and the BM25 index (pure).

Error texts are full of identifiers (``state_dict``, ``CUDAHalfTensor``,
``torch.cuda.OutOfMemoryError``). A query may name the whole identifier or one of its parts
and a runbook may do the other, so every identifier yields itself *and* its parts; both
sides go through this one function so they always agree.
"""

from __future__ import annotations

from ingest.linear_regex import compile as linear

__all__ = ["STOPWORDS", "tokenize"]

# Identifiers (dotted, snake, camel) and words, digits allowed after the first letter (fp16).
# An identifier never starts inside a run of [A-Za-z0-9_]: the first branch swallows runs
# that start with a digit (``1abc``), which is what a lookbehind did before RE2; runs of
# digits alone need not be swallowed: no identifier starts inside them.
_IDENT = linear(
    r"[0-9]+[A-Za-z_][A-Za-z0-9_]*|(?P<id>[A-Za-z_][A-Za-z0-9_]*(?:[.:][A-Za-z_][A-Za-z0-9_]*)*)"
)
# Parts of one identifier segment: words (an acronym run glued to the word after it,
# CUDAHalf, is split by _split_acronym), acronym runs, trailing digits.
_PART = linear(r"[A-Z]+[a-z]+[0-9]*|[A-Z]+[0-9]*|[a-z]+[0-9]*|[0-9]+[a-z]*")
_HEX_DIGITS = frozenset("0123456789abcdef")
_NO_STEM = ("ss", "us", "is", "ys", "as", "os")

#: Function words that carry no evidence; kept short so words like "not" and "no" survive
#: (``not supported``, ``no kernel image`` are meaningful in error messages).
STOPWORDS: frozenset[str] = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "may",
        "might",
        "of",
        "on",
        "or",
        "our",
        "should",
        "so",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "was",
        "we",
        "were",
        "when",
        "where",
        "which",
        "while",
        "will",
        "with",
        "would",
        "you",
        "your",
        "please",
        "see",
        "use",
        "using",
        "also",
        "via",
    ]
)


def _stem(token: str) -> str:
    """Plural folding only ("channels" -> "channel"): safe on code words, no dictionary."""
    if len(token) > 4 and token.endswith("s") and not token.endswith(_NO_STEM):
        return token[:-1]
    return token


def _split_acronym(part: str) -> list[str]:
    """``CUDAHalf`` -> ``CUDA``, ``Half``: the last capital of a run starts the next word."""
    upper = len(part) - len(part.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    if upper < 2 or upper == len(part) or not part[upper].islower():
        return [part]
    return [part[: upper - 1], part[upper - 1 :]]


def _parts(identifier: str) -> list[str]:
    # A plain word ("error", "Tensor", "fp16") is its own only part; most identifiers are
    # one, and this skips an RE2 call for them.
    word = identifier.rstrip("0123456789")
    if word.isalpha() and word[1:].islower() and (len(word) > 1 or word.islower()):
        return [identifier]
    # _PART never matches a separator, so one pass over the identifier finds the parts of
    # each segment in turn.
    parts: list[str] = []
    for match in _PART.finditer(identifier):
        parts.extend(_split_acronym(match[0]))
    return parts


def _hex_like(token: str) -> bool:
    """``^(?:0x)?[0-9a-f]{6,}$``: a hash or address, not a word."""
    digits = token[2:] if token.startswith("0x") else token
    return len(digits) >= 6 and _HEX_DIGITS.issuperset(digits)


def tokenize(text: str) -> list[str]:
    """Lowercased tokens of ``text``: each identifier whole, then its parts (dotted,
    snake_case and camelCase split), without stop words, bare numbers or hex blobs."""
    tokens: list[str] = []
    for match in _IDENT.finditer(text):
        if match["id"] is None:
            continue
        identifier = match["id"].strip("_.:")
        if not identifier:
            continue
        whole = identifier.lower()
        parts = [p.lower() for p in _parts(identifier)]
        emitted: list[str] = []
        if (len(parts) != 1 or parts[0] != whole) and not _hex_like(whole):
            emitted.append(whole)
        emitted.extend(parts)
        for token in emitted:
            if token[0].isdigit() or token in STOPWORDS or len(token) < 2 or _hex_like(token):
                continue
            tokens.append(_stem(token))
    return tokens
