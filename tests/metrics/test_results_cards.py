"""The extraction-F1 card reads the stored run result only and shows its state."""

import pytest
from django.template.loader import render_to_string
from django.urls import reverse

from metrics.cards import extraction_card
from metrics.engine.services import results_mark_stale
from metrics.models import MetricResult
from tests.factories import ExtractionRunFactory
from tests.metrics.extraction_helpers import approve, run_row

pytest_plugins = ["tests.metrics.extraction_helpers"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("only_extraction_results")]


def render(card: dict, *, is_admin: bool = False) -> str:
    context = {"card": card, "is_admin": is_admin}
    return render_to_string("metrics/cards/_extraction_f1.html", context)


def test_a_run_without_results_is_empty():
    card = extraction_card(ExtractionRunFactory())
    assert card["state"] == "empty" and not card["poll"]
    html = render(card)
    assert "No approved ground truth" in html and "hx-trigger" not in html


def test_fresh_card_shows_the_figures(f1_world, admin_user, run_committed):
    approve(run_committed, f1_world, f1_world.statements[0], admin_user)
    card = extraction_card(f1_world.run)
    assert card["state"] == "fresh" and card["n_statements"] == 1
    assert card["system"]["aggregate_micro_f1"] == 1.0
    html = render(card)
    assert "1.000" in html and "updating" not in html and "hx-trigger" not in html


def test_stale_card_polls_every_three_seconds_and_keeps_the_last_figures(
    f1_world, admin_user, run_committed
):
    approve(run_committed, f1_world, f1_world.statements[0], admin_user)
    results_mark_stale(statement_ids=[f1_world.statements[1].pk])  # not yet recomputed
    card = extraction_card(f1_world.run)
    assert card["state"] == "updating" and card["poll"]
    html = render(card)
    assert 'hx-trigger="every 1s"' in html and "updating…" in html
    assert f'hx-get="{card["url"]}"' in html and "1.000" in html


def test_failed_card_shows_the_error(f1_world):
    MetricResult.objects.create(
        key=f"extraction:run:r{f1_world.run.pk}:d-:s-",
        family="extraction",
        scope="run",
        run=f1_world.run,
        status="failed",
        error="statement result failed",
    )
    card = extraction_card(f1_world.run)
    assert card["state"] == "failed" and not card["poll"]
    assert "Computing these figures failed" in render(card)
    # The error text (a traceback, often) is for admins only.
    assert "statement result failed" not in render(card)
    assert "statement result failed" in render(card, is_admin=True)


def test_card_partial_reads_without_computing(f1_world, admin_user, run_committed, client, auditor):
    approve(run_committed, f1_world, f1_world.statements[0], admin_user)
    results_mark_stale(statement_ids=[f1_world.statements[1].pk])
    client.force_login(auditor)
    response = client.get(reverse("metrics:extraction_card", args=[f1_world.run.pk]))
    assert response.status_code == 200 and b"updating" in response.content
    assert run_row(f1_world.run).status == MetricResult.Status.STALE  # nothing computed


def test_card_partial_needs_a_role(client, outsider, f1_world):
    url = reverse("metrics:extraction_card", args=[f1_world.run.pk])
    assert client.get(url).status_code == 302
    client.force_login(outsider)
    assert client.get(url).status_code == 403


def test_card_shows_sarf_pooled_and_mean_per_statement(f1_world, admin_user, run_committed):
    for statement in f1_world.statements[:2]:
        approve(run_committed, f1_world, statement, admin_user)
    card = extraction_card(f1_world.run)
    system = card["system"]
    rows = {row["variable"]: row for row in card["sarf"]}
    assert list(rows) == ["symptom", "anxiety", "relationship", "functioning"]
    assert rows["symptom"]["pooled"] == system["symptom_macro_f1"] is not None
    assert rows["symptom"]["mean"] == system["mean_statement_symptom_macro_f1"] is not None
    html = render(card)
    assert "pooled" in html and "mean per statement" in html


def test_card_of_a_result_stored_before_the_mean_existed_reads_n_a(f1_world):
    values = {"system": {"aggregate_micro_f1": 0.5, "symptom_macro_f1": 0.75}, "n_statements": 1}
    MetricResult.objects.create(
        key=f"extraction:run:r{f1_world.run.pk}:d-:s-",
        family="extraction",
        scope="run",
        run=f1_world.run,
        status="fresh",
        values=values,
    )
    card = extraction_card(f1_world.run)
    assert card["sarf"][0] == {"variable": "symptom", "pooled": 0.75, "mean": None}
    assert "n/a" in render(card)
