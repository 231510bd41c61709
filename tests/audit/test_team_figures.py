"""The team page's stored rows (audit.derived.team_figures) equal what the page computed on every
view before: the counts (kept with the tallies), active time (replayed by the worker) and
agreement (written by the inter-auditor family's worker)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from audit.derived.coding_times import team_times_rebuild
from audit.models import AuditorFigures, DiscussionFigures, Feedback, FeedbackRevision
from audit.selectors.progress import STORED, auditor_progress, discussion_progress
from audit.services import feedback_save, feedback_start, feedback_submit
from audit.services.inputs import discussion_save
from tests.audit.test_views_support import make_scene
from tests.factories import pdp, person

pytestmark = pytest.mark.django_db


@pytest.fixture
def scene():
    return make_scene()


def _worked(scene, auditor, second_auditor) -> None:
    """Two coders, three statements, history spread over two days with a pause."""
    start = timezone.now() - timedelta(days=1)
    for offset, (coder, statement) in enumerate(
        [(auditor, scene.first), (auditor, scene.second), (second_auditor, scene.first)]
    ):
        feedback = feedback_start(statement=statement, auditor=coder)
        payload = pdp(people=[person(1, "Ann")])
        feedback_save(feedback=feedback, user=coder, edited_extraction=payload, base_version=None)
        if offset < 2:
            feedback_submit(feedback=feedback, user=coder)
    for i, revision in enumerate(FeedbackRevision.objects.order_by("pk")):
        at = start + timedelta(minutes=3 * i, hours=30 if i >= 4 else 0)  # then the next day
        FeedbackRevision.objects.filter(pk=revision.pk).update(created_at=at, updated_at=at)


def _figures(row) -> dict:
    return {name: getattr(row, name) for name in STORED}


def test_stored_rows_equal_the_computed_rows(scene, auditor, second_auditor):
    _worked(scene, auditor, second_auditor)  # times moved past the model signals: rebuild
    assert team_times_rebuild() > 0

    by_discussion = {r.pk: r for r in DiscussionFigures.objects.all()}
    for row in discussion_progress():
        assert _figures(by_discussion[row.id]) == pytest.approx(_figures(row))
        assert by_discussion[row.id].label == row.label
    for row in auditor_progress(auditors=[auditor, second_auditor]):
        assert _figures(AuditorFigures.objects.get(pk=row.id)) == pytest.approx(_figures(row))
    assert DiscussionFigures.objects.get().active_seconds > 0


def test_a_revision_queues_the_replay_once_the_transaction_commits(
    scene, auditor, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        feedback_start(statement=scene.first, auditor=auditor)
        FeedbackRevision.objects.update(created_at=timezone.now() - timedelta(minutes=2))
    with django_capture_on_commit_callbacks(execute=True):
        feedback_submit(feedback=Feedback.objects.get(statement=scene.first), user=auditor)

    assert DiscussionFigures.objects.get().active_seconds == pytest.approx(120, abs=5)
    assert AuditorFigures.objects.get(pk=auditor.pk).median_seconds == pytest.approx(120, abs=5)


def test_a_changed_summary_changes_the_rows_label(scene, auditor):
    feedback_start(statement=scene.first, auditor=auditor)
    scene.discussion.summary = "Renamed"
    discussion_save(discussion=scene.discussion)

    assert DiscussionFigures.objects.get().label == "Renamed"


def test_the_team_page_shows_the_stored_rows(admin_client, scene, auditor):
    feedback_submit(feedback=feedback_start(statement=scene.first, auditor=auditor), user=auditor)
    DiscussionFigures.objects.update(agreement_gt=0.25, agreement_coders=None)

    html = admin_client.get(reverse("audit:team")).content.decode()

    table = html[html.index('data-testid="team-discussions"') :]
    assert '<td class="num">0.25</td><td class="num">–</td>' in table
    assert '<td class="num" data-col="submitted">1</td>' in table
