"""The bad-input checklist over the page forms: every form a page shows (read from its HTML,
as a browser submits it) gets hostile values, one field at a time and all at once, and
answers a 4xx (or its ordinary page), never a 5xx; every view that takes a POST is among
them. With the reproductions of the last 500s on the assign page, in the reviewer note and
in the self-approval reason (the adjudication form's are in
tests/audit/test_adjudication_views.py)."""

from __future__ import annotations

import copy
import inspect
import re
from urllib.parse import urlencode, urlsplit

import pytest
from django.db import transaction
from django.http import HttpResponse
from django.test import Client
from django.urls import URLResolver, get_resolver, resolve, reverse
from django.utils import timezone

from audit.models import Assignment, BlindReview, ComputeJob, Feedback
from audit.services import feedback_save, feedback_start, feedback_submit
from audit.services.assignments import AssignmentPlan, assignments_create
from audit.services.guidelines import guideline_save
from audit.services.snapshots import snapshot_freeze
from metrics.evaluations.registry import InputFile
from metrics.evaluations.services import evaluation_compute, evaluation_create
from metrics.models import Evaluation
from metrics.registry import UPLOADED
from tests.audit.test_views_support import HX, make_scene
from tests.factories import ExtractionRunFactory, FeedbackFactory
from tests.metrics.test_evaluations_fixtures import EXAMPLES
from tests.page_forms import PageForm, page_forms
from tests.site_pages import site_pages

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.audit.adjudication_fixtures"]
CONTENT_TYPE_FORM = "application/x-www-form-urlencoded"

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


@pytest.mark.parametrize("htmx", [True, False])
def test_a_nul_in_the_self_approval_reason_is_refused(admin_client, admin_user, htmx):
    """The only admin approving their own coding writes why: a NUL there is a 400 naming the
    field (it was a 500: PostgreSQL text holds no NUL), and nothing is approved."""
    scene = make_scene()
    mine = feedback_submit(feedback=feedback_start(statement=scene.first, auditor=admin_user),
                           user=admin_user)  # fmt: skip
    data = {"version": mine.version, "self_approval_reason": "alone\x00here"}
    answer = admin_client.post(reverse("audit:feedback_approve", args=[mine.pk]), data,
                               **(HX if htmx else {}))  # fmt: skip
    assert answer.status_code == 400
    assert "self_approval_reason: the reason for approving it: text must not contain NUL" in (
        answer.content.decode())  # fmt: skip
    mine.refresh_from_db()
    assert (mine.status, mine.approval_reason) == (Feedback.Status.SUBMITTED, "")


# --- every page form --------------------------------------------------------------------------


