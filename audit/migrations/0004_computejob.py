# The background-job model moves from metrics to audit (the ground floor) without touching the
# table: only Django's model state changes; the table keeps its name, metrics_computejob, and
# metrics' migrations still create and alter it (metrics.0004 drops its state after this one).

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("audit", "0003_revision_folding_and_restore"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name="ComputeJob",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("kind", models.CharField(choices=[("recompute", "Recompute metrics"), ("export", "Ground-truth export"), ("import", "Ground-truth import")], max_length=12)),
                        ("params", models.JSONField(blank=True, default=dict)),
                        ("status", models.CharField(choices=[("queued", "Queued"), ("running", "Running"), ("done", "Done"), ("failed", "Failed"), ("cancelled", "Cancelled")], default="queued", max_length=10)),
                        ("total", models.PositiveIntegerField(default=0)),
                        ("done", models.PositiveIntegerField(default=0)),
                        ("cancel_requested", models.BooleanField(default=False)),
                        ("error", models.TextField(blank=True)),
                        ("result_file", models.FileField(blank=True, upload_to="exports/")),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("started_at", models.DateTimeField(blank=True, null=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        ("scope", models.CharField(blank=True, default="", max_length=80)),
                        ("heartbeat_at", models.DateTimeField(blank=True, null=True)),
                        ("attempt", models.PositiveSmallIntegerField(default=0)),
                        ("created_by", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        "db_table": "metrics_computejob",
                        "ordering": ["-created_at", "-id"],
                        "constraints": [
                            models.UniqueConstraint(condition=models.Q(("status__in", ["queued", "running"]), models.Q(("scope", ""), _negated=True)), fields=("scope",), name="one_active_job_per_scope", violation_error_message="A job for this is already queued or running."),
                        ],
                    },
                ),
            ],
        ),
    ]
