"""/metrics/evaluations/ pages (names in the "metrics" namespace; included by metrics.urls)."""

from django.urls import path

from metrics.evaluations import views

urlpatterns = [
    path("", views.evaluation_list, name="evaluations"),
    path("upload/", views.evaluation_upload, name="evaluation_upload"),
    path("compare", views.evaluation_compare, name="evaluation_compare"),
    path("compare/pair/", views.evaluation_pair, name="evaluation_pair"),
    path("examples/<str:name>", views.evaluation_example, name="evaluation_example"),
    path("<int:pk>/", views.evaluation_detail, name="evaluation_detail"),
    path("<int:pk>/status/", views.evaluation_status, name="evaluation_status"),
    path("<int:pk>/artifact.json", views.evaluation_artifact, name="evaluation_artifact"),
    path("<int:pk>/retry/", views.evaluation_retry, name="evaluation_retry"),
]
