from django.urls import include, path

from metrics import views, views_jobs, views_own_data

app_name = "metrics"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("status/", views.dashboard_status, name="dashboard_status"),
    path("runs/", views.runs, name="runs"),
    path("runs/compare/", views.run_compare, name="run_compare"),
    path("runs/<int:run_id>/cumulative-card/", views.cumulative_card, name="cumulative_card"),
    path("discussions/", views.discussions, name="discussions"),
    path("errors/", views.errors, name="errors"),
    path("errors/statements/", views.error_statements, name="error_statements"),
    path("evaluations/", include("metrics.evaluations.urls")),
    path("jobs/", views_jobs.jobs, name="jobs"),
    path("jobs/<int:pk>/progress/", views_jobs.job_progress, name="job_progress"),
    path("jobs/<int:pk>/cancel/", views_jobs.job_cancel, name="job_cancel"),
    path(
        "runs/<int:run_id>/extraction-card/",
        views_jobs.extraction_card_partial,
        name="extraction_card",
    ),
    # The cards of the families computed whole (metrics.registry), each at its own URL.
    path(
        "runs/<int:run_id>/review-savings-card/",
        views_own_data.whole_family_card_view,
        {"family": "review_savings"},
        name="review_savings_card",
    ),
    path(
        "runs/<int:run_id>/calibration-card/",
        views_own_data.whole_family_card_view,
        {"family": "calibration"},
        name="calibration_card",
    ),
    path(
        "interauditor-card/",
        views_own_data.whole_family_card_view,
        {"family": "interauditor"},
        name="interauditor_card",
    ),
]
