"""Login and logout (Django's auth views) with the UI's security headers, and the lockout page."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import render

from webapp.pages import secure

login = secure(auth_views.LoginView.as_view(redirect_authenticated_user=True))
logout = secure(auth_views.LogoutView.as_view(next_page="login"))


@secure
def _lockout_page(request: HttpRequest) -> HttpResponseBase:
    minutes = max(1, round(settings.AXES_COOLOFF_TIME.total_seconds() / 60))
    context = {
        "form": AuthenticationForm(request),
        "locked_out": True,
        "cooloff_minutes": minutes,
        "next": request.POST.get("next", ""),
    }
    return render(request, "registration/login.html", context, status=429)


def locked_out(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials=None
) -> HttpResponseBase:
    """django-axes' AXES_LOCKOUT_CALLABLE: the login page, saying why and for how long.

    Used for the admin login too, so both say the same thing; 429 tells scripts to back off.
    """
    return _lockout_page(request)
