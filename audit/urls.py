from django.urls import path

from audit import views

app_name = "audit"

urlpatterns = [
    path("discussions/<int:pk>/", views.discussion_detail, name="discussion"),
    path("review/", views.review_queue, name="review_queue"),
]
