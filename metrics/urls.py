from django.urls import URLPattern, include, path

from evalsite.http import moved_to
from metrics.models import MetricResult
from metrics.registry import FAMILIES, WHOLE
from metrics.views import dashboards, experiments, jobs, own_data, packets, triage

app_name = "metrics"

urlpatterns = [
    path("", dashboards.dashboard, name="dashboard"),
    path("status/", dashboards.dashboard_status, name="dashboard_status"),
    path("runs/", dashboards.runs, name="runs"),
    path("runs/compare/", experiments.comparison, name="run_compare"),
    path("runs/trend/", experiments.trend, name="trend"),
    path("runs/<int:run_id>/cumulative-card/", dashboards.cumulative_card, name="cumulative_card"),
    path("discussions/", dashboards.discussions, name="discussions"),
    path("errors/", dashboards.errors, name="errors"),
    path("errors/statements/", dashboards.error_statements, name="error_statements"),
    path("errors/packet/", packets.failure_packet, name="failure_packet"),
    path("evaluations/", include("metrics.evaluations.urls")),
    path("jobs/", jobs.jobs, name="jobs"),
    # A job's progress and cancel moved to audit (/audit/jobs/<pk>/...), like the jobs: the old
    # addresses redirect, keeping the method (308), for one release.
    path("jobs/<int:pk>/progress/", moved_to("audit:job_progress")),
    path("jobs/<int:pk>/cancel/", moved_to("audit:job_cancel")),
    path(
        "runs/<int:run_id>/extraction-card/",
        jobs.extraction_card_partial,
        name="extraction_card",
    ),
    path("runs/<int:run_id>/triage/", triage.triage_settings, name="triage_settings"),
    # Adjudication moved to audit (/audit/statements/<pk>/adjudicate/...): the old addresses
    # redirect, keeping the method (308), for one release.
    path("statements/<int:pk>/adjudicate/", moved_to("audit:adjudicate")),
    path("statements/<int:pk>/adjudicate/choose/", moved_to("audit:adjudication_choose")),
    path("statements/<int:pk>/adjudicate/remerge/", moved_to("audit:adjudication_remerge")),
    path("statements/<int:pk>/adjudicate/submit/", moved_to("audit:adjudication_submit")),
]


def whole_family_card_path(name: str) -> URLPattern:
    """A family computed whole has its card at its own URL, named "<family>_card":
    runs/<id>/<family>-card/ for a run's, <family>-card/ for the system's."""
    slug = f"{name.replace('_', '-')}-card/"
    per_run = FAMILIES[name].scope == MetricResult.Scope.RUN
    route = f"runs/<int:run_id>/{slug}" if per_run else slug
    view = own_data.whole_family_card_view
    return path(route, view, {"family": name}, name=f"{name}_card")


urlpatterns += [whole_family_card_path(name) for name in WHOLE]
