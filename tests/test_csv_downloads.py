"""CSV downloads cannot run in a spreadsheet: a text cell starting with = + - @, a tab or a
carriage return is written with a leading ' (OWASP "CSV Injection"); numbers stay numbers."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from audit.services.assignments import AssignmentPlan, assignments_create
from evalsite.csv_cells import csv_cell
from tests.audit.test_views_support import make_scene
from tests.factories import ExtractionRunFactory
from tests.metrics.dashboard_rows import (
    approve,
    discussion_row,
    discussion_with_statements,
    settle,
    statement_row,
)

pytestmark = pytest.mark.django_db
FORMULAS = ['=HYPERLINK("http://evil.example","x")', "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1"]


def rows_of(response) -> list[dict[str, str]]:
    assert response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


@pytest.mark.parametrize("text", FORMULAS)
def test_a_cell_that_starts_a_formula_is_text(text):
    assert csv_cell(text) == "'" + text


@pytest.mark.parametrize("value", [-0.25, -3, 0.5, None, "Smith family", "a=b", ""])
def test_numbers_and_plain_text_are_unchanged(value):
    assert csv_cell(value) == value


def test_team_csv_neutralises_summaries(admin_client, auditor, admin_user):
    scene = make_scene(summary=FORMULAS[0])
    plan = AssignmentPlan(discussions=[scene.discussion], auditors=[auditor])
    assignments_create(plan=plan, admin=admin_user)
    rows = rows_of(admin_client.get(reverse("audit:team"), {"download": "csv"}))
    labels = [row["label"] for row in rows if row["table"] == "discussions"]
    assert labels and all(label.startswith("'=HYPERLINK") for label in labels), labels


def test_discussions_csv_neutralises_summaries(admin_client, auditor):
    run = ExtractionRunFactory()
    discussion, (statement,) = discussion_with_statements(1, "@SUM(A1:A9)")
    approve(statement)
    statement_row(run, statement, people_tp=1)
    discussion_row(run, discussion, statement_count=1, people_tp=1)
    settle(run)
    url = reverse("metrics:discussions")
    (row,) = rows_of(admin_client.get(url, {"run": run.pk, "format": "csv"}))
    assert "'@SUM(A1:A9)" in row.values(), row
    assert not any(value.startswith(("=", "+", "-", "@")) for value in row.values()), row
