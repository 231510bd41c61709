"""/api/v1/evaluations/ routes (included by metrics.api.urls)."""

from django.urls import path

from metrics.evaluations import api

urlpatterns = [
    path("", api.EvaluationListApi.as_view(), name="api-evaluations"),
    path("<int:pk>/", api.EvaluationDetailApi.as_view(), name="api-evaluation"),
    path("<int:pk>/retry/", api.EvaluationRetryApi.as_view(), name="api-evaluation-retry"),
]
