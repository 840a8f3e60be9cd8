"""JVM stack traces: causes, elided frames and suppressed exceptions."""

from __future__ import annotations

from ingest.parsing.java_stacktrace import parse_java_stacktrace

TRACE = """\
2024-05-01 12:00:00.123 ERROR [main] c.e.Server - request failed
Exception in thread "main" java.lang.IllegalStateException: inference failed
\tat com.example.serving.Predictor.predict(Predictor.java:42)
\tat com.example.serving.Server.handle(Server.java:17)
\tat java.base/java.lang.Thread.run(Thread.java:833)
\tSuppressed: java.io.IOException: close failed
\t\tat com.example.serving.Session.close(Session.java:9)
\t\t... 2 more
Caused by: ai.onnxruntime.OrtException: Error code - ORT_INVALID_ARGUMENT
 - message: Got invalid dimensions for input: input
\tat ai.onnxruntime.OrtSession.run(Native Method)
\tat com.example.serving.Predictor.runModel(Predictor.java:88)
\tat com.example.serving.Predictor.predict(Predictor.java:40)
\t... 2 more
"""


def test_cause_comes_first_and_the_thrown_exception_last():
    exceptions = parse_java_stacktrace(TRACE)
    assert [e["type"] for e in exceptions] == [
        "ai.onnxruntime.OrtException",
        "java.lang.IllegalStateException",
    ]
    assert [e["relation"] for e in exceptions] == [None, "cause"]
    assert exceptions[1]["message"] == "inference failed"


def test_elided_frames_of_a_cause_are_filled_in_from_the_enclosing_trace():
    cause = parse_java_stacktrace(TRACE)[0]
    functions = [f"{f['module']}.{f['function']}" for f in cause["frames"]]
    assert functions == [
        "java.lang.Thread.run",
        "com.example.serving.Server.handle",
        "com.example.serving.Predictor.predict",
        "com.example.serving.Predictor.runModel",
        "ai.onnxruntime.OrtSession.run",
    ]


def test_frames_read_caller_to_callee_with_files_and_lines():
    thrown = parse_java_stacktrace(TRACE)[1]
    last = thrown["frames"][-1]
    assert (last["filename"], last["lineno"], last["function"]) == ("Predictor.java", 42, "predict")
    assert last["in_app"]
    assert not thrown["frames"][0]["in_app"]  # java.lang.Thread


def test_native_methods_have_no_file_or_line():
    native = parse_java_stacktrace(TRACE)[0]["frames"][-1]
    assert (native["filename"], native["lineno"]) == ("", None)


def test_suppressed_exceptions_are_not_part_of_the_chain():
    exceptions = parse_java_stacktrace(TRACE)
    assert all(e["type"] != "java.io.IOException" for e in exceptions)
    assert all(f["function"] != "close" for e in exceptions for f in e["frames"])


def test_multi_line_message_before_the_frames_is_kept():
    cause = parse_java_stacktrace(TRACE)[0]
    assert cause["message"].splitlines() == [
        "Error code - ORT_INVALID_ARGUMENT",
        " - message: Got invalid dimensions for input: input",
    ]


def test_trace_without_thread_prefix_is_parsed():
    text = "java.lang.NullPointerException\n    at a.B.c(B.java:1)\n"
    [exception] = parse_java_stacktrace(text)
    assert (exception["type"], exception["message"]) == ("java.lang.NullPointerException", "")
    assert exception["frames"][0]["module"] == "a.B"


def test_text_without_a_jvm_trace_gives_nothing():
    assert parse_java_stacktrace("ERROR: it broke\nsee logs") == []
