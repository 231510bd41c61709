"""/api/v1/ routes of the metrics app (included by evalsite.api_urls)."""

from django.urls import URLPattern, URLResolver, include, path

from metrics.api import comparisons, experiments, packets, results, triage

urlpatterns: list[URLPattern | URLResolver] = [
    path("metric-results/", results.MetricResultListApi.as_view(), name="api-metric-results"),
    path(
        "metric-results/<int:pk>/",
        results.MetricResultDetailApi.as_view(),
        name="api-metric-result",
    ),
    path(
        "extraction-runs/<int:pk>/figures/",
        experiments.RunFiguresApi.as_view(),
        name="api-run-figures",
    ),
    path(
        "configurations/<int:pk>/figures/",
        experiments.ConfigurationFiguresApi.as_view(),
        name="api-configuration-figures",
    ),
    path(
        "cumulative-comparison/",
        experiments.CumulativeComparisonApi.as_view(),
        name="api-cumulative-comparison",
    ),
    path("comparisons/", comparisons.ComparisonApi.as_view(), name="api-comparison"),
    path("failure-packets/", packets.FailurePacketApi.as_view(), name="api-failure-packet"),
    path("recompute/", results.RecomputeApi.as_view(), name="api-recompute"),
    path("evaluations/", include("metrics.evaluations.api_urls")),
    path("extraction-runs/<int:run_id>/triage/", triage.TriageApi.as_view(), name="api-triage"),
    path(
        "extraction-runs/<int:run_id>/triage/statements/",
        triage.TriageStatementListApi.as_view(),
        name="api-triage-statements",
    ),
]
