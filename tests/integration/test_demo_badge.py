"""Demo incidents are told apart from real ones: a `demo` badge on the timeline row and
the issue page, and none on the user's own incidents."""

from __future__ import annotations

import pytest

from tests.support.factories import project_with_key, shape_error
from tests.support.ui import member, store

pytestmark = pytest.mark.django_db

BADGE = '<span class="badge demo"'


def test_demo_issues_carry_a_badge_and_real_ones_do_not(client):
    project = project_with_key("demo").project
    client.force_login(member(project, "alice"))
    demo = store(project, {**shape_error(batch=4), "service": "ranker", "environment": "demo"})
    oom = {"error_type": "torch.OutOfMemoryError", "message": "CUDA out of memory."}
    real = store(project, {"service": "chat", "environment": "prod", **oom})
    assert demo.issue_id != real.issue_id

    rows = client.get("/").content.decode().split("<tr>")[2:]  # after the header row
    by_service = {("ranker" if "<td>ranker</td>" in row else "chat"): row for row in rows}
    assert BADGE in by_service["ranker"] and BADGE not in by_service["chat"]

    assert BADGE in client.get(f"/issues/{demo.issue_id}").content.decode()
    assert BADGE not in client.get(f"/issues/{real.issue_id}").content.decode()
