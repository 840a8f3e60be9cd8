"""Signals that need a setting (``{regex, needs}`` in front matter, rca/retrieval/signal_needs.py).

A runbook that fixes a message in one setting only (the FSDP loading path for "Cannot copy
out of meta tensor; no data!") gets its signal prior only when the incident names that
setting somewhere: a frame, a log line, the inference context, a tag, the message. Without
the evidence the generic page (``torch-model-on-meta-device``) wins the bare message.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.corpus import files
from rca.corpus.files import RunbookError, match_signals, parse_runbook, without_signals
from rca.retrieval.hybrid import search
from rca.retrieval.index import index_from_runbooks
from rca.retrieval.signal_needs import (
    MAX_EVIDENCE_CHARS,
    incident_terms,
    need_words,
    needs_met,
    signal_entry,
)
from rca.retrieval.signals import build_signals
from tests.support.linear_time import assert_linear

META_PAGES = (
    "fsdp-cpu-ram-efficient-loading",
    "torch-model-on-meta-device",
    "accelerate-offload-disk-folder",
    "device-mismatch-multi-gpu-device-map",
)
BARE = {"error_type": "NotImplementedError", "message": "Cannot copy out of meta tensor; no data!"}
FSDP_FRAME = {
    "filename": "/opt/conda/lib/python3.10/site-packages/torch/distributed/fsdp/"
    "fully_sharded_data_parallel.py",
    "function": "__init__",
    "lineno": 463,
    "module": "torch.distributed.fsdp.fully_sharded_data_parallel",
    "in_app": False,
    "context_line": "_init_param_handle_from_module(",
}
#: One kind of evidence each, in every place the incident may show its setting.
WITH_FSDP = {
    "frame": {
        "exceptions": [{"type": "NotImplementedError", "message": "", "frames": [FSDP_FRAME]}]
    },
    "log": {"logs": [{"message": "accelerate config: distributed_type: FSDP", "level": "info"}]},
    "context": {"inference_context": {"framework": "fsdp"}},
    "tags": {"tags": {"wrapper": "FullyShardedDataParallel"}},
    "message": {"message": "Cannot copy out of meta tensor; no data! (FSDP, rank 1)"},
    "chained": {
        "exceptions": [
            {"type": "RuntimeError", "message": "fsdp_config.sync_module_states", "frames": []},
            {"type": "NotImplementedError", "message": "Cannot copy", "frames": []},
        ]
    },
}
WITHOUT_FSDP = {
    "bare": {},
    "other settings": {"logs": [{"message": "works with DDP and DeepSpeed", "level": "info"}]},
    "user directory": {
        "exceptions": [
            {
                "type": "NotImplementedError",
                "message": "",
                "frames": [
                    {
                        "filename": "/home/fsdp/project/train.py",
                        "function": "main",
                        "lineno": 3,
                        "module": "",
                        "in_app": True,
                        "context_line": "model.to('cuda')",
                    }
                ],
            }
        ]
    },
}


@pytest.fixture(scope="module")
def meta_index():
    """The whole bundled corpus (BM25 and signals; no embeddings, so no model)."""
    return index_from_runbooks(files.load_directory(files.bundled_runbook_dir()), embed=False)


def _top(index, incident):
    results = search(build_signals(incident), None, k=10, index=index)
    signal = {r.slug: r.signal for r in results}
    return results[0].slug, {slug: signal.get(slug, 0.0) for slug in META_PAGES}


@pytest.mark.parametrize("where", sorted(WITH_FSDP))
def test_the_fsdp_page_wins_when_the_incident_shows_fsdp(meta_index, where):
    top, signal = _top(meta_index, {**BARE, **WITH_FSDP[where]})
    assert top == "fsdp-cpu-ram-efficient-loading", where
    assert signal["fsdp-cpu-ram-efficient-loading"] == 1.0


@pytest.mark.parametrize("what", sorted(WITHOUT_FSDP))
def test_without_fsdp_evidence_the_generic_meta_device_page_wins(meta_index, what):
    top, signal = _top(meta_index, {**BARE, **WITHOUT_FSDP[what]})
    assert top == "torch-model-on-meta-device", what
    assert signal["fsdp-cpu-ram-efficient-loading"] == 0.0
    assert signal["torch-model-on-meta-device"] == 1.0


def test_a_signal_that_names_the_setting_itself_needs_no_other_evidence(meta_index):
    incident = {"error_type": "ValueError", "message": "set fsdp_cpu_ram_efficient_loading"}
    top, signal = _top(meta_index, incident)
    assert top == "fsdp-cpu-ram-efficient-loading"
    assert signal[top] == 1.0


PAGE = """---
signals:
  - regex: 'Cannot copy out of meta tensor'
    needs: [fsdp, FullyShardedDataParallel, text-generation-inference]
  - 'fsdp_cpu_ram_efficient_loading'
