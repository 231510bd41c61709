"""Who may call which audit endpoint, and with which HTTP method."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit.models import Feedback
from audit.services import feedback_start, feedback_submit
from tests.audit.test_views_support import HX, make_scene

pytestmark = pytest.mark.django_db


@pytest.fixture
def scene(auditor):
    scene = make_scene()
    scene.feedback = feedback_start(statement=scene.first, auditor=auditor)
    scene.revision = scene.feedback.revisions.get()
    return scene


def endpoints(scene) -> list[tuple[str, str, str]]:
    """(method, url, role needed) for every audit screen and action."""
    f, s, d = scene.feedback, scene.first, scene.discussion
    url = reverse
    return [
        ("get", url("home"), "auditor"),
        ("get", url("audit:discussion", args=[d.pk]), "auditor"),
        ("get", url("audit:statement", args=[s.pk]), "auditor"),
        ("get", url("audit:statement_state", args=[s.pk]), "auditor"),
        ("post", url("audit:presence", args=[s.pk]), "auditor"),
        ("post", url("audit:feedback_start", args=[scene.second.pk]), "auditor"),
        ("get", url("audit:feedback_edit", args=[f.pk]), "owner"),
        ("post", url("audit:feedback_save", args=[f.pk]), "owner"),
        ("post", url("audit:feedback_json", args=[f.pk]), "owner"),
        ("post", url("audit:feedback_submit", args=[f.pk]), "owner"),
        ("get", url("audit:feedback_history", args=[f.pk]), "owner"),
        ("post", url("audit:feedback_restore", args=[f.pk, scene.revision.pk]), "owner"),
        ("get", url("audit:review_queue"), "admin"),
        ("get", url("audit:statement_review", args=[s.pk]), "admin"),
        ("get", url("audit:discussion_export", args=[d.pk]), "admin"),
        ("post", url("audit:feedback_approve", args=[f.pk]), "admin"),
        ("post", url("audit:feedback_reject", args=[f.pk]), "admin"),
        ("post", url("audit:bulk_approve", args=[d.pk]), "admin"),
        ("post", url("audit:guidelines_preview"), "admin"),
        ("get", url("audit:inbox"), "auditor"),
    ]


def test_anonymous_users_are_sent_to_the_login_page(client, scene):
    for method, url, _ in endpoints(scene):
        response = getattr(client, method)(url)
        assert response.status_code == 302, url
        assert response.url.startswith(reverse("login")), url


def test_users_without_a_role_get_403_everywhere(client, outsider, scene):
    client.force_login(outsider)
    for method, url, _ in endpoints(scene):
        assert getattr(client, method)(url).status_code == 403, url


def test_wrong_http_method_is_refused_with_405(auditor_client, scene):
    for method, url, _ in endpoints(scene):
        wrong = "get" if method == "post" else "post"
        assert getattr(auditor_client, wrong)(url).status_code == 405, url


def test_auditors_get_403_on_admin_screens_and_actions(auditor_client, scene):
    admin_only = [(m, u) for m, u, role in endpoints(scene) if role == "admin"]
    assert len(admin_only) == 7
    for method, url in admin_only:
        assert getattr(auditor_client, method)(url).status_code == 403, url


def test_another_auditors_feedback_is_not_found(client, second_auditor, scene):
    client.force_login(second_auditor)
    for method, url, role in endpoints(scene):
        if role == "owner":
            assert getattr(client, method)(url, **HX).status_code == 404, url
    scene.feedback.refresh_from_db()
    assert scene.feedback.version == 1  # nothing was changed through a guessed id


def test_admins_can_open_any_auditors_feedback(admin_client, scene):
    for name in ("audit:feedback_edit", "audit:feedback_history"):
        response = admin_client.get(reverse(name, args=[scene.feedback.pk]))
        assert response.status_code == 200, name


def test_auditor_can_use_the_auditor_screens(auditor_client, scene):
    for method, url, role in endpoints(scene):
        if role in ("auditor", "owner") and method == "get":
            assert auditor_client.get(url, **HX).status_code == 200, url


def test_state_changes_need_a_csrf_token(auditor, scene):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(auditor)
    url = reverse("audit:feedback_submit", args=[scene.feedback.pk])
    assert client.post(url, {"version": 1}, **HX).status_code == 403
    assert Feedback.objects.get().status == Feedback.Status.DRAFT


def test_admin_cannot_approve_their_own_feedback(admin_client, admin_user, scene):
    own = feedback_start(statement=scene.second, auditor=admin_user)
    own = feedback_submit(feedback=own, user=admin_user)
    url = reverse("audit:feedback_approve", args=[own.pk])
    response = admin_client.post(url, {"version": own.version}, **HX)
    assert response.status_code == 403
    assert b"your own feedback" in response.content
    own.refresh_from_db()
    assert own.status == Feedback.Status.SUBMITTED
