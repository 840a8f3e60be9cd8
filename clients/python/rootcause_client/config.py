"""Where to send and with which key: `RCA_URL` and `RCA_API_KEY`, read when first needed."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Config:
    url: str  # the Rootcause base URL, e.g. http://rootcause:8000
    api_key: str  # a project key, rc_<prefix>_<secret>
    queue_size: int = 100  # incidents waiting to be sent; more are dropped (and counted)
    timeout: float = 5.0  # seconds per HTTP attempt
    max_attempts: int = 5  # per incident, for 429/5xx/unreachable answers
    flush_on_exit: float = 3.0  # seconds an exiting process waits for unsent incidents

    @property
    def enabled(self) -> bool:
        return bool(self.url and self.api_key)


def from_env() -> Config:
    """The configuration from the environment; sending is off when either variable is unset."""
    return Config(
        url=os.environ.get("RCA_URL", "").rstrip("/"),
        api_key=os.environ.get("RCA_API_KEY", ""),
        queue_size=int(os.environ.get("RCA_CLIENT_QUEUE_SIZE", "100")),
        timeout=float(os.environ.get("RCA_CLIENT_TIMEOUT", "5")),
    )
