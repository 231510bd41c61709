"""Synthetic data for the benchmark commands: N discussions × M subject statements with
approved ground truth (of all of them or of the first share of the discussions) and one
extraction run — optionally a partner run before it, as the previous run of real use —,
deleted again afterwards.

Rows are bulk-created without the signals' recomputation, so seeding 1,000 × 50 takes
seconds; what the benchmark then times is the computation itself.
"""

from __future__ import annotations

import time
import uuid

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from audit.derived.tallies import tallies_refresh
from audit.models import (
    Discussion,
    Extraction,
    ExtractionRun,
    Feedback,
    Speaker,
    Statement,
    history_purge,
)
from audit.services.imports import IMPORTED_MODELS
from audit.synthetic import extraction_run, generate_workload
from evalsite.access import ensure_role_groups
from evalsite.perf.planner import planner_statistics_refresh
from metrics.engine.services import system_result_compute

# The partner run's AI: another extraction of the same ground truth, as noisy as the run's.
PARTNER_NOISE = 0.2
# Discussions deleted per transaction when the seed goes (about 5,000 statements at 50 each).
DELETE_CHUNK = 100


class SeededWorkload:
    """Synthetic discussions with approved GT, one run, and submitted feedback to approve;
    ``partner`` is the previous run (or None)."""

    def __init__(self, tag, run, admin, auditor, pending, partner=None):
        self.tag, self.run, self.admin, self.auditor, self.pending = (
            tag,
            run,
            admin,
            auditor,
            pending,
        )
        self.partner = partner

    @classmethod
    @transaction.atomic
    def create(
        cls,
        *,
        discussions: int,
        statements: int,
        seed: int = 0,
        approvals: int = 0,
        partner_run: bool = False,
        approved_share: float = 1.0,
    ) -> SeededWorkload:
        """``partner_run``: a second, older run extracted every statement too (what review
        triage's consistency signal compares with). ``approved_share``: only the first share
        of the discussions has approved ground truth; the others are not coded at all."""
        tag = f"bench-{uuid.uuid4().hex[:8]}"
        workload = generate_workload(discussions, statements, seed=seed)
        n_statements = statements
        # Created first: the run's partner is the newest other run (its previous one).
        partner = None
        if partner_run:
            partner = ExtractionRun.objects.create(
                model_name="benchmark-partner", prompt_version=tag
            )
        run = ExtractionRun.objects.create(model_name="benchmark", prompt_version=tag)
        admin, auditor = _bench_user(f"{tag}-admin", admin=True), _bench_user(f"{tag}-auditor")
        rows = _seed_statements(tag, workload)
        deltas = [s for d in workload for s in d.subject_statements()]
        Extraction.objects.bulk_create(
            (
                Extraction(statement=st, run=run, pdp_deltas=s.ai_delta)
                for st, s in zip(rows, deltas, strict=True)
            ),
            batch_size=2000,  # one INSERT of 250,000 rows is over PostgreSQL's 1 GB limit
        )
        if partner is not None:
            _partner_extractions(partner, rows, workload)
        n_pending = min(approvals, len(rows))
        pending_ids = {rows[-1 - i * n_statements % len(rows)].pk for i in range(n_pending)}
        coded = set(_coded_discussions(rows, round(approved_share * discussions)))
        Feedback.objects.bulk_create(
            (
                _feedback(st, s.gt_delta, auditor, admin, pending=st.pk in pending_ids)
                for st, s in zip(rows, deltas, strict=True)
                if st.discussion_id in coded or st.pk in pending_ids
            ),
            batch_size=2000,
        )
        tallies_refresh(pairs={(st.discussion_id, auditor.pk) for st in rows})  # bulk created
        pending = list(
            Feedback.objects.filter(statement_id__in=pending_ids).order_by("statement_id")
        )
        # As a site that imported this much plans its queries: the tables an import writes.
        planner_statistics_refresh(models=IMPORTED_MODELS)
        return cls(tag, run, admin, auditor, pending, partner)

    def delete(self) -> None:
        """Everything seeded, a few discussions per transaction: Django collects what a
        deletion cascades to in memory, and 5,000 x 50 at once held 7.6 GB and a transaction
        open for over twenty minutes."""
        # Deleted past the services: what is derived from the rows goes with them (nothing is
        # recounted or marked stale); the run goes too, so only the trend changes.
        # The seeded codings' history goes with them (it is the benchmark's own).
        with history_purge():
            ids = list(
                Discussion.objects.filter(external_id__startswith=f"{self.tag}-")
                .order_by("pk")
                .values_list("pk", flat=True)
            )
            for start in range(0, len(ids), DELETE_CHUNK):
                _discussions_delete(ids[start : start + DELETE_CHUNK])
            with transaction.atomic():
                self.run.delete()
                if self.partner is not None:
                    self.partner.delete()
                get_user_model().objects.filter(pk__in=[self.admin.pk, self.auditor.pk]).delete()
        system_result_compute()


def _discussions_delete(ids: list[int], attempts: int = 3) -> None:
    """These discussions and what cascades from them. A worker still finishing a task of the
    benchmark's (with --worker) may write a row that refers to a statement after Django
    collected what to delete: the foreign key then refuses, and the chunk is deleted again,
    that row with it."""
    for attempt in range(attempts):
        try:
            with transaction.atomic():
                Discussion.objects.filter(pk__in=ids).delete()
            return
        except IntegrityError:
            if attempt == attempts - 1:
                raise
            time.sleep(1)


def _bench_user(username: str, *, admin: bool = False):
    auditor_group, admin_group = ensure_role_groups()
    user = get_user_model().objects.create(username=username, is_active=False)
    user.groups.add(admin_group if admin else auditor_group)
    return user


def _partner_extractions(partner: ExtractionRun, rows: list[Statement], workload) -> None:
    """The previous run's own noisy extraction of every subject statement (another draw of the
    synthetic AI on the same ground truth)."""
    deltas = (delta for d in workload for delta in extraction_run(d, noise=PARTNER_NOISE, ai_run=1))
    Extraction.objects.bulk_create(
        (
            Extraction(statement=st, run=partner, pdp_deltas=delta)
            for st, delta in zip(rows, deltas, strict=True)
        ),
        batch_size=2000,
    )


def _coded_discussions(rows: list[Statement], count: int) -> list[int]:
    """The first ``count`` discussions in seeding order: the coded ones."""
    return list(dict.fromkeys(st.discussion_id for st in rows))[:count]


def _seed_statements(tag: str, workload) -> list[Statement]:
    discussions = Discussion.objects.bulk_create(
        Discussion(summary=d.summary, external_id=f"{tag}-{i}") for i, d in enumerate(workload)
    )
    speakers = Speaker.objects.bulk_create(
        Speaker(discussion=d, name=w.subject_name, type=Speaker.Type.SUBJECT)
        for d, w in zip(discussions, workload, strict=True)
    )
    return Statement.objects.bulk_create(
        (
            Statement(discussion=d, speaker=sp, order=s.order, text=s.text)
            for d, sp, w in zip(discussions, speakers, workload, strict=True)
            for s in w.subject_statements()
        ),
        batch_size=5000,
    )


def _feedback(statement, gt, auditor, admin, *, pending: bool) -> Feedback:
    if pending:
        return Feedback(
            statement=statement,
            auditor=auditor,
            edited_extraction=gt,
            status=Feedback.Status.SUBMITTED,
        )
    return Feedback(
        statement=statement,
        auditor=auditor,
        edited_extraction=gt,
        status=Feedback.Status.APPROVED,
        approved_by=admin,
        approved_at=timezone.now(),
    )
