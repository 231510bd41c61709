"""Blind stays blind until the coding is final (issue 46 §8): a coding is final for the
agreement figures once submitted. Submitting lifts the seal, so a blind coder who submits an
empty coding, sees the F1 and the other coding, then edits and resubmits, changes their coding
(each change a revision marked "after submit") but not what the agreement figures compare:
the coding as first submitted."""

from __future__ import annotations

import copy

import pytest
from django.urls import reverse

from audit.models import BlindReview, Feedback
from audit.selectors.disagreement import statement_disagreement
from audit.services import feedback_save, feedback_start, feedback_submit
from audit.services.feedback import feedback_unsubmit
from metrics.own_data.interauditor import interauditor_result_compute
from tests.audit.test_views_pages import approve_with_metric
from tests.audit.test_views_support import hx_get, make_scene

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def few_resamples(settings):
    settings.OWN_DATA_BOOTSTRAP_RESAMPLES = 50


@pytest.fixture
def sealed(second_auditor, admin_user):
    """bob's coding of the first statement is approved; the statement is in the blind sample."""
    scene = make_scene()
    truth, _ = approve_with_metric(scene, second_auditor, admin_user)
    BlindReview.objects.create(statement=scene.first, marked_by=admin_user)
    return scene, truth


def pair_f1(values: dict) -> float:
    (pair,) = values["pairs"]
    return pair["symmetric_f1"]["point"]


def test_a_change_after_seeing_the_score_is_left_out_of_the_agreement(client, auditor, sealed):
    scene, truth = sealed
    mine = feedback_start(statement=scene.first, auditor=auditor)
    assert mine.blind
    mine = feedback_submit(feedback=mine, user=auditor)  # an empty coding
    client.force_login(auditor)
    card = hx_get(client, reverse("audit:statement", args=[scene.first.pk]), {"run": scene.run.pk})
    assert "f1-badge" in card.content.decode()  # the seal has lifted: the F1 shows

    # Having seen it, alice copies the approved coding and submits again.
    copied = feedback_save(
        feedback=mine, user=auditor, edited_extraction=copy.deepcopy(truth.edited_extraction),
        base_version=mine.version,
    )  # fmt: skip
    resubmitted = feedback_submit(feedback=copied, user=auditor)
    assert resubmitted.edited_extraction == truth.edited_extraction  # her coding changed

    values = interauditor_result_compute().values
    assert pair_f1(values) == 0.0  # what agreement compares: the empty coding she submitted
    (scored,) = [a for a in values["auditors"] if a["auditor"] == "alice"]
    assert scored["mean_f1"]["point"] == 0.0  # against the approved ground truth, as submitted
    # The reviewer still sees the codings as they are now: no disagreement left.
    assert statement_disagreement(statement_id=scene.first.pk) is None

    change = resubmitted.revisions.get(action="edit")
    assert change.after_submit
    assert not resubmitted.revisions.filter(action="submit", after_submit=True).exists()
    history = client.get(reverse("audit:feedback_history", args=[resubmitted.pk])).content
    assert history.decode().count('data-testid="after-submit"') == 1


def test_an_undone_submit_is_no_submission(auditor, second_auditor):
    """Undo submit (allowed only while the submit showed nothing of others) takes the
    submission back: the next submit is the one the agreement figures keep."""
    scene = make_scene()
    mine = feedback_submit(feedback=feedback_start(statement=scene.first, auditor=auditor),
                           user=auditor)  # fmt: skip
    assert mine.submitted_extraction == mine.edited_extraction
    mine = feedback_unsubmit(feedback=mine, user=auditor)
    assert mine.submitted_extraction is None
    payload = copy.deepcopy(mine.edited_extraction)
    payload["people"].append({"id": -9, "name": "Grandma"})
    mine = feedback_save(feedback=mine, user=auditor, edited_extraction=payload,
                         base_version=mine.version)  # fmt: skip
    assert not mine.revisions.get(action="edit").after_submit
    mine = feedback_submit(feedback=mine, user=auditor)
    assert Feedback.objects.get(pk=mine.pk).submitted_extraction == payload


def test_the_migration_keeps_each_coding_as_first_submitted(migrated_to):
    """Codings submitted before migration 0029: the first submit since the last undone one is
    what the figures keep, and the content changes after it are marked."""
    from django.contrib.auth import get_user_model

    coder = get_user_model().objects.create(username="coder")
    model = migrated_to([("audit", "0028_to_adjudicate_without_approved")]).get_model
    discussion = model("audit", "Discussion").objects.create(summary="d")
    speaker = model("audit", "Speaker").objects.create(discussion=discussion, name="A")
    revisions = model("audit", "FeedbackRevision").objects

    def coding(order: int, steps: list[tuple[str, str]]):
        statement = model("audit", "Statement").objects.create(
            discussion=discussion, speaker=speaker, order=order, text="..."
        )
        feedback = model("audit", "Feedback").objects.create(
            statement=statement, auditor_id=coder.pk, status="submitted"
        )
        for version, (action, name) in enumerate(steps, start=1):
            revisions.create(feedback=feedback, author_id=coder.pk, version=version,
                             action=action, status="draft", after={"people": [name]})  # fmt: skip
        return feedback.pk

    seen = coding(1, [("edit", "a"), ("submit", "a"), ("edit", "b"), ("submit", "b")])
    undone = coding(2, [("submit", "a"), ("unsubmit", "a"), ("edit", "c"), ("submit", "c")])
    never = coding(3, [("edit", "a")])

    new = migrated_to([("audit", "0029_final_once_submitted")]).get_model
    kept = dict(new("audit", "Feedback").objects.values_list("pk", "submitted_extraction"))
    assert kept == {seen: {"people": ["a"]}, undone: {"people": ["c"]}, never: None}
    marked = new("audit", "FeedbackRevision").objects.filter(after_submit=True)
    assert list(marked.values_list("feedback_id", "version")) == [(seen, 3)]


def test_the_api_history_marks_a_change_after_submit(client, auditor):
    scene = make_scene()
    mine = feedback_submit(feedback=feedback_start(statement=scene.first, auditor=auditor),
                           user=auditor)  # fmt: skip
    payload = copy.deepcopy(mine.edited_extraction)
    payload["people"].append({"id": -9, "name": "Grandma"})
    feedback_save(feedback=mine, user=auditor, edited_extraction=payload, base_version=mine.version)
    client.force_login(auditor)
    body = client.get(f"/api/v1/feedback/{mine.pk}/revisions/").json()
    rows = body["results"] if isinstance(body, dict) else body
    assert [(r["action"], r["after_submit"]) for r in rows][:2] == [
        ("edit", True),
        ("submit", False),
    ]
