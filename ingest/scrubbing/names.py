"""Which field names hold secrets: ``DB_PASSWORD``, ``client_secret``, ``AccountKey``...

One rule serves both forms a name arrives in: a key of a mapping (tags, inference
context, frame ``vars``, log objects) and the left side of ``KEY=value``, ``KEY: value``
or ``"key": "value"`` inside text. A name is split into lowercase words (``_``, ``-``,
``.``, spaces and camelCase humps), so ``dbPassword``, ``db-password`` and ``DB_PASSWORD``
are one name. Plain string work only: nothing here can be made slow by its input.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

MAX_NAME = 100  # longer "names" are text, not field names

_PASSWORD_WORDS = frozenset({"password", "passwd", "pwd", "passphrase", "pass_phrase"})
_STRONG_KEYS = frozenset(
    {
        "api_key",
        "apikey",
        "access_key",
        "secret_key",
        "private_key",
        "account_key",
        "shared_access_key",
        "signing_key",
        "encryption_key",
        "master_key",
        "client_key",
        "license_key",
        "subscription_key",
    }
)
# ``<word>_key`` names that are identifiers, not credentials (``primary_key=True``).
_PUBLIC_KEY_PREFIXES = frozenset(
    {
        "public",
        "primary",
        "foreign",
        "sort",
        "partition",
        "cache",
        "routing",
        "idempotency",
        "hash",
        "dict",
        "row",
        "lookup",
        "group",
        "index",
        "shard",
        "dedup",
        "dedupe",
        "sharding",
        "range",
        "composite",
        "unique",
        "natural",
        "map",
        "state",
        "column",
        "label",
        "text",
        "input",
        "output",
        "prompt",
        "response",
        "image",
        "metric",
        "config",
        "model",
        "layer",
        "param",
        "module",
    }
)
# ML configs name many harmless things ``..._token`` (pad_token="<pad>", eos_token=2), and
# .NET's ``PublicKeyToken`` is the public half of an assembly's signature.
_HARMLESS_TOKEN_PREFIXES = frozenset(
    {
        "pad",
        "eos",
        "bos",
        "unk",
        "sep",
        "cls",
        "mask",
        "special",
        "start",
        "end",
        "image",
        "audio",
        "video",
        "vision",
        "chat",
        "default",
        "first",
        "last",
        "next",
        "input",
        "output",
        "max",
        "min",
        "num",
        "new",
        "stop",
        "boi",
        "eoi",
        "eot",
        "cache",
        "key",  # PublicKeyToken, key_token
        "vocab",
        "bad",
        "split",
        "prefix",
        "suffix",
    }
)
# Values that say "nothing here" or name a type; redacting them would only hide context.
_EMPTY_VALUES = frozenset(
    {
        "none",
        "null",
        "nil",
        "undefined",
        "true",
        "false",
        "str",
        "string",
        "bytes",
        "int",
        "secretstr",
        "***",
        "*****",
        "********",
        "xxx",
        "...",
        "…",
    }
)
WEAK_MIN_LENGTH = 8  # "token: 3" is a count, "input_key=text" a column name


class SecretName(NamedTuple):
    """What a secret-holding name calls its value, and how sure the name alone is."""

    kind: str  # password, secret, api_key, token, authorization, cookie
    strong: bool  # False: redact only a value of WEAK_MIN_LENGTH characters or more
    may_be_path: bool = False  # PWD=/srv/app is the working directory, not a password


def words(name: str) -> list[str]:
    """``OPENAI_API_KEY``, ``openaiApiKey`` and ``openai-api.key`` -> openai, api, key."""
    out: list[str] = []
    current: list[str] = []
    previous = ""
    for char in name:
        if not char.isalnum():
            if current:
                out.append("".join(current))
                current = []
        elif char.isupper() and previous.islower() and current:
            out.append("".join(current))
            current = [char.lower()]
        else:
            current.append(char.lower())
        previous = char
    if current:
        out.append("".join(current))
    return out


_GLUED_SUFFIXES = ("password", "passwd", "secret", "token")
_GLUED_KEY_PREFIXES = frozenset(
    {"api", "secret", "access", "private", "account", "signing", "master", "encryption"}
)


def _unglue(word: str) -> list[str]:
    """``csrftoken`` -> csrf, token; ``dbpassword`` -> db, password; ``monkey`` stays."""
    for suffix in _GLUED_SUFFIXES:
        if word.endswith(suffix) and len(word) > len(suffix):
            return [word[: -len(suffix)], suffix]
    if word.endswith("key") and word[:-3] in _GLUED_KEY_PREFIXES:
        return [word[:-3], "key"]
    return [word]


@functools.lru_cache(maxsize=4096)  # the same few field names arrive in every incident
def secret_name(name: str) -> SecretName | None:
    """The secret a field name announces, or None for an ordinary name."""
    if len(name) > MAX_NAME:
        return None
    parts = words(name)
    if not parts:
        return None
    parts[-1:] = _unglue(parts[-1])
    last, before = parts[-1], (parts[-2] if len(parts) > 1 else "")
    joined = "_".join(parts[-3:])
    if last in _PASSWORD_WORDS or f"{before}_{last}" == "pass_phrase":
        return SecretName("password", True, may_be_path=last == "pwd")
    if last == "secret":
        return SecretName("secret", True)
    if last == "authorization" and before in {"", "http", "proxy", "x"}:
        # not Microsoft.AspNetCore.Authorization, a module in a list of versions
        return SecretName("authorization", True)
    if last in {"cookie", "cookies"}:
        return SecretName("cookie", True)
    if last == "apikey" or (last == "key" and before == "api"):
        return SecretName("api_key", True)
    if last == "token":
        if before in _HARMLESS_TOKEN_PREFIXES or joined.endswith("decoder_start_token"):
            return None
        return SecretName("token", before in {"access", "refresh", "auth", "bearer", "api"})
    if last == "key" and before:
        if f"{before}_{last}" in _STRONG_KEYS or joined in _STRONG_KEYS or before == "secret":
            return SecretName("secret", True)
        if before in _PUBLIC_KEY_PREFIXES:
            return None
        return SecretName("secret", False)
    return None


def is_empty_value(value: str) -> bool:
    """A value that hides nothing: empty, ``None``, ``null``, a type name or a mask."""
    return not value or value.lower() in _EMPTY_VALUES or value.startswith("[redacted:")


def redacts(found: SecretName, value: str) -> bool:
    """Whether ``value``, held by a field named as ``found``, is to be redacted."""
    if is_empty_value(value):
        return False
    if found.may_be_path and value.startswith(("/", "~", ".")):
        return False
    return found.strong or len(value) >= WEAK_MIN_LENGTH
