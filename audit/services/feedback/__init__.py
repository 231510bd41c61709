"""Feedback workflows: drafting, submitting, approving, rejecting, restoring.

Every change that alters ground truth announces which statements it touched
(``audit.signals.ground_truth_changed``, after the transaction commits); whoever keeps figures
computed from ground truth subscribes.
The package's modules: ``rules`` (what a coding may be, who may act), ``revisions`` (its
history, the row lock), ``drafting`` (the auditor's side) and ``approval`` (the admin's side).
"""

from audit.services.errors import NotAllowed, NotReady, StaleVersion, WorkflowError, WrongState
from audit.services.feedback.approval import (
    AlreadyApproved,
    BulkRefused,
    feedback_approve,
    feedback_authors,
    feedback_bulk_approve,
    feedback_reject,
    feedback_review_opened,
    feedback_unapprove,
)
from audit.services.feedback.drafting import (
    feedback_restore,
    feedback_save,
    feedback_start,
    feedback_submit,
    feedback_submit_next,
    feedback_unsubmit,
    feedback_unsubmit_refusal,
    feedback_unsubmit_refusals,
    latest_extraction,
)
from audit.services.feedback.revisions import (
    CONTENT_ACTIONS,
    feedback_record_conflict,
    revision_record,
    revisions_record,
)
from audit.services.feedback.rules import (
    REJECTABLE,
    SUBMITTABLE,
    feedback_awaits_approval,
    feedback_can_be_rejected,
    feedback_can_submit,
    feedback_opens_in_editor,
    feedback_problems,
    feedback_warnings,
)

__all__ = [
    "CONTENT_ACTIONS",
    "REJECTABLE",
    "SUBMITTABLE",
    "AlreadyApproved",
    "BulkRefused",
    "NotAllowed",
    "NotReady",
    "StaleVersion",
    "WorkflowError",
    "WrongState",
    "feedback_approve",
    "feedback_authors",
    "feedback_awaits_approval",
    "feedback_bulk_approve",
    "feedback_can_be_rejected",
    "feedback_can_submit",
    "feedback_opens_in_editor",
    "feedback_problems",
    "feedback_record_conflict",
    "feedback_reject",
    "feedback_restore",
    "feedback_review_opened",
    "feedback_save",
    "feedback_start",
    "feedback_submit",
    "feedback_submit_next",
    "feedback_unapprove",
    "feedback_unsubmit",
    "feedback_unsubmit_refusal",
    "feedback_unsubmit_refusals",
    "feedback_warnings",
    "latest_extraction",
    "revision_record",
    "revisions_record",
]
