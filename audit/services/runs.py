"""Configurations and their replicates: registering an extraction run.

A configuration is what produces extractions (model, prompt version, optionally the prompt
text or its SHA-256, free parameters such as the temperature, and the unit: statement or whole
discussion). Registering a run always adds a new replicate of its configuration (the
configuration is found by its identity, or created), with its own id and notes; it is
idempotent only by the client's ``external_id``: registering an external id again answers the
run it named, unchanged. The API, the upload page, the import command and import files all
register through ``run_register``.
"""

from __future__ import annotations

import copy
import hashlib
import math
import re
from dataclasses import dataclass, field, replace
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from audit.models import (
    Discussion,
    DiscussionExtraction,
    ExtractionRun,
    RunConfiguration,
    Statement,
    configuration_fingerprint,
)
from audit.services.audit_log import Action, audit_log_record
from audit.services.errors import WrongState
from audit.signals import extractions_changed_send
from metrics.families.payload.rules import CONFLICT, UNKNOWN
from metrics.families.payload.schema import PayloadError, PayloadIssue, normalize_pdp, pdp_issues

MAX_MODEL_NAME = 200
MAX_PROMPT_VERSION = 100
MAX_EXTERNAL_ID = 200
MAX_PROMPT_TEXT = 1_000_000
MAX_NOTES = 100_000
MAX_PARAMETERS = 50
MAX_PARAMETER_KEY = 100
MAX_PARAMETER_TEXT = 1000
MAX_PARAMETER_NUMBER = 10**15  # beyond, a JSON number stops being exact in every reader
PROMPT_HASH = re.compile(r"^[0-9a-f]{64}$")
UNITS = tuple(RunConfiguration.Unit.values)


@dataclass(frozen=True)
class ConfigurationSpec:
    """What a registration says about its configuration; ``configuration_notes`` are only
    stored when the configuration is new."""

    model_name: str
    prompt_version: str
    prompt_text: str = ""
    prompt_hash: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)
    unit: str = RunConfiguration.Unit.STATEMENT
    configuration_notes: str = ""

    def fingerprint(self) -> str:
        return configuration_fingerprint(
            model_name=self.model_name,
            prompt_version=self.prompt_version,
            prompt_hash=self.prompt_hash,
            parameters=self.parameters,
            unit=self.unit,
        )


# --- checking what a client sends ----------------------------------------------------------------


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _text_issue(value: Any, path: str, *, limit: int, required: bool) -> PayloadIssue | None:
    if value is None or value == "":
        return PayloadIssue(path, "missing: expected a non-empty text") if required else None
    if not isinstance(value, str):
        return PayloadIssue(path, "expected a string")
    if len(value) > limit:
        return PayloadIssue(path, f"longer than {limit} characters")
    if "\x00" in value:
        return PayloadIssue(path, "contains a NUL character")
    if required and not value.strip():
        return PayloadIssue(path, "expected a non-empty text")
    return None


def parameter_value(value: Any, path: str) -> tuple[Any, PayloadIssue | None]:
    """A parameter as stored: text, a finite number (a whole float stored as an integer, so
    1 and 1.0 are one configuration), true/false or null; anything else is refused."""
    if value is None or isinstance(value, bool):
        return value, None
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            return None, PayloadIssue(path, "expected a finite number")
        if abs(value) > MAX_PARAMETER_NUMBER:
            return None, PayloadIssue(path, f"expected a number within ±{MAX_PARAMETER_NUMBER}")
        return (int(value) if isinstance(value, float) and value.is_integer() else value), None
    if isinstance(value, str):
        issue = _text_issue(value, path, limit=MAX_PARAMETER_TEXT, required=False)
        return value, issue
    return None, PayloadIssue(path, "expected a text, a number, true/false or null")