@pytest.fixture
def site(auditor, second_auditor, admin_user, two_codings):
    """A small site with something behind every page form: a draft (people, events, a pair
    bond, a removal from the family), a submitted and an approved coding, one replacing
    approved ground truth, one the only admin coded (self-approval), an assignment, a skipped
    one, two runs, two codings to adjudicate, a guidelines version, evaluations (two done, to
    pair; a failed and a queued one, to retry), a snapshot and a waiting job of each kind (to cancel)."""
    scene = make_scene()
    plan = AssignmentPlan(
        discussions=[scene.discussion], auditors=[auditor], first_order=1, last_order=1
    )
    assignments_create(plan=plan, admin=admin_user)
    draft = feedback_start(statement=scene.first, auditor=auditor)
    payload = copy.deepcopy(draft.edited_extraction)
    payload["people"][0]["name"] = "Jon"  # a revision to restore
    payload["delete"] = [-99]
    draft = feedback_save(feedback=draft, user=auditor, edited_extraction=payload, base_version=1)
    theirs = feedback_start(statement=scene.second, auditor=second_auditor)
    feedback_submit(feedback=theirs, user=second_auditor)
    FeedbackFactory(statement=scene.expert, auditor=second_auditor, status=Feedback.Status.APPROVED)
    alone = make_scene(summary="Coded once")  # a submit nobody else's coding shows: undo-able
    sent = feedback_submit(feedback=feedback_start(statement=alone.first, auditor=auditor),
                           user=auditor)  # fmt: skip
    BlindReview.objects.create(statement=alone.second, marked_by=admin_user)
    Assignment.objects.create(
        statement=alone.second, discussion=alone.discussion, auditor=second_auditor,
        assigned_by=admin_user, status=Assignment.Status.SKIPPED,
        skip_reason=Assignment.SkipReason.UNCLEAR, released_at=timezone.now(),
    )  # fmt: skip
    later = make_scene(summary="Reviewed")
    FeedbackFactory(statement=later.first, auditor=second_auditor, status=Feedback.Status.APPROVED)
    feedback_submit(feedback=feedback_start(statement=later.first, auditor=auditor), user=auditor)
    feedback_submit(feedback=feedback_start(statement=later.second, auditor=admin_user),
                    user=admin_user)  # fmt: skip
    ExtractionRunFactory()  # a second run: the comparison page
    guideline_save(text="# Coding guidelines", admin=admin_user)
    snapshot_freeze(name="GT v1", by=admin_user)  # a snapshot to delete
    done = [_evaluation(name) for name in ("left", "right")]
    Evaluation.objects.create(family="agreement", name="broke", status="failed", error="Boom")
    Evaluation.objects.create(family="agreement", name="waits")  # the broker never got it
    jobs = [ComputeJob.objects.create(kind=kind, scope=kind, created_by=admin_user)
            for kind in (ComputeJob.Kind.EXPORT, ComputeJob.Kind.IMPORT)]  # fmt: skip
    upload = reverse("metrics:evaluation_upload")
    compare = reverse("metrics:evaluation_compare")
    return {
        "auditor": auditor,
        "admin": admin_user,
        "auditor_pages": [
            ("history", reverse("audit:feedback_history", args=[draft.pk])),
            ("undo", f"{reverse('audit:statement', args=[alone.first.pk])}?submitted={sent.pk}"),
        ],
        "admin_pages": [
            ("import", reverse("audit:import")),
            ("replace", reverse("audit:statement_review", args=[later.first.pk])),
            ("self_approve", reverse("audit:statement_review", args=[later.second.pk])),
            ("trend", reverse("metrics:trend")),
            ("pair", f"{compare}?left={done[0].pk}&right={done[1].pk}"),
            *[(f"upload_{name}", f"{upload}?family={name}") for name in UPLOADED],
            *[(f"job_{j.kind}", reverse("audit:job_progress", args=[j.pk])) for j in jobs],
        ],
    }


def _evaluation(name: str) -> Evaluation:
    files = {"run": [InputFile("run.json", (EXAMPLES / "selective_run.json").read_bytes())]}
    options = {"mode": "few_shot", "bootstrap_resamples": 20}
    evaluation = evaluation_create(family="selective_prediction", name=name, files=files,
                                   options=options, queue=False)  # fmt: skip
    return evaluation_compute(evaluation_id=evaluation.pk)


def every_form(site) -> list[tuple[Client, PageForm]]:
    """Each form of each page once (by method, view and controls; a form that sends nothing
    but its POST by what it acts on too: each job's cancel), with the client of the first
    role that saw it (signed out: the sign-in form); signing out left out."""
    seen, found = set(), []

    def read(client: Client, path: str) -> None:
        answer = client.get(path)
        assert answer.status_code in (200, 404), (path, answer.status_code)
        for form in page_forms(path, answer.content.decode()):
            view = resolve(urlsplit(form.action).path).url_name
            acts_on = form.action if form.method != "get" and not form.names else ""
            key = (form.method, view, tuple(form.names), acts_on)
            if view != "logout" and key not in seen:
                seen.add(key)
                found.append((client, form))

    for role in ("anonymous", "auditor", "admin"):
        client = Client(raise_request_exception=False)
        if role == "anonymous":
            pages = [("sign-in", reverse("login"))]
        else:
            client.force_login(site[role])
            pages = site_pages(admin=role == "admin") + site[f"{role}_pages"]
        for _, path in pages:
            read(client, path)
        if role == "admin":
            # A recompute job waiting for a worker: the jobs page shows its cancel button in
            # place of its form, so it comes after that form was read.
            ComputeJob.objects.create(kind=ComputeJob.Kind.RECOMPUTE, scope="recompute",
                                      created_by=site["admin"])  # fmt: skip
            read(client, reverse("metrics:jobs"))
    return found


