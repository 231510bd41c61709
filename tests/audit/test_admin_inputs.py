"""The admin site's writes of the imported inputs go through the services, so what is derived
from them follows as it follows the site's own writes."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from audit.models import DiscussionFigures
from audit.services import feedback_start
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
