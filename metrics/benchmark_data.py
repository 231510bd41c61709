"""Synthetic data for the benchmark commands: N discussions × M subject statements with
approved ground truth and one extraction run, deleted again afterwards.

Rows are bulk-created without the signals' recomputation, so seeding 1,000 × 50 takes
seconds; what the benchmark then times is the computation itself.
"""

from __future__ import annotations

import uuid

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from audit.models import Discussion, Extraction, ExtractionRun, Feedback, Speaker, Statement
from audit.synthetic import generate_workload
from audit.tallies import tallies_batched, tallies_refresh
from evalsite.access import ensure_role_groups
from metrics import invalidation
from metrics.services import system_result_compute


class SeededWorkload:
    """Synthetic discussions with approved GT, one run, and submitted feedback to approve."""

    def __init__(self, tag, run, admin, auditor, pending):
        self.tag, self.run, self.admin, self.auditor, self.pending = (
            tag,
            run,
            admin,
            auditor,
            pending,
        )

    @classmethod
    @transaction.atomic
    def create(
        cls, *, discussions: int, statements: int, seed: int = 0, approvals: int = 0
    ) -> SeededWorkload:
        tag = f"bench-{uuid.uuid4().hex[:8]}"
        workload = generate_workload(discussions, statements, seed=seed)
        n_statements = statements
        run = ExtractionRun.objects.create(model_name="benchmark", prompt_version=tag)
        admin, auditor = _bench_user(f"{tag}-admin", admin=True), _bench_user(f"{tag}-auditor")
        rows = _seed_statements(tag, workload)
        deltas = [s for d in workload for s in d.subject_statements()]
        Extraction.objects.bulk_create(
            Extraction(statement=st, run=run, pdp_deltas=s.ai_delta)
            for st, s in zip(rows, deltas, strict=True)
        )
        n_pending = min(approvals, len(rows))
        pending_ids = {rows[-1 - i * n_statements % len(rows)].pk for i in range(n_pending)}
        Feedback.objects.bulk_create(
            _feedback(st, s.gt_delta, auditor, admin, pending=st.pk in pending_ids)
            for st, s in zip(rows, deltas, strict=True)
        )
        # bulk created, past the model signals
        tallies_refresh(pairs={(st.discussion_id, auditor.pk) for st in rows})
        pending = list(
            Feedback.objects.filter(statement_id__in=pending_ids).order_by("statement_id")
        )
        return cls(tag, run, admin, auditor, pending)

    def delete(self) -> None:
        # The signals would recompute as rows go; the run goes too, so only the trend changes.
        with invalidation.suspended(), transaction.atomic(), tallies_batched():
            Discussion.objects.filter(external_id__startswith=f"{self.tag}-").delete()
            self.run.delete()
            get_user_model().objects.filter(pk__in=[self.admin.pk, self.auditor.pk]).delete()
        system_result_compute()


def _bench_user(username: str, *, admin: bool = False):
    auditor_group, admin_group = ensure_role_groups()
    user = get_user_model().objects.create(username=username, is_active=False)
    user.groups.add(admin_group if admin else auditor_group)
    return user


def _seed_statements(tag: str, workload) -> list[Statement]:
    discussions = Discussion.objects.bulk_create(
        Discussion(summary=d.summary, external_id=f"{tag}-{i}") for i, d in enumerate(workload)
    )
    speakers = Speaker.objects.bulk_create(
        Speaker(discussion=d, name=w.subject_name, type=Speaker.Type.SUBJECT)
        for d, w in zip(discussions, workload, strict=True)
    )
    return Statement.objects.bulk_create(
        Statement(discussion=d, speaker=sp, order=s.order, text=s.text)
        for d, sp, w in zip(discussions, speakers, workload, strict=True)
        for s in w.subject_statements()
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
