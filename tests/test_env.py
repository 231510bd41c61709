"""The environment is read only through evalsite/env.py's typed helpers: a value that does not
parse stops the start naming the variable and the value, and README's configuration table
lists exactly the variables the code reads."""

from __future__ import annotations

import ast
import re
import runpy
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from evalsite import env
from evalsite.env import env_bool, env_choice, env_float, env_int, env_list, env_str

ROOT = Path(__file__).resolve().parent.parent
HELPERS = {"env_str", "env_bool", "env_int", "env_float", "env_choice", "env_list", "env_path"}


def code_files() -> list[Path]:
    """Every Python file the site, its workers or its dev commands run (not the tests)."""
    files = [ROOT / "manage.py", ROOT / "gunicorn.conf.py"]
    for package in ("evalsite", "audit", "metrics", "tests/bench"):
        files += [p for p in (ROOT / package).rglob("*.py") if "migrations" not in p.parts]
    return files


def settings_module(monkeypatch, **variables: str) -> dict:
    """evalsite/settings.py run afresh with these variables (the running site's untouched)."""
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(ROOT / "evalsite" / "settings.py"))


# --- the helpers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        *[("1", True), ("true", True), ("TRUE", True), (" yes ", True), ("on", True)],
        *[("0", False), ("false", False), ("No", False), ("off", False), ("", True)],
    ],
)
def test_booleans_in_every_usual_spelling(monkeypatch, raw, expected):
    monkeypatch.setenv("SOME_FLAG", raw)
    assert env_bool("SOME_FLAG", True) is expected


@pytest.mark.parametrize("raw", ["nope", "ture", "2", "y es", "１"])
def test_a_boolean_typo_is_refused_by_name(monkeypatch, raw):
    monkeypatch.setenv("SOME_FLAG", raw)
    with pytest.raises(
        ImproperlyConfigured, match=f"SOME_FLAG must be one of .*not {re.escape(repr(raw))}"
    ):
        env_bool("SOME_FLAG", False)


@pytest.mark.parametrize("raw", ["ten", "2.5", "1e3", "²", "٣", "0x10", ""])
def test_integers_are_ascii_digits(monkeypatch, raw):
    monkeypatch.setenv("SOME_COUNT", raw)
    if raw == "":
        assert env_int("SOME_COUNT", 7) == 7
        return
    with pytest.raises(
        ImproperlyConfigured, match=f"SOME_COUNT must be a whole number, not {re.escape(repr(raw))}"
    ):
        env_int("SOME_COUNT", 7)


def test_numbers_below_their_minimum_are_refused(monkeypatch):
    monkeypatch.setenv("SOME_COUNT", "-3")
    assert env_int("SOME_COUNT", 1) == -3
    with pytest.raises(
        ImproperlyConfigured, match="SOME_COUNT must be a whole number of at least 0"
    ):
        env_int("SOME_COUNT", 1, minimum=0)
    monkeypatch.setenv("SOME_SECONDS", "0.5")
    assert env_float("SOME_SECONDS", 1.0) == 0.5
    with pytest.raises(
        ImproperlyConfigured, match=r"SOME_SECONDS must be a number of at least 1, not '0\.5'"
    ):
        env_float("SOME_SECONDS", 1.0, minimum=1)


@pytest.mark.parametrize("raw", ["fast", "nan", "inf", "1,5", "½"])
def test_floats_must_be_finite_numbers(monkeypatch, raw):
    monkeypatch.setenv("SOME_SECONDS", raw)
    with pytest.raises(
        ImproperlyConfigured, match=f"SOME_SECONDS must be a number, not {re.escape(repr(raw))}"
    ):
        env_float("SOME_SECONDS", 1.0)


def test_choices_lists_and_strings(monkeypatch):
    monkeypatch.setenv("SOME_LEVEL", "info")
    assert env_choice("SOME_LEVEL", "WARNING", ("INFO", "WARNING")) == "INFO"
    monkeypatch.setenv("SOME_LEVEL", "loud")
    with pytest.raises(ImproperlyConfigured, match="SOME_LEVEL must be one of 'INFO', 'WARNING'"):
        env_choice("SOME_LEVEL", "WARNING", ("INFO", "WARNING"))
    monkeypatch.setenv("SOME_HOSTS", " a.example, ,b.example ")
    assert env_list("SOME_HOSTS", ["x"]) == ["a.example", "b.example"]
    monkeypatch.setenv("SOME_HOSTS", "")
    assert env_list("SOME_HOSTS", ["x"]) == []  # set but empty: none, not the default
    monkeypatch.delenv("SOME_HOSTS")
    assert env_list("SOME_HOSTS", ["x"]) == ["x"]
    monkeypatch.setenv("SOME_RATE", "")
    assert env_str("SOME_RATE", "60/minute") == ""  # set but empty: "no limit" for the rates


