"""Two of the results table's indexes fewer to write with every row.

Every recompute writes each of its rows once and an approval several: each write adds an entry
to every index of the table. `family` had an index of its own (and a LIKE one), which the
(family, scope, run, status) index already serves; the key's `unique=True` came with a LIKE
index besides its unique one, and no query compares keys with LIKE. The key stays unique, by
a named constraint (added before the old one goes, in the same transaction).
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0023_triage_counts"),
        ("metrics", "0011_exact_f1_totals"),
    ]

    operations = [
        migrations.AddConstraint(
            model_name="metricresult",
            constraint=models.UniqueConstraint(fields=("key",), name="metrics_result_key"),
        ),
        migrations.AlterField(
            model_name="metricresult",
            name="key",
            field=models.CharField(max_length=200),
        ),
        migrations.AlterField(
            model_name="metricresult",
            name="family",
            field=models.CharField(max_length=40),
        ),
    ]
