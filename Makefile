# evalsite — two commands: `make run` (site + demo data) and `make test` (whole suite).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
export DEBUG ?= 1
HOST ?= 127.0.0.1
PORT ?= 8000
# pytest processes (each with its own test database); a test file stays in one process.
TEST_PROCESSES ?= 2
# schemathesis gives each API operation's test the same id, which pytest-xdist would take for
# one test: they run in a process of their own, beside the others (mostly waiting on its
# server, it costs them little), their output printed after theirs.
SCHEMA_TEST := tests/test_schemathesis.py
# With DEBUG off the settings refuse a key under 50 characters (docs/operations.md, Security).
TEST_SECRET_KEY := test-suite-only-key-never-deployed-0123456789-abcdefghij
# Property tests run their full example counts here (tests/conftest.py: a developer's plain
# pytest run uses the quick "dev" profile).
export HYPOTHESIS_PROFILE ?= ci
# Coverage of audit, metrics and evalsite by the main run, with the floor in pyproject.toml.
COVERAGE := --cov --cov-report=

.PHONY: run test venv dev-deps migrate demo worker lint format bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# pip's log is one progress line (evalsite/pip_progress.py); all of it only if pip fails.
$(VENV)/.runtime: requirements.txt | $(BIN)/python
	@echo "Installing the Python packages of requirements.txt (minutes the first time) ..."
	@$(BIN)/python evalsite/pip_progress.py -r requirements.txt
	@touch $@

$(VENV)/.dev: requirements-dev.txt requirements.txt | $(BIN)/python
	@echo "Installing the Python packages of requirements-dev.txt (minutes the first time) ..."
	@$(BIN)/python evalsite/pip_progress.py -r requirements-dev.txt
	@touch $(VENV)/.runtime $@

venv: $(VENV)/.runtime
dev-deps: $(VENV)/.dev

migrate: venv
	$(BIN)/python manage.py migrate --noinput

# Migrations (only those not applied yet) and the demo data, in one process. On make run's
# SQLite database a stamp then records that both are done: a second run skips the step until
# the database goes or a Python file of the apps changes (rm $(DEMO_STAMP) to seed again).
DEMO_STAMP := var/.demo-seeded
APP_DIRS := audit metrics evalsite
demo: venv
	@if [ -z "$$DATABASE_URL" ] && [ -f var/db.sqlite3 ] && [ -f $(DEMO_STAMP) ] && \
		[ -z "$$(find $(APP_DIRS) -name '*.py' -newer $(DEMO_STAMP) | head -1)" ]; then \
		echo "The database and the demo data are ready (rm $(DEMO_STAMP) to seed again)."; \
	else \
		echo "Preparing the database and the demo data ..." && \
		$(BIN)/python manage.py seed_demo --migrate && \
		if [ -z "$$DATABASE_URL" ]; then touch $(DEMO_STAMP); fi; \
	fi

## Serve the site with demo data on SQLite; once it answers, one Celery worker per queue and beat
## start beside it (quiet), and the address and demo users are printed. Another port: make run PORT=8001
## The server does not restart itself on a code change (the workers could not either): Django
## would start twice, once only to watch the files.
run: demo
	@echo "Starting the web server on http://$(HOST):$(PORT)/ (the workers follow once it answers) ..."
	@trap 'kill 0' EXIT INT TERM; \
	$(BIN)/python manage.py runserver --noreload $(HOST):$(PORT) & \
	$(BIN)/python manage.py demo_welcome http://$(HOST):$(PORT)/; \
	$(BIN)/celery -q -A evalsite worker -Q celery -n fast@%h --pool=solo --loglevel=warning & \
	$(BIN)/celery -q -A evalsite worker -Q slow -n slow@%h --pool=solo --loglevel=warning & \
	$(BIN)/celery -q -A evalsite beat --loglevel=warning --schedule var/celerybeat-schedule & \
	wait

## One worker for both queues (handy when debugging).
worker: venv
	$(BIN)/celery -A evalsite worker -Q celery,slow --beat --pool=solo --loglevel=info \
		--schedule var/celerybeat-schedule

# JavaScript the browser tests inject (axe-core for the accessibility check), from npm.
tests/node_modules/.installed: tests/package.json tests/package-lock.json
	npm ci --prefix tests --no-audit --no-fund --loglevel=error
	touch $@

## Lint and check the layering contracts (pyproject.toml), then run the whole test suite
## (PostgreSQL/Redis when DATABASE_URL/REDIS_URL are set) with the type check (mypy with the
## Django and DRF stubs) and schemathesis beside it; each one's failure fails the run.
test: dev-deps tests/node_modules/.installed
	$(BIN)/ruff check . && $(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-logo
	@export SECRET_KEY=$${SECRET_KEY:-$(TEST_SECRET_KEY)}; types_log=$$(mktemp); \
	schema_log=$$(mktemp); \
	$(BIN)/mypy > $$types_log 2>&1 & types=$$!; \
	$(BIN)/python -m pytest $(SCHEMA_TEST) > $$schema_log 2>&1 & schema=$$!; \
	$(BIN)/python -m pytest -n $(TEST_PROCESSES) --dist loadfile --ignore=$(SCHEMA_TEST) \
		$(COVERAGE) $(PYTEST_ARGS); suite=$$?; \
	wait $$types; types_rc=$$?; echo "--- mypy (run beside the tests) ---"; cat $$types_log; \
	wait $$schema; schema_rc=$$?; echo "--- $(SCHEMA_TEST) (run beside the others) ---"; \
	cat $$schema_log; rm -f $$types_log $$schema_log; \
	test $$suite -eq 0 -a $$types_rc -eq 0 -a $$schema_rc -eq 0

lint: dev-deps
	$(BIN)/ruff check . && $(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-logo
	SECRET_KEY=$${SECRET_KEY:-$(TEST_SECRET_KEY)} $(BIN)/mypy

format: dev-deps
	$(BIN)/ruff format . && $(BIN)/ruff check --fix .

bench: venv
	$(BIN)/python manage.py benchmark_f1

clean:
	rm -rf var staticfiles
