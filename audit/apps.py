from django.apps import AppConfig
from django.db.models.signals import post_delete, post_init, post_save


class AuditConfig(AppConfig):
    name = "audit"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers the job tasks with Celery in every process (the web queues them by name).
        from audit import (
            tallies,
            tasks,  # noqa: F401
            team_figures,
        )
        from audit.models import Adjudication, Assignment, Discussion, Feedback, FeedbackRevision

        # The stored tallies follow every write of the rows they count (see audit/tallies.py).
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
        # The team page's stored rows: the label follows the summary, time the history.
        post_save.connect(
            team_figures.discussion_label_changed, sender=Discussion, dispatch_uid="team-label"
        )
        post_save.connect(
            team_figures.revision_written, sender=FeedbackRevision, dispatch_uid="team-times"
        )
