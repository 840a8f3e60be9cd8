"""Milliseconds one request body costs to decode, per kind of bomb, before and after.

"before" is `decode_body` as it was in ingest/sentry/envelope.py at commit dbbe852 (read
from git, run with its production cap of 8 x RCA_MAX_BODY_BYTES, before any key was
checked); "after" is `ingest.content_encoding.decode` with the envelope cap
(RCA_SENTRY_MAX_ENVELOPE_BYTES, 20 MiB), run once the key is good; "no key" is
`decode_prefix` to the envelope header line, all a request without a key now costs. All
run in this process on one core: the CPU one web worker spends per request. A run that
would pass `--max-seconds` is not started again (the old many-member case grows
quadratically).

    python bench/decompression.py [--repeat 5] [--max-seconds 30] [--http]

`--http` also sends each body, with no key, to `/api/1/envelope/` of a gunicorn started
as `make run` starts it (bench cluster under .data/bench) and prints the answer's status
and milliseconds: what the issue's probe measured.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import subprocess
import sys
import time
import types
import zlib
from collections.abc import Callable
from pathlib import Path

import brotli
import zstandard

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
MiB = 1024 * 1024
BEFORE_COMMIT = "dbbe852"


def _zeros_compressed(size: int, wbits: int) -> bytes:
    """`size` zero bytes through zlib without holding them all at once."""
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = b"\0" * MiB
    parts = [packer.compress(block) for _ in range(size // MiB)]
    return b"".join(parts) + packer.flush()


def bodies() -> dict[str, tuple[bytes, str]]:
    gz = 16 + zlib.MAX_WBITS
    zeros_gz = _zeros_compressed(1024 * MiB, gz)
    members = gzip.compress(b"") * 2000
    return {
        "many members 2k (gzip, gzip)": (gzip.compress(members), "gzip, gzip"),
        "many members 50k (gzip, gzip)": (gzip.compress(gzip.compress(b"") * 50_000), "gzip, gzip"),
        "many members 2k (gzip)": (members, "gzip"),
        "ratio gzip 1 GiB zeros": (zeros_gz, "gzip"),
        "ratio deflate 1 GiB zeros": (_zeros_compressed(1024 * MiB, zlib.MAX_WBITS), "deflate"),
        "ratio br 256 MiB zeros": (brotli.compress(b"\0" * (256 * MiB), quality=5), "br"),
        "ratio zstd 256 MiB zeros": (
            zstandard.ZstdCompressor(level=3).compress(b"\0" * (256 * MiB)),
            "zstd",
        ),
        "nested gzip(gzip(1 GiB zeros))": (gzip.compress(zeros_gz), "gzip, gzip"),
        "truncated gzip (1 MiB text, cut)": (
            gzip.compress(bytes(range(256)) * 4096)[:-100],
            "gzip",
        ),
        "three stacked (gzip x3)": (
            gzip.compress(gzip.compress(gzip.compress(b"x"))),
            "gzip, gzip, gzip",
        ),
        "unknown encoding": (b"{}", "compress"),
        "honest 200 KB envelope (gzip)": (gzip.compress(b'{"message":"boom"}\n' * 10_000), "gzip"),
    }


def _before() -> Callable[[bytes, str], object]:
    source = subprocess.run(
        ["git", "show", f"{BEFORE_COMMIT}:ingest/sentry/envelope.py"],
        cwd=REPO,
        capture_output=True,
        check=True,
        text=True,
    ).stdout
    module = types.ModuleType("envelope_before")
    exec(compile(source, "envelope_before.py", "exec"), module.__dict__)  # noqa: S102
    return lambda body, coding: module.decode_body(body, coding, 8 * MiB)


def _after() -> Callable[[bytes, str], object]:
    from ingest.content_encoding import decode

    return lambda body, coding: decode(body, coding, 20 * MiB)


def _prefix() -> Callable[[bytes, str], object]:
    """What a request without a key costs now: the envelope header line, at most."""
    from ingest.content_encoding import decode_prefix

    return lambda body, coding: decode_prefix(body, coding, 64 * 1024 + 1)


def _time(decode: Callable[[bytes, str], object], body: bytes, coding: str) -> tuple[float, str]:
    start = time.perf_counter()
    try:
        out = decode(body, coding)
        outcome = f"ok {len(out)} B"  # type: ignore[arg-type]
    except ValueError as exc:
        outcome = f"{type(exc).__name__}: {str(exc)[:48]}"
    return (time.perf_counter() - start) * 1000, outcome


def _http(bodies_by_name: dict[str, tuple[bytes, str]], repeat: int) -> None:
    import http.client
    import os

    sys.path.insert(0, str(REPO / "bench"))
    import _env

    from webapp.supervisor import gunicorn_argv, wait_until_ready

    _env.setup_django()
    port = _env.free_port()
    server = subprocess.Popen(
        gunicorn_argv(port, "--log-level", "warning"), cwd=REPO, env=os.environ
    )
    try:
        wait_until_ready(f"http://127.0.0.1:{port}/healthz")
        print(f"\n{'over HTTP, no key':36} {'status':>9} {'ms':>10}  answer")
        for name, (body, coding) in bodies_by_name.items():
            runs, status, answer = [], 0, b""
            for _ in range(repeat):
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                start = time.perf_counter()
                conn.request("POST", "/api/1/envelope/", body, {"Content-Encoding": coding})
                resp = conn.getresponse()
                answer, status = resp.read(), resp.status
                runs.append((time.perf_counter() - start) * 1000)
                conn.close()
            print(f"{name:36} {status:>9} {statistics.median(runs):>10.1f}  {answer[:60]!r}")
    finally:
        server.terminate()
        server.wait(20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--max-seconds", type=float, default=30.0)
    parser.add_argument("--http", action="store_true", help="also time each body over HTTP")
    args = parser.parse_args()
    decoders = {"before": _before(), "after": _after(), "no key": _prefix()}
    print(
        f"{'body':36} {'bytes':>9} {'before ms':>10} {'after ms':>9} {'no key ms':>9}"
        "  after outcome (with a key)"
    )
    all_bodies = bodies()
    for name, (body, coding) in all_bodies.items():
        row = {}
        outcome = ""
        for label, decode in decoders.items():
            runs = []
            for _ in range(args.repeat):
                ms, outcome_now = _time(decode, body, coding)
                runs.append(ms)
                if ms > args.max_seconds * 1000:
                    break
            row[label] = statistics.median(runs)
            if label == "after":
                outcome = outcome_now
        print(
            f"{name:36} {len(body):>9} {row['before']:>10.1f} {row['after']:>9.1f}"
            f" {row['no key']:>9.1f}  {outcome}"
        )
    if args.http:
        _http(all_bodies, args.repeat)


if __name__ == "__main__":
    main()
