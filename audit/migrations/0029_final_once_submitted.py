from django.db import migrations, models

# Codings submitted before this migration: each one's first submit since its last undone
# submit (an "unsubmit" revision) is what the agreement figures keep, and the content changes
# after it are marked. Plain SQL that PostgreSQL and SQLite both run, one statement per table.
FIRST_SUBMIT = """
UPDATE audit_feedback SET submitted_extraction = (
    SELECT r.after FROM audit_feedbackrevision r
    WHERE r.feedback_id = audit_feedback.id AND r.action = 'submit'
      AND r.id > COALESCE((
          SELECT MAX(u.id) FROM audit_feedbackrevision u
          WHERE u.feedback_id = audit_feedback.id AND u.action = 'unsubmit'), 0)
    ORDER BY r.id LIMIT 1)
WHERE EXISTS (
    SELECT 1 FROM audit_feedbackrevision s
    WHERE s.feedback_id = audit_feedback.id AND s.action = 'submit')
"""
CHANGES_AFTER = """
UPDATE audit_feedbackrevision SET after_submit = TRUE
WHERE action IN ('edit', 'autosave', 'restore', 'propose') AND EXISTS (
    SELECT 1 FROM audit_feedbackrevision s
    WHERE s.feedback_id = audit_feedbackrevision.feedback_id AND s.action = 'submit'
      AND s.id < audit_feedbackrevision.id AND NOT EXISTS (
          SELECT 1 FROM audit_feedbackrevision u
          WHERE u.feedback_id = s.feedback_id AND u.action = 'unsubmit'
            AND u.id > s.id AND u.id < audit_feedbackrevision.id))
"""


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0028_to_adjudicate_without_approved"),
    ]

    operations = [
        migrations.AddField(
            model_name="feedback",
            name="submitted_extraction",
            field=models.JSONField(
                blank=True,
                editable=False,
                help_text="The coding as first submitted: what the agreement figures compare.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="feedbackrevision",
            name="after_submit",
            field=models.BooleanField(
                default=False,
                help_text="A change made after the coding was first submitted: the agreement "
                "figures keep the coding as submitted.",
            ),
        ),
        migrations.RunSQL(FIRST_SUBMIT, migrations.RunSQL.noop),
        migrations.RunSQL(CHANGES_AFTER, migrations.RunSQL.noop),
    ]
