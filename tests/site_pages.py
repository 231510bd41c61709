"""Every page of the site, as auditor and as admin, for the browser checks that must hold on
all of them (accessibility, fitting a phone). Not a test module: the tests import it.

`site_pages(admin=...)` builds the list from the database, so call it after the demo data
(and a few evaluations) are in place; `axe_serious(page)` runs axe-core, installed from npm
into tests/node_modules by `make test` (no CDN), on the open page.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.urls import reverse

AXE_JS = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING_IMPACTS = ("serious", "critical")


def site_pages(*, admin: bool) -> list[tuple[str, str]]:
    """(name, path) of each page the role may open, with real objects behind the ids."""
    from audit.models import Discussion, ExtractionRun, Feedback
    from metrics.models import Evaluation

    discussion = Discussion.objects.order_by("pk").first()
    draft = Feedback.objects.filter(status=Feedback.Status.DRAFT).order_by("pk").first()
    submitted = Feedback.objects.filter(status=Feedback.Status.SUBMITTED).order_by("pk").first()
    approved = Feedback.objects.filter(status=Feedback.Status.APPROVED).order_by("pk").first()
    runs = list(ExtractionRun.objects.order_by("pk").values_list("pk", flat=True)[:2])
    pages = [
        ("queue", reverse("home")),
        ("discussion", reverse("audit:discussion", args=[discussion.pk])),
        ("statement_draft", reverse("audit:statement", args=[draft.statement_id])),
        ("editor", reverse("audit:feedback_edit", args=[draft.pk])),
        ("statement_approved", reverse("audit:statement", args=[approved.statement_id])),
        ("history", reverse("audit:feedback_history", args=[approved.pk])),
        ("dashboard", reverse("metrics:dashboard")),
        ("evaluations", reverse("metrics:evaluations")),
        ("evaluation_compare", reverse("metrics:evaluation_compare")),
        ("guidelines", reverse("audit:guidelines")),
        ("guideline_version", reverse("audit:guideline_version", args=[1])),
        ("thread", reverse("audit:thread", args=[draft.statement_id])),
        ("inbox", reverse("audit:inbox")),
    ]
    for evaluation in Evaluation.objects.order_by("pk"):
        pages.append(
            (
                f"evaluation_{evaluation.family}",
                reverse("metrics:evaluation_detail", args=[evaluation.pk]),
            )
        )
    if not admin:
        return pages
    compare = reverse("metrics:run_compare")
    return [
        *pages,
        ("evaluation_upload", reverse("metrics:evaluation_upload")),
        ("review", reverse("audit:statement_review", args=[submitted.statement_id])),
        ("review_queue", reverse("audit:review_queue")),
        ("adjudication", reverse("audit:adjudicate", args=[_to_adjudicate(submitted)])),
        ("my_queue", reverse("audit:my_queue")),
        ("assignments", reverse("audit:assignments")),
        ("skipped", reverse("audit:skipped")),
        ("team", reverse("audit:team")),
        ("blind_reviews", reverse("audit:blind_reviews")),
        ("audit_log", reverse("audit:audit_log")),
        ("runs", reverse("metrics:runs")),
        ("run_compare_picker", compare),
        ("run_compare", f"{compare}?left={runs[0]}&right={runs[1]}"),
        ("trend", reverse("metrics:trend")),
        ("snapshots", reverse("audit:snapshots")),
        ("metric_discussions", reverse("metrics:discussions")),
        ("errors", reverse("metrics:errors")),
        (
            "error_statements",
            f"{reverse('metrics:error_statements')}?run={runs[0]}&kind=events_fn",
        ),
        ("jobs", reverse("metrics:jobs")),
        ("api_tokens", reverse("api-tokens")),
        ("triage_settings", reverse("metrics:triage_settings", args=[runs[-1]])),
        ("dashboard_triage", f"{reverse('metrics:dashboard')}?run={runs[-1]}"),
    ]


def _to_adjudicate(submitted) -> int:
    """A statement with two or more codings to adjudicate if there is one, else a submitted one."""
    from audit.selectors.adjudication import statements_to_adjudicate

    first = statements_to_adjudicate(limit=1).first()
    return first.pk if first is not None else submitted.statement_id


def axe_serious(page, *, within: list[str] | None = None) -> list[dict]:
    """axe-core's serious and critical violations on the open page (or only in the elements the
    CSS selectors ``within`` name, for a part that opened on a page checked whole elsewhere),
    one entry per rule with the first few offending elements (enough to find the cause)."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        # Evaluated through the devtools protocol, so the page's CSP does not apply.
        page.evaluate(AXE_JS.read_text())
    # Folded sections count too: open every <details> first.
    page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
    result = page.evaluate(
        "async (within) => (await axe.run(within ? {include: within.map(s => [s])} : document,"
        " {resultTypes: ['violations']})).violations",
        within,
    )
    return [
        {
            "rule": v["id"],
            "impact": v["impact"],
            "count": len(v["nodes"]),
            "nodes": [n["target"] for n in v["nodes"][:3]],
        }
        for v in result
        if v["impact"] in BLOCKING_IMPACTS
    ]


def describe(violations: list[dict]) -> str:
    return json.dumps(violations, indent=1)
