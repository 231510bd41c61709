from django.db import migrations, models


def recount(apps, schema_editor):
    # A statement with approved ground truth no longer counts as one to adjudicate. Only a
    # database that counted some statement to adjudicate can count differently now; it is
    # recounted with the current counting code, as 0013 did (`manage.py tallies_rebuild` after
    # migrating counts the same).
    if not apps.get_model("audit", "CodingTally").objects.filter(to_adjudicate__gt=0).exists():
        return
    from audit.derived.tallies import tallies_rebuild

    tallies_rebuild()


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0027_announcement"),
    ]

    operations = [
        migrations.AlterField(
            model_name="codingtally",
            name="to_adjudicate",
            field=models.PositiveIntegerField(
                default=0,
                help_text="Statements the auditor's sent coding shares with another auditor's, "
                "not yet merged by an adjudication and without approved ground truth.",
            ),
        ),
        migrations.RunPython(recount, migrations.RunPython.noop),
    ]
