"""Platforms, log entries, ids and ML context (issue 21): exception types as each platform
writes them, templated log messages, event ids, fingerprints and native crashes."""

import pytest

from ingest.derive import derive
from ingest.schema import IncidentIn
from ingest.sentry.mapping import event_to_incident


def _raised(platform: str, **exception) -> dict:
    incident = event_to_incident({"platform": platform, "exception": {"values": [exception]}})
    IncidentIn.model_validate(incident)
    return incident


DOTNET_ASSEMBLY = (
    "System.Private.CoreLib, Version=4.0.0.0, Culture=neutral, PublicKeyToken=7cec85d7bea7798e"
)


@pytest.mark.parametrize(
    ("platform", "exception", "error_type", "module"),
    [
        ("csharp", {"type": "System.InvalidOperationException", "module": DOTNET_ASSEMBLY},
         "System.InvalidOperationException", DOTNET_ASSEMBLY),
        ("java", {"type": "IllegalStateException", "module": "java.lang"},
         "java.lang.IllegalStateException", "java.lang"),
        ("java", {"type": "Outer$Inner", "module": "com.acme"}, "com.acme.Outer$Inner", "com.acme"),
        ("python", {"type": "OutOfMemoryError", "module": "torch.cuda"},
         "torch.cuda.OutOfMemoryError", "torch.cuda"),
        ("go", {"type": "*os.PathError", "module": "os"}, "*os.PathError", "os"),
        ("javascript", {"type": "TypeError"}, "TypeError", None),
        ("node", {"type": "Error", "module": "app:///dist/main.js"}, "Error", "app:///dist/main.js"),
        ("php", {"type": "App\\Exceptions\\Broken"}, "App\\Exceptions\\Broken", None),
        ("ruby", {"type": "ActiveRecord::RecordNotFound", "module": "ActiveRecord"},
         "ActiveRecord::RecordNotFound", "ActiveRecord"),
        ("cocoa", {"type": "NSInvalidArgumentException", "module": "CoreFoundation"},
         "NSInvalidArgumentException", "CoreFoundation"),
        ("cocoa", {"mechanism": {"meta": {"ns_error": {"domain": "NSURLErrorDomain", "code": -1}}}},
         "NSURLErrorDomain", None),
        ("native", {"mechanism": {"meta": {"signal": {"name": "SIGSEGV", "number": 11}}}},
         "SIGSEGV", None),
        ("native", {"mechanism": {"meta": {"mach_exception": {"name": "EXC_BAD_ACCESS"}}}},
         "EXC_BAD_ACCESS", None),
    ],
)  # fmt: skip
def test_exception_types_as_each_platform_writes_them_with_the_module_apart(
    platform, exception, error_type, module
):
    incident = _raised(platform, **exception)
    assert incident["error_type"] == error_type
    assert incident["stacktrace"][-1].get("module") == module


@pytest.mark.parametrize(
    ("logentry", "message"),
    [
        ({"message": "Error during cleanup of %s: %s", "params": ["todo-1", "boom"]},
         "Error during cleanup of todo-1: boom"),
        ({"message": "%d of %i GPUs lost, %.1f%% left", "params": [3, 8.0, 62.5]},
         "3 of 8 GPUs lost, 62.5% left"),
        ({"message": "cleanup of %(one)s: %(two)r", "params": {"one": "a", "two": "b"}},
         "cleanup of a: 'b'"),
        ({"message": "batch {0} of {1}", "params": [4, 10]}, "batch 4 of 10"),
        ({"message": "Here is a new {foo}", "params": {"foo": "error"}}, "Here is a new error"),
        ({"message": "{} then {}", "params": ["a", {"b": 1}]}, 'a then {"b": 1}'),
        # formatted wins, even when it still shows a placeholder (as the PHP SDK sends it)
        ({"message": "like {foo}", "params": {"foo": "x"}, "formatted": "like {foo}"},
         "like {foo}"),
        # params that do not fit keep the template, as Sentry keeps it
        ({"message": "lost %s and %s", "params": ["one"]}, "lost %s and %s"),
        ({"message": "count %d", "params": ["many"]}, "count %d"),
        ({"message": "no placeholders", "params": ["unused"]}, "no placeholders"),
        ("a plain string as logentry", "a plain string as logentry"),
    ],
)  # fmt: skip
def test_logentry_params_are_filled_as_sentry_fills_them(logentry, message):
    assert event_to_incident({"logentry": logentry})["message"] == message
    assert event_to_incident({"message": logentry})["message"] == message


