"""`createsuperuser` that runs the password validators in non-interactive mode too.

Django checks a typed password against AUTH_PASSWORD_VALIDATORS but takes
DJANGO_SUPERUSER_PASSWORD (`--noinput`, scripts, containers) as it is; here a weak one
is refused with the validators' messages, like every other way users get created.
"""

from __future__ import annotations

import os

from django.contrib.auth import get_user_model
from django.contrib.auth.management.commands import createsuperuser
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError


class Command(createsuperuser.Command):
    def handle(self, *args, **options) -> None:
        password = os.environ.get("DJANGO_SUPERUSER_PASSWORD")
        if not options["interactive"] and password is not None:
            user_model = get_user_model()
            field = user_model.USERNAME_FIELD
            username = options.get(field) or os.environ.get(f"DJANGO_SUPERUSER_{field.upper()}")
            email = options.get("email") or os.environ.get("DJANGO_SUPERUSER_EMAIL", "")
            candidate = user_model(**{field: username or "", "email": email or ""})
            try:
                validate_password(password, candidate)
            except ValidationError as exc:
                raise CommandError(
                    "DJANGO_SUPERUSER_PASSWORD is too weak: " + " ".join(exc.messages)
                ) from exc
        super().handle(*args, **options)
