"""Adjudication: a reviewer merges two or more auditors' codings of one statement into one.

audit stores the merge's decisions and produces its coding; how the codings are aligned item by
item (the matcher) is the metric library's business, so the caller hands in the merged payload
and the counts. The produced coding belongs to the adjudicator, is credited as adjudicated with
every coder listed, and follows the normal approval rules: submitted, then approved by another
admin (four eyes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from audit.derived.tallies import statement_coders_refresh, tallies_batched
from audit.models import Adjudication, Feedback, Statement
from audit.services.audit_log import Action, audit_log_record
from audit.services.errors import NotAllowed, WrongState
from audit.services.feedback import feedback_save, feedback_start, feedback_submit
from evalsite.access import is_admin
from metrics.families.payload.schema import validate_pdp

CODED = (Feedback.Status.SUBMITTED, Feedback.Status.APPROVED)


def _check_adjudicator(*, statement: Statement, admin: User, coder_ids: Sequence[int]) -> None:
    if not is_admin(admin):
        raise NotAllowed("Only admins adjudicate codings.")
    if admin.pk in coder_ids:
        raise NotAllowed(
            f"You coded statement #{statement.order} yourself: another admin adjudicates it."
        )
    if len(coder_ids) < 2:
        raise WrongState(
            f"Statement #{statement.order} has {len(coder_ids)} submitted coding"
            f"{'' if len(coder_ids) == 1 else 's'}: adjudication needs two or more."
        )


def adjudication_check_adjudicator(
    *, statement: Statement, admin: User, coder_ids: Sequence[int]
) -> None:
    """NotAllowed/WrongState unless this admin may adjudicate these codings (checked before
    anything about the items, so a refusal names the role, not an item)."""
    _check_adjudicator(statement=statement, admin=admin, coder_ids=coder_ids)


def _produced_state(adjudication: Adjudication | None, admin: User) -> None:
    """Once produced, the merge belongs to its adjudicator until it is approved."""
    feedback = adjudication.feedback if adjudication is not None else None
    if feedback is None:
        return
    if feedback.is_approved:
        raise WrongState(
            "The adjudicated coding is approved ground truth: change it from the review page."
        )
    if feedback.auditor_id != admin.pk:
        raise NotAllowed(
            f"{feedback.auditor.get_username()} adjudicates this statement (their merge waits "
            "for approval); review it there."
        )


@transaction.atomic
def adjudication_choose(
    *,
    statement: Statement,
    admin: User,
    coder_ids: Sequence[int],
    key: str,
    choice: Any,
    basis: dict[str, int] | None = None,
) -> Adjudication:
    """Record the reviewer's choice for one disputed item (validated by the caller). ``basis``:
    the codings it was made on (feedback id -> version), to tell later why a choice was reset."""
    _check_adjudicator(statement=statement, admin=admin, coder_ids=coder_ids)
    adjudication = _locked(statement)
    _produced_state(adjudication, admin)
    if adjudication is None:
        adjudication = Adjudication.objects.create(statement=statement, adjudicator=admin)
    adjudication.choices = {**adjudication.choices, key: choice}
    adjudication.adjudicator = admin
    if basis is not None:
        adjudication.basis = basis
    adjudication.save(update_fields=["choices", "adjudicator", "basis", "updated_at"])
    return adjudication


@transaction.atomic
def adjudication_choices_reset(
    *, statement: Statement, keys: Sequence[str], reason: str, actor: User | None = None
) -> Adjudication | None:
    """Move the choices about these items, which no longer apply (a coder changed their coding
    since), out of the merge into ``reset_choices`` with the reason, and log it: nothing the
    reviewer decided disappears without a trace. ``actor``: the coder whose change caused it,
    if one did. A choice already reset (a simultaneous reader) is not reset twice."""
    adjudication = _locked(statement)
    if adjudication is None or (adjudication.feedback and adjudication.feedback.is_approved):
        return adjudication
    stale = [key for key in keys if key in adjudication.choices]
    if not stale:
        return adjudication
    now = timezone.now().isoformat()
    reset = [
        {"key": key, "choice": adjudication.choices[key], "reason": reason, "at": now}
        for key in stale
    ]
    adjudication.choices = {k: v for k, v in adjudication.choices.items() if k not in stale}
    adjudication.reset_choices = [*adjudication.reset_choices, *reset]
    adjudication.save(update_fields=["choices", "reset_choices", "updated_at"])
    audit_log_record(
        actor=actor,
        action=Action.ADJUDICATION_RESET,
        target=adjudication,
        message=f"Statement {statement.pk}: {len(stale)} earlier adjudication choice"
        f"{' was' if len(stale) == 1 else 's were'} reset ({', '.join(stale)}): {reason}",
        details={"statement": statement.pk, "reset": reset, "reason": reason},
    )
    return adjudication


@transaction.atomic
def adjudication_remerge(
    *, statement: Statement, admin: User, coder_ids: Sequence[int]
) -> Adjudication | None:
    """Forget every choice: back to the automatic merge (a logged act)."""
    _check_adjudicator(statement=statement, admin=admin, coder_ids=coder_ids)
    adjudication = _locked(statement)
    _produced_state(adjudication, admin)
    if adjudication is None or not (adjudication.choices or adjudication.reset_choices):
        return adjudication
    dropped = len(adjudication.choices)
    adjudication.choices = {}
    adjudication.reset_choices = []
    adjudication.save(update_fields=["choices", "reset_choices", "updated_at"])
    audit_log_record(
        actor=admin,
        action=Action.ADJUDICATION_REMERGE,
        target=adjudication,
        message=f"Re-merged statement {statement.pk}: {dropped} choice"
        f"{'' if dropped == 1 else 's'} dropped, back to the automatic merge.",
        details={"statement": statement.pk, "dropped": dropped},
    )
    return adjudication


@transaction.atomic
@tallies_batched()  # the merge's coding and what its statement's coders share: one recount
def adjudication_produce(
    *,
    statement: Statement,
    admin: User,
    coder_ids: Sequence[int],
    payload: dict,
    choices: dict,
    unanimous_items: int,
    adjudicated_items: int,
) -> Adjudication:
    """Store the merged coding as the adjudicator's submitted feedback, credited as
    adjudicated with its coders and the unanimous/adjudicated item counts."""
    _check_adjudicator(statement=statement, admin=admin, coder_ids=coder_ids)
    adjudication = _locked(statement)
    _produced_state(adjudication, admin)
    if adjudication is None:
        adjudication = Adjudication.objects.create(statement=statement, adjudicator=admin)
    feedback = adjudication.feedback
    if (
        feedback is not None
        and feedback.status == Feedback.Status.SUBMITTED
        and feedback.edited_extraction == validate_pdp(payload)
    ):
        return adjudication  # the very merge already waits for approval (a repeated submit)
    feedback = feedback or feedback_start(statement=statement, auditor=admin)
    feedback = feedback_save(
        feedback=feedback, user=admin, edited_extraction=payload, base_version=None
    )
    feedback = feedback_submit(feedback=feedback, user=admin)
    adjudication.feedback = feedback
    adjudication.adjudicator = admin
    adjudication.choices = choices
    adjudication.reset_choices = []
    adjudication.unanimous_items = unanimous_items
    adjudication.adjudicated_items = adjudicated_items
    adjudication.save()
    statement_coders_refresh(statement_id=statement.pk)  # merged: nothing left to adjudicate
    adjudication.coders.set(coder_ids)
    audit_log_record(
        actor=admin,
        action=Action.ADJUDICATE,
        target=adjudication,
        message=f"Adjudicated statement {statement.pk} from {len(coder_ids)} codings: "
        f"{unanimous_items} items unanimous, {adjudicated_items} decided by the reviewer; "
        f"feedback {feedback.pk} v{feedback.version} waits for another admin's approval.",
        details={
            "statement": statement.pk,
            "feedback": feedback.pk,
            "coders": sorted(coder_ids),
            "unanimous_items": unanimous_items,
            "adjudicated_items": adjudicated_items,
        },
    )
    return adjudication


def _locked(statement: Statement) -> Adjudication | None:
    """The statement's adjudication under a lock; the statement row is locked first, so two
    admins deciding at once queue here instead of both creating the row."""
    Statement.objects.select_for_update(no_key=True).filter(pk=statement.pk).first()
    return (
        Adjudication.objects.select_for_update(of=("self",), no_key=True)
        .select_related("feedback__auditor")
        .filter(statement=statement)
        .first()
    )
