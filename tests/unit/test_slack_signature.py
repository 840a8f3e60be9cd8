"""Slack's request signature: for any secret and body, only the exact signature passes."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from rca.notify.slack.interactions import WINDOW_SECONDS, Refused, signature, verify

secrets = st.text(min_size=1, max_size=64)
bodies = st.binary(max_size=2048)
times = st.integers(min_value=0, max_value=4_000_000_000)


def status_of(secret: str, ts: str, given_sig: str, body: bytes, now: float) -> int:
    try:
        verify(secret, ts, given_sig, body, now)
    except Refused as refused:
        return refused.status
    return 200


def test_slacks_documented_example_verifies():
    # The worked example in Slack's "Verifying requests from Slack" guide.
    secret = "8f742231b10e8888abcd99yyyzzz85a5"
    ts = "1531420618"
    body = (
        b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&"
        b"channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&"
        b"command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2F"
        b"commands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&"
        b"trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
    )
    expected = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
    assert signature(secret, ts, body) == expected
    assert status_of(secret, ts, expected, body, now=int(ts) + 10) == 200


@given(secret=secrets, ts=times, body=bodies)
def test_the_exact_signature_passes(secret, ts, body):
    sig = "v0=" + hmac.new(secret.encode(), f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
    assert signature(secret, str(ts), body) == sig
    assert status_of(secret, str(ts), sig, body, now=ts) == 200


@given(secret=secrets, ts=times, body=bodies, other=st.text(max_size=80))
def test_any_other_signature_is_refused(secret, ts, body, other):
    assume(other != signature(secret, str(ts), body))
    assert status_of(secret, str(ts), other, body, now=ts) == 401


@given(secret=secrets, other_secret=secrets, ts=times, body=bodies, other_body=bodies)
def test_another_secret_or_body_is_refused(secret, other_secret, ts, body, other_body):
    sig = signature(secret, str(ts), body)
    if other_secret != secret:
        assert status_of(other_secret, str(ts), sig, body, now=ts) == 401
    if other_body != body:
        assert status_of(secret, str(ts), sig, other_body, now=ts) == 401
    assert status_of(secret, str(ts + 1), sig, body, now=ts) == 401


@given(secret=secrets, ts=times, body=bodies, skew=st.integers(-(10**9), 10**9))
def test_a_signed_request_passes_only_inside_the_window(secret, ts, body, skew):
    sig = signature(secret, str(ts), body)
    expected = 200 if abs(skew) <= WINDOW_SECONDS else 400
    assert status_of(secret, str(ts), sig, body, now=ts + skew) == expected


@pytest.mark.parametrize("ts", ["", "１２３", "-5", "12.5", "abc"])
def test_a_timestamp_that_is_not_a_unix_time_is_refused(ts):
    sig = signature("s3cr3t", ts, b"payload=x")
    assert status_of("s3cr3t", ts, sig, b"payload=x", now=0) in (400, 401)


def test_no_secret_configured_refuses_everything():
    assert status_of("", "0", signature("", "0", b""), b"", now=0) == 404
