from django.apps import AppConfig
from django.db.backends.signals import connection_created


class AuditConfig(AppConfig):
    name = "audit"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from evalsite.perf.timestamps import compiled_timestamps_register

        # The first app ready: every connection of the process reads timestamps compiled.
        connection_created.connect(compiled_timestamps_register, dispatch_uid="timestamps")
        # Registers the job tasks with Celery in every process (the web queues them by name).
        from audit import tasks  # noqa: F401
