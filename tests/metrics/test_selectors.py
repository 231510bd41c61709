"""metrics.selectors: reads of stored results, and what they give audit's pages."""

import pytest

from audit import figures
from audit.derived.tallies import coding_written
from audit.models import Feedback
from metrics import selectors
from metrics.models import MetricResult
from tests.factories import ExtractionRunFactory, FeedbackFactory, StatementFactory

pytestmark = pytest.mark.django_db


def test_metrics_fills_audits_extension_point_when_it_loads():
    assert figures._readers.statement_f1 is selectors.statement_f1_results


def test_statement_f1_results_read_one_run_for_the_statements_asked():
    run = ExtractionRunFactory()
    here, elsewhere = StatementFactory(), StatementFactory()
    for statement in (here, elsewhere):
        MetricResult.objects.create(
            key=f"s{statement.pk}",
            family="extraction",
            scope=MetricResult.Scope.STATEMENT,
            run=run,
            discussion=statement.discussion,
            statement=statement,
            status=MetricResult.Status.FRESH,
            values={"aggregate_micro_f1": 0.75},
        )
    found = figures.statement_f1_results(run_id=run.pk, statement_ids=[here.pk])
    assert list(found) == [here.pk]
    assert found[here.pk].values == {"aggregate_micro_f1": 0.75}
    assert found[here.pk].status == "fresh"
    assert figures.statement_f1_results(run_id=run.pk + 1, statement_ids=[here.pk]) == {}


def test_my_progress_counts_my_codings_by_status_from_the_stored_tallies(auditor, second_auditor):
    S = Feedback.Status
    statuses = [S.DRAFT, S.DRAFT, S.SUBMITTED, S.APPROVED, S.REJECTED, S.SUBMITTED]
    mine = [
        FeedbackFactory(auditor=auditor, status=status, statement=StatementFactory())
        for status in statuses
    ]
    FeedbackFactory(auditor=second_auditor, status=S.APPROVED, statement=mine[0].statement)

    assert selectors.my_progress(auditor) == {
        "draft": 2, "submitted": 2, "approved": 1, "rejected": 1, "coded": 6,
    }  # fmt: skip
    mine[0].status = S.SUBMITTED
    mine[0].save()
    coding_written(feedback=mine[0], before=S.DRAFT)  # written past the services
    assert selectors.my_progress(auditor)["draft"] == 1
    assert selectors.my_progress(second_auditor)["approved"] == 1
