"""The bad-input checklist over the page forms: every form a page shows (read from its HTML,
as a browser submits it) gets hostile values, one field at a time and all at once, and
answers a 4xx (or its ordinary page), never a 5xx. With the reproductions of the last 500s
on the assign page and in the reviewer note (the adjudication form's are in
tests/audit/test_adjudication_views.py)."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import resolve, reverse

from audit.models import BlindReview, Feedback
from audit.services import feedback_save, feedback_start, feedback_submit
from audit.services.assignments import AssignmentPlan, assignments_create
from tests.audit.test_views_support import HX, make_scene
from tests.factories import ExtractionRunFactory, FeedbackFactory
from tests.page_forms import PageForm, page_forms
from tests.site_pages import site_pages

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.audit.adjudication_fixtures"]

DEEP = "[" * 10_000 + "]" * 10_000
# One field at a time: a digit int() cannot read, a NUL PostgreSQL cannot store.
EACH_FIELD = ["²", "a\x00b"]
# Every field at once: a negative, nothing, 20,000 digits (a long text, and a number int()
# refuses to read), deep JSON, a lone surrogate in JSON text.
ALL_FIELDS = ["-1", "", "9" * 20_000, DEEP, '{"name": "\\ud800"}']


# --- the reproductions ----------------------------------------------------------------------


@pytest.mark.parametrize("method", ["get", "post"])
def test_a_superscript_digit_in_the_assign_search_is_no_500(admin_client, method):
    make_scene(summary="Search me")
    answer = getattr(admin_client, method)("/audit/assignments/?q=%C2%B2", {"q": "²"})
    assert answer.status_code in (200, 400)
    if method == "get":
        assert "Search me" not in answer.content.decode()  # "²" is no discussion number


@pytest.mark.parametrize(("url_name", "htmx"), [("feedback_save", True), ("feedback_save", False),
                                                ("feedback_json", True)])  # fmt: skip
def test_a_nul_in_the_reviewer_note_is_refused(auditor_client, auditor, url_name, htmx):
    mine = feedback_start(statement=make_scene().first, auditor=auditor)
    data = {"version": 1, "comment": "see\x00here", "payload": "{}"}
    data.update({"people-0-id": "-1", "events-0-id": "-3", "events-0-kind": "shift"})
    answer = auditor_client.post(reverse(f"audit:{url_name}", args=[mine.pk]), data,
                                 **(HX if htmx else {}))  # fmt: skip
    assert answer.status_code == 400
    assert "the note for the reviewer: text must not contain NUL" in answer.content.decode()
    mine.refresh_from_db()
    assert (mine.version, mine.comment) == (1, "")


@pytest.mark.parametrize("version", ["²", "9" * 5000, ""])
def test_submit_and_next_with_a_bad_version_is_400(auditor_client, auditor, version):
    mine = feedback_start(statement=make_scene().first, auditor=auditor)
    url = reverse("audit:feedback_submit_next", args=[mine.pk])
    answer = auditor_client.post(url, {"version": version}, **HX)
    assert answer.status_code == 400
    assert "did not say which version it edits" in answer.content.decode()
    mine.refresh_from_db()
    assert mine.status == Feedback.Status.DRAFT


# --- every page form --------------------------------------------------------------------------


@pytest.fixture
def site(auditor, second_auditor, admin_user, two_codings, second_admin):
    """A small site with something behind every page: a draft, a submitted and an approved
    coding, an assignment, two runs, two codings to adjudicate."""
    scene = make_scene()
    plan = AssignmentPlan(
        discussions=[scene.discussion], auditors=[auditor], first_order=1, last_order=1
    )
    assignments_create(plan=plan, admin=admin_user)
    draft = feedback_start(statement=scene.first, auditor=auditor)
    payload = {**draft.edited_extraction, "people": []}
    draft = feedback_save(feedback=draft, user=auditor, edited_extraction=payload, base_version=1)
    theirs = feedback_start(statement=scene.second, auditor=second_auditor)
    feedback_submit(feedback=theirs, user=second_auditor)
    FeedbackFactory(statement=scene.expert, auditor=second_auditor, status=Feedback.Status.APPROVED)
    alone = make_scene(summary="Coded once")  # a submit nobody else's coding shows: undo-able
    sent = feedback_submit(feedback=feedback_start(statement=alone.first, auditor=auditor),
                           user=auditor)  # fmt: skip
    BlindReview.objects.create(statement=alone.second, marked_by=admin_user)
    ExtractionRunFactory()  # a second run: the comparison page
    return {
        "auditor": auditor,
        "admin": admin_user,
        "auditor_pages": [
            ("history", reverse("audit:feedback_history", args=[draft.pk])),
            ("undo", f"{reverse('audit:statement', args=[alone.first.pk])}?submitted={sent.pk}"),
        ],
    }


ADMIN_PAGES = [("import", "/audit/import/"), ("skipped", "/audit/skipped/")]


def every_form(site) -> list[tuple[Client, PageForm]]:
    """Each form of each page once (by method, view and controls), with the client of the
    first role that saw it (signed out: the sign-in form); signing out left out."""
    seen, found = set(), []
    for role in ("anonymous", "auditor", "admin"):
        client = Client(raise_request_exception=False)
        if role == "anonymous":
            pages = [("sign-in", reverse("login"))]
        else:
            client.force_login(site[role])
            pages = site_pages(admin=role == "admin")
            pages += ADMIN_PAGES if role == "admin" else site["auditor_pages"]
        for _, path in pages:
            answer = client.get(path)
            assert answer.status_code in (200, 404), (role, path, answer.status_code)
            for form in page_forms(path, answer.content.decode()):
                view = resolve(form.action.split("?")[0]).url_name
                key = (form.method, view, tuple(form.names))
                if view != "logout" and key not in seen:
                    seen.add(key)
                    found.append((client, form))
    return found


def hostile_requests(form: PageForm) -> list[dict[str, str]]:
    """The overrides to send: each control (one of each repeated row: people-N-name) with
    each EACH_FIELD value, then all controls with each ALL_FIELDS value."""
    names = list(
        {re.sub(r"\d+", "N", n): n for n in reversed([*form.names, *dict(form.buttons)])}.values()
    )
    button = dict(form.buttons[:1])
    each = [{**button, name: value} for name in names for value in EACH_FIELD]
    return each + [{**button, **dict.fromkeys(names, value)} for value in ALL_FIELDS]


def test_no_page_form_answers_a_5xx_to_the_bad_input_checklist(site):
    forms = every_form(site)
    assert len(forms) >= 35, [form.action for _, form in forms]  # the reader still finds them
    failures, sent = [], 0
    for client, form in forms:
        send = client.post if form.method == "post" else client.get
        for overrides in hostile_requests(form):
            answer = send(form.action, form.data(**overrides))
            sent += 1
            if answer.status_code >= 500:
                shown = {k: v[:12] + ("..." if len(v) > 12 else "") for k, v in overrides.items()}
                failures.append((form.method, form.action, shown, answer.status_code))
    assert not failures, f"{len(failures)} of {sent} requests answered 5xx: {failures[:10]}"
