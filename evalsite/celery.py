"""The Celery application. Broker: Redis when REDIS_URL is set, else an embedded filesystem queue."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")

app = Celery("evalsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
