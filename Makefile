# Rootcause — `make help` lists the targets.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.DEFAULT_GOAL := help
.PHONY: help install run test test-tools lint bench clean

help: ## show this help
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml clients/python/pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	@# torch first and pinned: the CPU build on local disk; anything else may pull CUDA.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev]'
	@# the Python client, a package of its own (no Django): services install it alone
	$(PY) -m pip install -q -e clients/python
	@touch $(STAMP)

install: $(STAMP) ## create .venv and install everything (torch CPU first)

run: $(STAMP) ## start database, worker and web server on 127.0.0.1:$${PORT:-8000}
	exec $(PY) manage.py run

# Debian packages the tests drive: chromium (browser tests), docker-compose (compose file check)
TEST_TOOLS := chromium docker-compose

test-tools: ## install the browser and compose checker the tests use (apt, as root)
	@missing=""; for t in $(TEST_TOOLS); do command -v $$t >/dev/null 2>&1 || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing with apt:$$missing"; apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "make test needs:$$missing -- run: sudo apt-get install -y$$missing"; exit 1; fi; \
	fi

# Test processes (pytest-xdist): one per core of a 2-core machine. Most of the suite's wall time
# is spent waiting on subprocesses it starts (workers, brokers, clusters, a browser), so two
# processes overlap that waiting. Files stay whole on one process (--dist loadfile): a file's
# tests share its servers. Each process has its own cluster and state dir (tests/conftest.py).
# `make test TEST_WORKERS=0` runs everything in this process.
TEST_WORKERS ?= 2

test: $(STAMP) test-tools ## run the whole test suite (unit, integration, browser)
	@# a cluster of its own, so tests never touch (or stop) the `make run` database
	RCA_DATA_DIR=$(CURDIR)/.data/test $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --durations=25

# Tools that load the settings but serve no one get a throwaway key (settings refuse to
# start without SECRET_KEY; `make run` keeps its own in .data/secret_key).
lint: export RCA_DATA_DIR := $(CURDIR)/.data/lint
lint bench: export SECRET_KEY ?= $(shell head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')

lint: $(STAMP) ## ruff lint + format check, mypy (strict on ingest and rca), migrations in sync
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	@# strictness per package lives in pyproject.toml [tool.mypy]: ingest.* and rca.* strict
	$(VENV)/bin/mypy webapp ingest rca
	$(PY) manage.py makemigrations --check --dry-run
	@# settings (mypy's Django plugin, makemigrations) start the embedded cluster of
	@# RCA_DATA_DIR: lint's own, stopped here, never the one `make run` uses
	@[ -n "$$DATABASE_URL" ] || $(PY) -c 'from webapp import embedded; embedded.stop()'

bench: $(STAMP) ## run the benchmarks (they print figures)
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean: ## remove local state (.data: database, credentials)
	-$(PY) -c "from webapp import embedded; embedded.stop()" 2>/dev/null
	rm -rf .data
