# One image for web, worker and beat (the command differs). CPU torch keeps it small.
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 HF_HUB_OFFLINE=1
WORKDIR /app
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0
COPY pyproject.toml README.md ./
COPY webapp ./webapp
COPY ingest ./ingest
COPY rca ./rca
RUN pip install .
COPY . .
# collectstatic loads the settings, which refuse to start without a key: a throwaway one.
RUN DATABASE_URL=postgresql://build@localhost/build SECRET_KEY=collectstatic-at-build-only \
    python manage.py collectstatic --noinput
# Not root: Celery warns against it, and a compromised worker should own nothing. It owns
# the metrics directory, which compose's `metrics` volume starts as a copy of.
RUN useradd --create-home --uid 10001 rootcause \
    && install -d -o rootcause /var/lib/rootcause/metrics /var/lib/rootcause/spool \
       /var/lib/rootcause/runbooks
USER rootcause
EXPOSE 8000
CMD ["gunicorn", "webapp.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3"]
