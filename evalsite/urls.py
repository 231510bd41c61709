from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from audit.views import queue as audit_queue
from evalsite.health import health
from evalsite.throttling import LoginView

urlpatterns = [
    path("", audit_queue.home, name="home"),
    path("accounts/login/", LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("audit/", include("audit.urls")),
    path("metrics/", include("metrics.urls")),
    path("api/", include("evalsite.api_urls")),
    path("django-admin/", admin.site.urls),
    path("health/", health, name="health"),
]
