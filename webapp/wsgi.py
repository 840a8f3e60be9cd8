"""WSGI entry point. Must stay light: never imports torch or sentence-transformers."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
django_application = get_wsgi_application()

from ingest.accept_handler import accept_dispatch  # noqa: E402 - needs settings loaded
from ingest.request_body import ChunkedBodyMiddleware  # noqa: E402

# Chunked bodies (Node's Sentry SDK) get a length Django understands, within the limit;
# the accept POSTs skip the middleware they do not use (ingest/accept_handler.py).
application = ChunkedBodyMiddleware(accept_dispatch(django_application))
