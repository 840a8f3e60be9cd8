"""Take docs/timeline.png and docs/detail.png from the first-run demo, by hand:

    .venv/bin/python docs/screenshots.py

It does what a new user does: `make run` on an empty data directory (so the demo
programs run and their incidents are posted and analysed by the real worker), waits
until every demo incident is analysed, logs in as the admin the banner names, and
photographs the timeline and one demo issue with Debian's chromium. Then it stops the
instance. A first start embeds the corpus, so this takes two to three minutes; it prints
each demo incident with the suggestion it got. Not a test: nothing here is asserted
beyond what is needed to take the pictures.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
CHROMIUM = "/usr/bin/chromium"
DETAIL_OF = "demo-tokenizer-overflow"  # shape diff, logs, stack and suggestion in one page


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, key: str) -> dict:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"})  # noqa: S310
    with urllib.request.urlopen(request, timeout=10) as resp:  # noqa: S310 - our own server
        return json.loads(resp.read())


def wait_for_banner(log: Path, make: subprocess.Popen, timeout: float = 600) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        if "Rootcause is ready" in text and ("Demo" in text.split("Rootcause is ready")[1]):
            time.sleep(0.5)  # the rest of the banner block
            return log.read_text(errors="replace").split("Rootcause is ready")[1]
        if make.poll() is not None:
            sys.exit(f"make run ended:\n{text[-3000:]}")
        time.sleep(1)
    sys.exit("make run was not ready in time")


def analysed_demo_incidents(base: str, key: str, timeout: float = 300) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        page = get(f"{base}/api/v1/incidents?limit=100", key)["results"]
        demo = [i for i in page if i["environment"] == "demo"]
        if demo and all(i["analysis_status"] in ("done", "failed") for i in demo):
            return demo
        time.sleep(2)
    sys.exit("the demo incidents were not analysed in time")


def screenshots(base: str, password: str, detail_issue: int) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
        page.goto(f"{base}/")
        page.get_by_label("Username").fill("admin")
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Log in").click()
        expect(page.locator("#timeline-results .badge.demo").first).to_be_visible()
        page.screenshot(path=str(DOCS / "timeline.png"), full_page=True)
        page.goto(f"{base}/issues/{detail_issue}")
        expect(page.locator("#suggestion")).to_be_visible()
        page.screenshot(path=str(DOCS / "detail.png"), full_page=True)
        browser.close()


def main() -> None:
    started = time.monotonic()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    data_dir = Path(tempfile.mkdtemp(prefix="rootcause-screenshots-"))
    unset = ("DATABASE_URL", "CELERY_BROKER_URL", "SECRET_KEY", "RCA_DEMO")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(RCA_DATA_DIR=str(data_dir), PORT=str(port))
    log = data_dir / "run.log"
    with log.open("w") as out:
        make = subprocess.Popen(["make", "run"], cwd=REPO, env=env, stdout=out, stderr=out)
    try:
        banner = wait_for_banner(log, make)
        login = re.search(r"log in as admin / (\S+)\)", banner)
        api_key = re.search(r"API key: (rc_\S+)", banner)
        assert login and api_key, banner
        password, key = login.group(1), api_key.group(1)
        print(next(line for line in banner.splitlines() if line.startswith("Demo")))
        incidents = analysed_demo_incidents(base, key)
        for incident in sorted(incidents, key=lambda i: i["id"]):
            analysis = get(f"{base}/api/v1/incidents/{incident['id']}/analysis", key)
            suggestion = (analysis.get("analysis") or {}).get("suggestion") or {}
            first_line = incident["message"].splitlines()[0][:110]
            print(f"- {incident['error_type']}: {first_line}")
            print(f"    -> {suggestion.get('action', analysis['analysis_status'])}")
            print(f"       [{suggestion.get('runbook', '')}]")
        detail = next(i for i in incidents if i["event_id"] == DETAIL_OF)
        screenshots(base, password, detail["issue_id"])
    finally:
        make.send_signal(signal.SIGTERM)
        make.wait(90)
    print(f"docs/timeline.png and docs/detail.png written in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