def parameters_checked(parameters: Any, path: str = "parameters") -> tuple[dict, list]:
    """The parameters as stored, and what is wrong with them."""
    if parameters is None:
        return {}, []
    if not isinstance(parameters, dict):
        return {}, [PayloadIssue(path, "expected an object of parameter names to values")]
    issues: list[PayloadIssue] = []
    if len(parameters) > MAX_PARAMETERS:
        issues.append(PayloadIssue(path, f"more than {MAX_PARAMETERS} parameters"))
    stored: dict[str, Any] = {}
    for key, value in parameters.items():
        where = _join(path, str(key)[:MAX_PARAMETER_KEY])
        if not isinstance(key, str) or not 0 < len(key.strip()) <= MAX_PARAMETER_KEY:
            issues.append(PayloadIssue(where, f"a name of 1 to {MAX_PARAMETER_KEY} characters"))
            continue
        if "\x00" in key:
            issues.append(PayloadIssue(where, "the name contains a NUL character"))
            continue
        stored[key], issue = parameter_value(value, where)
        issues += [issue] if issue else []
    return stored, issues


def configuration_spec(data: dict[str, Any], path: str = "") -> ConfigurationSpec:
    """A configuration from a request's or a file's fields (model_name, prompt_version,
    prompt_text, prompt_hash, parameters, unit, configuration_notes); raises PayloadError
    naming every problem."""
    issues: list[PayloadIssue] = []
    limits = {
        "model_name": (MAX_MODEL_NAME, True),
        "prompt_version": (MAX_PROMPT_VERSION, True),
        "prompt_text": (MAX_PROMPT_TEXT, False),
        "configuration_notes": (MAX_NOTES, False),
    }
    for key, (limit, required) in limits.items():
        issue = _text_issue(data.get(key), _join(path, key), limit=limit, required=required)
        issues += [issue] if issue else []
    prompt_text = data.get("prompt_text") or ""
    prompt_hash = data.get("prompt_hash") or ""
    if prompt_hash and (not isinstance(prompt_hash, str) or not PROMPT_HASH.match(prompt_hash)):
        issues.append(
            PayloadIssue(_join(path, "prompt_hash"), "expected 64 lowercase hex digits (SHA-256)")
        )
    elif isinstance(prompt_text, str) and prompt_text:
        text_hash = prompt_sha256(prompt_text)
        if prompt_hash and prompt_hash != text_hash:
            issues.append(
                PayloadIssue(
                    _join(path, "prompt_hash"), "is not the SHA-256 of prompt_text (UTF-8)"
                )
            )
        prompt_hash = text_hash
    unit = data.get("unit") or RunConfiguration.Unit.STATEMENT
    if unit not in UNITS:
        issues.append(PayloadIssue(_join(path, "unit"), f"expected one of: {', '.join(UNITS)}"))
    parameters, problems = parameters_checked(data.get("parameters"), _join(path, "parameters"))
    issues += problems
    if issues:
        raise PayloadError(issues)
    return ConfigurationSpec(
        model_name=data["model_name"],
        prompt_version=data["prompt_version"],
        prompt_text=prompt_text,
        prompt_hash=prompt_hash,
        parameters=parameters,
        unit=unit,
        configuration_notes=data.get("configuration_notes") or "",
    )


def prompt_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def run_fields_issues(data: dict[str, Any], path: str = "") -> list[PayloadIssue]:
    """What is wrong with a run's own fields (notes, external_id)."""
    issues = [
        _text_issue(data.get("notes"), _join(path, "notes"), limit=MAX_NOTES, required=False),
        _text_issue(
            data.get("external_id"),
            _join(path, "external_id"),
            limit=MAX_EXTERNAL_ID,
            required=False,
        ),
    ]
    return [issue for issue in issues if issue]


# --- registering ---------------------------------------------------------------------------------


def configuration_get_or_create(*, spec: ConfigurationSpec) -> tuple[RunConfiguration, bool]:
    """The configuration of this identity, created if new (safe against a racing insert);
    a prompt text given for a configuration known only by its hash is stored with it."""
    configuration, created = RunConfiguration.objects.get_or_create(
        fingerprint=spec.fingerprint(),
        defaults={
            "model_name": spec.model_name,
            "prompt_version": spec.prompt_version,
            "prompt_text": spec.prompt_text,
            "prompt_hash": spec.prompt_hash,
            "parameters": spec.parameters,
            "unit": spec.unit,
            "notes": spec.configuration_notes,
        },
    )
    if not created and spec.prompt_text and not configuration.prompt_text:
        configuration.prompt_text = spec.prompt_text  # the text of the hash it has: no change
        configuration.save(update_fields=["prompt_text"])
    return configuration, created


class RegistrationConflict(WrongState):
    """An external id already names a run of another configuration, or configuration notes
    would replace the stored ones: nothing is registered (409)."""


