"""Slack's interactivity Request URL: button clicks on suggestion messages. Thin adapter.

Slack signs each request instead of sending a cookie or a CSRF token, so the view is
csrf-exempt and lets nothing through that `rca.notify.slack.clicks.receive` did not
verify. Every answer is JSON; a click that is acted on answers an empty 200 (what
Slack expects) and the message update follows through `response_url`.
"""

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from ingest.errors import error_response
from rca.notify.slack.clicks import receive, reply_later
from rca.notify.slack.interactions import MAX_BODY_BYTES, Refused


@csrf_exempt
def interactions(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return error_response(405, ["method"], "Slack posts clicks here.", Allow="POST")
    body = request.read(MAX_BODY_BYTES + 1)
    if len(body) > MAX_BODY_BYTES:
        return error_response(413, ["body"], f"Slack requests are under {MAX_BODY_BYTES} bytes.")
    try:
        reply = receive(
            settings.SLACK_SIGNING_SECRET,
            request.headers.get("X-Slack-Request-Timestamp", ""),
            request.headers.get("X-Slack-Signature", ""),
            body,
        )
    except Refused as refused:
        return error_response(refused.status, refused.loc, str(refused))
    reply_later(reply)
    return HttpResponse(status=200)