def hostile_requests(form: PageForm) -> list[dict[str, str]]:
    """The overrides to send: each control (one of each repeated row: people-N-name) with
    each EACH_FIELD value, then all controls with each ALL_FIELDS value (once when there are
    no controls: a cancel button)."""
    names = list(
        {re.sub(r"\d+", "N", n): n for n in reversed([*form.names, *dict(form.buttons)])}.values()
    )
    button = dict(form.buttons[:1])
    each = [{**button, name: value} for name in names for value in EACH_FIELD]
    every = [{**button, **dict.fromkeys(names, value)} for value in ALL_FIELDS]
    return each + (every if names else every[:1])


def send(client: Client, form: PageForm, overrides: dict[str, str]) -> HttpResponse:
    data = form.data(**overrides)
    if form.method in ("get", "post"):
        return getattr(client, form.method)(form.action, data)
    body = urlencode(data, doseq=True)  # hx-put, hx-patch, hx-delete: a form-encoded body
    return client.generic(form.method.upper(), form.action, body, CONTENT_TYPE_FORM)


def views_taking_posts() -> set[str]:
    """The names of the pages' URLs (not the API's, not Django's admin) whose view takes a
    POST: limited to methods that include it (require_POST...), or not limited and reading
    the request's POST or method."""
    found = set()
    for name, view in _named_views(get_resolver().url_patterns, prefix=""):
        if hasattr(view, "cls"):  # a REST API view (tests/test_bad_input.py)
            continue
        if hasattr(view, "view_class"):
            takes = hasattr(view.view_class, "post")
        else:
            allowed = _allowed_methods(view)
            source = inspect.getsource(inspect.unwrap(view))
            takes = "POST" in allowed if allowed else "request.POST" in source or (
                "request.method" in source)  # fmt: skip
        if takes:
            found.add(name)
    return found


def _named_views(patterns, *, prefix: str):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            if pattern.namespace != "admin":
                namespace = f"{prefix}{pattern.namespace}:" if pattern.namespace else prefix
                yield from _named_views(pattern.url_patterns, prefix=namespace)
        elif pattern.name:
            yield prefix + pattern.name, pattern.callback


def _allowed_methods(view) -> list[str] | None:
    """The methods require_http_methods (require_POST, require_GET...) limits the view to."""
    while view is not None:
        allowed = inspect.getclosurevars(view).nonlocals.get("request_method_list")
        if allowed is not None:
            return list(allowed)
        view = getattr(view, "__wrapped__", None)
    return None


def test_no_page_form_answers_a_5xx_to_the_bad_input_checklist(site):
    forms = every_form(site)
    reached = {resolve(urlsplit(form.action).path).view_name for _, form in forms}
    # Every view taking a POST has a form sent to it (signing out aside): the site holds the
    # objects each form needs (a skipped statement's reassign, a failed evaluation's retry).
    missed = views_taking_posts() - reached - {"logout"}
    assert not missed, f"no page of the site shows a form sending to {sorted(missed)}"
    failures, sent = [], 0
    for client, form in forms:
        for overrides in hostile_requests(form):
            # Each request meets the site as built: what one stores (an approval with a
            # reason "²") is rolled back before the next (the reason with a NUL) is sent.
            with transaction.atomic():
                answer = send(client, form, overrides)
                transaction.set_rollback(True)
            sent += 1
            if answer.status_code >= 500:
                shown = {k: v[:12] + ("..." if len(v) > 12 else "") for k, v in overrides.items()}
                failures.append((form.method, form.action, shown, answer.status_code))
    print(f"{len(forms)} forms to {len(reached)} views, {sent} requests")
    assert not failures, f"{len(failures)} of {sent} requests answered 5xx: {failures[:10]}"
