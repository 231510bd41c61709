"""A stored result says which ground truth it was computed on: a frozen snapshot, or none
(live ground truth, every row until now)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0025_configurations_replicates_snapshots"),
        ("metrics", "0012_result_indexes_written_less"),
    ]

    operations = [
        migrations.AddField(
            model_name="metricresult",
            name="snapshot",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="audit.groundtruthsnapshot",
            ),
        ),
    ]
