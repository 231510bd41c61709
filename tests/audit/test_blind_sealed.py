"""Blind review that is blind (issue 15 §4): until a coder of a blind-review statement submits,
no F1, TP/FP/FN, matched ids, other codings or approved ground truth reach them, in pages,
htmx fragments or the API; and auditors read no ground truth through stored results of the
statements they are still coding."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit.models import BlindReview
from audit.services import feedback_save, feedback_start, feedback_submit
from metrics.models import MetricResult
from metrics.own_data.interauditor import interauditor_result_compute
from tests.audit.test_views_pages import approve_with_metric
from tests.audit.test_views_support import hx_get, make_scene

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.api_fixtures"]

RESULTS = "/api/v1/metric-results/"
LEAKS = ("f1-badge", "f1-panel", "Statement F1", ">TP<", "matched:", ">ground truth<")


@pytest.fixture
def blind_scene(second_auditor, admin_user):
    """bob's coding of the first statement is approved ground truth with a stored F1; then
    the statement is marked for blind review."""
    scene = make_scene()
    _, result = approve_with_metric(scene, second_auditor, admin_user)
    BlindReview.objects.create(statement=scene.first, marked_by=admin_user)
    return scene, result


def card_html(client, scene) -> str:
    url = reverse("audit:statement", args=[scene.first.pk])
    return hx_get(client, url, {"run": scene.run.pk}).content.decode()


def visible_result_ids(api_client) -> set[int]:
    return {r["id"] for r in api_client.get(RESULTS, {"page_size": 100}).json()["results"]}


def assert_sealed(html: str) -> None:
    for leak in LEAKS:
        assert leak not in html, leak


def test_a_blind_auditor_sees_nothing_of_the_ground_truth_until_they_submit(
    client, api, auditor, blind_scene
):
    scene, result = blind_scene
    client.force_login(auditor)
    discussion_url = reverse("audit:discussion", args=[scene.discussion.pk])
    page = client.get(discussion_url).content.decode()
    card = page.split(f'id="stmt-{scene.first.pk}"')[1].split("</article>")[0]
    assert_sealed(card)
    assert 'data-testid="blind-sealed"' in card
    assert_sealed(card_html(client, scene))
    statement_page = client.get(reverse("audit:statement", args=[scene.first.pk]))
    assert_sealed(statement_page.content.decode().split("</header>", 1)[1])
    as_auditor = api(auditor)
    assert result.pk not in visible_result_ids(as_auditor)
    assert as_auditor.get(f"{RESULTS}{result.pk}/").status_code == 404
    assert as_auditor.get(RESULTS, {"statement": scene.first.pk}).json()["count"] == 0

    # Coding (blind) and autosaving changes nothing; submitting opens it all.
    feedback = feedback_start(statement=scene.first, auditor=auditor)
    assert feedback.blind
    feedback = feedback_save(
        feedback=feedback,
        user=auditor,
        edited_extraction={"people": [{"id": -1, "name": "John"}]},
        base_version=feedback.version,
    )
    assert_sealed(card_html(client, scene))
    assert result.pk not in visible_result_ids(as_auditor)
    feedback_submit(feedback=feedback, user=auditor)
    html = card_html(client, scene)
    assert f'id="f1-badge-{scene.first.pk}"' in html and "f1-panel" in html
    assert 'data-testid="blind-sealed"' not in html
    assert result.pk in visible_result_ids(as_auditor)


def test_a_prefilled_second_coder_of_the_sample_is_sealed_too(
    client, auditor, second_auditor, admin_user
):
    """alice started from the AI before the statement joined the blind sample; bob's coding is
    then approved. Her agreement with him must not be coached by the F1 either."""
    scene = make_scene()
    mine = feedback_start(statement=scene.first, auditor=auditor)
    assert not mine.blind
    BlindReview.objects.create(statement=scene.first, marked_by=admin_user)
    approve_with_metric(scene, second_auditor, admin_user)
    client.force_login(auditor)
    assert_sealed(card_html(client, scene))
    feedback_submit(feedback=mine, user=auditor)
    html = card_html(client, scene)
    assert 'data-testid="blind-sealed"' not in html and f'id="f1-badge-{scene.first.pk}"' in html


def test_an_admin_coding_a_sample_statement_sees_no_other_coding_before_submitting(
    client, second_auditor, admin_user, blind_scene
):
    scene, _ = blind_scene
    client.force_login(admin_user)
    reviewing = card_html(client, scene)  # reviewing, not coding: everything shows
    assert "Coded by others" in reviewing and f'id="f1-badge-{scene.first.pk}"' in reviewing
    mine = feedback_start(statement=scene.first, auditor=admin_user)
    coding = card_html(client, scene)
    assert_sealed(coding)
    assert "Coded by others" not in coding and second_auditor.username not in coding
    feedback_submit(feedback=mine, user=admin_user)
    assert "Coded by others" in card_html(client, scene)


def test_auditors_read_no_ground_truth_of_statements_they_are_still_coding(
    api, auditor, admin_user, second_auditor
):
    """Statement results carry the approved ground truth's codes (sarf_pairs) and matched ids."""
    scene = make_scene()
    _, statement_result = approve_with_metric(scene, second_auditor, admin_user)
    assert statement_result.values["sarf_pairs"]
    discussion_result = MetricResult.objects.create(
        key=MetricResult.make_key("extraction", "discussion", run_id=scene.run.pk, discussion_id=scene.discussion.pk),
        family="extraction", scope="discussion", run=scene.run, discussion=scene.discussion,
        status="fresh", values={"sarf_pairs": statement_result.values["sarf_pairs"]},
    )  # fmt: skip
    run_result = MetricResult.objects.create(
        key=MetricResult.make_key("extraction", "run", run_id=scene.run.pk),
        family="extraction", scope="run", run=scene.run, status="fresh", values={"f1": 0.5},
    )  # fmt: skip
    as_auditor = api(auditor)
    everything = {statement_result.pk, discussion_result.pk, run_result.pk}
    assert everything <= visible_result_ids(as_auditor)  # not coding it: visible

    mine = feedback_start(statement=scene.first, auditor=auditor)
    assert visible_result_ids(as_auditor) & everything == {run_result.pk}
    assert as_auditor.get(f"{RESULTS}{statement_result.pk}/").status_code == 404
    assert as_auditor.get(f"{RESULTS}{discussion_result.pk}/").status_code == 404
    assert everything <= visible_result_ids(api(admin_user))  # admins review everything

    feedback_submit(feedback=mine, user=auditor)
    assert everything <= visible_result_ids(as_auditor)


def test_the_inter_auditor_figures_are_for_admins_only(api, auditor, admin_user):
    """They name auditors and compare their codings (the card is admins-only already)."""
    result = interauditor_result_compute()
    assert result.pk not in visible_result_ids(api(auditor))
    assert api(auditor).get(f"{RESULTS}{result.pk}/").status_code == 404
    assert result.pk in visible_result_ids(api(admin_user))


def test_a_second_coder_outside_the_sample_sees_no_f1_until_submitting(
    client, auditor, second_auditor, admin_user
):
    """bob's coding is approved ground truth; alice then codes the same statement as a second
    coder: her coding is compared with his in the agreement figures, so she codes it blind to
    his F1 too. Before she starts, the statement's F1 shows as usual."""
    scene = make_scene()
    approve_with_metric(scene, second_auditor, admin_user)
    client.force_login(auditor)
    assert f'id="f1-badge-{scene.first.pk}"' in card_html(client, scene)
    mine = feedback_start(statement=scene.first, auditor=auditor)
    html = card_html(client, scene)
    assert_sealed(html)
    assert 'data-testid="blind-sealed"' in html
    feedback_submit(feedback=mine, user=auditor)
    assert f'id="f1-badge-{scene.first.pk}"' in card_html(client, scene)
