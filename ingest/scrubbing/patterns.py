"""The text rules of scrubbing: what a secret looks like inside a string, and its marker.

Every pattern is compiled by ``ingest.linear_regex`` (RE2), so matching is linear in the
text whatever an attacker writes (a 1 MiB ``a=a=a=...`` line, ``xoxb-----...`` runs,
``aaaa...@``). Rules run in order, each only when one of its trigger words is in the
text, so an ordinary log line costs one prefilter scan. Distinctive tokens come first
(their marker names the vendor), then the contextual rules that lean on the text around
a secret (``Bearer``, ``scheme://user:password@``, ``;Pwd=``, ``KEY=value``), then
e-mail addresses. Each marker is ``[redacted:<kind>]``, which no rule matches again, so
scrubbing twice changes nothing more.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ingest.linear_regex import LinearPattern
from ingest.linear_regex import compile as linear
from ingest.scrubbing.names import redacts, secret_name
from ingest.scrubbing.substitute import ByteMatch

# Distinctive tokens: a vendor prefix and a body no ordinary word has. Case-sensitive.
TOKENS: dict[str, str] = {
    "openai_key": r"\bsk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}",
    "github_token": r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
    "slack_token": r"\b(?:xox[abposr]|xoxe\.xox[bp]|xoxe|xapp)-[A-Za-z0-9-]{10,}",
    "huggingface_token": r"\bhf_[A-Za-z0-9]{30,}",
    "aws_access_key": r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    "google_api_key": r"\bAIza[0-9A-Za-z_-]{35}",
    "jwt": r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    "stripe_key": r"\b(?:(?:sk|rk)_(?:live|test)|whsec)_[A-Za-z0-9]{16,}",
    "pypi_token": r"\bpypi-[A-Za-z0-9_-]{16,}",
    "gitlab_token": r"\bgl(?:pat|dt|rt|ptt|cbt|ft|imt|soat)-[A-Za-z0-9_-]{20,}",
    "nvidia_key": r"\bnvapi-[A-Za-z0-9_-]{20,}",
    "npm_token": r"\bnpm_[A-Za-z0-9]{36}",
    # Our own API keys: rc_<8 hex>_<token_urlsafe(32)>, made by ingest/keys.py.
    "rootcause_key": r"\brc_[0-9a-f]{8}_[A-Za-z0-9_-]{20,}",
}
# Lowercase substrings, one of which every rule's match contains (the prefilter).
_TOKEN_TRIGGERS = (
    "sk-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xox",
    "xapp-",
    "hf_",
    "akia",
    "asia",
    "aiza",
    "eyj",
    "sk_",
    "rk_",
    "whsec_",
    "pypi-",
    "glpat-",
    "gldt-",
    "glrt-",
    "glptt-",
    "glcbt-",
    "glft-",
    "glimt-",
    "glsoat-",
    "nvapi-",
    "npm_",
    "rc_",
)
_NAME_WORDS = (
    "passw",
    "pwd",
    "passphrase",
    "secret",
    "token",
    "key",
    "authorization",
    "cookie",
)


def _marker(kind: str) -> str:
    return f"[redacted:{kind}]"


@dataclass(frozen=True)
class Rule:
    """One kind of finding: a pattern, its trigger words and what replaces a match."""

    name: str
    triggers: tuple[str, ...]
    pattern: LinearPattern
    replace: Callable[[ByteMatch], str]


def _fixed(kind: str) -> Callable[[ByteMatch], str]:
    marker = _marker(kind)
    return lambda match: marker


_TOKEN_MARKERS = [_marker(kind) for kind in TOKENS]


def _token(match: ByteMatch) -> str:
    # Group n is the n-th kind, and only the alternative that matched has a group.
    # Numbered, not named: RE2's Python bindings rebuild the name table on every named
    # lookup, which made hostile text three times slower.
    for index, marker in enumerate(_TOKEN_MARKERS, 1):
        if match[index] is not None:
            return marker
    return _marker("secret")


def _keep_prefix(kind: str) -> Callable[[ByteMatch], str]:
    """Keep group 1 (the words around the secret) and replace group 2 by the marker."""
    marker = _marker(kind)
    return lambda match: f"{match.group(1)}{marker}"


def _bearer(match: ByteMatch) -> str:
    scheme, space, value = match.group(1), match.group(2), str(match.group(3))
    if value.isalpha() and value[1:].islower():
        return str(match.group(0))  # "Token expired", "Basic setup": English, not a credential
    return f"{scheme}{space}{_marker('bearer_token')}"


def _url_credentials(match: ByteMatch) -> str:
    return f"{match.group(1)}:{_marker('password')}@"


_AUTH_SCHEMES = frozenset({"bearer", "basic", "token", "digest"})


def _assignment(match: ByteMatch) -> str:
    key, quote, sep, value = (match[group] or "" for group in (1, 2, 3, 4))
    found = secret_name(key)
    opening = value[: len(value) - len(value.lstrip("\\\"'"))]
    bare = value[len(opening) :].rstrip("\\\"'")
    if found is None or sep.strip() in {"::", "=="} or bare.lower() in _AUTH_SCHEMES:
        return str(match.group(0))  # "Authorization: Bearer <t>": the bearer rule took <t>
    if not redacts(found, bare):
        return str(match.group(0))
    closing = value[len(opening) + len(bare) :]
    return f"{key}{quote}{sep}{opening}{_marker(found.kind)}{closing}"


_KEY_NAME = (
    r"[A-Za-z0-9_.-]{0,60}?"
    r"(?:passw(?:or)?d|pwd|passphrase|secret|token|key|authorization|cookies?)"
)
_VALUE = (
    r'"(?:[^"\\\n]|\\.)*"?'  # "quoted", possibly unterminated at the end of a line
    r'|\\"[^"\\\n]*(?:\\")?'  # \"quoted\" inside a JSON string
    r"|'[^'\n]*'?"
    # bare; a marker an earlier rule wrote is taken whole ("redis://:[redacted:password]@"),
    # else the value would end at its "]" and the next scrub read the rest as a password
    r"|(?:\[redacted:[a-z_]+\]|[^ \t\r\n,;&'\"}\])])+"
)
_ASSIGNMENT = (
    # key, quote, separator, value: groups 1-4 (see _assignment)
    rf"(\b{_KEY_NAME})(\\?[\"']?)([ \t]*(?:==?|::?)[ \t]*)({_VALUE})"
)

TOKEN_RULE = Rule(
    "tokens",
    _TOKEN_TRIGGERS,
    linear("|".join(f"({pattern})" for pattern in TOKENS.values())),
    _token,
)
PRIVATE_KEY_RULE = Rule(
    "private_key",
    ("private key",),
    linear(
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
        dotall=True,
    ),
    _fixed("private_key"),
)
SLACK_WEBHOOK_RULE = Rule(
    "slack_webhook",
    ("hooks.slack.com",),
    linear(
        r"(hooks\.slack\.com/(?:services|workflows|triggers)/)([A-Za-z0-9_-]+(?:/[A-Za-z0-9_-]+)*)",
        ignore_case=True,
    ),
    _keep_prefix("slack_webhook"),
)
BEARER_RULE = Rule(
    "bearer",
    ("bearer", "basic", "token", "digest"),
    linear(r"\b(Bearer|Basic|Token|Digest)([ \t]+)([A-Za-z0-9._~+/-]{8,}=*)", ignore_case=True),
    _bearer,
)
URL_CREDENTIALS_RULE = Rule(
    "url_credentials",
    ("://",),
    # scheme://user:password@host and scheme://:password@host (redis)
    linear(r"(://[^/ \t\r\n:@]{0,100}):([^/ \t\r\n@]+)@"),
    _url_credentials,
)
DSN_KEY_RULE = Rule(
    "dsn_key",
    ("://",),
    # A Sentry DSN's key (ours: ingest/models.py, 32 hex digits) is the user part of a URL.
    linear(r"(://)([0-9a-fA-F]{32})@"),
    lambda match: f"{match.group(1)}{_marker('dsn_key')}@",
)
AZURE_SAS_RULE = Rule(
    "azure_sas",
    ("sig=",),
    linear(r"((?:^|[?&; \t\"'])sig=)([^&; \t\r\n\"'<>\[][^&; \t\r\n\"'<>]*)", ignore_case=True),
    _keep_prefix("azure_sas"),
)
CONNECTION_PASSWORD_RULE = Rule(
    "connection_password",
    ("pwd", "password"),
    # ADO.NET/ODBC: "...;Password=two words;" -- the value runs to the next semicolon.
    linear(
        r"(;[ \t]*(?:pwd|password)[ \t]*=[ \t]*)([^;\r\n\"'\[ \t][^;\r\n\"']*)",
        ignore_case=True,
    ),
    _keep_prefix("password"),
)
ASSIGNMENT_RULE = Rule(
    "assignment", _NAME_WORDS, linear(_ASSIGNMENT, ignore_case=True), _assignment
)
EMAIL_RULE = Rule(
    "email",
    ("@",),
    linear(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}\b"),
    _fixed("email"),
)

# Order matters: a vendor token is named before "KEY=value" could call it a secret, and
# "Bearer <t>" is taken before "Authorization: Bearer" is seen as a key and a value.
TEXT_RULES: tuple[Rule, ...] = (
    PRIVATE_KEY_RULE,
    TOKEN_RULE,
    SLACK_WEBHOOK_RULE,
    BEARER_RULE,
    URL_CREDENTIALS_RULE,
    DSN_KEY_RULE,
    AZURE_SAS_RULE,
    CONNECTION_PASSWORD_RULE,
    ASSIGNMENT_RULE,
    EMAIL_RULE,
)
# Names (exception types, frame filename/function/module) keep everything contextual out:
# "PublicKeyToken=..." in an assembly name is not a key and a value.
NAME_RULES: tuple[Rule, ...] = (PRIVATE_KEY_RULE, TOKEN_RULE, URL_CREDENTIALS_RULE, DSN_KEY_RULE)


def _literal(text: str) -> str:
    return "".join(char if char.isalnum() or char == "_" else "\\" + char for char in text)


# One scan that most strings of an incident (frames, shapes, log lines) never get past.
PREFILTER = linear(
    "|".join(_literal(t) for t in sorted({t for rule in TEXT_RULES for t in rule.triggers})),
    ignore_case=True,
)
