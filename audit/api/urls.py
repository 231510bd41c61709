"""/api/v1/ routes of the audit app."""

from django.urls import path

from audit.api import feedback as api
from audit.api import threads as threads_api

urlpatterns = [
    path("discussions/", api.DiscussionListApi.as_view(), name="api-discussions"),
    path("discussions/<int:pk>/", api.DiscussionDetailApi.as_view(), name="api-discussion"),
    path("extraction-runs/", api.ExtractionRunListApi.as_view(), name="api-runs"),
    path("extraction-runs/<int:pk>/", api.ExtractionRunDetailApi.as_view(), name="api-run"),
    path(
        "extraction-runs/<int:pk>/extractions/",
        api.ExtractionRunExtractionsApi.as_view(),
        name="api-run-extractions",
    ),
    path("extractions/", api.ExtractionListApi.as_view(), name="api-extractions"),
    path("feedback/", api.FeedbackListApi.as_view(), name="api-feedback-list"),
    path("feedback/<int:pk>/", api.FeedbackDetailApi.as_view(), name="api-feedback"),
    path("feedback/<int:pk>/submit/", api.FeedbackSubmitApi.as_view(), name="api-feedback-submit"),
    path(
        "feedback/<int:pk>/approve/", api.FeedbackApproveApi.as_view(), name="api-feedback-approve"
    ),
    path(
        "feedback/bulk-approve/",
        api.FeedbackBulkApproveApi.as_view(),
        name="api-feedback-bulk-approve",
    ),
    path("audit-log/", api.AuditLogApi.as_view(), name="api-audit-log"),
    path("feedback/<int:pk>/reject/", api.FeedbackRejectApi.as_view(), name="api-feedback-reject"),
    path(
        "feedback/<int:pk>/revisions/",
        api.FeedbackRevisionListApi.as_view(),
        name="api-feedback-revisions",
    ),
    path(
        "feedback/<int:pk>/revisions/<int:revision_pk>/restore/",
        api.FeedbackRestoreApi.as_view(),
        name="api-feedback-restore",
    ),
    path(
        "ground-truth/export",
        api.GroundTruthExportApi.as_view(),
        name="api-ground-truth-export",
    ),
    path(
        "ground-truth/import",
        api.GroundTruthImportApi.as_view(),
        name="api-ground-truth-import",
    ),
    path("assignments/", api.AssignmentListApi.as_view(), name="api-assignments"),
    path("assignments/next/", api.AssignmentNextApi.as_view(), name="api-assignments-next"),
    path("assignments/<int:pk>/", api.AssignmentDetailApi.as_view(), name="api-assignment"),
    path(
        "assignments/<int:pk>/reassign/",
        api.AssignmentReassignApi.as_view(),
        name="api-assignment-reassign",
    ),
    path("statements/<int:pk>/skip/", api.StatementSkipApi.as_view(), name="api-statement-skip"),
    path("review-stream/next/", api.ReviewNextApi.as_view(), name="api-review-next"),
    path("progress/", api.ProgressApi.as_view(), name="api-progress"),
    path("guidelines/", threads_api.GuidelineListApi.as_view(), name="api-guidelines"),
    path(
        "guidelines/current/",
        threads_api.GuidelineCurrentApi.as_view(),
        name="api-guidelines-current",
    ),
    path(
        "guidelines/<int:number>/",
        threads_api.GuidelineDetailApi.as_view(),
        name="api-guideline",
    ),
    path(
        "statements/<int:pk>/comments/",
        threads_api.StatementCommentsApi.as_view(),
        name="api-statement-comments",
    ),
    path(
        "statements/<int:pk>/comments/read/",
        threads_api.StatementThreadReadApi.as_view(),
        name="api-statement-comments-read",
    ),
    path("inbox/", threads_api.InboxApi.as_view(), name="api-inbox"),
]