@transaction.atomic
def run_register(
    *,
    spec: ConfigurationSpec | None = None,
    configuration: RunConfiguration | None = None,
    notes: str = "",
    external_id: str | None = None,
    by: User | None = None,
) -> tuple[ExtractionRun, bool]:
    """A new replicate of the configuration (given, or found or created from ``spec``);
    returns ``(run, created)``.

    With an ``external_id`` already registered, the run it names is returned unchanged
    (``created`` False) if it belongs to the same configuration; otherwise RegistrationConflict.
    Replicates are numbered under the configuration's row lock, so simultaneous registrations
    get distinct numbers, and two with one external id one run.
    """
    if configuration is None:
        if spec is None:
            raise ValueError("run_register needs a configuration or a spec")
        configuration, _ = configuration_get_or_create(spec=spec)
        _check_configuration_notes(configuration, spec)
    configuration = RunConfiguration.objects.select_for_update(no_key=True).get(pk=configuration.pk)
    if external_id:
        existing = _registered(external_id, configuration)
        if existing is not None:
            return existing, False
    run = _replicate_create(configuration, notes=notes, external_id=external_id)
    if run is None:  # another request registered this external id first
        existing = _registered(str(external_id), configuration)
        if existing is None:  # it was deleted in between
            raise RegistrationConflict(f"external_id {external_id!r} could not be registered")
        return existing, False
    _log_registration(run, by)
    return run, True


def _check_configuration_notes(configuration: RunConfiguration, spec: ConfigurationSpec) -> None:
    notes = spec.configuration_notes
    if notes and configuration.notes and notes != configuration.notes:
        raise RegistrationConflict(
            f"Configuration {configuration.pk} ({configuration.label}) has other notes; "
            "nothing was registered. Put this replicate's own notes in `notes`, or change the "
            "configuration's notes on the configuration itself."
        )
    if notes and not configuration.notes:
        RunConfiguration.objects.filter(pk=configuration.pk, notes="").update(notes=notes)


def _registered(external_id: str, configuration: RunConfiguration) -> ExtractionRun | None:
    run = ExtractionRun.objects.select_related("configuration").filter(external_id=external_id)
    found = run.first()
    if found is not None and found.configuration_id != configuration.pk:
        raise RegistrationConflict(
            f"external_id {external_id!r} is run {found.pk} of another configuration "
            f"({found.configuration.label}); nothing was registered."
        )
    return found


def _replicate_create(
    configuration: RunConfiguration, *, notes: str, external_id: str | None
) -> ExtractionRun | None:
    """The next replicate, or None when the external id was taken meanwhile."""
    last = configuration.runs.order_by("-replicate").values_list("replicate", flat=True).first()
    run = ExtractionRun(
        configuration=configuration,
        replicate=(last or 0) + 1,
        notes=notes,
        external_id=external_id or "",
    )
    try:
        with transaction.atomic():
            run.save()
    except IntegrityError:
        if external_id and ExtractionRun.objects.filter(external_id=external_id).exists():
            return None
        raise
    return run


def _log_registration(run: ExtractionRun, by: User | None) -> None:
    audit_log_record(
        actor=by,
        action=Action.RUN_REGISTER,
        object_type="extraction_run",
        object_id=str(run.pk),
        message=f"Registered {run.label} (replicate {run.replicate} of configuration "
        f"{run.configuration_id}).",
        details={
            "configuration": run.configuration_id,
            "replicate": run.replicate,
            "external_id": run.external_id,
        },
    )


def run_notes_update(*, run: ExtractionRun, notes: str) -> ExtractionRun:
    run.notes = notes
    run.save(update_fields=["notes"])
    return run


def configuration_notes_update(*, configuration: RunConfiguration, notes: str) -> RunConfiguration:
    configuration.notes = notes
    configuration.save(update_fields=["notes"])
    return configuration


def run_register_from(
    data: dict[str, Any], *, by: User | None = None, path: str = ""
) -> tuple[ExtractionRun, bool]:
    """Register from a request's or a file's fields: ``configuration`` (an id) or the
    configuration's fields, plus the run's ``notes`` and ``external_id``."""
    issues = run_fields_issues(data, path)
    if issues:
        raise PayloadError(issues)
    notes, external_id = data.get("notes") or "", data.get("external_id") or None
    configuration = data.get("configuration")
    if isinstance(configuration, RunConfiguration):
        return run_register(
            configuration=configuration, notes=notes, external_id=external_id, by=by
        )
    spec = configuration_spec(data, path)
    return run_register(spec=spec, notes=notes, external_id=external_id, by=by)


