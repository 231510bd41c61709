"""The benchmarks' seeded data: a partner run (the run's previous one, which review triage
compares it with) and a share of the discussions coded."""

from __future__ import annotations

import pytest

from audit.models import Extraction, ExtractionRun, Feedback
from metrics.benchmark_data import SeededWorkload
from metrics.own_data.triage import _partner_run


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
