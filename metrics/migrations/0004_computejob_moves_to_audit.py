# The background-job model now lives in audit (audit.0004_computejob); the table stays.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("metrics", "0003_job_lease_and_scope"),
        ("audit", "0004_computejob"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[migrations.DeleteModel(name="ComputeJob")],
        ),
    ]
