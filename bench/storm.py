"""A storm of known failures, then one new failure: analyses run, and its time to suggestion.

Issues 19 and 22: when a fleet breaks, the known failure floods in, and the new one is
what the on-call person needs. This starts the stack as `make run` does (gunicorn, the
general worker on every queue, a worker on the fresh queue only), posts BENCH_STORM_N
incidents of BENCH_STORM_ISSUES issues through the batch endpoint, then one new distinct
error, and measures:

* `storm_analyses`: analyses run for the storm's issues once every incident is done
  (target <= 2 per issue: repeats join the pending analysis or reuse the finished one);
* `fresh_suggestion_s`: from the new error's POST to its suggestion on
  `/api/v1/incidents/{id}/analysis` (target <= 20 s during a storm);
* each worker's resident memory (main process and pool child, embedding model loaded);
* `slack`: the project's webhook points at a local server speaking Slack's incoming-webhook
  protocol (`SlackReceiver`); for a new error posted on the quiet stack before the storm,
  one posted halfway through it and one after it, seconds from its POST to its "New issue"
  and "Suggested fix" messages, or to the digest that named it instead. The storm's own
  issues open at once, a burst: RCA_SLACK_BURST_LIMIT of them are announced and the rest
  folded into one digest, sent when RCA_SLACK_DIGEST_WINDOW_MINUTES end; a new error that
  opens RCA_SLACK_BURST_SECONDS after the burst is announced on its own (rca/notify).
  `slack_messages` counts what the channel got, by kind.

Sized by BENCH_STORM_N (20,000), BENCH_STORM_ISSUES (20), BENCH_BATCH (200) and
BENCH_CLIENTS (8). When ingest answers before storing (an inbox processor,
`manage.py process_inbox`, stores what was accepted), the stack runs one, as `make run`
does, and a new error's id is looked up by its event id.

Ends with one JSON line. Runs on its own cluster under .data/bench (bench/_env.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import _env
import requests
from slack_receiver import SlackReceiver

N = int(os.environ.get("BENCH_STORM_N", "20000"))
ISSUES = int(os.environ.get("BENCH_STORM_ISSUES", "20"))
BATCH = int(os.environ.get("BENCH_BATCH", "200"))
CLIENTS = int(os.environ.get("BENCH_CLIENTS", "8"))
TIMEOUT = float(os.environ.get("BENCH_STORM_TIMEOUT", "900"))
# The worker processes post to the local Slack stand-in only if its host is allowed.
os.environ.setdefault("RCA_WEBHOOK_ALLOWED_HOSTS", "127.0.0.1")


def incident(kind: int, batch: int = 4, service: str = "ranker") -> dict[str, Any]:
    """An occurrence of issue `kind` (its own stack frame); replicas send identical shapes."""
    message = f"mat1 and mat2 shapes cannot be multiplied ({batch}x256 and 512x10)"
    return {
        "service": service,
        "environment": "prod",
        "error_type": "RuntimeError",
        "message": message,
        "stacktrace": (
            "Traceback (most recent call last):\n"
            f'  File "/srv/{service}/model_{kind}.py", line 41, in forward\n'
            "    return self.head(x)\n"
            '  File "/usr/lib/python3.11/site-packages/torch/nn/modules/linear.py", line 125,'
            " in forward\n"
            "    return F.linear(input, self.weight, self.bias)\n"
            f"RuntimeError: {message}"
        ),
        "inference_context": {"model_id": "ranker-v3", "batch_size": batch},
    }


def new_error(error_type: str = "IndexError") -> dict[str, Any]:
    """A failure the storm never had: another error type, another service."""
    return {
        "service": "tokenizer",
        "environment": "prod",
        "error_type": error_type,
        "message": "index out of range in self",
        "stacktrace": (
            "Traceback (most recent call last):\n"
            '  File "/srv/tokenizer/embed.py", line 17, in encode\n'
            "    return self.embeddings(ids)\n"
            '  File "/usr/lib/python3.11/site-packages/torch/nn/functional.py", line 2264,'
            " in embedding\n"
            "    return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)\n"
            f"{error_type}: index out of range in self"
        ),
        "logs": ["WARNING Token indices sequence length is longer than the specified maximum"],
    }


class Stack:
    """gunicorn plus the two workers of `make run`, each logging to a file."""

    def __init__(self, port: int, logs: Path) -> None:
        from django.conf import settings

        env = {
            **os.environ,
            "PYTHONUNBUFFERED": "1",
            "TQDM_DISABLE": "1",
            "RCA_RATE_LIMIT_PER_MINUTE": "6000000",
            "RCA_RATE_LIMIT_BURST": "100000",
        }
        base = [sys.executable, "-m", "celery", "-A", "webapp", "worker", "--loglevel", "INFO"]
        base += ["--without-mingle", "--without-gossip"]
        celery = [*base, "--concurrency", "1"]
        notify = settings.RCA_QUEUE_NOTIFY
        from webapp.supervisor import gunicorn_argv

        fresh = settings.RCA_QUEUE_FRESH
        self.commands = {
            "web": gunicorn_argv(port, "--worker-class", "gthread", "--threads", "4"),
            "worker": [*celery, "-n", "general@%h"],  # every queue (CELERY_TASK_QUEUES)
            "fresh": [*celery, "-Q", fresh, "-n", f"{fresh}@%h"],
            # Slack only, as `make run` starts it: threads, no model.
            "notify": [*base, "-Q", notify, "--pool", "threads", "--concurrency", "4"]
            + ["-n", f"{notify}@%h"],
        }
        if (_env.REPO / "ingest/management/commands/process_inbox.py").exists():
            self.commands["inbox"] = [sys.executable, "manage.py", "process_inbox"]
        self.logs = {name: logs / f"storm-{name}.log" for name in self.commands}
        self.procs = {
            name: subprocess.Popen(
                argv,
                cwd=_env.REPO,
                env=env,
                stdout=self.logs[name].open("wb"),
                stderr=subprocess.STDOUT,
            )
            for name, argv in self.commands.items()
        }

    def log(self, name: str) -> str:
        return self.logs[name].read_text(errors="replace")

    def rss_mb(self, name: str) -> float:
        import psutil

        main = psutil.Process(self.procs[name].pid)
        return sum(p.memory_info().rss for p in [main, *main.children(recursive=True)]) / 2**20

    def stop(self) -> None:
        for proc in self.procs.values():
            proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()


def wait(predicate, timeout: float, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(interval)
    raise TimeoutError(f"not within {timeout} s")


def analysed(incidents, accepted: int) -> None:
    """Wait until the processor has stored all `accepted` incidents and none of them waits
    for analysis: before it has stored them, "none pending" holds of nothing at all."""
    wait(lambda: incidents.count() >= accepted, TIMEOUT, 0.5)
    wait(
        lambda: not incidents.filter(analysis_status__in=["pending", "analyzing"]).exists(),
        TIMEOUT,
        1,
    )


def main() -> None:
    _env.setup_django()
    from django.conf import settings
    from django.core.management import call_command

    from ingest.keys import create_key
    from ingest.models import Incident, Project
    from rca.models import Analysis, Notification
    from rca.notify.webhooks import set_webhook
    from webapp.celery import app

    call_command("runbooks", "load", "--embed-now", verbosity=0)
    project, _ = Project.objects.get_or_create(slug="storm", defaults={"name": "Storm"})
    project.incidents.all().delete()
    project.issues.all().delete()
    Notification.objects.filter(project=project).delete()
    set_webhook(project, "")  # the warm-up sends nothing; the webhook is set after it
    _, key = create_key(project, "storm")
    app.control.purge()  # messages other benches left for incidents long gone

    port = _env.free_port()
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {key}"}
    stack = Stack(port, Path(os.environ["RCA_DATA_DIR"]))
    slack = SlackReceiver()
    try:
        wait(lambda: all(" ready." in stack.log(w) for w in ("worker", "fresh", "notify")), 120)
        wait(lambda: healthy(base), 60)
        # Warm-up, not measured: each worker loads its embedding model on its first analysis;
        # two new issues at a time, so that the general worker takes one while fresh is busy.
        analysed = re.compile(r"analyse_incident\[[^\]]+\] succeeded")
        for k in range(ISSUES, ISSUES + 12, 2):
            pks = [post_one(base, headers, incident(j, service="warmup")) for j in (k, k + 1)]
            for pk in pks:
                wait(lambda pk=pk: suggestion(base, headers, pk), 300)
            if all(analysed.search(stack.log(w)) for w in ("worker", "fresh")):
                break
        warm = {w: round(stack.rss_mb(w)) for w in ("worker", "fresh")}
        warm_ids = set(Incident.objects.filter(project=project).values_list("pk", flat=True))

        set_webhook(project, slack.url)
        posted: dict[str, tuple[float, int]] = {}  # probe -> (its POST's time, incident id)
        # A new error on the quiet stack: the 2 s target, and the messages with no digest.
        posted["quiet"] = (time.monotonic(), post_one(base, headers, new_error("KeyError")))
        wait(lambda: suggestion(base, headers, posted["quiet"][1]), TIMEOUT, interval=0.05)
        quiet_s = time.monotonic() - posted["quiet"][0]

        items = [incident(i % ISSUES) for i in range(N)]
        chunks = [items[i : i + BATCH] for i in range(0, N, BATCH)]

        def send(chunk: list[dict[str, Any]]) -> int:
            return post_batch(base, headers, chunk)

        mid: dict[str, float] = {}

        def new_error_mid_storm() -> None:
            """Another new failure, posted halfway through the storm."""
            at = time.monotonic()
            pk = post_one(base, headers, new_error("ValueError"))
            posted["mid_storm"] = (at, pk)
            wait(lambda: suggestion(base, headers, pk), TIMEOUT, interval=0.05)
            mid["seconds"] = time.monotonic() - at

        start = time.monotonic()
        with ThreadPoolExecutor(CLIENTS) as pool:
            accepted = sum(pool.map(send, chunks[: len(chunks) // 2]))
            probe = threading.Thread(target=new_error_mid_storm)
            probe.start()
            accepted += sum(pool.map(send, chunks[len(chunks) // 2 :]))
        posted_s = time.monotonic() - start
        probe.join()

        fresh_at = time.monotonic()
        fresh_id = post_one(base, headers, new_error())
        posted["after_storm"] = (fresh_at, fresh_id)
        wait(lambda: suggestion(base, headers, fresh_id), TIMEOUT, interval=0.05)
        fresh_s = time.monotonic() - fresh_at
        fresh_ids = set(
            Incident.objects.filter(project=project, service="tokenizer").values_list(
                "pk", flat=True
            )
        )
        storm = Incident.objects.filter(project=project).exclude(pk__in=warm_ids | fresh_ids)
        waiting_then = storm.filter(analysis_status__in=["pending", "analyzing"]).count()
        analysed(storm, accepted)
        drained_s = time.monotonic() - start

        # Each probe's Slack fate: its own two messages, or a place in the digest, which is
        # sent when the digest window ends (RCA_SLACK_DIGEST_WINDOW_MINUTES after it opened).
        issue_of = {name: Incident.objects.get(pk=pk).issue_id for name, (_, pk) in posted.items()}

        def told(name: str) -> bool:
            issue = issue_of[name]
            alone = slack.arrival(issue, "new") and slack.arrival(issue, "suggestion")
            return bool(alone or slack.arrival(issue, "digest"))

        window_s = 60 * settings.RCA_SLACK_DIGEST_WINDOW_MINUTES
        with contextlib.suppress(TimeoutError):  # a message never sent is reported as null
            wait(lambda: all(told(p) for p in posted), window_s + 120, 1)
        slack_s: dict[str, dict[str, Any]] = {}
        for name, (at, _) in posted.items():
            issue = issue_of[name]
            rows = Notification.objects.filter(issue_id=issue).values_list("kind", "status")
            slack_s[name] = {
                kind: None if (got := slack.arrival(issue, kind)) is None else round(got - at, 2)
                for kind in ("new", "suggestion", "digest")
            } | {"rows": dict(rows)}
        sent: dict[str, Any] = {kind: slack.count(kind) for kind in ("new", "suggestion", "digest")}
        sent["digest_sizes"] = slack.digest_sizes()  # issues per digest, the probes among them
        analyses = Analysis.objects.filter(incident__in=storm).count()
        statuses = sorted(set(storm.values_list("analysis_status", flat=True)))
        rss = {w: round(stack.rss_mb(w)) for w in ("worker", "fresh", "notify", "web")}
        # Inside the stack, without the HTTP queueing of a saturated web server: stored ->
        # analysis finished, per new error (the POST and the polling add the rest).
        inside = {
            a.incident.error_type: (a.finished_at - a.incident.received_at).total_seconds()
            for a in Analysis.objects.filter(incident_id__in=fresh_ids).select_related("incident")
        }
    finally:
        stack.stop()
        slack.stop()

    print(
        f"storm: {accepted} of {N} incidents of {ISSUES} issues accepted in {posted_s:.1f} s"
        f" ({accepted / posted_s:.0f}/s), batches of {BATCH}, {CLIENTS} clients"
    )
    print(f"storm analyses: {analyses} (target <= {2 * ISSUES}); incident statuses {statuses}")
    print(
        f"new error's suggestion {fresh_s:.2f} s after its POST (target <= 20 s),"
        f" while {waiting_then} storm incidents were still waiting"
    )
    print(f"another new error posted halfway through the storm: {mid['seconds']:.2f} s")
    print(f"a new error on the quiet stack, before the storm: {quiet_s:.2f} s")
    print(f"Slack messages received, by kind: {sent}")
    for name, fate in slack_s.items():
        print(f"Slack, {name} new error: seconds from its POST {fate}")
    print(f"stored -> analysis finished, by new error: {inside}")
    print(f"storm fully settled {drained_s:.1f} s after its first POST")
    print(f"RSS MB (main + pool child): after warm-up {warm}, after the storm {rss}")
    print(
        json.dumps(
            {
                "storm_incidents": accepted,
                "storm_issues": ISSUES,
                "storm_post_s": round(posted_s, 2),
                "storm_analyses": analyses,
                "fresh_suggestion_s": round(fresh_s, 2),
                "mid_storm_suggestion_s": round(mid["seconds"], 2),
                "stored_to_analysed_s": {k: round(v, 2) for k, v in inside.items()},
                "storm_waiting_at_fresh": waiting_then,
                "storm_settled_s": round(drained_s, 1),
                "rss_mb": rss,
                "quiet_suggestion_s": round(quiet_s, 2),
                "slack_s": slack_s,
                "slack_messages": sent,
            }
        )
    )


def healthy(base: str) -> bool:
    try:
        return requests.get(f"{base}/healthz", timeout=2).ok
    except requests.RequestException:
        return False


_thread = threading.local()


def post_batch(base: str, headers: dict[str, str], chunk: list[dict[str, Any]]) -> int:
    """POST one batch on this thread's own session; how many incidents it accepted."""
    if not hasattr(_thread, "session"):
        _thread.session = requests.Session()
    resp = _thread.session.post(
        f"{base}/api/v1/incidents/batch",
        json={"incidents": chunk},
        headers=headers,
        timeout=120,
    )
    return int(resp.json()["accepted"]) if resp.status_code == 202 else 0


def post_one(base: str, headers: dict[str, str], payload: dict[str, Any]) -> int:
    """POST one incident; its id, looked up by event id when the answer came before storing."""
    resp = requests.post(f"{base}/api/v1/incidents", json=payload, headers=headers, timeout=30)
    resp.raise_for_status()
    body = resp.json()
    if body.get("incident_id") is not None:
        return int(body["incident_id"])

    def stored() -> int | None:
        found = requests.get(
            f"{base}/api/v1/incidents",
            params={"event_id": body["event_id"]},
            headers=headers,
            timeout=10,
        ).json()
        return int(found["results"][0]["id"]) if found.get("results") else None

    return int(wait(stored, 120, interval=0.02))


def suggestion(base: str, headers: dict[str, str], incident_id: int) -> bool:
    resp = requests.get(
        f"{base}/api/v1/incidents/{incident_id}/analysis", headers=headers, timeout=10
    )
    body = resp.json() if resp.ok else {}
    return bool((body.get("analysis") or {}).get("suggestion"))


if __name__ == "__main__":
    main()
