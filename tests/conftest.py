"""Shared fixtures: persona users, services, and Celery in eager mode unless a test needs a worker."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES") == "1"

# Property tests take their number of examples from a profile: "dev" (the default) is quick
# for a developer's run; "ci" (make test and CI set HYPOTHESIS_PROFILE=ci) runs the full count.
# A test states its own count only where the count matters (a database workflow per example).
hypothesis_settings.register_profile("ci", max_examples=300, deadline=None, print_blob=True)
hypothesis_settings.register_profile("dev", max_examples=20, deadline=None)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or "dev")


def pytest_configure(config):
    # Tests run tasks in-process unless a test starts a real worker itself.
    from evalsite.celery import app

    app.conf.task_always_eager = True
    app.conf.task_eager_propagates = True
    # The real hasher costs most of a second per test user; tests don't need its strength.
    from django.conf import settings

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # A bug in the work that follows a commit fails its test (in production it is logged and
    # the request answers with what it stored: evalsite/post_commit.py).
    settings.POST_COMMIT_RAISE = True
    # API rate limits are tested on their own (tests/test_throttling.py); elsewhere a test may
    # send more requests a minute than a person would.
    settings.API_THROTTLE_RATES = {}
    _isolate_shared_cache(settings)
    # Test processes run side by side (make test): each writes uploads and exports to a
    # directory of its own, since their databases hand out the same job ids.
    settings.MEDIA_ROOT = Path(tempfile.mkdtemp(prefix="evalsite-test-media-"))
    _flush_by_delete()
    # A test database need not survive a crash of the server: its commits do not wait for the
    # disk (the live server's and the tests' own connections alike).
    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.postgresql":
        database.setdefault("OPTIONS", {})["options"] = "-c synchronous_commit=off"


def _flush_by_delete() -> None:
    """A transactional test ends by emptying every table. PostgreSQL's TRUNCATE gives each table
    and index new files and syncs them at commit, about a second per test here; the test
    tables hold a few rows, which DELETE removes in milliseconds. The foreign keys are deferred
    (Django creates them so), so the order does not matter. Sequence resets keep TRUNCATE."""
    from django.db.backends.postgresql.operations import DatabaseOperations

    truncate = DatabaseOperations.sql_flush

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences or allow_cascade or not tables:
            return truncate(
                self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        deletes = [f"{style.SQL_KEYWORD('DELETE FROM')} {self.quote_name(t)};" for t in tables]
        return ["SET CONSTRAINTS ALL DEFERRED;", *deletes]

    DatabaseOperations.sql_flush = sql_flush  # type: ignore[method-assign]


TEST_CACHE_PREFIX = f"evalsite-test-{os.getpid()}-{int(time.time())}"


def _isolate_shared_cache(settings) -> None:
    """A Redis cache outlives the test run: give this run keys of its own (removed at the end)
    so nothing cached by an earlier run, whose database had the same ids, is read back."""
    default = settings.CACHES["default"]
    if default["BACKEND"].endswith("RedisCache"):
        settings.CACHES = {"default": {**default, "KEY_PREFIX": TEST_CACHE_PREFIX}}


# The longest test modules, started first: make test's processes take a module at a time in
# collection order, so a long one collected last would leave the other process idle at the end.
LONGEST_FIRST = (
    "tests/audit/test_tallies.py",
    "tests/test_browser_every_page.py",
    "tests/audit/test_pages_at_scale.py",
    "tests/golden/",
    "tests/audit/test_demo.py",
    "tests/metrics/test_own_data_pieces.py",
    "tests/test_bad_input_pages.py",
)
# Benchmark commands repeat at scale code that other tests cover: not traced for coverage.
UNTRACED = ("tests/bench/",)


def _untraced(item: pytest.Item) -> bool:
    """Benchmark tests, and property tests (hundreds of examples through code their module's
    example tests cover: tracing doubles their time and adds no line)."""
    function = getattr(item, "obj", None)
    return item.nodeid.startswith(UNTRACED) or getattr(function, "is_hypothesis_test", False)


def _longest_first(item: pytest.Item) -> int:
    path = item.nodeid.split("::", 1)[0]
    starts = [i for i, prefix in enumerate(LONGEST_FIRST) if path.startswith(prefix)]
    return starts[0] if starts else len(LONGEST_FIRST)


def pytest_collection_modifyitems(session, config, items) -> None:
    """Longest modules first; benchmark and property tests untraced. pytest-xdist (make test) knows a test by
    its id, so of tests that share one it would run one: refuse them there (schemathesis's, one
    per API operation, run in a process of their own: the Makefile's SCHEMA_TEST)."""
    items.sort(key=_longest_first)  # stable: each module keeps its own order
    for item in items:
        if _untraced(item):
            item.add_marker(pytest.mark.no_cover)
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    shared = sorted(nodeid for nodeid, n in Counter(i.nodeid for i in items).items() if n > 1)
    if shared:
        raise pytest.UsageError(f"tests share an id, so only one of each would run: {shared}")


def pytest_unconfigure(config):
    from django.conf import settings

    if str(settings.MEDIA_ROOT).startswith(tempfile.gettempdir()):
        shutil.rmtree(settings.MEDIA_ROOT, ignore_errors=True)
    if settings.CACHES["default"].get("KEY_PREFIX") != TEST_CACHE_PREFIX:
        return
    from django.core.cache import cache

    client = cache._cache.get_client(write=True)
    for key in client.scan_iter(f"{TEST_CACHE_PREFIX}:*"):
        client.delete(key)


@pytest.fixture(autouse=True)
def _eager_results_readable():
    """A Celery worker started in this process (celery.contrib.testing) marks joining a result
    as blocking, and it stays so after the worker stops: the eager results that later tests
    here read with .get() would be refused. Which tests share a process varies (make test)."""
    yield
    from celery._state import _set_task_join_will_block

    _set_task_join_will_block(False)


def require_service(name: str, available: bool, why: str) -> None:
    """Skip when a service is missing on a developer machine; fail in CI (REQUIRE_SERVICES=1)."""
    if available:
        return
    if REQUIRE_SERVICES:
        pytest.fail(f"{name} is required (REQUIRE_SERVICES=1) but not available: {why}")
    pytest.skip(f"{name} not available: {why}")


@pytest.fixture
def migrated_to(transactional_db):
    """Migrate the test database to given nodes and return the models as they were there;
    afterwards the database goes back to the latest migrations, for the tests that follow."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    def migrate(targets: list[tuple[str, str]] | None):
        """None: the latest migrations of every app."""
        executor = MigrationExecutor(connection)
        targets = targets if targets is not None else executor.loader.graph.leaf_nodes()
        executor.migrate(targets)
        executor.loader.build_graph()
        return executor.loader.project_state(targets).apps

    yield migrate
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def role_user_create(
    username: str, *, role: str | None = "auditor", password: str = "pw-test-12345"
):
    """A user in the role's group ("auditor", "admin" or None): make_user's, for a fixture of
    a wider scope."""
    from django.contrib.auth import get_user_model

    from evalsite.access import ensure_role_groups

    auditor_group, admin_group = ensure_role_groups()
    user = get_user_model().objects.create_user(username=username, password=password)
    if role == "auditor":
        user.groups.add(auditor_group)
    elif role == "admin":
        user.groups.add(admin_group)
    return user


@pytest.fixture
def make_user(db):
    return role_user_create


@pytest.fixture
def auditor(make_user):
    return make_user("alice")


@pytest.fixture
def second_auditor(make_user):
    return make_user("bob")


@pytest.fixture
def admin_user(make_user):
    return make_user("carol", role="admin")


@pytest.fixture
def outsider(make_user):
    """Logged in, but in no role group."""
    return make_user("mallory", role=None)


@pytest.fixture
def auditor_client(client, auditor):
    client.force_login(auditor)
    return client


@pytest.fixture
def admin_client(client, admin_user):
    client.force_login(admin_user)
    return client


@pytest.fixture
def planner_refreshes(monkeypatch) -> list[tuple[list[str], int]]:
    """What asked the planner's statistics to be refreshed after a commit, as (model names,
    rows written): every write counts as a bulk one (evalsite/perf/planner.py), and the refresh
    itself is recorded instead of run."""
    from evalsite.perf import planner

    asked: list[tuple[list[str], int]] = []
    monkeypatch.setattr(planner, "BULK_ROWS", 1)
    monkeypatch.setattr(
        planner,
        "planner_statistics_refresh",
        lambda *, models, written: asked.append(([m.__name__ for m in models], written)),
    )
    return asked


# --- Browser tests: Debian's Chromium driven by Playwright, never a downloaded browser -------

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TEST_PASSWORD = "pw-test-12345"  # make_user's default
SCREENSHOTS = Path(__file__).resolve().parent.parent / "screenshots"


@pytest.fixture(scope="session")
def browser():
    require_service("Chromium", os.path.exists(CHROMIUM), "apt-get install chromium")
    # Playwright's sync API runs an event loop in this thread; the ORM calls are still sync.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()
    if previous is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def open_as(browser, live_server):
    """A page logged in through the login form; JavaScript errors and Content-Security-Policy
    violations on any page fail the test."""
    from django.urls import reverse

    contexts, errors = [], []

    def login(user):
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda message: _csp_violation(message, errors))
        page.goto(live_server.url + reverse("login"))
        page.fill("input[name=username]", user.get_username())
        page.fill("input[name=password]", TEST_PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(live_server.url + "/")
        return page

    yield login
    for context in contexts:
        context.close()
    assert errors == []


def _csp_violation(message, errors: list[str]) -> None:
    if "Content Security Policy" in message.text:
        errors.append(message.text)


def screenshot(page, name: str, *, full_page: bool = True) -> Path:
    """Save a screenshot under screenshots/ (gitignored) for a person to look at."""
    path = SCREENSHOTS / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    page.wait_for_timeout(150)  # let htmx settle
    page.screenshot(path=str(path), full_page=full_page)
    return path
