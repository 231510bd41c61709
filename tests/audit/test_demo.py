from collections import Counter

import pytest
from django.core.management import call_command
from django.db import transaction

from audit.derived.tallies import tallies_batched
from audit.models import (
    Assignment,
    Discussion,
    DiscussionExtraction,
    Extraction,
    ExtractionRun,
    Feedback,
    GroundTruthSnapshot,
    RunConfiguration,
    Statement,
    TriageSettings,
    history_purge,
)
from audit.services.demo import (
    DEMO_UNTOUCHED,
    TRIAGE_DISCUSSIONS,
    demo_experiments_seed,
    demo_seed,
)
from evalsite.access import is_admin, is_auditor
from metrics.families.payload.schema import pdp_issues

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("seeded_demo")]


@pytest.fixture(scope="module")
def seeded_demo(django_db_setup, django_db_blocker):
    """One `seed_demo` for the module (a seed takes ~15 s): each test runs in a savepoint of
    this transaction, which is rolled back after the last one."""
    with django_db_blocker.unblock(), transaction.atomic():
        call_command("seed_demo", stdout=open("/dev/null", "w"))  # noqa: SIM115
        yield
        transaction.set_rollback(True)


def test_seed_demo_makes_realistic_complete_data_and_users_with_roles(django_user_model):
    """The command: the demo set, the review-triage example beside it, and the demo users."""
    assert is_admin(django_user_model.objects.get(username="admin"))
    auditor = django_user_model.objects.get(username="auditor1")
    assert is_auditor(auditor) and not is_admin(auditor)
    assert auditor.check_password("auditor-demo-pass")
    triage = Discussion.objects.filter(external_id__startswith="demo-triage-")
    assert triage.count() == TRIAGE_DISCUSSIONS
    assert TriageSettings.objects.get().enabled
    demo = Discussion.objects.exclude(pk__in=triage.values("pk"))
    assert demo.count() == 12
    for discussion in demo:
        assert 20 <= discussion.statements.count() <= 40
    assert Feedback.objects.approved().count() > 0
    assert Feedback.objects.filter(status=Feedback.Status.SUBMITTED).exists()
    assert Feedback.objects.filter(status=Feedback.Status.REJECTED).exists()
    assert Feedback.objects.values("auditor").distinct().count() == 2
    assert all(pdp_issues(e.pdp_deltas) == [] for e in Extraction.objects.all()[:200])


def test_demo_seed_is_idempotent_and_deterministic(django_user_model):
    def demo_texts() -> list[str]:
        demo = Statement.objects.exclude(discussion__external_id__startswith="demo-triage-")
        return list(
            demo.order_by("discussion__external_id", "order").values_list("text", flat=True)
        )

    texts = demo_texts()
    counts = (Discussion.objects.count(), Statement.objects.count(), Feedback.objects.count())
    summary = demo_seed()
    assert summary.discussions_created == 0
    assert (
        Discussion.objects.count(),
        Statement.objects.count(),
        Feedback.objects.count(),
    ) == counts
    with history_purge(), tallies_batched():  # the tallies recounted once, not per coding
        Discussion.objects.all().delete()
        Feedback.objects.all().delete()
    demo_seed()
    assert demo_texts() == texts


def test_the_demo_holds_runs_as_experiments():
    """Two prompt versions with three replicates each, one whole-discussion run scored by
    cumulative F1, and a snapshot of the ground truth; seeding again adds none of them."""
    replicates = {
        c.prompt_version: sorted(c.runs.values_list("replicate", flat=True))
        for c in RunConfiguration.objects.all()
    }
    assert replicates == {
        "v1-baseline": [1, 2, 3],
        "v2-examples": [1, 2, 3],
        "v3-extract-full": [1],
    }
    whole = ExtractionRun.objects.discussion_unit().get()
    assert DiscussionExtraction.objects.filter(run=whole).count() == 12
    assert all(pdp_issues(e.pdp) == [] for e in DiscussionExtraction.objects.all())
    first = ExtractionRun.objects.get(prompt_version="v1-baseline", replicate=1)
    demo_statements = set(first.extractions.values_list("statement_id", flat=True))
    for replicate in ExtractionRun.objects.filter(replicate__gt=1):
        assert set(replicate.extractions.values_list("statement_id", flat=True)) == demo_statements
        assert replicate.notes.startswith(f"demo replicate {replicate.replicate}")
    snapshot = GroundTruthSnapshot.objects.get()
    assert (snapshot.name, snapshot.discussions, snapshot.complete_discussions) == ("GT v1", 6, 6)
    again = demo_experiments_seed()
    assert (again.runs_created, again.discussion_extractions_created, again.snapshot) == (
        0,
        0,
        None,
    )
    assert ExtractionRun.objects.count() == 7


def test_demo_codings_that_were_submitted_pass_the_ground_truth_checks():
    """Submit and approve refuse a coding with problems, so the demo holds none that has them."""
    from audit.services.feedback import feedback_problems

    handed_in = Feedback.objects.exclude(status=Feedback.Status.DRAFT).select_related("statement")
    assert handed_in.count() > 150
    problems = {f.pk: feedback_problems(feedback=f) for f in handed_in}
    assert {pk: [str(p) for p in found] for pk, found in problems.items() if found} == {}
    first = {
        f.statement_id: f.edited_extraction
        for f in Feedback.objects.filter(auditor__username="auditor1")
    }
    second = Feedback.objects.filter(auditor__username="auditor2")
    differing = [f for f in second if f.edited_extraction != first[f.statement_id]]
    assert differing, "auditor2 must disagree with auditor1 somewhere"


def test_demo_assigns_the_uncoded_discussions_to_both_auditors_with_an_overlap_sample():
    subjects = Statement.objects.subjects()
    untouched = subjects.filter(discussion__external_id__in=DEMO_UNTOUCHED)
    rows = Assignment.objects.all()
    assert set(rows.values_list("statement_id", flat=True)) == set(
        untouched.values_list("pk", flat=True)
    )
    per_auditor = Counter(rows.values_list("auditor__username", flat=True))
    assert set(per_auditor) == {"auditor1", "auditor2"}
    shared = rows.filter(overlap=True).values("statement_id").distinct().count()
    assert shared == round(0.2 * untouched.count())
    assert not Feedback.objects.filter(statement__in=untouched).exists()