# --- runs named in import files ------------------------------------------------------------------


def _with_default_prompt(info: dict[str, Any]) -> dict[str, Any]:
    """Files of old name only the model: their prompt version reads "unknown"."""
    return {**info, "prompt_version": info.get("prompt_version") or "unknown"}


def run_info_key(info: dict[str, Any]) -> str:
    """One key per run an import's ``extraction_run`` objects name: descriptions that differ
    only in writing (a missing prompt version and "unknown", 1 and 1.0) register one run."""
    if info.get("external_id"):
        return f"external:{info['external_id']}"
    spec = configuration_spec(_with_default_prompt(info))
    return f"{spec.fingerprint()}:{info.get('notes') or ''}"


def run_info_issues(info: Any, path: str) -> list[PayloadIssue]:
    """What is wrong with a file's ``extraction_run`` object (checked before anything is
    imported): the configuration's fields when it names a model, the run's own fields."""
    if not isinstance(info, dict):
        return [] if info is None else [PayloadIssue(path, "expected an object or null")]
    issues = run_fields_issues(info, path)
    if info.get("model_name") is not None:
        try:
            configuration_spec(_with_default_prompt(info), path)
        except PayloadError as exc:
            issues += exc.issues
    return issues


def run_for_import(info: dict[str, Any], *, by: User | None) -> ExtractionRun:
    """The run a file's ``extraction_run`` names: the registered run of its ``external_id``
    (its other fields, when given, must describe that run's configuration), else a new
    replicate registered from its fields. A conflict is a PayloadError naming the field."""
    external_id = info.get("external_id")
    if external_id and not info.get("model_name"):
        found = ExtractionRun.objects.filter(external_id=external_id).first()
        if found is None:
            raise PayloadError(
                [
                    PayloadIssue(
                        "extraction_run.external_id",
                        f"no run {external_id!r} is registered, and no model_name says what to "
                        "register",
                        UNKNOWN,
                    )
                ]
            )
        return found
    try:
        return run_register_from(_with_default_prompt(info), by=by, path="extraction_run")[0]
    except RegistrationConflict as exc:
        raise PayloadError([PayloadIssue("extraction_run", str(exc), CONFLICT)]) from None


def run_latest_or_register(
    *, model_name: str, prompt_version: str, by: User | None
) -> ExtractionRun:
    """The latest replicate of the plain configuration of this model and prompt version,
    registered if it has none: where an import that names no run puts its extractions."""
    configuration = RunConfiguration.plain(model_name=model_name, prompt_version=prompt_version)
    latest = configuration.runs.order_by("-replicate").first()
    return latest or run_register(configuration=configuration, by=by)[0]


def run_reference(run: ExtractionRun) -> dict[str, Any]:
    """How an export names a run: its configuration's model and prompt version (with the
    prompt hash and parameters when it has them) and its external id, by which a re-import
    finds it again."""
    configuration = run.configuration
    reference: dict[str, Any] = {
        "model_name": configuration.model_name,
        "prompt_version": configuration.prompt_version,
    }
    if configuration.prompt_hash:
        reference["prompt_hash"] = configuration.prompt_hash
    if configuration.parameters:
        reference["parameters"] = configuration.parameters
    if configuration.unit != RunConfiguration.Unit.STATEMENT:
        reference["unit"] = configuration.unit
    reference["external_id"] = run.external_id
    return reference


# --- whole-discussion extractions ----------------------------------------------------------------


class WrongUnit(WrongState):
    """Extractions of the other unit than the run's (409): a statement-unit run takes one
    extraction per subject statement, a discussion-unit run one per discussion."""


def run_unit_check(run: ExtractionRun, unit: str) -> None:
    if run.unit == unit:
        return
    if run.unit == RunConfiguration.Unit.DISCUSSION:
        raise WrongUnit(
            f"Run {run.pk} ({run.label}) extracts whole discussions: send one PDP per "
            "discussion (API: POST /api/v1/extraction-runs/{id}/discussion-extractions/)."
        )
    raise WrongUnit(
        f"Run {run.pk} ({run.label}) extracts statement by statement: send one PDP per "
        "subject statement (API: POST /api/v1/extraction-runs/{id}/extractions/), or register "
        'a run with "unit": "discussion".'
    )