---
# Meta tensors under FSDP
"""


def test_front_matter_mapping_parses_and_round_trips():
    rb = parse_runbook(PAGE, "page.md")
    assert rb.signals == ("Cannot copy out of meta tensor", "fsdp_cpu_ram_efficient_loading")
    assert rb.signal_needs == (
        ("fsdp", "FullyShardedDataParallel", "text-generation-inference"),
        (),
    )
    entries = rb.signal_entries()
    assert entries[1] == "fsdp_cpu_ram_efficient_loading"
    assert signal_entry(entries[0]) == (
        "Cannot copy out of meta tensor",
        (("fsdp",), ("fullyshardeddataparallel",), ("text", "generation", "inference")),
    )
    assert without_signals([rb])[0].signal_needs == ()
    plain = parse_runbook("---\nsignals:\n  - 'Cannot copy out'\n---\n# Page\n", "plain.md")
    assert plain.signal_needs == () and plain.signal_entries() == ["Cannot copy out"]


def test_match_signals_applies_needs_only_when_given_terms():
    rb = parse_runbook(PAGE, "page.md")
    text = "NotImplementedError: Cannot copy out of meta tensor; no data!"
    assert match_signals(rb, text) == ("Cannot copy out of meta tensor",)
    assert match_signals(rb, text, frozenset({"ddp"})) == ()
    assert match_signals(rb, text, frozenset({"fsdp"})) == ("Cannot copy out of meta tensor",)
    assert match_signals(rb, text, frozenset({"text", "generation"})) == ()
    assert match_signals(rb, text, frozenset({"text", "generation", "inference"})) != ()


@pytest.mark.parametrize(
    ("signals", "problem"),
    [
        ("  - {regex: 'x y z', needs: []}\n", "must not be empty"),
        ("  - {regex: 'x y z'}\n", "missing"),
        ("  - {needs: [fsdp]}\n", "regex or {regex, needs}"),
        ("  - {regex: 'x y z', needs: [fsdp], when: [a]}\n", "regex or {regex, needs}"),
        ("  - {regex: 'x y z', needs: [the]}\n", "names no word"),
        ("  - {regex: 'x y z', needs: fsdp}\n", "must be a list"),
        ("  - {regex: '(?=x)y', needs: [fsdp]}\n", "invalid regex"),
        ("  - {regex: 'Error', needs: [fsdp]}\n", "catch-all"),
    ],
)
def test_malformed_needs_fail_at_load_naming_the_field(signals, problem):
    text = f"---\nsignals:\n{signals}---\n# Page\n\nBody.\n"
    with pytest.raises(RunbookError, match=problem) as raised:
        parse_runbook(text, "bad.md")
    assert raised.value.field == "signals"


def test_need_names_are_read_as_the_tokeniser_reads_words():
    assert need_words("FSDP") == ("fsdp",)
    assert need_words("DeepSpeed") == ("deepspeed",)
    assert need_words("llama.cpp") == ("llama.cpp",)
    terms = incident_terms({"message": "from torch.distributed.fsdp import X; DeepSpeed ZeRO"})
    assert needs_met((need_words("fsdp"),), terms)
    assert needs_met((need_words("deepspeed"),), terms)
    assert not needs_met((need_words("vllm"),), terms)
    assert needs_met((), frozenset())


def test_the_users_directories_are_no_evidence():
    terms = incident_terms(
        {"message": "open /home/vllm/work/data.bin failed", "logs": ["/srv/tgi/cache/x/y.json"]}
    )
    assert "vllm" not in terms and "tgi" not in terms


def test_incident_text_is_read_up_to_a_bound():
    huge = {"message": "x " * MAX_EVIDENCE_CHARS, "logs": ["fsdp"]}
    assert "fsdp" not in incident_terms(huge)


def test_setting_terms_are_not_stored_with_the_analysis():
    signals = build_signals({**BARE, **WITH_FSDP["log"]})
    assert "fsdp" in signals.setting_terms
    assert "setting_text" not in signals.as_dict()
    assert "setting_terms" not in signals.as_dict()


_WORDS = st.sampled_from(
    ["fsdp", "FSDP", "deepspeed", "vllm", "x", "_", ".", "/", " ", "-", "[", "]"]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORDS | st.text(max_size=8), max_size=40), st.lists(_WORDS, max_size=10))
def test_more_evidence_never_takes_a_signal_away(first, more):
    """Monotonic: whatever the incident says, saying more keeps every name it met."""
    needs = tuple(need_words(n) for n in ("fsdp", "deepspeed", "vllm"))
    before = incident_terms({"message": "".join(first)})
    after = incident_terms({"message": "".join(first), "logs": ["".join(more)]})
    assert before <= after
    assert needs_met(needs, after) or not needs_met(needs, before)


@pytest.mark.parametrize("piece", ["a", "a.", "_", "/a", "A_b", "[FSDP", "\\\\x/"])
def test_reading_adversarial_incident_text_takes_linear_time(piece):
    def read(n: int) -> None:
        text = piece * n
        incident_terms({"message": text, "logs": [text], "inference_context": {"framework": text}})

    assert_linear(read, 2_000, 50_000)


def test_the_stored_form_builds_the_same_index_as_the_files():
    """The database keeps signals as front matter writes them (a regex or {regex, needs}):
    an index built from such rows gates the same signals."""
    from rca.retrieval.index import _build

    rb = parse_runbook(PAGE, "page.md")
    row = {"slug": rb.slug, "title": rb.title, "failure_class": "", "tags": []}
    index = _build([{**row, "signals": rb.signal_entries()}], [], "v")
    text = "NotImplementedError: Cannot copy out of meta tensor; no data!"
    assert index.signal_matches(text).tolist() == [0.0]
    assert index.signal_matches(text, frozenset({"fsdp"})).tolist() == [1.0]
    assert index.signal_matches(text + " fsdp_cpu_ram_efficient_loading").tolist() == [1.0]
    assert "Cannot copy out of meta tensor" in index.field_texts[0]


def test_with_fsdp_evidence_the_offline_provider_names_the_fsdp_fix():
    """The whole path (lexical retrieval, offline provider, validation) for the FSDP page:
    the message plus the launch's FSDP config in a log line."""
    from rca.suggestion.validation import validate
    from tests.support.vendor_routing import route_incident

    payload = {
        "exception_type": "NotImplementedError",
        "message": "NotImplementedError: Cannot copy out of meta tensor; no data!",
        "logs": ["accelerate launch --config_file fsdp_config.yaml train.py"],
    }
    found, ctx, draft = route_incident(payload)
    assert found[0].slug == "fsdp-cpu-ram-efficient-loading", [r.slug for r in found]
    assert draft.runbook == "fsdp-cpu-ram-efficient-loading"
    assert "fsdp_cpu_ram_efficient_loading" in draft.action
    assert validate(draft, ctx).ok
    bare, _ctx, _draft = route_incident({k: payload[k] for k in ("exception_type", "message")})
    assert bare[0].slug == "torch-model-on-meta-device"
