"""Ground truth, its revisions and the audit log past the site's services: the Django admin shows
them read-only, and no admin page, API call, cascade or queryset deletes a revision or a log
entry (only ``history_purge``, for data a benchmark or test seeded itself)."""

from __future__ import annotations

import json

import pytest
from django.db.models import ProtectedError

from audit.models import (
    AuditLogEntry,
    Discussion,
    Feedback,
    FeedbackRevision,
    Statement,
    history_purge,
)
from audit.services import feedback_approve, feedback_start, feedback_submit
from tests.api_fixtures import api  # noqa: F401 - fixture
from tests.audit.test_views_support import make_scene

pytestmark = pytest.mark.django_db
ADMIN = "/django-admin/audit"


@pytest.fixture
def approved(auditor, admin_user):
    scene = make_scene()
    coding = feedback_submit(
        feedback=feedback_start(statement=scene.first, auditor=auditor), user=auditor
    )
    return feedback_approve(feedback=coding, admin=admin_user)


@pytest.fixture
def superuser_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", password="pw-root-1"))
    return client


def _history() -> tuple[int, int]:
    return FeedbackRevision.objects.count(), AuditLogEntry.objects.count()


def test_the_django_admin_cannot_rewrite_approved_ground_truth(
    superuser_client, approved, second_auditor
):
    """The reproduction: a superuser replaced the content and set another approver."""
    before, history = Feedback.objects.get(pk=approved.pk), _history()
    form = {
        "statement": approved.statement_id,
        "auditor": approved.auditor_id,
        "status": "approved",
        "approved_by": second_auditor.pk,
        "version": approved.version,
        "edited_extraction": json.dumps({"people": [], "events": [], "pair_bonds": []}),
        "_save": "Save",
    }
    page = superuser_client.get(f"{ADMIN}/feedback/{approved.pk}/change/")
    assert page.status_code == 200 and 'name="_save"' not in page.content.decode()
    changed = superuser_client.post(f"{ADMIN}/feedback/{approved.pk}/change/", form)
    assert changed.status_code == 403
    added = superuser_client.post(f"{ADMIN}/feedback/add/", form)
    assert added.status_code == 403
    after = Feedback.objects.get(pk=approved.pk)
    assert (after.version, after.approved_by_id, after.edited_extraction) == (
        before.version,
        before.approved_by_id,
        before.edited_extraction,
    )
    assert Feedback.objects.count() == 1 and _history() == history


@pytest.mark.parametrize("model", ["feedbackrevision", "auditlogentry", "feedback"])
def test_the_django_admin_deletes_no_history(superuser_client, approved, model):
    row = {
        "feedbackrevision": FeedbackRevision.objects.first,
        "auditlogentry": AuditLogEntry.objects.first,
        "feedback": lambda: approved,
    }[model]()
    history = _history()
    assert superuser_client.get(f"{ADMIN}/{model}/{row.pk}/delete/").status_code == 403
    one = superuser_client.post(f"{ADMIN}/{model}/{row.pk}/delete/", {"post": "yes"})
    assert one.status_code == 403
    bulk = superuser_client.post(
        f"{ADMIN}/{model}/",
        {"action": "delete_selected", "_selected_action": [row.pk], "post": "yes"},
    )
    assert bulk.status_code in (200, 302)  # no such action: the list again
    assert _history() == history and Feedback.objects.count() == 1


def test_the_django_admin_cannot_delete_a_discussion_with_coding(superuser_client, approved):
    discussion_id = approved.statement.discussion_id
    history = _history()
    for url in (
        f"{ADMIN}/discussion/{discussion_id}/delete/",
        f"{ADMIN}/statement/{approved.statement_id}/delete/",
    ):
        refused = superuser_client.post(url, {"post": "yes"})
        assert refused.status_code == 200 and "Cannot delete" in refused.content.decode()
    assert Discussion.objects.filter(pk=discussion_id).exists()
    assert _history() == history and Feedback.objects.count() == 1


def test_no_cascade_or_queryset_deletes_history(approved):
    history = _history()
    deletions = [
        lambda: Discussion.objects.all().delete(),
        lambda: Statement.objects.filter(pk=approved.statement_id).delete(),
        lambda: Feedback.objects.get(pk=approved.pk).delete(),
        lambda: FeedbackRevision.objects.all().delete(),
        lambda: FeedbackRevision.objects.first().delete(),
        lambda: AuditLogEntry.objects.all().delete(),
        lambda: AuditLogEntry.objects.first().delete(),
    ]
    for delete in deletions:
        with pytest.raises(ProtectedError, match=r"protected|permanent"):
            delete()
    assert _history() == history and Feedback.objects.count() == 1


def test_a_coding_without_history_goes_and_a_purge_takes_seeded_data(approved, second_auditor):
    """What is guarded is history, not every row: a bare row goes; a purge takes all."""
    bare = Feedback.objects.create(statement=approved.statement, auditor=second_auditor)
    bare.delete()
    with history_purge():
        Discussion.objects.all().delete()
        AuditLogEntry.objects.all().delete()
    assert _history() == (0, 0) and not Feedback.objects.exists()


def test_the_api_deletes_no_coding_revision_or_log_entry(api, approved, admin_user):  # noqa: F811
    history = _history()
    admin = api(admin_user)
    for url in (
        f"/api/v1/feedback/{approved.pk}/",
        f"/api/v1/feedback/{approved.pk}/revisions/",
        "/api/v1/audit-log/",
        f"/api/v1/discussions/{approved.statement.discussion_id}/",
    ):
        assert admin.delete(url).status_code == 405, url
    assert _history() == history and Feedback.objects.count() == 1
