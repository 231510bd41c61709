from django.urls import path

from audit.views import audit_log, blind, discussion, editing, queue, review, team

app_name = "audit"

urlpatterns = [
    path("discussions/<int:pk>/", discussion.discussion, name="discussion"),
    path("discussions/<int:pk>/export/", discussion.discussion_export, name="discussion_export"),
    path("discussions/<int:pk>/bulk-approve/", queue.bulk_approve, name="bulk_approve"),
    path("statements/<int:pk>/", discussion.statement, name="statement"),
    path("statements/<int:pk>/state/", discussion.statement_state, name="statement_state"),
    path("statements/<int:pk>/f1/", discussion.statement_f1, name="statement_f1"),
    path("statements/<int:pk>/presence/", discussion.presence, name="presence"),
    path("statements/<int:pk>/start/", editing.start, name="feedback_start"),
    path("statements/<int:pk>/review/", review.statement_review, name="statement_review"),
    path("feedback/<int:pk>/edit/", editing.edit, name="feedback_edit"),
    path("feedback/<int:pk>/save/", editing.save, name="feedback_save"),
    path("feedback/<int:pk>/json/", editing.save_json, name="feedback_json"),
    path("feedback/<int:pk>/submit/", editing.submit, name="feedback_submit"),
    path("feedback/<int:pk>/history/", editing.history, name="feedback_history"),
    path(
        "feedback/<int:pk>/revisions/<int:revision_pk>/restore/",
        editing.restore,
        name="feedback_restore",
    ),
    path("feedback/<int:pk>/approve/", review.approve, name="feedback_approve"),
    path("feedback/<int:pk>/reject/", review.reject, name="feedback_reject"),
    path("review/", queue.review_queue, name="review_queue"),
    path("blind/", blind.blind_reviews, name="blind_reviews"),
    path("log/", audit_log.audit_log, name="audit_log"),
    path("blind/<int:pk>/unmark/", blind.blind_unmark, name="blind_unmark"),
    path("queue/", queue.my_queue, name="my_queue"),
    path("next/", team.code_next, name="code_next"),
    path("feedback/<int:pk>/submit-next/", team.submit_next, name="feedback_submit_next"),
    path("statements/<int:pk>/skip/", team.skip, name="statement_skip"),
    path("assignments/", team.assignments, name="assignments"),
    path("assignments/unassign/", team.unassign, name="unassign"),
    path("assignments/reassign/", team.reassign_open, name="reassign_open"),
    path("assignments/<int:pk>/reassign/", team.reassign, name="reassign"),
    path("skipped/", team.skipped, name="skipped"),
    path("team/", team.team, name="team"),
]
