"""CPU one OTLP export costs to convert and map, before and after the bounded protobuf walk.

"before" is what `ingest/otlp/decode.py` did up to this change: `MessageToDict` of the
whole parsed request, then trace/span ids base64 -> hex; "after" is
`ingest.otlp.protobuf.to_json`. Both then run `mapping.find_incidents`. Parse is the
protobuf C parse both share; the JSON columns time the OTLP/JSON path (`json_loads` +
mapping) of the same shapes (as many units as fit the same size), to see whether it needs a
bound too. Bodies are ~16 MiB (RCA_OTLP_MAX_BYTES); "sdk-like" is an export an SDK or
collector could send (log records with 6 attributes, 1 in 100 an exception). Figures only
(process CPU, one core, best of --repeat); read the load average printed with them.

    python bench/otlp_protobuf.py [--repeat 3] [--mib 16]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
os.environ.setdefault("SECRET_KEY", "bench")

import django  # noqa: E402

django.setup()

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (  # noqa: E402
    ExportLogsServiceRequest,
)

from ingest.otlp import mapping  # noqa: E402
from ingest.otlp.decode import REQUESTS, Signal  # noqa: E402
from ingest.otlp.protobuf import to_json  # noqa: E402
from ingest.storable import json_loads  # noqa: E402
from tests.support.otlp_wire import field, whole_conversion  # noqa: E402


def _repeat(unit: bytes, size: int) -> bytes:
    return unit * (size // len(unit))


def bodies(size: int) -> dict[str, tuple[Signal, bytes, bytes]]:
    """name -> (signal, protobuf body, the same request as OTLP/JSON)."""
    records = _repeat(b"\x12\x00", size - 16)  # ScopeLogs.log_records: LogRecord {}
    attrs = _repeat(b"\x0a\x03\x0a\x01a", size - 16)  # Resource.attributes: {key: "a"}
    spans = _repeat(b"\x12\x00", size - 16)  # ScopeSpans.spans: Span {}
    scopes = _repeat(b"\x12\x00", size - 16)  # ResourceLogs.scope_logs: ScopeLogs {}
    n_records, n_attrs = len(records) // 2, len(attrs) // 5
    n_spans, n_scopes = len(spans) // 2, len(scopes) // 2

    def fit(unit: str, wrap: str) -> str:  # as many units as keep the JSON within size
        return wrap.replace("UNITS", ",".join([unit] * ((size - len(wrap)) // (len(unit) + 1))))

    out = {
        f"{n_records:,} empty records": (
            "logs", field(0x0A, field(0x12, records)),
            fit("{}", '{"resourceLogs":[{"scopeLogs":[{"logRecords":[UNITS]}]}]}'),
        ),
        f"{n_attrs:,} resource attributes": (
            "logs", field(0x0A, field(0x0A, attrs)),
            fit('{"key":"a"}', '{"resourceLogs":[{"resource":{"attributes":[UNITS]}}]}'),
        ),
        f"{n_spans:,} empty spans": (
            "traces", field(0x0A, field(0x12, spans)),
            fit("{}", '{"resourceSpans":[{"scopeSpans":[{"spans":[UNITS]}]}]}'),
        ),
        f"{n_scopes:,} empty scopes": (
            "logs", field(0x0A, scopes),
            fit("{}", '{"resourceLogs":[{"scopeLogs":[UNITS]}]}'),
        ),
    }  # fmt: skip
    sdk = _sdk_like(size)
    out[f"sdk-like, {len(sdk[0]):,} B"] = ("logs", sdk[0], sdk[1])
    return {k: (s, p, j.encode() if isinstance(j, str) else j) for k, (s, p, j) in out.items()}


def _sdk_like(size: int) -> tuple[bytes, bytes]:
    message = ExportLogsServiceRequest()
    resource = message.resource_logs.add()
    for key, value in (("service.name", "ranker"), ("deployment.environment", "prod"),
                       ("host.name", "node-17"), ("k8s.pod.name", "ranker-7c9f")):  # fmt: skip
        resource.resource.attributes.add(key=key).value.string_value = value
    scope = resource.scope_logs.add()
    scope.scope.name = "app.ranker"
    i = 0
    while message.ByteSize() < size - 4096:
        for _ in range(1000):
            record = scope.log_records.add(time_unix_nano=1_700_000_000_000_000_000 + i)
            record.trace_id, record.span_id = i.to_bytes(16, "big"), i.to_bytes(8, "big")
            record.severity_text, record.severity_number = "INFO", 9
            record.body.string_value = f"request {i} served in {i % 97} ms"
            for key in ("http.route", "http.method", "user.tier", "code.lineno"):
                record.attributes.add(key=key).value.string_value = f"v{i % 13}"
            if i % 100 == 0:
                record.attributes.add(key="exception.type").value.string_value = "KeyError"
                trace = "Traceback (most recent call last):\n  File x.py, line 3\nKeyError\n"
                record.attributes.add(key="exception.stacktrace").value.string_value = trace
            i += 1
    return message.SerializeToString(), json.dumps(
        whole_conversion(message), separators=(",", ":")
    ).encode()


def _cpu(run: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        result = run()
        best = min(best, time.process_time() - start)
    return best * 1000, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mib", type=float, default=16)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}; ms of CPU, best of {args.repeat}")
    print(f"{'body':34} {'parse':>7} {'before':>8} {'after':>7} {'map before':>10} "
          f"{'map after':>9} {'json load':>9} {'json map':>8}  incidents/truncated")  # fmt: skip
    for name, (signal, body, as_json) in bodies(int(args.mib * 1024 * 1024)).items():
        message = REQUESTS[signal]()
        parse, _ = _cpu(lambda: message.ParseFromString(body), args.repeat)  # noqa: B023
        before, old = _cpu(lambda: whole_conversion(message), args.repeat)  # noqa: B023
        after, new = _cpu(lambda: to_json(signal, message), args.repeat)  # noqa: B023
        map_before, found_old = _cpu(lambda: mapping.find_incidents(signal, old), 1)  # noqa: B023
        map_after, found = _cpu(lambda: mapping.find_incidents(signal, new), 1)  # noqa: B023
        load, data = _cpu(lambda: json_loads(as_json), 1)  # noqa: B023
        json_map, _ = _cpu(lambda: mapping.find_incidents(signal, data), 1)  # noqa: B023
        same = json.dumps(found.incidents) == json.dumps(found_old.incidents)
        print(f"{name:34} {parse:7.0f} {before:8.0f} {after:7.0f} {map_before:10.0f} "
              f"{map_after:9.0f} {load:9.0f} {json_map:8.0f}  {len(found.incidents)}/"
              f"{found.truncated} (before {len(found_old.incidents)}/{found_old.truncated}, "
              f"same incidents: {same}; JSON {len(as_json):,} B)")  # fmt: skip


if __name__ == "__main__":
    main()
