"""/api/v1/ routes of the audit app (included by evalsite.api_urls)."""

from django.urls import path

from audit.api import (
    adjudication,
    assignments,
    discussions,
    feedback,
    jobs,
    runs,
    snapshots,
    threads,
)

urlpatterns = [
    path("discussions/", discussions.DiscussionListApi.as_view(), name="api-discussions"),
    path("discussions/<int:pk>/", discussions.DiscussionDetailApi.as_view(), name="api-discussion"),
    path("extraction-runs/", discussions.ExtractionRunListApi.as_view(), name="api-runs"),
    path("extraction-runs/<int:pk>/", discussions.ExtractionRunDetailApi.as_view(), name="api-run"),
    path(
        "extraction-runs/<int:pk>/extractions/",
        discussions.ExtractionRunExtractionsApi.as_view(),
        name="api-run-extractions",
    ),
    path(
        "extraction-runs/<int:pk>/discussion-extractions/",
        runs.RunDiscussionExtractionsApi.as_view(),
        name="api-run-discussion-extractions",
    ),
    path("configurations/", runs.ConfigurationListApi.as_view(), name="api-configurations"),
    path(
        "configurations/<int:pk>/", runs.ConfigurationDetailApi.as_view(), name="api-configuration"
    ),
    path("snapshots/", snapshots.SnapshotListApi.as_view(), name="api-snapshots"),
    path("snapshots/<int:pk>/", snapshots.SnapshotDetailApi.as_view(), name="api-snapshot"),
    path(
        "snapshots/<int:pk>/export",
        snapshots.SnapshotExportApi.as_view(),
        name="api-snapshot-export",
    ),
    path("extractions/", discussions.ExtractionListApi.as_view(), name="api-extractions"),
    path("feedback/", feedback.FeedbackListApi.as_view(), name="api-feedback-list"),
    path("feedback/<int:pk>/", feedback.FeedbackDetailApi.as_view(), name="api-feedback"),
    path(
        "feedback/<int:pk>/submit/",
        feedback.FeedbackSubmitApi.as_view(),
        name="api-feedback-submit",
    ),
    path(
        "feedback/<int:pk>/approve/",
        feedback.FeedbackApproveApi.as_view(),
        name="api-feedback-approve",
    ),
    path(
        "feedback/bulk-approve/",
        feedback.FeedbackBulkApproveApi.as_view(),
        name="api-feedback-bulk-approve",
    ),
    path("audit-log/", feedback.AuditLogApi.as_view(), name="api-audit-log"),
    path(
        "feedback/<int:pk>/reject/",
        feedback.FeedbackRejectApi.as_view(),
        name="api-feedback-reject",
    ),
    path(
        "feedback/<int:pk>/revisions/",
        feedback.FeedbackRevisionListApi.as_view(),
        name="api-feedback-revisions",
    ),
    path(
        "feedback/<int:pk>/revisions/<int:revision_pk>/restore/",
        feedback.FeedbackRestoreApi.as_view(),
        name="api-feedback-restore",
    ),
    path(
        "ground-truth/export",
        discussions.GroundTruthExportApi.as_view(),
        name="api-ground-truth-export",
    ),
    path(
        "ground-truth/import",
        discussions.GroundTruthImportApi.as_view(),
        name="api-ground-truth-import",
    ),
    path("assignments/", assignments.AssignmentListApi.as_view(), name="api-assignments"),
    path("assignments/next/", assignments.AssignmentNextApi.as_view(), name="api-assignments-next"),
    path("assignments/<int:pk>/", assignments.AssignmentDetailApi.as_view(), name="api-assignment"),
    path(
        "assignments/<int:pk>/reassign/",
        assignments.AssignmentReassignApi.as_view(),
        name="api-assignment-reassign",
    ),
    path(
        "statements/<int:pk>/skip/",
        assignments.StatementSkipApi.as_view(),
        name="api-statement-skip",
    ),
    path("review-stream/next/", assignments.ReviewNextApi.as_view(), name="api-review-next"),
    path("progress/", assignments.ProgressApi.as_view(), name="api-progress"),
    path("guidelines/", threads.GuidelineListApi.as_view(), name="api-guidelines"),
    path(
        "guidelines/current/",
        threads.GuidelineCurrentApi.as_view(),
        name="api-guidelines-current",
    ),
    path(
        "guidelines/<int:number>/",
        threads.GuidelineDetailApi.as_view(),
        name="api-guideline",
    ),
    path(
        "statements/<int:pk>/comments/",
        threads.StatementCommentsApi.as_view(),
        name="api-statement-comments",
    ),
    path(
        "statements/<int:pk>/comments/read/",
        threads.StatementThreadReadApi.as_view(),
        name="api-statement-comments-read",
    ),
    path("inbox/", threads.InboxApi.as_view(), name="api-inbox"),
    path(
        "statements/<int:pk>/adjudication/",
        adjudication.AdjudicationApi.as_view(),
        name="api-adjudication",
    ),
    path(
        "statements/<int:pk>/adjudication/choices/",
        adjudication.AdjudicationChoiceApi.as_view(),
        name="api-adjudication-choice",
    ),
    path(
        "statements/<int:pk>/adjudication/remerge/",
        adjudication.AdjudicationRemergeApi.as_view(),
        name="api-adjudication-remerge",
    ),
    path(
        "statements/<int:pk>/adjudication/submit/",
        adjudication.AdjudicationSubmitApi.as_view(),
        name="api-adjudication-submit",
    ),
    path("jobs/", jobs.JobListApi.as_view(), name="api-jobs"),
    path("jobs/<int:pk>/", jobs.JobDetailApi.as_view(), name="api-job-detail"),
    path("jobs/<int:pk>/download", jobs.JobDownloadApi.as_view(), name="api-job-download"),
]
