import django.db.models.deletion
from django.db import migrations, models


def store_discussion(apps, schema_editor):
    """Each assignment gets its statement's discussion, in one UPDATE."""
    from django.db.models import OuterRef, Subquery

    assignment = apps.get_model("audit", "Assignment")
    statement = apps.get_model("audit", "Statement")
    assignment.objects.update(
        discussion_id=Subquery(
            statement.objects.filter(pk=OuterRef("statement_id")).values("discussion_id")[:1]
        )
    )


class Migration(migrations.Migration):

    dependencies = [
        ("audit", "0021_triage_accepted_index"),
    ]

    operations = [
        migrations.AddField(
            model_name="assignment",
            name="discussion",
            field=models.ForeignKey(
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="audit.discussion",
            ),
        ),
        migrations.RunPython(store_discussion, migrations.RunPython.noop, elidable=True),
        migrations.AlterField(
            model_name="assignment",
            name="discussion",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="audit.discussion",
            ),
        ),
        migrations.AddIndex(
            model_name="assignment",
            index=models.Index(
                condition=models.Q(("status", "open")),
                fields=["auditor", "due", "discussion"],
                name="assignment_due_order",
            ),
        ),
    ]
