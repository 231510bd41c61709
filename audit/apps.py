from django.apps import AppConfig
from django.db.backends.signals import connection_created
from django.db.models.signals import post_delete, post_save, pre_delete


class AuditConfig(AppConfig):
    name = "audit"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from evalsite.perf.timestamps import compiled_timestamps_register

        # The first app ready: every connection of the process reads timestamps compiled.
        connection_created.connect(compiled_timestamps_register, dispatch_uid="timestamps")
        # Registers the job tasks with Celery in every process (the web queues them by name).
        from audit import tasks  # noqa: F401
        from audit.derived import coding_times, tallies
        from audit.models import (
            Assignment,
            ExtractionRun,
            Feedback,
            Speaker,
            Statement,
            TriageStatement,
        )

        # Deletions cascade past the services: the tallies of what went follow.
        post_delete.connect(tallies.feedback_deleted, sender=Feedback, dispatch_uid="tally-fb-del")
        post_delete.connect(
            tallies.assignment_deleted, sender=Assignment, dispatch_uid="tally-as-del"
        )
        # What is still to code (the queue's "done"), per discussion and in each coder's tally.
        for signal, receiver, sender in (
            (post_save, tallies.statement_written, Statement),
            (post_delete, tallies.statement_written, Statement),
            (post_save, tallies.speaker_saved, Speaker),
            (post_save, tallies.triage_row_saved, TriageStatement),
            (pre_delete, tallies.run_deleting, ExtractionRun),
            (post_delete, tallies.run_deleted, ExtractionRun),
        ):
            signal.connect(receiver, sender=sender, dispatch_uid=f"to-code-{signal}-{sender}")
        pre_delete.connect(
            coding_times.feedback_deleting, sender=Feedback, dispatch_uid="times-deleted"
        )
