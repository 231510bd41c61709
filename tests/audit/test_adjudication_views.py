"""The adjudication screen: admins only, links from the review pages, bad input 4xx."""

from __future__ import annotations

import uuid

import pytest
from django.urls import reverse

from audit.models import Adjudication

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.audit.adjudication_fixtures"]

KEY = "events:0:-5"


def test_auditors_cannot_open_or_post(auditor_client, two_codings):
    pk = two_codings.statement.pk
    assert auditor_client.get(reverse("audit:adjudicate", args=[pk])).status_code == 403
    url = reverse("audit:adjudication_choose", args=[pk])
    assert auditor_client.post(url, {"key": KEY, "coder": "0"}).status_code == 403
    assert not Adjudication.objects.exists()


def test_the_screen_shows_the_dispute_and_the_agreed_items(admin_client, two_codings):
    html = admin_client.get(reverse("audit:adjudicate", args=[two_codings.statement.pk]))
    text = html.content.decode()
    assert "4</strong> items unanimous" in text and 'data-choose="2"' in text
    assert text.count('class="differs"') == 2  # the date, in both versions
    assert "On the adjudication screen" in text  # the keys, in the shortcut help


def test_a_choice_by_htmx_returns_the_updated_screen(admin_client, two_codings):
    url = reverse("audit:adjudication_choose", args=[two_codings.statement.pk])
    answer = admin_client.post(url, {"key": KEY, "coder": "1"}, HTTP_HX_REQUEST="true")
    assert answer.status_code == 200
    assert (
        "<html" not in answer.content.decode() and "Decided events:0:-5" in answer.content.decode()
    )
    assert Adjudication.objects.get().choices[KEY]["coder"] == 1


@pytest.mark.parametrize(
    "data, status, expected",
    [
        ({"key": KEY, "coder": "x"}, 400, "coder: a coder&#x27;s number is required"),
        ({"key": KEY, "coder": "5"}, 400, "coder must be 0..1"),
        ({"key": KEY, "edit": "{not json"}, 400, "edit: not valid JSON"),
        # The last 500s: int() of a digit it cannot read, JSON parsed without the limits.
        ({"key": KEY, "coder": "7" * 5000}, 400, "(5000 characters)"),
        ({"key": KEY, "coder": "²"}, 400, "coder: a coder&#x27;s number is required"),
        ({"key": KEY, "edit": "[" * 10_000 + "]" * 10_000}, 400, "nested deeper than 64"),
        ({"key": KEY, "edit": '{"name": "\\ud800"}'}, 400, "lone surrogate (\\ud800)"),
        ({"key": KEY, "edit": '{"name": "a\\u0000"}'}, 400, "NUL (\\u0000)"),
        ({"key": "people:7:-7", "coder": "0"}, 404, "No aligned item"),
    ],
)
def test_bad_input_names_the_field_and_stores_nothing(
    admin_client, two_codings, data, status, expected
):
    url = reverse("audit:adjudication_choose", args=[two_codings.statement.pk])
    answer = admin_client.post(url, data, HTTP_HX_REQUEST="true")
    assert answer.status_code == status
    assert expected in answer.content.decode()
    assert not Adjudication.objects.exists()


def test_the_review_page_and_queue_link_to_it(admin_client, two_codings):
    target = reverse("audit:adjudicate", args=[two_codings.statement.pk])
    review = admin_client.get(reverse("audit:statement_review", args=[two_codings.statement.pk]))
    assert target in review.content.decode()
    queue = admin_client.get(reverse("audit:review_queue")).content.decode()
    assert 'data-testid="to-adjudicate"' in queue and target in queue
    home = admin_client.get(reverse("home")).content.decode()
    assert 'data-testid="to-adjudicate"' in home and target in home


def test_the_review_home_says_why_each_needs_a_decision_until_one_is_approved(
    admin_client, admin_user, two_codings
):
    """The codings differ in one event's date: the home lists the statement by what it says,
    with why; once a coding is approved nothing is left to decide, and it leaves the list."""
    from audit.services import feedback_approve

    home = admin_client.get(reverse("home")).content.decode()
    assert "alice and bob disagree on 1 event" in home
    assert two_codings.statement.text[:40] in home
    feedback_approve(feedback=two_codings.alice, admin=admin_user)
    home = admin_client.get(reverse("home")).content.decode()
    target = reverse("audit:adjudicate", args=[two_codings.statement.pk])
    assert target not in home and 'data-testid="nothing-to-adjudicate"' in home
    queue = admin_client.get(reverse("audit:review_queue")).content.decode()
    assert target not in queue  # nor beside bob's coding, which now only counts for agreement


def test_codings_that_agree_wait_only_for_the_merge(admin_client, two_codings):
    bob = two_codings.bob
    for event in bob.edited_extraction["events"]:
        if event["kind"] == "moved":
            event["dateTime"] = "1990"  # as alice has it
    bob.save()
    home = admin_client.get(reverse("home")).content.decode()
    assert "alice and bob agree on every item: the merge is ready to submit" in home


def test_why_is_aligned_once_and_again_when_a_coding_changes(
    admin_client, two_codings, monkeypatch
):
    """The disputed counts are kept under a digest of the codings: a second page aligns
    nothing; a changed coding is aligned afresh."""
    from audit.selectors import adjudication

    # keys of this test's own: earlier tests kept the counts of the same codings
    monkeypatch.setattr(adjudication, "WHY_CACHE_VERSION", uuid.uuid4().hex)
    aligned = []
    align = adjudication.align_codings
    monkeypatch.setattr(
        adjudication, "align_codings", lambda *a, **k: aligned.append(1) or align(*a, **k)
    )
    for _ in range(2):
        home = admin_client.get(reverse("home")).content.decode()
        assert "alice and bob disagree on 1 event" in home
    assert len(aligned) == 1
    bob = two_codings.bob
    for event in bob.edited_extraction["events"]:
        if event["kind"] == "moved":
            event["dateTime"] = "1990"  # as alice has it
    bob.save()
    queue = admin_client.get(reverse("audit:review_queue")).content.decode()
    assert "alice and bob agree on every item: the merge is ready to submit" in queue
    assert len(aligned) == 2


def test_parents_read_as_the_bonds_partners(admin_client, two_codings):
    for feedback in (two_codings.alice, two_codings.bob):
        payload = feedback.edited_extraction
        bond = payload["pair_bonds"][0]["id"]
        child = {"id": bond - 1, "name": "Ann", "parents": bond}
        if feedback == two_codings.bob:
            child["gender"] = "female"  # a dispute, so the child is shown with its fields
        payload["people"].append(child)
        feedback.save()
    html = admin_client.get(reverse("audit:adjudicate", args=[two_codings.statement.pk]))
    assert "<dd>John Smith &amp; Mary Smith</dd>" in html.content.decode()


def test_the_old_metrics_addresses_redirect_to_audit_keeping_the_method(admin_client, two_codings):
    pk = two_codings.statement.pk
    old = f"/metrics/statements/{pk}/adjudicate/"
    answer = admin_client.get(old + "?x=1")
    assert answer.status_code == 308
    assert answer["Location"] == reverse("audit:adjudicate", args=[pk]) + "?x=1"
    answer = admin_client.post(old + "choose/", {"key": KEY, "coder": "1"}, follow=True)
    assert answer.redirect_chain[0] == (reverse("audit:adjudication_choose", args=[pk]), 308)
    assert Adjudication.objects.get().choices[KEY]["coder"] == 1
    for tail in ("remerge/", "submit/"):
        assert admin_client.post(old + tail).status_code == 308
