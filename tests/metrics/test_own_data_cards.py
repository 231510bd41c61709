"""The own-data cards: fresh / updating / failed / empty states, plots, tables and who sees them."""

from __future__ import annotations

import csv
import io

import pytest
from django.template import Context, Template
from django.template.loader import render_to_string
from django.test import RequestFactory
from django.urls import reverse

from audit.models import Feedback
from audit.selectors.disagreement import statement_disagreement
from metrics.models import MetricResult
from metrics.own_data.calibration import calibration_result_compute
from metrics.own_data.common import INTERAUDITOR_KEY, failure_recorded, own_results_mark_stale
from metrics.own_data.interauditor import interauditor_result_compute
from metrics.own_data.review_savings import review_savings_result_compute
from metrics.registry import CALIBRATION, REVIEW_SAVINGS, WHOLE
from metrics.results import run_key
from tests.factories import ExtractionFactory, ExtractionRunFactory, FeedbackFactory


@pytest.fixture(autouse=True)
def few_resamples(settings):
    settings.OWN_DATA_BOOTSTRAP_RESAMPLES = 20


@pytest.fixture
def run_with_truth(auditor, second_auditor):
    run = ExtractionRunFactory()
    for _ in range(3):
        extraction = ExtractionFactory(run=run)
        FeedbackFactory(
            statement=extraction.statement, auditor=auditor, status=Feedback.Status.APPROVED
        )
        FeedbackFactory(statement=extraction.statement, auditor=second_auditor)
    return run


def card_state(client, url: str, testid: str) -> str:
    response = client.get(url)
    assert response.status_code == 200
    html = response.content.decode()
    assert f'data-testid="{testid}"' in html
    return html.split('data-state="', 1)[1].split('"', 1)[0]


@pytest.mark.django_db
class TestStates:
    def test_empty_without_a_row(self, auditor_client) -> None:
        run = ExtractionRunFactory()
        url = reverse("metrics:review_savings_card", args=[run.pk])
        assert card_state(auditor_client, url, "review-savings-card") == "empty"
        url = reverse("metrics:calibration_card", args=[run.pk])
        assert card_state(auditor_client, url, "calibration-card") == "empty"

    def test_fresh_then_updating_then_failed(self, auditor_client, run_with_truth) -> None:
        run = run_with_truth
        url = reverse("metrics:review_savings_card", args=[run.pk])
        review_savings_result_compute(run_id=run.pk)
        html = auditor_client.get(url).content.decode()
        assert 'data-state="fresh"' in html and "hx-trigger" not in html
        assert "<svg" in html and "Risk–coverage curve" in html
        assert 'data-testid="reading-5"' in html and 'data-testid="review-savings-table"' in html
        own_results_mark_stale(reason="test")
        html = auditor_client.get(url).content.decode()
        # The last figures stay on screen while the card polls itself.
        assert 'data-state="updating"' in html and 'hx-trigger="every 1s"' in html
        assert "updating…" in html and 'data-testid="reading-5"' in html
        with failure_recorded(family=REVIEW_SAVINGS, run_id=run.pk):
            raise RuntimeError("boom")
        html = auditor_client.get(url).content.decode()
        assert 'data-state="failed"' in html and "boom" in html

    def test_fresh_but_nothing_to_show_is_empty(self, auditor_client) -> None:
        run = ExtractionRunFactory()
        review_savings_result_compute(run_id=run.pk)  # no ground truth: n_statements 0
        url = reverse("metrics:review_savings_card", args=[run.pk])
        assert card_state(auditor_client, url, "review-savings-card") == "empty"

    def test_calibration_card(self, auditor_client, run_with_truth) -> None:
        run = run_with_truth
        calibration_result_compute(run_id=run.pk)
        html = auditor_client.get(
            reverse("metrics:calibration_card", args=[run.pk])
        ).content.decode()
        assert 'data-state="fresh"' in html
        assert "Reliability diagram" in html
        assert "perfect calibration" in html  # the diagonal, drawn as a series
        assert 'data-testid="calibration-table"' in html
        assert 'data-testid="calibration-not-fitted"' in html  # three statements are too few
        row = MetricResult.objects.get(key=run_key(CALIBRATION, run.pk))
        # AI = GT = the factories' SIMPLE_PDP: 2 people, 1 event, 1 pair bond, all matched.
        assert row.values["n_items"] == 12 and row.values["all"]["accuracy"] == 1.0

    def test_interauditor_card_is_for_admins(self, client, auditor, admin_user, run_with_truth):
        interauditor_result_compute()
        url = reverse("metrics:interauditor_card")
        client.force_login(auditor)
        assert client.get(url).status_code == 403
        client.force_login(admin_user)
        html = client.get(url).content.decode()
        assert 'data-state="fresh"' in html and 'data-testid="interauditor-pairs"' in html
        assert MetricResult.objects.filter(key=INTERAUDITOR_KEY).exists()


