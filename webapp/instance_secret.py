"""The SECRET_KEY of a `make run` instance: generated once, kept in `.data/secret_key` (0600).

Settings refuse to start without SECRET_KEY, so nothing ever runs on a key that is
published in this repository. `manage.py run` is the one zero-configuration entry point:
before Django loads, it puts this instance's own random key into the environment, which
the worker and web server it starts inherit. A key set in the environment or `.env` wins.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import environ

from webapp import embedded

FILENAME = "secret_key"


def load_or_create(path: Path) -> str:
    """The key stored at `path`, created (mode 600, never world-readable) if missing."""
    try:
        key = path.read_text().strip()
    except FileNotFoundError:
        key = ""
    if key:
        return key
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(key + "\n")
    os.chmod(path, 0o600)  # an existing empty file may have had other bits
    return key


def provide_for_local_run() -> None:
    """Give `manage.py run` (and its children) a key when the operator configured none."""
    environ.Env.read_env(embedded.BASE_DIR / ".env", overwrite=False)  # as settings do
    if not os.environ.get("SECRET_KEY"):
        os.environ["SECRET_KEY"] = load_or_create(embedded.state_dir() / FILENAME)
