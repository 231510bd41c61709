"""Every metric family the site knows, in one place: ``FAMILIES``.

An entry says where the family's inputs come from (``OUR_DATA``: ground truth, extractions and
codings in the database; ``UPLOADED_RUN``: files an admin uploads), the scope one computation
stores (a statement, a run, the whole system, or an uploaded evaluation), the version of the
code behind its stored figures, the Celery task computing one unit (for the families computed
whole from our data: the one ``WHOLE_TASK``, which calls the entry's ``compute`` service), and
its card (template and context). The wings dispatch through it: the sweep and the queue find a
family's task here, the own-data card views and URLs its card, the API its choices and which
families only admins see.

This module only declares; it imports no wing, so every wing may read it. Tasks, services and
card contexts are named by dotted path (a task's path is also its stable Celery name), resolved
when first used.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from celery.app.task import Task
from django.utils.module_loading import import_string

from metrics.evaluations.base import Family as UploadSpec
from metrics.evaluations.registry import UPLOADS
from metrics.evaluations.registry import example_files as example_files
from metrics.evaluations.registry import upload_get as upload_get
from metrics.models import MetricResult

OUR_DATA = "our-data"
UPLOADED_RUN = "uploaded-run"
EVALUATION = "evaluation"  # the scope of an uploaded family: one row per uploaded evaluation
Scope = MetricResult.Scope

EXTRACTION = "extraction"
REVIEW_SAVINGS = "review_savings"
CALIBRATION = "calibration"
INTERAUDITOR = "interauditor"
TRIAGE = "triage"


@dataclass(frozen=True)
class Family:
    name: str
    label: str
    source: str  # OUR_DATA | UPLOADED_RUN
    scope: str  # what one computation stores: statement (then discussion, run, system), run...
    task: str  # the Celery task computing one unit: its dotted path, which is also its name
    card: str  # the card template
    # Bump when the family's output for the same inputs changes: rows computed by another
    # version are recomputed by themselves. Uploaded evaluations are computed once per upload.
    code_version: str = ""
    card_context: str = ""  # dotted path of the function building the card's context
    # Families computed whole: dotted path of the service computing one row (a run's, or the
    # system's), called by the one task of those families with the failure recorded.
    compute: str = ""
    admin_only: bool = False  # figures about auditors: admins only (cards and API)
    recompute_job: bool = False  # "recompute all" runs as a job (recompute_metrics, the API)
    upload: UploadSpec | None = None  # uploaded families: input files, options, parse, compute

    @property
    def is_whole(self) -> bool:
        """Our-data family computed whole: one row per run, or one for the system."""
        return self.source == OUR_DATA and self.scope in (Scope.RUN, Scope.SYSTEM)

    def celery_task(self) -> Task:
        task: Task = _resolved(self.task)
        return task

    def card_builder(self) -> Callable[..., dict[str, Any]]:
        builder: Callable[..., dict[str, Any]] = _resolved(self.card_context)
        return builder

    def compute_service(self) -> Callable[..., Any]:
        service: Callable[..., Any] = _resolved(self.compute)
        return service


@cache
def _resolved(path: str) -> Any:
    return import_string(path)


def _uploaded(spec: UploadSpec) -> Family:
    return Family(
        name=spec.name,
        label=spec.label,
        source=UPLOADED_RUN,
        scope=EVALUATION,
        task="metrics.tasks.evaluation_compute",
        card=spec.card_template,
        upload=spec,
    )


# The one task of the families computed whole: it computes a row of the family it is given.
WHOLE_TASK = "metrics.tasks.compute_own_data"

_OUR_DATA = (
    Family(
        name=EXTRACTION,
        label="Extraction F1",
        source=OUR_DATA,
        scope=Scope.STATEMENT,
        task="metrics.tasks.compute_statement",
        card="metrics/cards/_extraction_f1.html",
        # 2: one parent rule on both sides, bonds to committed people. 3: SARF mean of
        # per-statement values. 4: joint people assignment (people + events + pair bonds).
        code_version="extraction-f1/4",
        card_context="metrics.cards.extraction_card",
        recompute_job=True,
    ),
    Family(
        name=REVIEW_SAVINGS,
        label="Review savings",
        source=OUR_DATA,
        scope=Scope.RUN,
        task=WHOLE_TASK,
        compute="metrics.own_data.review_savings.review_savings_result_compute",
        card="metrics/cards/_review_savings.html",
        code_version="review-savings/1",
        card_context="metrics.own_data.review_savings.review_savings_card",
    ),
    Family(
        name=CALIBRATION,
        label="Confidence calibration",
        source=OUR_DATA,
        scope=Scope.RUN,
        task=WHOLE_TASK,
        compute="metrics.own_data.calibration.calibration_result_compute",
        card="metrics/cards/_calibration.html",
        code_version="calibration/2",  # 2: ECE bins [k/n, (k+1)/n) exactly
        card_context="metrics.own_data.calibration.calibration_card",
    ),
    Family(
        name=INTERAUDITOR,
        label="Inter-auditor agreement",
        source=OUR_DATA,
        scope=Scope.SYSTEM,
        task=WHOLE_TASK,
        compute="metrics.own_data.interauditor.interauditor_result_compute",
        card="metrics/cards/_interauditor.html",
        code_version="interauditor/1",
        card_context="metrics.own_data.interauditor.interauditor_card",
        admin_only=True,
    ),
    Family(
        name=TRIAGE,
        label="Review triage",
        source=OUR_DATA,
        scope=Scope.RUN,
        task=WHOLE_TASK,
        compute="metrics.own_data.triage.triage_result_compute",
        card="metrics/cards/_triage.html",
        code_version="triage/1",
        card_context="metrics.own_data.triage.triage_card",
        admin_only=True,  # its settings decide what leaves the auditors' queue
    ),
)

FAMILIES: dict[str, Family] = {
    family.name: family for family in (*_OUR_DATA, *(_uploaded(spec) for spec in UPLOADS.values()))
}

# Views of FAMILIES that the wings use often.
UPLOADED: dict[str, UploadSpec] = {
    name: family.upload for name, family in FAMILIES.items() if family.upload is not None
}
WHOLE: tuple[str, ...] = tuple(name for name, family in FAMILIES.items() if family.is_whole)
RECOMPUTE_JOB: tuple[str, ...] = tuple(n for n, f in FAMILIES.items() if f.recompute_job)
ADMIN_ONLY: tuple[str, ...] = tuple(n for n, f in FAMILIES.items() if f.admin_only)
