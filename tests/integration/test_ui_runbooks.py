"""The runbooks page: counts of citations and verdicts; runbooks rendered and sanitised."""

from __future__ import annotations

import pytest
from django.urls import reverse

from rca.corpus.store import load_runbooks
from rca.feedback import decide
from rca.models import Runbook
from tests.support.factories import project_with_key, shape_error
from tests.support.ui import analysed, member, store

pytestmark = pytest.mark.django_db


def test_list_counts_citations_and_verdicts_in_my_projects_only(client):
    load_runbooks()
    slug = Runbook.objects.order_by("slug").values_list("slug", flat=True).first()
    mine = project_with_key("mine").project
    user = member(mine, "alice")
    decide(analysed(store(mine, shape_error(batch=4)), runbook_slug=slug), user, "accepted")
    analysed(store(project_with_key("theirs").project, shape_error(batch=8)), runbook_slug=slug)
    client.force_login(user)
    html = client.get(reverse("runbooks")).content.decode()
    row = html[html.index(f'href="/runbooks/{slug}"') :].split("</tr>")[0]
    assert [cell.split("<")[0] for cell in row.split('class="num">')[1:]] == ["1", "1", "0"]


def test_runbook_markdown_is_rendered_and_raw_html_escaped(client):
    client.force_login(member(project_with_key().project, "alice"))
    Runbook.objects.create(
        slug="evil",
        title="Evil",
        failure_class="x",
        checksum="0",
        body="# Fix it\n\n1. Run `nvidia-smi`\n\n<script>alert(1)</script>\n\n"
        "[click](javascript:alert(1))",
    )
    html = client.get(reverse("runbook", args=["evil"])).content.decode()
    assert "<h1>Fix it</h1>" in html and "<code>nvidia-smi</code>" in html
    assert "<script>alert(1)</script>" not in html
    assert 'href="javascript:' not in html
