"""The message that held a request for 8.8 s is answered at once, through the real API."""

from __future__ import annotations

import json

import pytest

from tests.support.factories import project_with_key

pytestmark = pytest.mark.django_db


# 26 digits took 8.8 s and each one more doubled it: 32 would take ~10 minutes on the
# backtracking normaliser, so the old code fails by the timeout (a safety net, not a timing).
@pytest.mark.timeout(60)
def test_digit_tuple_message_that_took_8_8_seconds_is_accepted(client):
    tenant = project_with_key("regex")
    response = client.post(
        "/api/v1/incidents",
        data=json.dumps(
            {"service": "ranker", "error_type": "ValueError", "message": "(1," + "1" * 32 + "!"}
        ),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {tenant.key}",
    )
    assert response.status_code == 202, response.content[:500]
