"""The admin site's writes of the imported inputs go through the services, so what is derived
from them follows as it follows the site's own writes."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from audit.derived.tallies import tallies_counted, tallies_stored
from audit.derived.team_figures import (
    figures_counted,
    figures_stored,
    to_code_recounted,
    to_code_stored,
)
from audit.models import DiscussionFigures, Statement
from audit.services import feedback_start
from audit.services.assignments import AssignmentPlan, assignments_create
from tests.audit.test_views_support import make_scene

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):
    user = get_user_model().objects.create_superuser("root", password="pw-test-12345")
    client.force_login(user)
    return client


def test_a_summary_changed_in_the_admin_is_the_team_row_s_label(staff_client, auditor):
    scene = make_scene()
    feedback_start(statement=scene.first, auditor=auditor)
    url = f"/django-admin/audit/discussion/{scene.discussion.pk}/change/"

    response = staff_client.post(url, {"summary": "Renamed", "external_id": "x-1"})

    assert response.status_code == 302, response.content[:2000]
    assert DiscussionFigures.objects.get().label == "Renamed"


def test_what_the_admin_deletes_leaves_the_stored_counts_true(staff_client, auditor, admin_user):
    """A statement assigned and a speaker with statements, deleted in the admin: the tallies,
    the team page's sums and what is still to code equal a recount."""
    scene = make_scene()
    feedback_start(statement=scene.first, auditor=auditor)
    plan = AssignmentPlan(discussions=[scene.discussion], auditors=[auditor])
    assignments_create(plan=plan, admin=admin_user)
    assert tallies_stored()[(scene.discussion.pk, auditor.pk)]["assigned"] == 2

    response = staff_client.post(
        f"/django-admin/audit/statement/{scene.second.pk}/delete/", {"post": "yes"}
    )
    assert response.status_code == 302, response.content[:2000]
    assert tallies_stored()[(scene.discussion.pk, auditor.pk)]["assigned"] == 1
    expert = scene.expert.speaker
    response = staff_client.post(
        "/django-admin/audit/speaker/",
        {"action": "delete_selected", "_selected_action": [expert.pk], "post": "yes"},
    )

    assert response.status_code == 302, response.content[:2000]
    assert not Statement.objects.filter(pk=scene.expert.pk).exists()
    assert tallies_stored() == tallies_counted()
    assert figures_stored() == figures_counted()
    assert to_code_stored() == to_code_recounted() == {scene.discussion.pk: 1}
