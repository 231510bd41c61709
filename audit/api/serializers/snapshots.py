"""Shapes of ground-truth snapshots."""

from __future__ import annotations

from rest_framework import serializers

from audit.models import (
    GroundTruthSnapshot,
)
from evalsite.api import (
    StrictCharField,
    StrictInputSerializer,
)


class SnapshotItemCountsSerializer(serializers.Serializer):
    people = serializers.IntegerField()
    events = serializers.IntegerField()
    pair_bonds = serializers.IntegerField()


class SnapshotOutputSerializer(serializers.ModelSerializer):
    """Approved ground truth frozen under a name: who froze it, when, why, and what it holds."""

    created_by = serializers.CharField(source="created_by_name", read_only=True)
    items = SnapshotItemCountsSerializer(read_only=True, help_text="approved items by kind")
    basis_label = serializers.CharField(
        read_only=True, help_text='what figures on it say beside them: "on GT v12"'
    )

    class Meta:
        model = GroundTruthSnapshot
        fields = [
            "id",
            "name",
            "note",
            "created_by",
            "created_at",
            "discussions",
            "complete_discussions",
            "codings",
            "items",
            "export_sha256",
            "export_size",
            "basis_label",
        ]
        extra_kwargs = {
            "discussions": {"help_text": "discussions with approved ground truth"},
            "complete_discussions": {
                "help_text": "of those, the ones whose every subject statement is approved: what "
                "discussion-unit runs are scored on"
            },
            "codings": {"help_text": "approved codings"},
            "export_sha256": {"help_text": "SHA-256 of the export file, the same forever"},
        }


class SnapshotCreateInputSerializer(StrictInputSerializer):
    name = StrictCharField(max_length=100, help_text='unique, e.g. "GT v12"')
    note = StrictCharField(required=False, allow_blank=True, max_length=10_000, default="")


class SnapshotDeleteQuerySerializer(serializers.Serializer):
    reason = serializers.CharField(
        required=False, max_length=10_000, trim_whitespace=False, help_text="logged with the act"
    )
