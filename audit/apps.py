from django.apps import AppConfig
from django.db.backends.signals import connection_created
from django.db.models.signals import post_delete, post_init, post_save, pre_delete


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
            Adjudication,
            Assignment,
            ExtractionRun,
            Feedback,
            Speaker,
            Statement,
            TriageStatement,
        )

        # The stored tallies follow every write of the rows they count (see audit/derived/tallies.py).
        for model, saved, deleted in (
            (Feedback, tallies.feedback_saved, tallies.feedback_deleted),
            (Assignment, tallies.assignment_saved, tallies.assignment_deleted),
        ):
            post_init.connect(tallies.row_loaded, sender=model, dispatch_uid=f"tally-{model}")
            post_save.connect(saved, sender=model, dispatch_uid=f"tally-saved-{model}")
            post_delete.connect(deleted, sender=model, dispatch_uid=f"tally-deleted-{model}")
        for signal, name in ((post_save, "saved"), (post_delete, "deleted")):
            signal.connect(
                tallies.adjudication_written, sender=Adjudication, dispatch_uid=f"tally-adj-{name}"
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
        # The stored active time follows which codings are sent (after the tallies' receivers:
        # their count changes are recorded by figures_add).
        post_init.connect(coding_times.feedback_loaded, sender=Feedback, dispatch_uid="times-init")
        post_save.connect(coding_times.feedback_saved, sender=Feedback, dispatch_uid="times-sent")
        pre_delete.connect(
            coding_times.feedback_deleting, sender=Feedback, dispatch_uid="times-deleted"
        )