# --- the settings read through them ---------------------------------------------------------


def test_settings_take_true_for_true(monkeypatch):
    values = settings_module(monkeypatch, UNASSIGNED_WORK_VISIBLE="true", CELERY_EAGER="off")
    assert values["UNASSIGNED_WORK_VISIBLE"] is True
    assert values["CELERY_TASK_ALWAYS_EAGER"] is False
    values = settings_module(monkeypatch, UNASSIGNED_WORK_VISIBLE="0", TRUSTED_PROXY="yes")
    assert values["UNASSIGNED_WORK_VISIBLE"] is False
    assert values["SECURE_PROXY_SSL_HEADER"] == ("HTTP_X_FORWARDED_PROTO", "https")


@pytest.mark.parametrize(
    ("variable", "raw"),
    [
        ("CELERY_EAGER", "nope"),
        ("TRUSTED_PROXY", "ture"),
        ("UNASSIGNED_WORK_VISIBLE", "yes please"),
        ("RECOMPUTE_CHUNK_ITEMS", "2k"),
        ("LOGIN_LOCKOUT_SECONDS", "15 minutes"),
        ("STALE_SWEEP_SECONDS", "often"),
        ("FILE_STORAGE", "ftp"),
        ("LOG_LEVEL", "loud"),
    ],
)
def test_a_bad_value_stops_the_settings_naming_it(monkeypatch, variable, raw):
    with pytest.raises(
        ImproperlyConfigured, match=f"^{variable} must be .*not {re.escape(repr(raw))}"
    ):
        settings_module(monkeypatch, **{variable: raw})


def test_nothing_reads_the_environment_but_the_helpers():
    """os.environ / os.getenv appear only in evalsite/env.py; elsewhere only to hand a copy of
    the environment to a child process, to name the settings module, or to set and restore
    Django's switch for synchronous calls inside a browser's event loop (benchmarks)."""
    readers = []
    for path in code_files():
        if path == ROOT / "evalsite" / "env.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute) and node.attr in {"environ", "getenv"}:
                readers.append((path, node.lineno))
    allowed = []
    for path, line in readers:
        text = path.read_text().splitlines()[line - 1]
        if (
            'os.environ.setdefault("DJANGO_SETTINGS_MODULE"' in text
            or "**os.environ" in text
            or "os.environ.items()" in text
            or "DJANGO_ALLOW_ASYNC_UNSAFE" in text
        ):
            allowed.append((path, line))
    assert [f"{p.relative_to(ROOT)}:{n}" for p, n in readers if (p, n) not in allowed] == []


# --- README's table -------------------------------------------------------------------------


def names_in_code() -> set[str]:
    """Every variable a helper is called with: literal names by reading the code, and names
    read in a loop (the match settings) by the helpers' own record of this process."""
    names = set()
    for path in code_files():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id in HELPERS and node.args and isinstance(node.args[0], ast.Constant):
                names.add(node.args[0].value)
    before = set(env.READ)
    env.READ.clear()
    try:
        runpy.run_path(str(ROOT / "evalsite" / "settings.py"))
        read_by_settings = set(env.READ)
    finally:
        env.READ.clear()
        env.READ.update(before)
    return names | read_by_settings


def names_in_readme() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Configuration (environment variables)", 1)[1].split("\n## ", 1)[0]
    names = []
    for line in section.splitlines():
        if line.startswith("| `"):
            names += re.findall(r"`([A-Z][A-Z0-9_]+)`", line.split("|")[1])
    return names


def test_readme_lists_each_variable_once():
    listed = names_in_readme()
    assert sorted({n for n in listed if listed.count(n) > 1}) == []


def test_readme_lists_exactly_the_variables_the_code_reads():
    code, readme = names_in_code(), set(names_in_readme())
    assert {"missing from README": sorted(code - readme), "not read": sorted(readme - code)} == {
        "missing from README": [],
        "not read": [],
    }


# --- the secret key ---------------------------------------------------------------------------

STRONG_KEY = "k3y-" + "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ"


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("change-me", "is a known placeholder"),
        ("django-insecure-" + "x1y2z3" * 10, "is a known placeholder"),
        ("insecure-test-only-key", "is too weak: at least 50 characters"),
        ("ab" * 30, "is too weak: at least 5 of its characters different"),
    ],
)
def test_with_debug_off_a_weak_secret_key_stops_the_start(monkeypatch, key, message):
    with pytest.raises(ImproperlyConfigured, match=f"^SECRET_KEY {message}"):
        settings_module(monkeypatch, DEBUG="0", SECRET_KEY=key)


def test_a_strong_key_or_debug_on_starts(monkeypatch):
    assert settings_module(monkeypatch, DEBUG="0", SECRET_KEY=STRONG_KEY)["SECRET_KEY"]
    assert settings_module(monkeypatch, DEBUG="1", SECRET_KEY="change-me")["DEBUG"] is True