def test_a_template_that_repeats_a_huge_param_is_cut_not_built():
    event = {"logentry": {"message": "%(a)s" * 10_000, "params": {"a": "x" * 10_000}}}
    assert len(event_to_incident(event)["message"]) == 65_536


def test_ml_tags_and_contexts_become_the_inference_context():
    incident = event_to_incident(
        {
            "message": "CUDA out of memory",
            "tags": {"model": "ranker-v3", "model.version": "3.1", "batch_size": "32"},
            "contexts": {"gpu": {"name": "NVIDIA A10G", "memory_size": 23028}},
        }
    )
    assert incident["inference_context"] == {
        "model_id": "ranker-v3",
        "model_version": "3.1",
        "device": "NVIDIA A10G",
        "batch_size": 32,
    }
    structured = event_to_incident(
        {
            "message": "m",
            "tags": {"model": "from-tag"},
            "contexts": {"model": {"name": "from-context", "version": "7"}},
        }
    )
    assert structured["inference_context"] == {"model_id": "from-context", "model_version": "7"}


@pytest.mark.parametrize(
    "spelling",
    ["8f0c2e4b9a7d4c1e8b3a6f5d2c1b0a99", "8F0C2E4B-9A7D-4C1E-8B3A-6F5D2C1B0A99",
     "{8f0c2e4b-9a7d-4c1e-8b3a-6f5d2c1b0a99}"],
)  # fmt: skip
def test_event_ids_are_32_lowercase_hex_digits(spelling):
    assert event_to_incident({"event_id": spelling})["event_id"] == (
        "8f0c2e4b9a7d4c1e8b3a6f5d2c1b0a99"
    )


def test_the_envelope_headers_id_stands_in_only_for_a_missing_one():
    assert event_to_incident({}, envelope_event_id="AB" * 16)["event_id"] == "ab" * 16
    assert event_to_incident({"event_id": "cd" * 16}, "ab" * 16)["event_id"] == "cd" * 16
    assert "event_id" not in event_to_incident({"event_id": "no spaces allowed"}, None)


@pytest.mark.parametrize(
    "event",
    [
        {"event_id": "ab" * 16, "platform": "go", "exception": []},
        {"exception": {"values": [{}]}},
        {"level": "error", "threads": [{"stacktrace": {"frames": [{"function": "run"}]}}]},
    ],
)
def test_an_event_with_nothing_to_title_it_is_unlabelled_not_dropped(event):
    incident = event_to_incident(event)
    assert incident["message"] == "<unlabeled event>"
    IncidentIn.model_validate(incident)


def test_the_sdks_fingerprint_is_kept_for_grouping():
    got = event_to_incident({"message": "m", "fingerprint": ["{{ default }}", 42, "", None]})
    assert got["fingerprint"] == ["{{ default }}", "42"]


def test_a_native_crash_takes_its_frames_from_the_crashed_thread():
    frames = [{"function": "main", "package": "/usr/bin/app"}, {"function": "crash"}]
    incident = event_to_incident(
        {
            "platform": "native",
            "exception": {"values": [{"type": "SIGSEGV", "thread_id": 7}]},
            "threads": {"values": [{"id": 1, "stacktrace": {"frames": [{"function": "idle"}]}},
                                   {"id": 7, "stacktrace": {"frames": frames}}]},
        }
    )  # fmt: skip
    assert [f["function"] for f in incident["stacktrace"][-1]["frames"]] == ["main", "crash"]
    assert incident["stacktrace"][-1]["frames"][0]["module"] == "/usr/bin/app"


def test_log_messages_group_by_their_template_as_in_sentry():
    def fingerprint(event):
        return derive(IncidentIn.model_validate(event_to_incident(event)).payload()).fingerprint

    def cleanup(job, error):
        return {"logentry": {"message": "Cleanup of %s failed: %s", "params": [job, error]}}

    assert fingerprint(cleanup("nightly-eu", "disk full")) == fingerprint(
        cleanup("hourly-us", "timeout")
    )
    assert fingerprint(cleanup("a", "b")) != fingerprint(
        {"logentry": {"message": "Upload of %s failed: %s", "params": ["a", "b"]}}
    )
    sdk_says = {**cleanup("a", "b"), "fingerprint": ["cleanup"]}
    assert event_to_incident(sdk_says)["fingerprint"] == ["cleanup"]
    raised = {**cleanup("a", "b"), "exception": {"values": [{"type": "OSError"}]}}
    assert "fingerprint" not in event_to_incident(raised)
