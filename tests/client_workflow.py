"""A team's script over the REST API, written only against the client that
`openapi-python-client` generates from GET /api/schema/ (package ``evalsite_api_client``).

    python client_workflow.py BASE_URL ADMIN_TOKEN AUDITOR_TOKEN IMPORT_FILE EVALUATION_FILE

An auditor lists discussions and statements, reads a statement's AI extraction (no draft
started), codes it from that extraction and submits; an admin approves, waits for fresh F1 and
reads the figures with their types, exports the ground truth, imports a file and uploads an
evaluation run with default options. Prints what it saw as one JSON object.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from evalsite_api_client import AuthenticatedClient
from evalsite_api_client.api.v1 import (
    discussions_list,
    discussions_retrieve,
    evaluations_create,
    evaluations_retrieve,
    extractions_list,
    feedback_approve,
    feedback_create,
    feedback_submit,
    feedback_update,
    ground_truth_export,
    ground_truth_import,
    metric_results_list,
)
from evalsite_api_client.models import (
    EvaluationsCreateBody,
    EvaluationsCreateBodyFamily,
    EvaluationStatusEnum,
    ExtractionStatementValues,
    FeedbackActionInputRequest,
    FeedbackApproveInputRequest,
    FeedbackSaveInputRequest,
    FeedbackStartInputRequest,
    GroundTruthFile,
    GroundTruthImportUploadRequest,
    ImportSummary,
    MetricResultsListScope,
    MetricResultsListStatus,
    PaginatedDiscussionOutputList,
    SpeakerTypeEnum,
)
from evalsite_api_client.types import File

WAIT_SECONDS = 60


def expect(value: Any, kind: type) -> Any:
    """The client returns an ``Error`` model (or None) for an error answer: stop there."""
    if not isinstance(value, kind):
        raise SystemExit(f"expected {kind.__name__}, got {value!r}")
    return value


def wait_for(fetch, done, what: str) -> Any:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        value = fetch()
        if done(value):
            return value
        time.sleep(0.2)
    raise SystemExit(f"gave up waiting for {what}")


def code_a_statement(auditor: AuthenticatedClient) -> tuple[int, int, int]:
    """List, read the AI extraction, start from it, edit, submit: (statement, feedback, version)."""
    discussions = expect(discussions_list.sync(client=auditor), PaginatedDiscussionOutputList)
    detail = discussions_retrieve.sync(discussions.results[0].id, client=auditor)
    subject = next(s for s in detail.statements if s.speaker_type == SpeakerTypeEnum.SUBJECT)
    extraction = extractions_list.sync(client=auditor, statement=subject.id).results[0]
    draft = feedback_create.sync(
        client=auditor, body=FeedbackStartInputRequest(statement=subject.id)
    )
    # The AI's payload is the draft's type: edited and sent back as it is.
    payload = extraction.pdp_deltas
    payload.people[0].name = "Corrected Name"
    saved = feedback_update.sync(
        draft.id,
        client=auditor,
        body=FeedbackSaveInputRequest(version=draft.version, edited_extraction=payload),
    )
    submitted = feedback_submit.sync(
        saved.id, client=auditor, body=FeedbackActionInputRequest(version=saved.version)
    )
    return subject.id, submitted.id, submitted.version


def fresh_f1(admin: AuthenticatedClient, statement: int) -> ExtractionStatementValues:
    results = wait_for(
        lambda: metric_results_list.sync(
            client=admin,
            family="extraction",
            scope=MetricResultsListScope.STATEMENT,
            statement=statement,
            status=MetricResultsListStatus.FRESH,
        ),
        lambda page: page.count > 0,
        "fresh F1",
    )
    return expect(results.results[0].values, ExtractionStatementValues)


def main(base_url: str, admin_token: str, auditor_token: str, import_file: str, run_file: str):
    admin = AuthenticatedClient(base_url=base_url, token=admin_token, prefix="Token")
    auditor = AuthenticatedClient(base_url=base_url, token=auditor_token, prefix="Token")
    statement, feedback, version = code_a_statement(auditor)
    approved = feedback_approve.sync(
        feedback, client=admin, body=FeedbackApproveInputRequest(version=version)
    )
    figures = fresh_f1(admin, statement)
    discussion = approved.discussion
    export = ground_truth_export.sync(client=admin, discussion_ids=str(discussion))
    export = expect(export, GroundTruthFile)
    exported = export.discussions[0].statements
    with Path(import_file).open("rb") as file:
        name = Path(import_file).name
        upload = GroundTruthImportUploadRequest(file=File(payload=file, file_name=name))
        imported = expect(ground_truth_import.sync(client=admin, body=upload), ImportSummary)
    with Path(run_file).open("rb") as file:  # default options, as the upload page has them
        evaluation = evaluations_create.sync(
            client=admin,
            body=EvaluationsCreateBody(
                family=EvaluationsCreateBodyFamily.SELECTIVE_PREDICTION,
                run=File(payload=file, file_name=Path(run_file).name),
            ),
        )
    evaluation = wait_for(
        lambda: evaluations_retrieve.sync(evaluation.id, client=admin),
        lambda e: e.status in (EvaluationStatusEnum.DONE, EvaluationStatusEnum.FAILED),
        "the evaluation",
    )
    return {
        "statement": statement,
        "approved_status": approved.status.value,
        "f1": figures.aggregate_micro_f1,
        "f1_type": type(figures.aggregate_micro_f1).__name__,
        "people_tp": figures.people_tp,
        "people_tp_type": type(figures.people_tp).__name__,
        "exported_statements": len(exported),
        "exported_ground_truth": sum(s.approved_feedback is not None for s in exported),
        "imported_discussions": imported.discussions_created,
        "imported_ground_truth": imported.approved_created,
        "evaluation_status": evaluation.status.value,
        "evaluation_mode": evaluation.options["mode"],
    }


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:6])))