@pytest.mark.django_db
class TestTemplateTags:
    def render(self, source: str, user, **context) -> str:
        request = RequestFactory().get("/")
        request.user = user
        return Template("{% load own_data %}" + source).render(
            Context({"request": request, **context})
        )

    def test_interauditor_card_hidden_from_auditors(self, auditor, admin_user) -> None:
        tag = '{% whole_family_cards None "system" %}'
        assert "interauditor-card" not in self.render(tag, auditor)
        assert 'data-state="empty"' in self.render(tag, admin_user)

    def test_run_cards_and_no_run(self, auditor) -> None:
        run = ExtractionRunFactory()
        html = self.render('{% whole_family_cards run "run" %}', auditor, run=run)
        assert (
            'data-testid="review-savings-card"' in html and 'data-testid="calibration-card"' in html
        )
        assert self.render('{% whole_family_cards run "run" %}', auditor, run=None).strip() == ""

    def test_every_whole_family_of_the_registry_has_its_card(self, admin_user) -> None:
        run = ExtractionRunFactory()
        html = self.render(
            '{% whole_family_cards run "run" %}{% whole_family_cards run "system" %}',
            admin_user,
            run=run,
        )
        for name in WHOLE:
            testid = name.replace("_", "-") + "-card"
            assert f'data-testid="{testid}"' in html, name

    def test_audit_marks_the_disagreement_itself(self, auditor, second_auditor) -> None:
        feedback = FeedbackFactory(auditor=auditor)
        FeedbackFactory(
            statement=feedback.statement,
            auditor=second_auditor,
            edited_extraction={"people": [{"id": 1, "name": "Nobody"}]},
        )
        marker = statement_disagreement(statement_id=feedback.statement_id)
        assert marker is not None and marker["n_auditors"] == 2
        html = render_to_string("audit/components/f1.html#disagreement", {"disagreement": marker})
        assert 'data-testid="auditors-disagree"' in html and "2 auditors disagree" in html


@pytest.mark.django_db
class TestDashboard:
    def test_cards_on_the_dashboard(self, admin_client, run_with_truth) -> None:
        run = run_with_truth
        review_savings_result_compute(run_id=run.pk)
        html = admin_client.get(reverse("metrics:dashboard"), {"run": run.pk}).content.decode()
        for testid in ("review-savings-card", "calibration-card", "interauditor-card"):
            assert f'data-testid="{testid}"' in html

    def test_review_page_marks_disagreement(self, admin_client, run_with_truth) -> None:
        feedback = Feedback.objects.filter(statement__extractions__run=run_with_truth).first()
        other = Feedback.objects.exclude(pk=feedback.pk).filter(statement=feedback.statement).get()
        other.edited_extraction = {"people": [{"id": 1, "name": "Nobody"}]}
        other.save()
        url = reverse("audit:statement_review", args=[feedback.statement_id])
        assert 'data-testid="auditors-disagree"' in admin_client.get(url).content.decode()


@pytest.mark.django_db
class TestDownloads:
    """CSV and JSON of the numbers behind the review-savings, calibration and agreement cards."""

    @pytest.mark.parametrize(
        ("name", "compute", "testid"),
        [
            ("review_savings_card", review_savings_result_compute, "review-savings-card"),
            ("calibration_card", calibration_result_compute, "calibration-card"),
        ],
    )
    def test_run_cards(self, auditor_client, run_with_truth, name, compute, testid) -> None:
        run = run_with_truth
        compute(run_id=run.pk)
        url = reverse(f"metrics:{name}", args=[run.pk])
        html = auditor_client.get(url).content.decode()
        assert f'href="{url}?format=csv"' in html and f'href="{url}?format=json"' in html
        stored = MetricResult.objects.get(key=run_key(name.removesuffix("_card"), run.pk)).values
        data = auditor_client.get(url, {"format": "json"}).json()
        assert data["run"] == run.pk and data["values"] == stored
        response = auditor_client.get(url, {"format": "csv"})
        assert response["Content-Type"].startswith("text/csv")
        rows = list(csv.DictReader(io.StringIO(response.content.decode())))
        assert rows and set(rows[0]) == {"figure", "value"}
        first_number = next(r for r in rows if r["value"] not in ("", "None"))
        assert first_number["figure"]

    def test_interauditor_numbers_are_for_admins(self, client, auditor, admin_user, run_with_truth):
        interauditor_result_compute()
        url = reverse("metrics:interauditor_card")
        client.force_login(auditor)
        assert client.get(url, {"format": "json"}).status_code == 403
        client.force_login(admin_user)
        assert f'href="{url}?format=csv"' in client.get(url).content.decode()
        data = client.get(url, {"format": "json"}).json()
        assert data["values"] == MetricResult.objects.get(key=INTERAUDITOR_KEY).values
        assert client.get(url, {"format": "csv"})["Content-Type"].startswith("text/csv")

    def test_figure_rows_flatten_nested_figures(self) -> None:
        from metrics.views.own_data import figure_rows

        rows = figure_rows({"a": {"b": [1, {"c": 2.5}]}, "n": 3})
        assert rows == [
            {"figure": "a.b[0]", "value": 1},
            {"figure": "a.b[1].c", "value": 2.5},
            {"figure": "n", "value": 3},
        ]
