"""One spelling per event id, so a retry is recognised however the client wrote the id.

Sentry's event ids are UUIDs that SDKs send as 32 hex digits, some with dashes, some
in upper case; Relay reads them all as one id and answers with the 32 lowercase digits.
We store that form, for Sentry events and for JSON API ids alike: a client retrying
with the other spelling gets the first incident back instead of a second one.
Ids that are not UUIDs (``deploy-42:attempt-1``) are the client's own and kept as sent.
"""

from __future__ import annotations

import re

_UUID = re.compile(
    r"(?:urn:uuid:)?\{?([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})\}?",
    re.IGNORECASE,
)


def normalise_event_id(value: str) -> str:
    """32 lowercase hex digits for any spelling of a UUID; any other id unchanged."""
    match = _UUID.fullmatch(value.strip())
    return "".join(match.groups()).lower() if match else value
