from django.urls import path

from metrics import views

app_name = "metrics"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("runs/", views.runs, name="runs"),
    path("evaluations/", views.evaluations, name="evaluations"),
]
