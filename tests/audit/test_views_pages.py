"""The auditor's queue, the discussion audit page, the statement page and its fragments."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from audit.models import Feedback
from audit.services import (
    feedback_approve,
    feedback_reject,
    feedback_save,
    feedback_start,
    feedback_submit,
)
from metrics.families.extraction import calculate_statement_f1
from metrics.models import MetricResult
from tests.audit.test_views_support import HX, hx_get, make_scene
from tests.factories import ExtractionFactory, ExtractionRunFactory, pdp

pytestmark = pytest.mark.django_db


def queries(client, url, **extra) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url, **extra).status_code == 200
    return len(captured)


# --- the queue ----------------------------------------------------------------------------------


def test_queue_shows_my_progress_and_everyones(auditor_client, auditor, second_auditor, admin_user):
    scene = make_scene()
    mine = feedback_start(statement=scene.first, auditor=auditor)
    feedback_submit(feedback=mine, user=auditor)
    theirs = feedback_start(statement=scene.second, auditor=second_auditor)
    feedback_approve(
        feedback=feedback_submit(feedback=theirs, user=second_auditor), admin=admin_user
    )
    html = auditor_client.get(reverse("home")).content.decode()
    assert "The Smith family" in html
    assert '1 · 1 · 0 <span class="muted">/ 2</span>' in html  # mine: coded, sent, approved of 2
    assert "2 · 2 · 1" in html  # overall
    assert "In progress" in html
    assert f'#stmt-{scene.second.pk}">Continue' in html  # straight to my first uncoded statement


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("", {"fresh", "started", "rejected", "done"}),
        ("not_started", {"fresh"}),
        ("in_progress", {"started"}),
        ("needs_changes", {"rejected"}),
        ("done", {"done"}),
    ],
)
def test_queue_filters(auditor_client, auditor, admin_user, status, expected):
    scenes = {name: make_scene(name) for name in ("fresh", "started", "rejected", "done")}
    feedback_start(statement=scenes["started"].first, auditor=auditor)
    rejected = feedback_submit(
        feedback=feedback_start(statement=scenes["rejected"].first, auditor=auditor), user=auditor
    )
    feedback_reject(feedback=rejected, admin=admin_user, reason="no")
    for statement in (scenes["done"].first, scenes["done"].second):
        feedback_submit(feedback=feedback_start(statement=statement, auditor=auditor), user=auditor)
    html = auditor_client.get(reverse("home"), {"status": status}).content.decode()
    shown = {name for name in scenes if f">{name}</a>" in html}
    assert shown == expected


def test_queue_search_by_summary_and_htmx_partial(auditor_client):
    make_scene("Garcia household")
    make_scene("Smith household")
    response = hx_get(auditor_client, reverse("home"), {"q": "garcia"})
    html = response.content.decode()
    assert "<html" not in html and 'id="queue"' in html
    assert "Garcia household" in html and "Smith household" not in html


def test_queue_query_count_does_not_grow_with_discussions(auditor_client, auditor):
    for i in range(3):
        feedback_start(statement=make_scene(f"d{i}").first, auditor=auditor)
    few = queries(auditor_client, reverse("home"))
    for i in range(3, 12):
        feedback_start(statement=make_scene(f"d{i}").first, auditor=auditor)
    assert queries(auditor_client, reverse("home")) == few


# --- the discussion page ------------------------------------------------------------------------


def test_discussion_page_lists_statements_in_order_with_the_ai_extraction(auditor_client):
    scene = make_scene()
    html = auditor_client.get(
        reverse("audit:discussion", args=[scene.discussion.pk])
    ).content.decode()
    first, expert, second = (
        html.index(f'id="stmt-{s.pk}"') for s in (scene.first, scene.expert, scene.second)
    )
    assert first < expert < second
    assert "Coach" in html and "Ann" in html
    assert "Married in Boston" in html and "1985-06-01 (certain)" in html  # event card
    assert "John Smith &amp; Mary Smith" in html  # pair bond card
    assert "S ↑" in html and "R conflict → Mary Smith" in html  # SARF codes with targets
    assert "Start coding" in html
    assert 'data-key="edit"' in html


def test_discussion_page_shows_my_coding_marked_against_the_ai(auditor_client, auditor):
    scene = make_scene()
    feedback = feedback_start(statement=scene.first, auditor=auditor)
    payload = feedback.edited_extraction
    payload["people"][0]["name"] = "Jon"
    payload["pair_bonds"] = []
    feedback_save(feedback=feedback, user=auditor, edited_extraction=payload, base_version=1)
    html = auditor_client.get(
        reverse("audit:discussion", args=[scene.discussion.pk])
    ).content.decode()
    assert "changed: name" in html
    assert "is-removed" in html
    assert "My coding" in html and "v2" in html


def test_discussion_page_run_choice(auditor_client):
    scene = make_scene()
    newer = ExtractionRunFactory(model_name="gpt-next", prompt_version="v2")
    ExtractionFactory(
        statement=scene.first, run=newer, pdp_deltas=pdp(people=[{"id": -1, "name": "Newton"}])
    )
    url = reverse("audit:discussion", args=[scene.discussion.pk])
    latest = auditor_client.get(url).content.decode()
    assert "Newton" in latest and "gpt-next · v2" in latest  # the latest run by default
    older = auditor_client.get(url, {"run": scene.run.pk}).content.decode()
    assert "Newton" not in older and "Married in Boston" in older
    partial = hx_get(auditor_client, url, {"run": scene.run.pk}).content.decode()
    assert "<html" not in partial and 'id="statements"' in partial


def test_discussion_page_query_count_does_not_grow_with_statements(auditor_client, auditor):
    from tests.factories import StatementFactory

    scene = make_scene()
    feedback_start(statement=scene.first, auditor=auditor)
    url = reverse("audit:discussion", args=[scene.discussion.pk])
    few = queries(auditor_client, url)
    speaker = scene.first.speaker
    for order in range(10, 30):
        statement = StatementFactory(discussion=scene.discussion, speaker=speaker, order=order)
        ExtractionFactory(statement=statement, run=scene.run)
        feedback_start(statement=statement, auditor=auditor)
    assert queries(auditor_client, url) == few


def test_statement_page_and_card_partial(auditor_client):
    scene = make_scene()
    url = reverse("audit:statement", args=[scene.second.pk])
    page = auditor_client.get(url).content.decode()
    assert "<html" in page and 'id="state"' in page and "John started drinking" in page
    card = hx_get(auditor_client, url).content.decode()
    assert card.strip().startswith(f'<article class="stmt subject" id="stmt-{scene.second.pk}"')


def test_family_so_far_uses_my_coding_where_present(auditor_client, auditor):
    scene = make_scene()
    feedback = feedback_start(statement=scene.first, auditor=auditor)
    payload = feedback.edited_extraction
    payload["people"][0]["name"] = "Jonathan"
    feedback_save(feedback=feedback, user=auditor, edited_extraction=payload, base_version=1)
    response = hx_get(auditor_client, reverse("audit:statement_state", args=[scene.second.pk]))
    html = response.content.decode()
    assert "Jonathan Smith" in html  # from my coding of statement 1
    assert "John started drinking" in html  # the AI's delta of statement 3
    assert html.count('<span class="diff-tag">this statement</span>') == 1  # the shift event
    no_js = auditor_client.get(reverse("audit:statement_state", args=[scene.second.pk]))
    assert no_js.status_code == 302


# --- statement F1 -------------------------------------------------------------------------------


def approve_with_metric(scene, auditor, admin_user, *, status="fresh", edit=True):
    feedback = feedback_start(statement=scene.first, auditor=auditor)
    if edit:
        payload = feedback.edited_extraction
        payload["people"].append({"id": -9, "name": "Grandma", "last_name": "Rose"})
        payload["pair_bonds"] = []
        feedback = feedback_save(
            feedback=feedback, user=auditor, edited_extraction=payload, base_version=1
        )
    feedback = feedback_approve(
        feedback=feedback_submit(feedback=feedback, user=auditor), admin=admin_user
    )
    if status is None:
        return feedback, None
    values = calculate_statement_f1(
        scene.extraction.pdp_deltas, feedback.edited_extraction, statement_id=scene.first.pk
    ).to_dict()
    result = MetricResult.objects.create(
        key=MetricResult.make_key("extraction", "statement", run_id=scene.run.pk, statement_id=scene.first.pk),
        family="extraction", scope="statement", run=scene.run, discussion=scene.discussion,
        statement=scene.first, values=values, status=status, computed_at=timezone.now(),
    )  # fmt: skip
    return feedback, result


def test_f1_badge_and_panel_scored_for_the_card(auditor_client, auditor, admin_user):
    scene = make_scene()
    feedback, _ = approve_with_metric(scene, auditor, admin_user, status=None)
    MetricResult.objects.filter(family="extraction").delete()  # nothing stored is read
    f1 = calculate_statement_f1(
        scene.extraction.pdp_deltas, feedback.edited_extraction
    ).aggregate_micro_f1
    html = auditor_client.get(
        reverse("audit:discussion", args=[scene.discussion.pk])
    ).content.decode()
    assert f"F1 {f1:.2f}" in html and f1 < 1
    assert '<details class="f1-panel"' in html
    assert "matched: AI John Smith ↔ GT John Smith" in html
    assert "missed (FN): GT Grandma Rose" in html
    assert "spurious (FP): AI John Smith &amp; Mary Smith" in html
    assert "(-4)" not in html and "(-9)" not in html  # names, not ids
    assert "SARF coding" in html and "<td>Relationship</td>" in html
    assert "hx-trigger" not in html.split(f'id="f1-badge-{scene.first.pk}"')[1].split(">")[0]


def test_f1_is_the_current_one_while_the_stored_result_waits(auditor_client, auditor, admin_user):
    """A stored result being recomputed holds older figures: the card scores the current ones
    (what the stored result will hold once recomputed)."""
    scene = make_scene()
    _, result = approve_with_metric(scene, auditor, admin_user, status="stale")
    f1 = result.values["aggregate_micro_f1"]
    MetricResult.objects.filter(pk=result.pk).update(values={"aggregate_micro_f1": 0.01})
    html = auditor_client.get(
        reverse("audit:discussion", args=[scene.discussion.pk])
    ).content.decode()
    assert f"F1 {f1:.2f}" in html and "F1 0.01" not in html and "updating…" not in html


def test_f1_absent_without_ground_truth_and_shown_once_approved(
    auditor_client, auditor, admin_user
):
    scene = make_scene()
    url = reverse("audit:discussion", args=[scene.discussion.pk])
    assert "f1-badge" not in auditor_client.get(url).content.decode()
    approve_with_metric(scene, auditor, admin_user, status=None)
    html = auditor_client.get(url).content.decode()
    assert f'id="f1-badge-{scene.first.pk}"' in html and "F1 failed" not in html


def test_f1_failed_shows_on_the_card(auditor_client, auditor, admin_user, monkeypatch):
    scene = make_scene()
    approve_with_metric(scene, auditor, admin_user, status=None)

    def boom(*args, **kwargs):
        raise ValueError("boom")

    monkeypatch.setattr("audit.selectors.statement_f1.calculate_statements_f1", boom)
    html = auditor_client.get(
        reverse("audit:discussion", args=[scene.discussion.pk])
    ).content.decode()
    assert "F1 failed" in html and "ValueError: boom" in html


def test_f1_ground_truth_items_are_named_only_for_those_who_may_see_them(
    client, auditor, second_auditor, admin_user
):
    scene = make_scene()
    approve_with_metric(scene, auditor, admin_user)
    url = reverse("audit:discussion", args=[scene.discussion.pk])
    client.force_login(second_auditor)
    html = client.get(url).content.decode()
    assert "missed (FN): GT an item not shown" in html
    assert "Grandma" not in html
    client.force_login(admin_user)
    assert "missed (FN): GT Grandma Rose" in client.get(url).content.decode()


def test_admins_see_submissions_and_can_approve_from_the_card(admin_client, auditor):
    scene = make_scene()
    feedback = feedback_submit(
        feedback=feedback_start(statement=scene.first, auditor=auditor), user=auditor
    )
    url = reverse("audit:discussion", args=[scene.discussion.pk])
    html = admin_client.get(url).content.decode()
    assert "1 to review" in html
    assert 'data-key="approve"' in html and "Approve alice" in html
    response = admin_client.post(
        reverse("audit:feedback_approve", args=[feedback.pk]),
        {"view": "card", "version": feedback.version}, **HX,
    )  # fmt: skip
    assert response.status_code == 200
    assert (
        response.content.decode()
        .strip()
        .startswith(f'<article class="stmt subject" id="stmt-{scene.first.pk}"')
    )
    assert Feedback.objects.get().status == Feedback.Status.APPROVED


def test_long_discussions_render_later_statements_as_placeholders(auditor_client):
    from audit.views.discussion import FULL_CARDS
    from tests.factories import StatementFactory

    scene = make_scene()
    extra = [
        StatementFactory(discussion=scene.discussion, speaker=scene.first.speaker, order=10 + i)
        for i in range(FULL_CARDS)
    ]
    html = auditor_client.get(reverse("audit:discussion", args=[scene.discussion.pk])).content
    html = html.decode()
    last = extra[-1]
    assert f'<article class="stmt subject lazy" id="stmt-{last.pk}"' in html
    assert f'<article class="stmt subject" id="stmt-{scene.first.pk}"' in html  # early: full
    assert html.count('<article class="stmt subject" ') == FULL_CARDS  # the rest placeholders
    assert html.count('class="stmt subject lazy"') >= 1


def test_placeholders_load_in_batches_of_consecutive_statements(auditor_client, auditor):
    """Every placeholder sits in a batch that one request loads (the names above are read once
    for all of it): batches of LAZY_BATCH placeholders with the expert lines between them, and
    the batch's request answers its statements' cards in full."""
    import re

    from audit.views.discussion import FULL_CARDS, LAZY_BATCH
    from tests.factories import StatementFactory

    scene = make_scene()
    speakers = [scene.first.speaker, scene.expert.speaker]
    for i in range(2 * (FULL_CARDS + LAZY_BATCH + 1)):  # subject and expert lines alternate
        StatementFactory(discussion=scene.discussion, speaker=speakers[i % 2], order=10 + i)
    url = reverse("audit:discussion", args=[scene.discussion.pk])
    html = auditor_client.get(url, {"run": scene.run.pk}).content.decode()
    batches = re.findall(
        r'<div class="lazy-batch" data-from="\d+" hx-get="([^"]+)" hx-trigger="intersect once"',
        html,
    )
    sizes = [
        len(re.findall(r'class="stmt subject lazy"', part)) for part in html.split("lazy-batch")[1:]
    ]
    n_subjects = 2 + FULL_CARDS + LAZY_BATCH + 1
    assert sizes == [LAZY_BATCH, n_subjects - FULL_CARDS - LAZY_BATCH]
    first = batches[0].replace("&amp;", "&")
    assert first.startswith(f"{url}?run={scene.run.pk}&from=")
    answer = hx_get(auditor_client, first).content.decode()
    assert answer.count('<article class="stmt subject" ') == LAZY_BATCH  # in full
    assert 'class="stmt expert"' in answer and "lazy" not in answer


def test_the_statement_a_link_points_at_is_rendered_in_full(auditor_client):
    """A link to a statement beyond the full cards (?at=, as the queue's Continue gives) lands
    on the window from the top, with that card in full and its neighbours placeholders."""
    from audit.views.discussion import FULL_CARDS, statement_url
    from tests.factories import StatementFactory

    scene = make_scene()
    extra = [
        StatementFactory(discussion=scene.discussion, speaker=scene.first.speaker, order=10 + i)
        for i in range(FULL_CARDS + 2)
    ]
    target, after = extra[-2], extra[-1]
    html = auditor_client.get(statement_url(target).split("#")[0]).content.decode()
    assert f'<article class="stmt subject" id="stmt-{target.pk}"' in html
    assert f'<article class="stmt subject lazy" id="stmt-{after.pk}"' in html
    assert f'<article class="stmt subject" id="stmt-{scene.first.pk}"' in html  # from the top
    assert html.count('<article class="stmt subject" ') == FULL_CARDS + 1
