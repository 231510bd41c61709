from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "audit"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers the job tasks with Celery in every process (the web queues them by name).
        from audit import tasks  # noqa: F401
