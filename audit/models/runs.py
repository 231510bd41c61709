"""AI extraction runs, their configurations and what each extracted per statement and discussion."""

from __future__ import annotations

import hashlib
import json
import uuid

from django.db import models

from evalsite.fields import RowJSONField


def empty_pdp() -> dict:
    return {"people": [], "events": [], "pair_bonds": [], "delete": []}


def configuration_fingerprint(
    *, model_name: str, prompt_version: str, prompt_hash: str, parameters: dict, unit: str
) -> str:
    """What makes two registrations the same configuration, as a SHA-256 (parameters in key
    order, JSON escapes for anything outside ASCII). Stored: never change how it is computed."""
    identity = {
        "model_name": model_name,
        "prompt_version": prompt_version,
        "prompt_hash": prompt_hash,
        "parameters": parameters,
        "unit": unit,
    }
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


class RunConfiguration(models.Model):
    """How extractions are produced: model, prompt version (and optionally the prompt itself or
    its hash), free parameters such as the temperature, and the unit extracted. Running it
    again is a replicate: another ``ExtractionRun`` of the same configuration."""

    class Unit(models.TextChoices):
        STATEMENT = "statement", "Statement"
        DISCUSSION = "discussion", "Discussion"

    model_name = models.CharField(max_length=200)
    prompt_version = models.CharField(max_length=100)
    prompt_text = models.TextField(blank=True)
    prompt_hash = models.CharField(
        max_length=64, blank=True, help_text="SHA-256 (hex) of the prompt text; blank: not given."
    )
    parameters = models.JSONField(
        default=dict, blank=True, help_text="Free key/values: temperature, top_p, seed..."
    )
    unit = models.CharField(max_length=10, choices=Unit.choices, default=Unit.STATEMENT)
    notes = models.TextField(blank=True)
    # The identity (configuration_fingerprint of the fields above but the text and notes):
    # registering the same one again adds a replicate instead of a configuration.
    fingerprint = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.label

    @property
    def label(self) -> str:
        """ "model · prompt version", with the parameters and the unit when they say more."""
        label = f"{self.model_name} · {self.prompt_version}"
        if self.parameters:
            label += " (" + ", ".join(f"{k}={v}" for k, v in sorted(self.parameters.items())) + ")"
        if self.unit == self.Unit.DISCUSSION:
            label += " · whole discussions"
        return label

    @property
    def is_discussion_unit(self) -> bool:
        return self.unit == self.Unit.DISCUSSION

    @staticmethod
    def plain(*, model_name: str, prompt_version: str) -> RunConfiguration:
        """The configuration of a model and prompt version with nothing else said (no prompt
        hash, no parameters, statement unit), created if new."""
        fingerprint = configuration_fingerprint(
            model_name=model_name,
            prompt_version=prompt_version,
            prompt_hash="",
            parameters={},
            unit=RunConfiguration.Unit.STATEMENT,
        )
        configuration, _ = RunConfiguration.objects.get_or_create(
            fingerprint=fingerprint,
            defaults={"model_name": model_name, "prompt_version": prompt_version},
        )
        return configuration


class ExtractionRunQuerySet(models.QuerySet):
    def latest_first(self) -> ExtractionRunQuerySet:
        return self.order_by("-created_at", "-id")

    def discussion_unit(self) -> ExtractionRunQuerySet:
        return self.filter(configuration__unit=RunConfiguration.Unit.DISCUSSION)

    def labelled(self, *fields: str) -> ExtractionRunQuerySet:
        """The runs with what their ``label`` is made of (their configuration's model, prompt
        version, parameters and unit, and the replicate), and ``fields`` besides, only: the
        pickers and lists that name runs read no prompt text."""
        label = (
            "replicate",
            "configuration__model_name",
            "configuration__prompt_version",
            "configuration__parameters",
            "configuration__unit",
        )
        return self.select_related("configuration").only(*label, *fields)


class ExtractionRun(models.Model):
    """One replicate of a configuration: a set of AI extractions made by running it once.

    ``model_name`` and ``prompt_version`` are the configuration's, copied (lists and filters
    read them without a join); ``replicate`` numbers the runs of a configuration from 1;
    ``external_id`` is the client's key that makes registering idempotent."""

    configuration = models.ForeignKey(
        RunConfiguration, on_delete=models.PROTECT, related_name="runs"
    )
    replicate = models.PositiveIntegerField(default=0)
    external_id = models.CharField(max_length=200, unique=True)
    model_name = models.CharField(max_length=200)
    prompt_version = models.CharField(max_length=100)
    notes = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ExtractionRunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["configuration", "replicate"], name="one_run_per_replicate_number"
            )
        ]

    def __str__(self) -> str:
        return self.label

    def save(self, *args, **kwargs) -> None:
        # A run made without a configuration (tests, old code paths) gets the plain one of its
        # model and prompt version; the copied names always follow the configuration.
        if self.configuration_id is None:
            self.configuration = RunConfiguration.plain(
                model_name=self.model_name, prompt_version=self.prompt_version
            )
        self.model_name = self.configuration.model_name
        self.prompt_version = self.configuration.prompt_version
        if not self.replicate:
            self.replicate = self.configuration.runs.count() + 1
        if not self.external_id:
            self.external_id = uuid.uuid4().hex
        super().save(*args, **kwargs)

    @property
    def label(self) -> str:
        label = self.configuration.label
        return label if self.replicate <= 1 else f"{label} · replicate {self.replicate}"

    @property
    def unit(self) -> str:
        return self.configuration.unit

    @property
    def is_discussion_unit(self) -> bool:
        return self.configuration.is_discussion_unit


class Extraction(models.Model):
    statement = models.ForeignKey(
        "audit.Statement", on_delete=models.CASCADE, related_name="extractions"
    )
    run = models.ForeignKey(ExtractionRun, on_delete=models.CASCADE, related_name="extractions")
    pdp_deltas = RowJSONField(default=empty_pdp)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["statement", "run"], name="unique_extraction_per_run")
        ]

    def __str__(self) -> str:
        return f"Extraction of statement {self.statement_id} by run {self.run_id}"


class DiscussionExtraction(models.Model):
    """A discussion-unit run's extraction: one PDP for the whole discussion (what the AI
    extracted reading it all), scored against the discussion's cumulative ground truth."""

    discussion = models.ForeignKey(
        "audit.Discussion", on_delete=models.CASCADE, related_name="discussion_extractions"
    )
    run = models.ForeignKey(
        ExtractionRun, on_delete=models.CASCADE, related_name="discussion_extractions"
    )
    pdp = RowJSONField(default=empty_pdp)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["discussion", "run"], name="one_discussion_extraction_per_run"
            )
        ]
        indexes = [models.Index(fields=["run", "discussion"])]

    def __str__(self) -> str:
        return f"Extraction of discussion {self.discussion_id} by run {self.run_id}"