def _discussion_item_issues(item: Any, path: str, discussions: dict) -> list[PayloadIssue]:
    if not isinstance(item, dict):
        return [PayloadIssue(path, "expected an object with 'discussion' and 'pdp'")]
    issues = []
    discussion = item.get("discussion")
    if type(discussion) is not int or discussion not in discussions:
        where = _join(path, "discussion")
        issues.append(PayloadIssue(where, f"no discussion {item.get('discussion')!r}", UNKNOWN))
    if "pdp" not in item:
        return [*issues, PayloadIssue(_join(path, "pdp"), "missing required field")]
    return issues + [
        replace(issue, path=_join(_join(path, "pdp"), issue.path) if issue.path else path)
        for issue in pdp_issues(item["pdp"])
    ]


@transaction.atomic
def discussion_extractions_import(
    *, run: ExtractionRun, items: list[dict]
) -> list[DiscussionExtraction]:
    """Create or replace a discussion-unit run's extractions: items are ``{discussion: id,
    pdp: {...}}``, each PDP validated like any extraction; all or nothing."""
    run_unit_check(run, RunConfiguration.Unit.DISCUSSION)
    ids = [item.get("discussion") for item in items if isinstance(item, dict)]
    discussions = Discussion.objects.in_bulk([i for i in ids if type(i) is int])
    issues = [
        issue
        for index, item in enumerate(items)
        for issue in _discussion_item_issues(item, f"[{index}]", discussions)
    ]
    repeated = sorted({i for i in ids if type(i) is int and ids.count(i) > 1})
    if repeated:
        issues.append(PayloadIssue("", f"discussions given more than once: {repeated[:10]}"))
    if issues:
        raise PayloadError(issues)
    saved = [
        DiscussionExtraction.objects.update_or_create(
            discussion=discussions[item["discussion"]],
            run=run,
            defaults={"pdp": normalize_pdp(copy.deepcopy(item["pdp"]))},
        )[0]
        for item in items
    ]
    discussions_extracted_announce(run=run, discussion_ids=[e.discussion_id for e in saved])
    return saved


def discussions_extracted_announce(*, run: ExtractionRun, discussion_ids: list[int]) -> None:
    """A discussion-unit run's extractions changed: its results on these discussions follow
    (through their subject statements, which is what results are invalidated by)."""
    statement_ids = Statement.objects.subjects().filter(discussion_id__in=discussion_ids)
    extractions_changed_send(
        statement_ids=list(statement_ids.values_list("pk", flat=True)),
        run_ids=[run.pk],
        reason="discussion extractions",
    )


def discussion_extraction_issues(entry: Any, path: str) -> list[PayloadIssue]:
    """What is wrong with an import file's ``discussion_extraction`` (``{extraction_run,
    pdp}``: a discussion-unit run's PDP of the whole discussion)."""
    if entry is None:
        return []
    if not isinstance(entry, dict):
        return [PayloadIssue(path, "expected an object with 'extraction_run' and 'pdp'")]
    issues = run_info_issues(entry.get("extraction_run"), _join(path, "extraction_run"))
    if "pdp" not in entry:
        return [*issues, PayloadIssue(_join(path, "pdp"), "missing required field")]
    where = _join(path, "pdp")
    return issues + [
        replace(issue, path=_join(where, issue.path) if issue.path else where)
        for issue in pdp_issues(entry["pdp"])
    ]


def discussion_run_info(entry: dict[str, Any], default: dict[str, Any] | None) -> dict[str, Any]:
    """The run of a file's ``discussion_extraction``: its own ``extraction_run`` (a
    discussion-unit one unless it says), else the run the import was given."""
    info = entry.get("extraction_run")
    if not isinstance(info, dict):
        if default is None:
            raise PayloadError(
                [
                    PayloadIssue(
                        "discussion_extraction.extraction_run",
                        "missing: name the discussion-unit run here or for the whole import",
                    )
                ]
            )
        return default
    info = dict(info)
    if info.get("model_name"):
        info.setdefault("unit", RunConfiguration.Unit.DISCUSSION)
    return info
