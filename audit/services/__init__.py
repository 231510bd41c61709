"""Workflows across audit models. Views, the API and management commands all call these."""

from audit.services.exports import ground_truth_export
from audit.services.feedback import (
    NotAllowed,
    NotReady,
    StaleVersion,
    WorkflowError,
    WrongState,
    feedback_approve,
    feedback_bulk_approve,
    feedback_problems,
    feedback_record_conflict,
    feedback_reject,
    feedback_restore,
    feedback_save,
    feedback_start,
    feedback_submit,
    feedback_unapprove,
    feedback_warnings,
    latest_extraction,
)
from audit.services.imports import (
    ImportSummary,
    discussions_import,
    discussions_import_file,
    extractions_import,
)

__all__ = [
    "ImportSummary",
    "NotAllowed",
    "NotReady",
    "StaleVersion",
    "WorkflowError",
    "WrongState",
    "discussions_import",
    "discussions_import_file",
    "extractions_import",
    "feedback_approve",
    "feedback_bulk_approve",
    "feedback_problems",
    "feedback_record_conflict",
    "feedback_reject",
    "feedback_restore",
    "feedback_save",
    "feedback_start",
    "feedback_submit",
    "feedback_unapprove",
    "feedback_warnings",
    "ground_truth_export",
    "latest_extraction",
]
