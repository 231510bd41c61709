"""Runs as experiments: configurations with replicates, discussion-unit extractions, frozen
ground-truth snapshots.

Every existing run becomes replicate 1 of a configuration of its own (one per model and prompt
version, which were unique until now), with nothing else said: no prompt hash, no parameters,
the statement unit. Each run gets an external id (a new UUID) like every new one.
"""

import hashlib
import json
import uuid

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import audit.models


def _fingerprint(model_name: str, prompt_version: str) -> str:
    """``audit.models.configuration_fingerprint`` of a plain configuration, as it is today."""
    identity = {
        "model_name": model_name,
        "prompt_version": prompt_version,
        "prompt_hash": "",
        "parameters": {},
        "unit": "statement",
    }
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def configurations_create(apps, schema_editor):
    run_model = apps.get_model("audit", "ExtractionRun")
    configuration_model = apps.get_model("audit", "RunConfiguration")
    for run in run_model.objects.order_by("created_at", "id"):
        configuration, _ = configuration_model.objects.get_or_create(
            fingerprint=_fingerprint(run.model_name, run.prompt_version),
            defaults={"model_name": run.model_name, "prompt_version": run.prompt_version},
        )
        # auto_now_add: set it to the run's after creation so the configuration is as old.
        configuration_model.objects.filter(pk=configuration.pk).update(created_at=run.created_at)
        count = run_model.objects.filter(configuration=configuration).count()
        run_model.objects.filter(pk=run.pk).update(
            configuration=configuration, replicate=count + 1, external_id=uuid.uuid4().hex
        )


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0024_feedback_review_opened_at"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="RunConfiguration",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("model_name", models.CharField(max_length=200)),
                ("prompt_version", models.CharField(max_length=100)),
                ("prompt_text", models.TextField(blank=True)),
                (
                    "prompt_hash",
                    models.CharField(
                        blank=True,
                        help_text="SHA-256 (hex) of the prompt text; blank: not given.",
                        max_length=64,
                    ),
                ),
                (
                    "parameters",
                    models.JSONField(
                        blank=True,
                        default=dict,
                        help_text="Free key/values: temperature, top_p, seed...",
                    ),
                ),
                (
                    "unit",
                    models.CharField(
                        choices=[("statement", "Statement"), ("discussion", "Discussion")],
                        default="statement",
                        max_length=10,
                    ),
                ),
                ("notes", models.TextField(blank=True)),
                ("fingerprint", models.CharField(max_length=64, unique=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={"ordering": ["-created_at", "-id"]},
        ),
        migrations.AddField(
            model_name="extractionrun",
            name="configuration",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="runs",
                to="audit.runconfiguration",
            ),
        ),
        migrations.AddField(
            model_name="extractionrun",
            name="replicate",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="extractionrun",
            name="external_id",
            field=models.CharField(max_length=200, null=True),
        ),
        migrations.RunPython(configurations_create, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="extractionrun",
            name="configuration",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="runs",
                to="audit.runconfiguration",
            ),
        ),
        migrations.AlterField(
            model_name="extractionrun",
            name="external_id",
            field=models.CharField(max_length=200, unique=True),
        ),
        migrations.RemoveConstraint(
            model_name="extractionrun",
            name="unique_run_model_prompt",
        ),
        migrations.AddConstraint(
            model_name="extractionrun",
            constraint=models.UniqueConstraint(
                fields=("configuration", "replicate"), name="one_run_per_replicate_number"
            ),
        ),
        migrations.CreateModel(
            name="DiscussionExtraction",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("pdp", models.JSONField(default=audit.models.empty_pdp)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "discussion",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="discussion_extractions",
                        to="audit.discussion",
                    ),
                ),
                (
                    "run",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="discussion_extractions",
                        to="audit.extractionrun",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(fields=["run", "discussion"], name="audit_discu_run_id_71c086_idx")
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("discussion", "run"), name="one_discussion_extraction_per_run"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="GroundTruthSnapshot",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=100, unique=True)),
                ("note", models.TextField(blank=True)),
                ("created_by_name", models.CharField(blank=True, max_length=150)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("discussions", models.PositiveIntegerField(default=0)),
                ("complete_discussions", models.PositiveIntegerField(default=0)),
                ("codings", models.PositiveIntegerField(default=0)),
                ("items", models.JSONField(blank=True, default=dict)),
                ("export_file", models.FileField(blank=True, upload_to="snapshots/")),
                ("export_sha256", models.CharField(blank=True, max_length=64)),
                ("export_size", models.PositiveBigIntegerField(default=0)),
                (
                    "created_by",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={"ordering": ["-created_at", "-id"]},
        ),
        migrations.CreateModel(
            name="SnapshotCoding",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("statement_id", models.BigIntegerField()),
                ("discussion_id", models.BigIntegerField()),
                ("order", models.IntegerField()),
                ("feedback_id", models.BigIntegerField(blank=True, null=True)),
                ("version", models.PositiveIntegerField(blank=True, null=True)),
                ("payload", models.JSONField(blank=True, null=True)),
                (
                    "snapshot",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="snapshot_codings",
                        to="audit.groundtruthsnapshot",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(
                        fields=["snapshot", "discussion_id", "order"], name="snapshot_coding_order"
                    )
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("snapshot", "statement_id"),
                        name="one_snapshot_coding_per_statement",
                    )
                ],
            },
        ),
        migrations.AlterField(
            model_name="auditlogentry",
            name="action",
            field=models.CharField(
                choices=[
                    ("blind_mark", "Blind review marked"),
                    ("blind_unmark", "Blind review unmarked"),
                    ("approve", "Approved"),
                    ("self_approve", "Self-approved"),
                    ("unapprove", "Unapproved"),
                    ("reject", "Rejected"),
                    ("propose", "Change to approved ground truth proposed"),
                    ("import", "Imported"),
                    ("run_upload", "Evaluation run uploaded"),
                    ("assign", "Assigned"),
                    ("reassign", "Reassigned"),
                    ("unassign", "Unassigned"),
                    ("skip", "Skipped"),
                    ("triage_settings", "Review triage settings changed"),
                    ("triage_accept", "Review triage accepted statements provisionally"),
                    ("triage_suspend", "Review triage suspended"),
                    ("guidelines", "Coding guidelines saved"),
                    ("comment", "Commented"),
                    ("adjudicate", "Codings adjudicated"),
                    ("adjud_remerge", "Adjudication re-merged"),
                    ("adjud_reset", "Adjudication choices reset (a coding changed)"),
                    ("run_register", "Extraction run registered"),
                    ("snapshot_freeze", "Ground truth frozen as a snapshot"),
                    ("snapshot_delete", "Ground-truth snapshot deleted"),
                ],
                max_length=20,
            ),
        ),
    ]
