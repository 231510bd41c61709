"""Demo-like data for the prompt-improvement loop's tests: discussions generated as the demo's
(``audit.synthetic``), approved ground truth coded under the demo's guidelines (some with an
auditor's note and a comment thread), one configuration with replicates, a degraded candidate,
and every extraction-F1 result computed by the real engine."""

from __future__ import annotations

import copy
import io
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone

from audit.derived.tallies import codings_created
from audit.models import (
    Comment,
    Discussion,
    Extraction,
    ExtractionRun,
    Feedback,
    GuidelineVersion,
    RunConfiguration,
    Speaker,
    Statement,
)
from audit.services.demo import demo_guidelines_text
from audit.synthetic import extraction_run, generate_discussion
from evalsite.access import ensure_role_groups
from evalsite.celery import app
from metrics.families.payload.schema import validate_pdp

NOISE = 0.2  # the demo's second run


@dataclass
class LoopData:
    admin: Any
    auditor: Any
    configuration: RunConfiguration
    replicates: list[ExtractionRun]
    degraded: ExtractionRun
    discussions: list[Discussion]
    statements: list[Statement] = field(default_factory=list)  # subject statements
    noted: dict[int, str] = field(default_factory=dict)  # statement id -> auditor's note
    comments: dict[int, list[str]] = field(default_factory=dict)  # statement id -> thread


def _degrade(payload: dict[str, Any]) -> dict[str, Any]:
    """A worse prompt: no pair bonds at all and every other event left out."""
    worse = copy.deepcopy(payload)
    worse["pair_bonds"] = []
    worse["events"] = (worse.get("events") or [])[::2]
    return worse


def loop_data_create(
    admin, auditor, *, discussions: int = 4, statements: int = 8, replicates: int = 3
) -> LoopData:
    guidelines = GuidelineVersion.objects.create(
        number=1, text=demo_guidelines_text(), note="Demo guidelines", author=admin
    )
    configuration = RunConfiguration.plain(model_name="gpt-4o", prompt_version="v2-examples")
    runs = [
        ExtractionRun.objects.create(configuration=configuration, notes=f"replicate {i + 1}")
        for i in range(replicates)
    ]
    worse = ExtractionRun.objects.create(
        configuration=RunConfiguration.plain(model_name="gpt-4o", prompt_version="v3-terse"),
        notes="shorter prompt",
    )
    data = LoopData(admin, auditor, configuration, runs, worse, [])
    now = timezone.now()
    for index in range(discussions):
        synthetic = generate_discussion(f"loop-{index}", statements, noise=NOISE, ai_run=2)
        discussion = Discussion.objects.create(
            external_id=f"loop-{index + 1:02d}", summary=synthetic.summary
        )
        data.discussions.append(discussion)
        subject = Speaker.objects.create(
            discussion=discussion, name=synthetic.subject_name, type=Speaker.Type.SUBJECT
        )
        expert = Speaker.objects.create(
            discussion=discussion, name="Dr. Bowen (expert)", type=Speaker.Type.EXPERT
        )
        deltas = [extraction_run(synthetic, noise=NOISE, ai_run=2 + r) for r in range(replicates)]
        position = 0
        for item in synthetic.statements:
            statement = Statement.objects.create(
                discussion=discussion,
                speaker=subject if item.speaker == "subject" else expert,
                order=item.order,
                text=item.text,
            )
            if item.speaker != "subject":
                continue
            for run, run_deltas in zip(runs, deltas, strict=True):
                Extraction.objects.create(
                    statement=statement, run=run, pdp_deltas=validate_pdp(run_deltas[position])
                )
            Extraction.objects.create(
                statement=statement,
                run=worse,
                pdp_deltas=validate_pdp(_degrade(deltas[0][position])),
            )
            note = f"Checked the dates in statement {item.order}." if position % 3 == 0 else ""
            feedback = Feedback.objects.create(
                statement=statement,
                auditor=auditor,
                edited_extraction=validate_pdp(item.gt_delta),
                source_extraction=None,
                status=Feedback.Status.APPROVED,
                approved_by=admin,
                approved_at=now,
                guideline_version=guidelines,
                comment=note,
            )
            codings_created(feedbacks=[feedback])  # created past the services
            if note:
                data.noted[statement.pk] = note
            if position % 4 == 1:
                bodies = ["Is the bond to the second wife coded?", "Yes: see the guidelines."]
                for author, body in zip((auditor, admin), bodies, strict=True):
                    Comment.objects.create(
                        statement=statement, feedback=feedback, author=author, body=body
                    )
                data.comments[statement.pk] = bodies
            data.statements.append(statement)
            position += 1
    results_compute([*runs, worse])
    return data


def partial_run_create(data: LoopData, *, discussions: int = 1) -> ExtractionRun:
    """A later configuration whose one run extracted only the first discussions (a copy of the
    first replicate's payloads there), its results computed: on the trend it is not comparable
    with the one before (scored on other discussions)."""
    run = ExtractionRun.objects.create(
        configuration=RunConfiguration.plain(model_name="gpt-4o", prompt_version="v4-partial"),
        notes="tried on the first discussion only",
    )
    kept = Extraction.objects.filter(
        run=data.replicates[0], statement__discussion__in=data.discussions[:discussions]
    )
    Extraction.objects.bulk_create(
        Extraction(statement_id=e.statement_id, run=run, pdp_deltas=e.pdp_deltas) for e in kept
    )
    results_compute([run])
    return run


def summaries_compute() -> None:
    """Every configuration's trend summary, as the worker stores it."""
    for configuration in RunConfiguration.objects.filter(runs__isnull=False).distinct():
        app.tasks["metrics.tasks.compute_configuration_summary"].apply(
            kwargs={"configuration_id": configuration.pk}, throw=True
        )


def results_compute(runs: list[ExtractionRun]) -> None:
    """Every extraction-F1 result of these runs and their error analyses, as the workers
    would store them."""
    call_command("recompute_metrics", stdout=io.StringIO())
    for run in runs:
        app.tasks["metrics.tasks.compute_run"].apply(args=(run.pk,), throw=True)
        app.tasks["metrics.tasks.compute_error_analysis"].apply(args=(run.pk,), throw=True)


def loop_users() -> tuple[Any, Any]:
    """An admin and an auditor (the password is make_user's: the browser tests log in)."""
    auditor_group, admin_group = ensure_role_groups()
    users = get_user_model().objects
    admin = users.create_user(username="loop-admin", password="pw-test-12345")
    auditor = users.create_user(username="loop-auditor", password="pw-test-12345")
    admin.groups.add(admin_group)
    auditor.groups.add(auditor_group)
    return admin, auditor


@pytest.fixture(scope="module")
def loop(django_db_setup, django_db_blocker):
    """The loop's data, made once for the module: each test runs in a savepoint of this
    transaction, which is rolled back after the last one."""
    with django_db_blocker.unblock(), transaction.atomic():
        yield loop_data_create(*loop_users())
        transaction.set_rollback(True)
