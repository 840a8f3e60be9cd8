"""A local stand-in for a Slack incoming webhook, for benches that time Slack messages.

It speaks the protocol's server side (200 "ok" to a JSON POST) and records each message
with its arrival time, so a bench can ask when the message naming an issue came.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class SlackReceiver:
    """A local Slack incoming webhook: answers 200 "ok", records each body and its arrival."""

    def __init__(self) -> None:
        self.messages: list[tuple[float, dict[str, Any]]] = []
        received = self.messages

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                at = time.monotonic()
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                received.append((at, json.loads(body or b"{}")))
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/services/T0/B0/bench"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def arrival(self, issue_id: int, kind: str) -> float | None:
        """When the first message of `kind` (new / suggestion / digest) naming the issue came."""
        starts = {"new": "New issue in", "suggestion": "Suggested fix in"}
        link = f"/issues/{issue_id}|"  # the issue's link in the blocks, in either message
        for at, body in list(self.messages):
            text = str(body.get("text", ""))
            if kind == "digest":
                if " more new issues in " not in text:
                    continue
            elif not text.startswith(starts[kind]):
                continue
            if link in json.dumps(body.get("blocks", []), ensure_ascii=False):
                return at
        return None

    def count(self, kind: str) -> int:
        starts = {"new": "New issue in", "suggestion": "Suggested fix in"}
        texts = [str(body.get("text", "")) for _, body in list(self.messages)]
        if kind == "digest":
            return sum(" more new issues in " in t for t in texts)
        return sum(t.startswith(starts[kind]) for t in texts)

    def digest_sizes(self) -> list[int]:
        """How many new issues each digest counted ("17 more new issues in ...")."""
        texts = [str(body.get("text", "")) for _, body in list(self.messages)]
        return [int(t.split()[0]) for t in texts if " more new issues in " in t]

    def stop(self) -> None:
        self.server.shutdown()
