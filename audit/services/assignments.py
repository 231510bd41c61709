"""Who codes what: assignments of statements to auditors, their release, and skips.

Admins assign whole discussions or a range of one discussion's statements to auditors with a
strategy (round-robin or balanced by statement count) and, optionally, an overlap sample: a
share of the statements that k auditors code on purpose, so agreement is measured on a
planned sample (blind when asked: see ``audit.services.blind``). One row per statement and
auditor (``Assignment``). An assignment is released when its auditor submits (status
``submitted``), skips (``skipped``, with a reason, listed for admins) or is unassigned (the row
is deleted). Every act is in the audit log.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from audit.derived.tallies import assignment_written, tallies_batched, tallies_refresh
from audit.models import Assignment, BlindReview, Discussion, Feedback, Statement
from audit.selectors.lists import unassigned_visible
from audit.services.audit_log import Action, audit_log_record
from audit.services.errors import NotAllowed, UnknownItems, WorkflowError, WrongState
from audit.signals import coding_changed_send
from evalsite.access import is_admin, is_auditor

A = Assignment.Status


class Strategy:
    ROUND_ROBIN = "round_robin"
    BALANCED = "balanced"
    CHOICES = [
        (ROUND_ROBIN, "Round-robin: discussions in turn"),
        (BALANCED, "Balanced by statement count"),
    ]


MAX_OVERLAP_K = 10


@dataclass(frozen=True)
class AssignmentPlan:
    """What to assign: subject statements of these discussions (or one discussion's range of
    statement orders, inclusive), to these auditors."""

    discussions: Sequence[Discussion]
    auditors: Sequence[User]
    strategy: str = Strategy.ROUND_ROBIN
    first_order: int | None = None
    last_order: int | None = None
    overlap_share: float = 0.0  # 0..1: share of the statements in the overlap sample
    overlap_k: int = 2  # auditors per statement of the sample
    blind: bool = False  # the sample is coded blind (from an empty extraction)
    due: date | None = None
    seed: int = 0


def _check_plan(plan: AssignmentPlan) -> None:
    if not plan.discussions:
        raise WorkflowError("Choose at least one discussion.")
    if not plan.auditors:
        raise WorkflowError("Choose at least one auditor.")
    not_auditors = [u.get_username() for u in plan.auditors if not is_auditor(u)]
    if not_auditors:
        raise WorkflowError(f"Not auditors: {', '.join(not_auditors)}.")
    if plan.strategy not in dict(Strategy.CHOICES):
        raise WorkflowError(f"Unknown strategy {plan.strategy!r}.")
    ranged = plan.first_order is not None or plan.last_order is not None
    if ranged and len(plan.discussions) != 1:
        raise WorkflowError("A statement range applies to one discussion: choose only one.")
    if not 0.0 <= plan.overlap_share <= 1.0:
        raise WorkflowError("The overlap share must be between 0 and 100%.")
    if plan.overlap_share and not 2 <= plan.overlap_k <= min(MAX_OVERLAP_K, len(plan.auditors)):
        raise WorkflowError(
            f"An overlap sample needs between 2 and {min(MAX_OVERLAP_K, len(plan.auditors))} "
            f"auditors per statement (k); {len(plan.auditors)} auditor(s) chosen."
        )


def assignable_statements(plan: AssignmentPlan) -> dict[int, list[int]]:
    """Subject statement ids per discussion (in order) that nobody is assigned to yet (a
    skipped statement is reassigned explicitly, not by a new plan)."""
    statements = Statement.objects.subjects().filter(discussion__in=list(plan.discussions))
    if plan.first_order is not None:
        statements = statements.filter(order__gte=plan.first_order)
    if plan.last_order is not None:
        statements = statements.filter(order__lte=plan.last_order)
    statements = statements.exclude(Exists(Assignment.objects.filter(statement=OuterRef("pk"))))
    statements = statements.exclude(triage__provisional=True)  # review triage accepted them
    grouped: dict[int, list[int]] = {}
    for pk, discussion_id in statements.order_by("discussion_id", "order").values_list(
        "pk", "discussion_id"
    ):
        grouped.setdefault(discussion_id, []).append(pk)
    return grouped


def distribute(units: dict[int, list[int]], auditors: Sequence[int], strategy: str) -> dict:
    """Owner (auditor id) per statement id: each unit (a discussion's statements) goes whole to
    one auditor, in turn (round-robin) or to the least loaded one, largest units first."""
    owner: dict[int, int] = {}
    if strategy == Strategy.ROUND_ROBIN:
        for index, statement_ids in enumerate(units.values()):
            for pk in statement_ids:
                owner[pk] = auditors[index % len(auditors)]
        return owner
    load = dict.fromkeys(auditors, 0)
    for statement_ids in sorted(units.values(), key=len, reverse=True):
        auditor = min(auditors, key=lambda a: (load[a], auditors.index(a)))
        load[auditor] += len(statement_ids)
        for pk in statement_ids:
            owner[pk] = auditor
    return owner


def overlap_sample(
    owner: dict[int, int], auditors: Sequence[int], *, share: float, k: int, seed: int
) -> dict[int, list[int]]:
    """The planned sample: round(share × n) statements, each with k - 1 extra auditors
    besides its owner, the extras taken in turn so the extra work spreads evenly."""
    size = round(share * len(owner))
    if not size:
        return {}
    chosen = sorted(random.Random(seed).sample(sorted(owner), size))
    extra: dict[int, list[int]] = {}
    turn = 0
    for pk in chosen:
        others = [a for a in auditors if a != owner[pk]]
        picked: list[int] = []
        while len(picked) < k - 1:
            candidate = others[turn % len(others)]
            turn += 1
            if candidate not in picked:
                picked.append(candidate)
        extra[pk] = picked
    return extra


@transaction.atomic
def assignments_create(*, plan: AssignmentPlan, admin: User) -> list[Assignment]:
    """Assign the plan's unassigned statements; returns the new assignments."""
    if not is_admin(admin):
        raise NotAllowed("Only admins assign work.")
    _check_plan(plan)
    auditor_ids = [u.pk for u in plan.auditors]
    units = assignable_statements(plan)
    owner = distribute(units, auditor_ids, plan.strategy)
    extra = overlap_sample(
        owner, auditor_ids, share=plan.overlap_share, k=plan.overlap_k, seed=plan.seed
    )
    discussion_of = {pk: d for d, ids in units.items() for pk in ids}
    rows = []
    for pk, auditor_id in owner.items():
        overlap = pk in extra
        for who in [auditor_id, *extra.get(pk, [])]:
            rows.append(
                Assignment(
                    statement_id=pk,
                    discussion_id=discussion_of[pk],
                    auditor_id=who,
                    assigned_by=admin,
                    overlap=overlap,
                    due=plan.due,
                )
            )
    Assignment.objects.bulk_create(rows)
    tallies_refresh(pairs={(r.discussion_id, r.auditor_id) for r in rows})
    if plan.blind and extra:
        _mark_blind(sorted(extra), admin=admin)
    _log_assign(plan, admin=admin, rows=rows, sample=sorted(extra))
    return list(Assignment.objects.filter(pk__in=[r.pk for r in rows]).select_related("statement"))


def _mark_blind(statement_ids: list[int], *, admin: User) -> None:
    BlindReview.objects.bulk_create(
        [BlindReview(statement_id=pk, marked_by=admin) for pk in statement_ids],
        ignore_conflicts=True,
    )
    audit_log_record(
        actor=admin,
        action=Action.BLIND_MARK,
        object_type="statements",
        message=f"Marked the {len(statement_ids)} statement(s) of an overlap sample for "
        "blind review.",
        details={"statements": statement_ids, "overlap_sample": True},
    )
    coding_changed_send(reason="blind sample")


def _log_assign(plan: AssignmentPlan, *, admin: User, rows: list[Assignment], sample) -> None:
    per_auditor: dict[str, int] = {}
    names = {u.pk: u.get_username() for u in plan.auditors}
    for row in rows:
        name = names[row.auditor_id]
        per_auditor[name] = per_auditor.get(name, 0) + 1
    ids = [d.pk for d in plan.discussions]
    summary = ", ".join(f"{name} {n}" for name, n in per_auditor.items()) or "nothing new"
    audit_log_record(
        actor=admin,
        action=Action.ASSIGN,
        object_type="discussion" if len(ids) == 1 else "discussions",
        object_id=ids[0] if len(ids) == 1 else "",
        message=f"Assigned {len(rows)} statement(s) ({plan.strategy}, overlap "
        f"{round(plan.overlap_share * 100)}% × {plan.overlap_k}"
        f"{', blind' if plan.blind else ''}): {summary}.",
        details={
            "discussions": ids,
            "auditors": per_auditor,
            "strategy": plan.strategy,
            "range": [plan.first_order, plan.last_order],
            "overlap_share": plan.overlap_share,
            "overlap_k": plan.overlap_k,
            "overlap_statements": sample,
            "blind": plan.blind,
            "due": plan.due.isoformat() if plan.due else None,
        },
    )


@transaction.atomic
def assignment_reassign(*, assignment: Assignment, auditor: User, admin: User) -> Assignment:
    """Give an open or skipped assignment to another auditor (it opens again)."""
    if not is_admin(admin):
        raise NotAllowed("Only admins reassign work.")
    if not is_auditor(auditor):
        raise WorkflowError(f"{auditor.get_username()} is not an auditor.")
    locked = Assignment.objects.select_for_update(no_key=True).get(pk=assignment.pk)
    if locked.status == A.SUBMITTED:
        raise WrongState("This assignment was submitted; there is nothing left to reassign.")
    taken = Assignment.objects.filter(statement_id=locked.statement_id, auditor=auditor)
    if taken.exclude(pk=locked.pk).exists():
        raise WrongState(
            f"{auditor.get_username()} already has statement {locked.statement_id} assigned."
        )
    previous, previous_id = locked.auditor.get_username(), locked.auditor_id
    locked.auditor = auditor
    locked.status = A.OPEN
    locked.released_at = None
    locked.skip_reason, locked.skip_note = "", ""
    locked.save()
    assignment_written(assignment=locked, auditor_before=previous_id)
    audit_log_record(
        actor=admin,
        action=Action.REASSIGN,
        target=locked,
        message=f"Reassigned statement {locked.statement_id} from {previous} to "
        f"{auditor.get_username()}.",
        details={"statement": locked.statement_id, "from": previous, "to": auditor.get_username()},
    )
    return locked


@transaction.atomic
def assignments_reassign(*, assignments: QuerySet[Assignment], auditor: User, admin: User) -> int:
    """Give several open or skipped assignments to another auditor, all or nothing."""
    rows = list(assignments.order_by("statement_id"))
    if not rows:
        raise UnknownItems("No such assignment.")
    with tallies_batched():
        for row in rows:
            assignment_reassign(assignment=row, auditor=auditor, admin=admin)
    return len(rows)


@transaction.atomic
def assignments_unassign(*, assignments: QuerySet[Assignment], admin: User) -> int:
    """Take assignments back (their auditors' coding stays); returns how many."""
    if not is_admin(admin):
        raise NotAllowed("Only admins unassign work.")
    rows = list(assignments.select_related("auditor").order_by("statement_id", "auditor_id"))
    if not rows:
        raise UnknownItems("No such assignment.")
    Assignment.objects.filter(pk__in=[r.pk for r in rows]).delete()
    tallies_refresh(pairs={(r.discussion_id, r.auditor_id) for r in rows})
    by_auditor: dict[str, list[int]] = {}
    for row in rows:
        by_auditor.setdefault(row.auditor.get_username(), []).append(row.statement_id)
    audit_log_record(
        actor=admin,
        action=Action.UNASSIGN,
        object_type="assignment" if len(rows) == 1 else "assignments",
        object_id=rows[0].pk if len(rows) == 1 else "",
        message=f"Unassigned {len(rows)} statement(s): "
        + ", ".join(f"{name} {len(ids)}" for name, ids in by_auditor.items())
        + ".",
        details={"statements": by_auditor},
    )
    return len(rows)


def assignment_release_on_submit(*, statement_id: int, auditor: User) -> None:
    """The auditor submitted their coding: their assignment of it is done."""
    released = Assignment.objects.open().filter(statement_id=statement_id, auditor=auditor)
    discussions = set(released.values_list("statement__discussion_id", flat=True))
    released.update(status=A.SUBMITTED, released_at=timezone.now())
    tallies_refresh(pairs={(d, auditor.pk) for d in discussions})


def assignment_reopen_on_unsubmit(*, statement_id: int, auditor: User) -> None:
    """The auditor took their submit back: the assignment it released is theirs again."""
    reopened = Assignment.objects.filter(
        statement_id=statement_id, auditor=auditor, status=A.SUBMITTED
    )
    discussions = set(reopened.values_list("statement__discussion_id", flat=True))
    reopened.update(status=A.OPEN, released_at=None)
    tallies_refresh(pairs={(d, auditor.pk) for d in discussions})


@transaction.atomic
def statement_skip(
    *, statement: Statement, auditor: User, reason: str, note: str = ""
) -> Assignment:
    """The auditor cannot code this statement: release it with a reason, for an admin to see.

    Skipping an unassigned statement (when unassigned work is visible) records an assignment
    in the skipped state, so the skip reaches the admins' list too.
    """
    if reason not in Assignment.SkipReason.values:
        raise WorkflowError(
            f"reason: expected one of {', '.join(Assignment.SkipReason.values)}, got {reason!r}."
        )
    if reason == Assignment.SkipReason.OTHER and not note.strip():
        raise WorkflowError("note: say why when the reason is 'other'.")
    if not statement.is_subject:
        raise WrongState("Only subject statements are coded, so only they can be skipped.")
    check_may_code(statement=statement, user=auditor)
    sent = Feedback.objects.filter(statement=statement, auditor=auditor).exclude(
        status=Feedback.Status.DRAFT
    )
    if sent.exists():
        raise WrongState("You already submitted this statement; it cannot be skipped.")
    assignment, _ = Assignment.objects.select_for_update(no_key=True).get_or_create(
        statement=statement,
        auditor=auditor,
        defaults={
            "assigned_by": auditor,
            "status": A.SKIPPED,
            "discussion_id": statement.discussion_id,
        },
    )
    if assignment.status == A.SUBMITTED:
        raise WrongState("You already submitted this statement; it cannot be skipped.")
    assignment.status = A.SKIPPED
    assignment.skip_reason, assignment.skip_note = reason, note.strip()
    assignment.released_at = timezone.now()
    assignment.save()
    assignment_written(assignment=assignment)
    audit_log_record(
        actor=auditor,
        action=Action.SKIP,
        target=assignment,
        message=f"Skipped statement {statement.pk} ({assignment.get_skip_reason_display()})"
        + (f": {assignment.skip_note}" if assignment.skip_note else "."),
        details={"statement": statement.pk, "reason": reason, "note": assignment.skip_note},
    )
    return assignment


# --- who may code what -----------------------------------------------------------------------------


def check_may_code(*, statement: Statement, user: User) -> None:
    """Two auditors never code one statement by accident: a statement open for someone else
    (outside an overlap sample) is theirs, and with unassigned work hidden an auditor codes
    only what is assigned to them. Admins code anything; existing coding stays editable."""
    if is_admin(user) or Feedback.objects.filter(statement=statement, auditor=user).exists():
        return
    assignments = Assignment.objects.filter(statement=statement)
    if assignments.filter(auditor=user).exclude(status=A.SKIPPED).exists():
        return
    taken = assignments.filter(status__in=(A.OPEN, A.SUBMITTED)).select_related("auditor")
    holder = taken.exclude(auditor=user).first()
    if holder is not None:
        raise NotAllowed(
            f"Statement #{statement.order} is assigned to {holder.auditor.get_username()}."
        )
    if not unassigned_visible():
        raise NotAllowed(f"Statement #{statement.order} is not assigned to you.")


def assignment_next(*, user: User, after: Statement | None = None) -> Statement | None:
    """The next statement that needs this auditor: their open assignments in due order, then
    (when unassigned work is visible) the next statement after ``after`` in its discussion that
    nobody is assigned to and they have not coded."""
    # Per assignment, whether the coder's coding of it is past draft (an index probe that
    # stops at the first open one): NOT IN read every coding the coder ever sent, each time.
    done = Feedback.objects.filter(auditor=user, statement_id=OuterRef("statement_id")).exclude(
        status=Feedback.Status.DRAFT
    )
    mine = (
        Assignment.objects.open()
        .of(user)
        .exclude(Exists(done))
        .exclude(statement__triage__provisional=True)  # review triage accepted them
        .in_due_order()
        .select_related("statement__discussion", "statement__speaker")
    )
    if after is not None:
        mine = mine.exclude(statement_id=after.pk)
    first = mine.first()
    if first is not None:
        return first.statement
    if after is None or not unassigned_visible():
        return None
    return (
        Statement.objects.subjects()
        .filter(discussion_id=after.discussion_id, order__gt=after.order)
        .exclude(Exists(Assignment.objects.filter(statement=OuterRef("pk"))))
        .exclude(Exists(Feedback.objects.filter(statement=OuterRef("pk"), auditor=user)))
        .exclude(triage__provisional=True)
        .select_related("discussion", "speaker")
        .order_by("order")
        .first()
    )
