"""The benchmarks' seeded data: a partner run (the run's previous one, which review triage
compares it with) and a share of the discussions coded."""

from __future__ import annotations

import pytest

from audit.models import Extraction, ExtractionRun, Feedback
from metrics.own_data.triage import _partner_run
from tests.bench.data import SeededWorkload


@pytest.mark.django_db
def test_a_partner_run_extracts_every_statement_and_is_the_runs_partner() -> None:
    seeded = SeededWorkload.create(discussions=3, statements=4, seed=1, partner_run=True)
    assert seeded.partner is not None and _partner_run(seeded.run) == seeded.partner
    assert ExtractionRun.objects.latest_first().first() == seeded.run  # the partner is older
    ours = dict(Extraction.objects.filter(run=seeded.run).values_list("statement_id", "pdp_deltas"))
    theirs = dict(
        Extraction.objects.filter(run=seeded.partner).values_list("statement_id", "pdp_deltas")
    )
    assert set(theirs) == set(ours) and len(ours) == 12
    assert any(theirs[sid] != ours[sid] for sid in ours)  # another draw of the AI, not a copy
    seeded.delete()
    assert not ExtractionRun.objects.filter(pk__in=[seeded.run.pk, seeded.partner.pk]).exists()


@pytest.mark.django_db
def test_without_a_partner_run_the_run_is_alone() -> None:
    seeded = SeededWorkload.create(discussions=2, statements=3, seed=1)
    assert seeded.partner is None and _partner_run(seeded.run) is None


@pytest.mark.django_db
def test_an_approved_share_codes_only_the_first_discussions() -> None:
    seeded = SeededWorkload.create(
        discussions=4, statements=5, seed=2, approvals=1, approved_share=0.25
    )
    approved = Feedback.objects.filter(status=Feedback.Status.APPROVED)
    first = Extraction.objects.filter(run=seeded.run).order_by("statement_id")[0]
    assert approved.count() == 5
    assert set(approved.values_list("statement__discussion_id", flat=True)) == {
        first.statement.discussion_id
    }
    # the coding waiting for approval is seeded whether or not its discussion is coded
    assert [f.status for f in seeded.pending] == [Feedback.Status.SUBMITTED]


@pytest.mark.django_db
def test_the_seed_goes_a_few_discussions_at_a_time_and_takes_nothing_else(monkeypatch) -> None:
    from audit.models import Discussion, Statement
    from metrics.models import MetricResult
    from tests.bench import data as benchmark_data
    from tests.factories import StatementFactory

    other = StatementFactory()  # not seeded: stays
    monkeypatch.setattr(benchmark_data, "DELETE_CHUNK", 2)
    seeded = SeededWorkload.create(discussions=5, statements=3, seed=3, approvals=1)
    assert Discussion.objects.filter(external_id__startswith=f"{seeded.tag}-").count() == 5
    deletes: list[int] = []
    delete = Discussion.objects.none().delete.__func__  # QuerySet.delete

    def counted(queryset):
        deletes.append(queryset.count())
        return delete(queryset)

    monkeypatch.setattr(type(Discussion.objects.none()), "delete", counted)

    run_id = seeded.run.pk
    seeded.delete()

    assert deletes[:3] == [2, 2, 1]  # the discussions, two per transaction
    assert list(Statement.objects.values_list("pk", flat=True)) == [other.pk]
    assert not ExtractionRun.objects.filter(pk=run_id).exists()
    assert not MetricResult.objects.filter(run_id=run_id).exists()
    assert not Feedback.objects.exists()
